import { afterEach, describe, expect, it } from 'vitest';
import type { TaskView } from '../main/api/contract.ts';
import { learnDurations } from '../main/engine/durations.ts';
import { criticalPath, etaWords, spanWords, stepEta, videoEtaWords, type PathStep, type StepEta, type VideoEta } from '../main/engine/eta.ts';
import { openRuntime, type Runtime } from '../main/runtime.ts';
import { sqlOf } from './helpers/sql.ts';
import { tempDir } from './helpers/tmp.ts';

// Past durations of one model: 10 s to 20 s, typically 15 s; nine in ten within 18.2 s.
const learned = learnDurations([10_000, 12_000, 14_000, 15_000, 15_000, 16_000, 18_000, 20_000, 11_000, 17_000])!;

describe('when a running step is likely to end', () => {
  it.each([
    ['no history yet: no estimate', null, 5_000, null],
    ['not started: the typical duration', learned, 0, { remainingMs: 15_000, late: false }],
    ['a clock step backwards counts as just started', learned, -2_000, { remainingMs: 15_000, late: false }],
    ['past the quick ones: the median of the longer ones, less the time run', learned, 14_000, { remainingMs: 2_500, late: false }],
    ['past the typical', learned, 16_000, { remainingMs: 2_000, late: false }],
    ['at the slow tail', learned, 18_000, { remainingMs: 2_000, late: false }],
    ['past the slow tail: late, with no honest estimate', learned, 18_300, { remainingMs: null, late: true }],
    ['past the slowest ever', learned, 60_000, { remainingMs: null, late: true }],
  ] as const)('%s', (_, l, elapsed, eta) => {
    expect(stepEta(l, elapsed)).toEqual(eta);
  });

  it.each([
    [400, '1 s'],
    [9_400, '9 s'],
    [12_000, '10 s'],
    [42_000, '40 s'],
    [58_000, '55 s'],
    [90_000, '2 min'],
    [3_600_000, '1 h'],
    [5_000_000, '1 h 23 min'],
  ])('%i ms reads as %s', (ms, words) => {
    expect(spanWords(ms)).toBe(words);
  });

  it.each([
    [{ remainingMs: 42_000, late: false }, 'about 40 s left'],
    [{ remainingMs: null, late: true }, 'taking longer than usual'],
  ] as [StepEta, string][])('%j says %s', (eta, words) => {
    expect(etaWords(eta)).toBe(words);
  });
});

describe('when the finished video is likely to be ready', () => {
  const at = (ms: number | null, late = false): StepEta => ({ remainingMs: ms, late });
  // Two scenes: a's image done and its clip at the provider; b's image queued; then the render of all.
  const plan = (change: Record<string, StepEta | null> = {}): PathStep[] =>
    (
      [
        ['a:image', [], at(0)],
        ['a:clip', ['a:image'], at(5_000)],
        ['a:speech', [], at(3_000)],
        ['b:image', [], at(4_000)],
        ['b:clip', ['b:image'], at(10_000)],
        ['render', ['a:clip', 'a:speech', 'b:clip'], at(2_000)],
      ] as [string, string[], StepEta][]
    ).map(([key, dependsOn, eta]) => ({ key, dependsOn, eta: key in change ? change[key]! : eta }));

  it.each([
    ['the longest chain of what is left: b image, b clip, render', plan(), { remainingMs: 16_000, late: false }],
    ['a late step counts as ending now and marks the estimate a least', plan({ 'a:clip': at(null, true) }), { remainingMs: 16_000, late: true }],
    ['a late step on the longest chain shortens it', plan({ 'b:image': at(null, true) }), { remainingMs: 12_000, late: true }],
    ['a step whose model has no history: no estimate', plan({ 'b:clip': null }), null],
    ['everything done', plan(Object.fromEntries(plan().map((s) => [s.key, at(0)]))), { remainingMs: 0, late: false }],
    ['a dependency outside the plan (an earlier take) counts as done', [{ key: 'render', dependsOn: ['task 7'], eta: at(2_000) }], { remainingMs: 2_000, late: false }],
    ['nothing left', [], { remainingMs: 0, late: false }],
  ] as [string, PathStep[], VideoEta | null][])('%s', (_, steps, eta) => {
    expect(criticalPath(steps)).toEqual(eta);
  });

  it.each([
    [{ remainingMs: 16_000, late: false }, 'about 15 s left'],
    [{ remainingMs: 36_000, late: true }, 'a step is taking longer than usual; at least 35 s more'],
    [{ remainingMs: 0, late: true }, 'a step is taking longer than usual'],
  ] as [VideoEta, string][])('%j says %s', (eta, words) => {
    expect(videoEtaWords(eta)).toBe(words);
  });
});

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.stop();
  runtime = undefined;
});

describe('estimates through the API', () => {
  it('a running step gets an ETA from the durations its model took here, and the project when its video will be ready', async () => {
    // The engine is not started: every row below stays as written, and nothing is sent.
    const dir = tempDir();
    runtime = await openRuntime(dir, { mediaUrl: (id) => `/media/${id}` });
    const { studio, service } = runtime;
    const db = sqlOf(dir);
    const now = Date.now();
    // Finished work of an earlier project: how long each model took here, from the provider's acceptance to the
    // result (a render: from its claim, which its history records).
    const old = (await studio.projects.ensure('Old', now)).id;
    const insert = db.prepare(
      `INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, status, charged, next_attempt_at, submitted_at, created_at, updated_at, finished_at)
       VALUES (?, ?, ?, ?, ?, ?, 'SUCCEEDED', 'yes', 0, ?, 0, 0, ?) RETURNING id`,
    );
    const history: [string, string, string, number[]][] = [
      ['image', 'simulator', 'sim-image-1', [8_000, 10_000, 12_000]],
      ['clip', 'simulator', 'sim-clip-1', [20_000, 30_000, 40_000]],
      ['speech', 'simulator', 'sim-speech-1', [2_000, 3_000, 4_000]],
      ['render', 'local', 'ffmpeg', [5_000, 6_000, 7_000]],
    ];
    let n = 0;
    for (const [kind, provider, model, durations] of history) {
      for (const d of durations) {
        const start = now - 3_600_000 + n * 60_000;
        const render = kind === 'render';
        const { id } = insert.get(old, kind, provider, model, JSON.stringify({ n: n++ }), `old${n}`, render ? null : start, start + d) as { id: number };
        if (render) db.prepare(`INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason) VALUES (?, ?, 'PENDING', 'RUNNING', 'engine', 'claimed')`).run(id, start);
      }
    }

    await studio.projects.ensure('Fox', now);
    await service.saveStoryboard('Fox', {
      width: 320,
      height: 180,
      scenes: [{ id: 'dawn', imagePrompt: 'a red fox asleep in snow', motionPrompt: 'push in', narration: 'At dawn, the fox wakes.', duration: 1 }],
    });
    await service.generate('Fox');
    const tasks = (await service.listTasks('Fox', 0, 100)).tasks;
    const of = (kind: string) => tasks.find((t) => t.kind === kind)!;
    expect(tasks.map((t) => [t.kind, t.status, t.eta])).toEqual([
      ['render', 'PENDING', null],
      ['speech', 'PENDING', null],
      ['clip', 'PENDING', null],
      ['image', 'PENDING', null],
    ]);

    // The image was accepted by the provider 4 s ago: its model typically takes 10 s.
    const submitted = Date.now() - 4_000;
    const accept = (id: number, at: number) =>
      db.prepare(`UPDATE tasks SET status = 'SUBMITTED', remote_request_id = ?, submit_started_at = ?, submitted_at = ?, charged = 'yes' WHERE id = ?`).run(`r${id}`, at, at, id);
    accept(of('image').id, submitted);
    const image = (await service.listTasks('Fox', 0, 100)).tasks.find((t) => t.kind === 'image')!;
    expect(image.eta).toEqual({ expectedAt: new Date(submitted + 10_000).toISOString(), late: false, text: 'about 6 s left' });

    // The video: the rest of the image (6 s), then the clip (typically 30 s), then the render (6 s); the
    // narration (3 s) runs beside them.
    let plan = await service.scenePlan('Fox');
    expect(plan.scenes[0]!.steps.find((s) => s.kind === 'image')!.task!.eta!.text).toBe('about 6 s left');
    expect(plan.videoReady).toEqual({ expectedAt: new Date(submitted + 46_000).toISOString(), late: false, text: 'about 40 s left' });

    // Past the slow tail of the image model (11.6 s): no honest estimate, and the video's is a least.
    accept(of('image').id, Date.now() - 60_000);
    expect((await service.listTasks('Fox', 0, 100)).tasks.find((t) => t.kind === 'image')!.eta).toEqual({ expectedAt: null, late: true, text: 'taking longer than usual' });
    plan = await service.scenePlan('Fox');
    expect(plan.videoReady).toEqual({ expectedAt: null, late: true, text: 'a step is taking longer than usual; at least 35 s more' });

    // A model with no history here: nothing to say, for the step and for the video.
    db.prepare(`UPDATE tasks SET model = 'sim-clip-unseen' WHERE id = ?`).run(of('clip').id);
    accept(of('clip').id, Date.now() - 1_000);
    const clip: TaskView = (await service.listTasks('Fox', 0, 100)).tasks.find((t) => t.kind === 'clip')!;
    expect(clip.eta).toBeNull();
  });

  it('a running render is timed from its claim against the renders made here', async () => {
    const dir = tempDir();
    runtime = await openRuntime(dir, { mediaUrl: (id) => `/media/${id}` });
    const { studio, service } = runtime;
    const db = sqlOf(dir);
    const now = Date.now();
    const project = (await studio.projects.ensure('Fox', now)).id;
    const add = db.prepare(
      `INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, status, next_attempt_at, created_at, updated_at, finished_at, lease_owner, lease_expires_at)
       VALUES (?, 'render', 'local', 'ffmpeg', '{"scenes":[]}', ?, ?, 0, 0, 0, ?, ?, ?) RETURNING id`,
    );
    const claimed = db.prepare(`INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason) VALUES (?, ?, 'PENDING', 'RUNNING', 'engine', 'claimed')`);
    for (const [i, d] of [5_000, 6_000, 7_000].entries()) {
      const start = now - 600_000 + i * 60_000;
      claimed.run((add.get(project, `r${i}`, 'SUCCEEDED', start + d, null, null) as { id: number }).id, start);
    }
    const running = (add.get(project, 'now', 'RUNNING', null, 'someone', now + 60_000) as { id: number }).id;
    claimed.run(running, now - 600_000); // an earlier claim, requeued since
    claimed.run(running, now - 2_000);
    const view = (await service.listTasks('Fox', 0, 10)).tasks.find((t) => t.id === running)!;
    expect(view.eta).toEqual({ expectedAt: new Date(now - 2_000 + 6_000).toISOString(), late: false, text: 'about 4 s left' });
  });
});
