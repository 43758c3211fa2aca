import { describe, expect, it } from 'vitest';
import { dataFolderMedia } from '../main/media/mediaFolder.ts';
import { inputHash } from '../main/domain/tasks/inputHash.ts';
import type { ProjectRows } from '../main/domain/projectRows.ts';
import { outsideReferences, planFiles, pushRefusal, renumberRefs, teamRows } from '../main/team/pushPlan.ts';

function task(id: number, status: string, input: unknown, output: string | null = null) {
  return { id, project_id: 1, status, kind: 'image', provider: 'simulator', model: 'sim-image-1', input_json: JSON.stringify(input), input_hash: 'old', output_path: output };
}

function rows(): ProjectRows {
  return {
    project: { id: 1, name: 'Film', budget: null, currency: 'USD', created_at: 5 },
    storyboard: null,
    tasks: [
      task(3, 'SUCCEEDED', { prompt: 'fox' }, '/data/projects/1/media/task-3-a1.png'),
      { ...task(4, 'SUCCEEDED', { image: { $output: 3 } }, '/data/projects/1/media/task-4-a1.mp4'), kind: 'clip', model: 'sim-clip-1' },
      task(5, 'SUCCEEDED', { prompt: 'deleted' }, null),
    ],
    dependencies: [{ task_id: 4, depends_on: 3 }],
    events: [
      { id: 10, task_id: 3, reason: 'enqueued' },
      { id: 11, task_id: 4, reason: 'enqueued' },
    ],
    outputs: [
      { task_id: 3, idx: 0, path: '/data/projects/1/media/task-3-a1.png', sha256: 'a', bytes: 1, content_type: 'image/png', machine: 'studio-a' },
      { task_id: 4, idx: 0, path: '/mnt/media/local-x/projects/1/media/task-4-a1.mp4', sha256: 'b', bytes: 1, content_type: 'video/mp4', machine: null },
      { task_id: 5, idx: 0, path: '/data/projects/1/media/task-5-a1.png', sha256: 'c', bytes: 1, content_type: 'image/png', machine: 'studio-a' },
    ],
    takes: [{ project_id: 1, scene: 's1', take: 1, image_task_id: 3, clip_task_id: 4, speech_task_id: null }],
    picks: [{ project_id: 1, scene: 's1', take: 1, picked_at: 9 }],
  };
}

describe('whether a project can move now', () => {
  it('refuses while a step is enqueued, running or sent, naming the tasks and what to do', () => {
    const words = pushRefusal('Film', [
      { id: 1, status: 'SUCCEEDED' },
      { id: 2, status: 'PENDING' },
      { id: 3, status: 'SUBMITTED' },
    ]);
    expect(words).toBe(
      'project "Film" has 2 step(s) in flight (task 2 PENDING, 3 SUBMITTED); moved now, they would run on both sides and be paid twice. ' +
        'Nothing was changed. Wait until they finish (studio worker --until-idle), or cancel them (studio cancel ID), then push again',
    );
  });

  it('refuses while an outcome is unknown: a person decides it here first', () => {
    expect(pushRefusal('Film', [{ id: 7, status: 'OUTCOME_UNKNOWN' }])).toMatch(/^project "Film" has 1 step\(s\) whose outcome is unknown \(task 7\); decide them here first/);
  });

  it('lets finished, failed and cancelled steps move', () => {
    expect(pushRefusal('Film', [{ id: 1, status: 'SUCCEEDED' }, { id: 2, status: 'FAILED' }, { id: 3, status: 'CANCELLED' }])).toBeNull();
  });

  it('refuses a project whose steps use another project\'s results', () => {
    const r = rows();
    r.dependencies.push({ task_id: 4, depends_on: 99 });
    expect(outsideReferences(r)).toMatch(/^task 4 of project "Film" uses task 99, which is in another project/);
    expect(outsideReferences(rows())).toBeNull();
  });
});

describe('where the files go', () => {
  it('keeps a file already in the team media folder where it is, and copies any other under this database\'s folder there', () => {
    const plans = planFiles(rows(), { resolveHere: dataFolderMedia('/data', 'studio-a').resolve, teamRoot: '/mnt/media', dataDir: '/data', space: 'local-x' });
    expect(plans[0]).toMatchObject({ stored: 'local-x/projects/1/media/task-3-a1.png', copyTo: '/mnt/media/local-x/projects/1/media/task-3-a1.png', kept: true });
    expect(plans[1]).toMatchObject({ stored: 'local-x/projects/1/media/task-4-a1.mp4', copyTo: null, kept: true });
    expect(plans[2]).toMatchObject({ copyTo: null, kept: false });
  });
});

describe('the rows the team database takes', () => {
  it('numbers tasks anew everywhere they are named, and takes each input\'s hash again', () => {
    const r = rows();
    const ids = new Map([
      [3, 103],
      [4, 104],
      [5, 105],
    ]);
    const plans = planFiles(r, { resolveHere: dataFolderMedia('/data', 'studio-a').resolve, teamRoot: '/mnt/media', dataDir: '/data', space: 'local-x' });
    const team = teamRows(r, 42, ids, plans, 'studio-a');
    const clip = team.tasks[1]!;
    expect(JSON.parse(clip.input_json as string)).toEqual({ image: { $output: 103 } });
    expect(clip).toMatchObject({ id: 104, project_id: 42, input_hash: inputHash('simulator', 'sim-clip-1', { image: { $output: 103 } }), output_path: 'local-x/projects/1/media/task-4-a1.mp4' });
    expect(team.tasks[2]!.output_path).toBeNull();
    expect(team.dependencies).toEqual([{ task_id: 104, depends_on: 103 }]);
    expect(team.events.map((e) => e.task_id)).toEqual([103, 104]);
    expect(team.takes[0]).toMatchObject({ project_id: 42, image_task_id: 103, clip_task_id: 104, speech_task_id: null });
    expect(team.picks[0]).toMatchObject({ project_id: 42, scene: 's1', take: 1 });
    expect(team.outputs.map((o) => [o.task_id, o.path, o.machine])).toEqual([
      [103, 'local-x/projects/1/media/task-3-a1.png', 'studio-a'],
      [104, 'local-x/projects/1/media/task-4-a1.mp4', 'studio-a'],
      [105, 'local-x/projects/1/media/task-5-a1.png', 'studio-a'],
    ]);
  });

  it('renumbers references nested anywhere in an input', () => {
    expect(renumberRefs({ scenes: [{ clip: { $output: 1 }, narration: null }], n: 1 }, new Map([[1, 9]]))).toEqual({ scenes: [{ clip: { $output: 9 }, narration: null }], n: 1 });
  });
});
