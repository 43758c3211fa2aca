import { cpSync, existsSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { TaskDetail } from '../main/api/contract.ts';
import { ApiError } from '../main/api/studioService.ts';
import type { LaunchedHost } from '../main/host/launch.ts';
import { openRuntime } from '../main/runtime.ts';
import { sha256File } from '../main/media/checksum.ts';
import { openProviders } from '../main/providers/registry.ts';
import type { RunningSimulator } from '../main/simulator/server.ts';
import { createSupervisor, openStudio } from '../main/studio.ts';
import { cli } from './helpers/cli.ts';
import { freshDatabase, postgresAvailable } from './helpers/postgres.ts';
import { writeSettings } from './helpers/processes.ts';
import { hostForTest, simulatorForTest } from './helpers/running.ts';
import { tempDir } from './helpers/tmp.ts';

let sim: RunningSimulator | undefined;
let host: LaunchedHost | undefined;

const CLIP = ['enqueue', '--project', 'Fox', '--kind', 'clip', '--provider', 'simulator', '--model', 'sim-clip-1', '--input', '{"prompt":"a fox runs","duration":1}'];

/** A machine's data folder: its name and media folder in its settings, the simulator as its provider. */
function machine(name: string, media: string | null) {
  const dir = tempDir();
  writeSettings(dir, {
    engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } },
    providers: { simulator: { baseUrl: sim!.url } },
    team: { machineName: name, ...(media ? { mediaDir: media } : {}) },
  });
  return dir;
}

/** A team database and two machines on it, studio-a and studio-b, each saving into a media folder of its own. */
async function unsharedTeam() {
  const simulator = (sim = await simulatorForTest({ jobMs: 50 }));
  const url = await freshDatabase();
  const [mediaA, mediaB] = [tempDir(), tempDir()];
  return { simulator, url, mediaA, mediaB, dirA: machine('studio-a', mediaA), dirB: machine('studio-b', mediaB) };
}

function get(path: string): Promise<{ status: number; text: string }> {
  const url = new URL(host!.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: url.port, path, headers: { host: url.host, authorization: `Bearer ${host!.token}` } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function api<T>(method: string, ...args: unknown[]): Promise<T> {
  const url = new URL(host!.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: url.port, path: `/api/${method}`, method: 'POST', headers: { host: url.host, authorization: `Bearer ${host!.token}`, 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve(JSON.parse(text).result as T));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(args));
  });
}

describe('outputs on the embedded store with a media folder', () => {
  it('are saved in the database\'s own folder in it, kept relative to it, with this machine\'s name', async () => {
    sim = await simulatorForTest({ jobMs: 50 });
    const media = tempDir();
    const dir = machine('studio-a', media);
    expect((await cli(dir, ...CLIP)).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    const studio = await openStudio(dir);
    try {
      const [output] = await studio.tasks.outputs(1);
      expect(output).toMatchObject({ machine: 'studio-a' });
      expect(output!.path).toMatch(/^local-[0-9a-f]{12}\/projects\/1\/media\/task-1-a1\.mp4$/);
      expect(await sha256File(join(media, output!.path))).toBe(output!.sha256);
      expect((await studio.tasks.get(1))!.outputPath).toBe(output!.path);
    } finally {
      await studio.close();
    }
  });
});

describe('the media folder in Settings', () => {
  it('is saved as a full path for the next start, and a path that is not one is refused with nothing written', async () => {
    const dataDir = tempDir();
    const runtime = await openRuntime(dataDir, { mediaUrl: (id) => `/media/${id}` });
    onTestFinished(() => runtime.stop());
    await expect(runtime.service.saveTeam({ mediaDir: 'media' })).rejects.toThrow(
      new ApiError('"media" is not a full path; give the media folder\'s full path on this machine, like /mnt/studio-media'),
    );
    const saved = await runtime.service.saveTeam({ mediaDir: ' /mnt/studio-media ' });
    expect(saved.team).toMatchObject({ mediaDir: null, savedMediaDir: '/mnt/studio-media' });
    expect(JSON.parse(readFileSync(join(dataDir, 'settings.json'), 'utf8')).team).toEqual({ mediaDir: '/mnt/studio-media' });
    await runtime.service.saveTeam({ mediaDir: null });
    expect(JSON.parse(readFileSync(join(dataDir, 'settings.json'), 'utf8')).team).toBeUndefined();
  });
});

describe.skipIf(!postgresAvailable)('a team whose machines do not share their media folders', () => {
  it('says which machine has a file: the render, the media endpoint and the task detail; and that a changed file is changed', async () => {
    const { url, mediaA, mediaB, dirA, dirB } = await unsharedTeam();

    // studio-b makes a clip: it lands in studio-b's media folder only.
    expect((await cli(dirB, '--db', url, ...CLIP)).code).toBe(0);
    expect((await cli(dirB, '--db', url, 'worker', '--until-idle')).code).toBe(0);
    const a = await openStudio(dirA, undefined, { database: url });
    const providers = await openProviders(a.settings, dirA, {});
    try {
      const [clip] = await a.tasks.list({ status: 'SUCCEEDED' });
      const [saved] = await a.tasks.outputs(clip!.id);
      expect(saved).toMatchObject({ machine: 'studio-b', path: expect.stringMatching(new RegExp(`^team-[0-9a-f]{12}/projects/1/media/task-${clip!.id}-a1\\.mp4$`)) });
      expect(existsSync(join(mediaB, saved!.path))).toBe(true);

      // studio-a renders it: the render says where the clip is and what to do.
      const project = (await a.projects.byName('Fox'))!;
      const input = { width: 320, height: 180, fps: 24, scenes: [{ duration: 1, clip: { $output: clip!.id }, narration: null }] };
      const render = await a.tasks.enqueue({ projectId: project.id, kind: 'render', provider: 'local', model: 'ffmpeg', input, dependsOn: [clip!.id] }, Date.now());
      await createSupervisor(a, providers.get).runUntilIdle();
      expect((await a.tasks.get(render.id))!.error).toBe(
        `the render cannot start: scene 1's clip was saved on machine 'studio-b' at ${saved!.path}; it is not in this machine's media folder ${mediaA}: ` +
          'share the media folder (Settings → Media folder, or --media)',
      );

      host = await hostForTest(dirA, { database: url });
      const missing = await get(`/media/${clip!.id}`);
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.text).error).toBe(
        `task ${clip!.id}'s result was saved on machine 'studio-b' at ${saved!.path}; it is not in this machine's media folder ${mediaA}: ` +
          'share the media folder (Settings → Media folder, or --media)',
      );
      const detail = await api<TaskDetail>('taskDetail', clip!.id);
      expect(detail.files[0]).toMatchObject({ machine: 'studio-b', problem: JSON.parse(missing.text).error });

      // Shared at last (the folder mounted on both): the file is found where this machine mounts it.
      cpSync(mediaB, mediaA, { recursive: true });
      const shown = await get(`/media/${clip!.id}`);
      expect(shown.status).toBe(200);
      expect((await api<TaskDetail>('taskDetail', clip!.id)).files[0]!.problem).toBeNull();

      // The same name with other bytes is not the file that was paid for.
      writeFileSync(join(mediaA, saved!.path), 'not the clip');
      const changed = await get(`/media/${clip!.id}`);
      expect(changed.status).toBe(409);
      expect(JSON.parse(changed.text).error).toBe(
        `task ${clip!.id}'s result at ${join(mediaA, saved!.path)} is not the file machine 'studio-b' saved: its checksum differs, so it was changed or damaged since it was saved`,
      );
    } finally {
      await providers.close();
      await a.close();
    }
  });
});

describe.skipIf(!postgresAvailable)('a Generate on a machine that does not see the files another machine saved', () => {
  it('names the machine that has each result, calls none of them lost, and buys them again only when told', async () => {
    const { simulator, url, mediaA, dirA, dirB } = await unsharedTeam();
    const board = join(dirB, 'board.json');
    writeFileSync(
      board,
      JSON.stringify({
        width: 320,
        height: 180,
        fps: 24,
        steps: { image: { provider: 'simulator', model: 'sim-image-1' }, clip: { provider: 'simulator', model: 'sim-clip-1' } },
        scenes: [{ id: 'dawn', imagePrompt: 'a fox asleep in snow', motionPrompt: 'push in', duration: 1 }],
      }),
    );
    for (const args of [['storyboard', 'create', 'Fox', '--file', board], ['generate', 'Fox'], ['worker', '--until-idle']]) {
      const run = await cli(dirB, '--db', url, ...args);
      expect(run.code, run.err).toBe(0);
    }
    const charged = simulator.charges.length;
    const a = await openStudio(dirA, undefined, { database: url });
    let saved: Map<string, { id: number; path: string }>;
    try {
      saved = new Map();
      for (const t of await a.tasks.list({ status: 'SUCCEEDED' })) {
        const [output] = await a.tasks.outputs(t.id);
        expect(output).toMatchObject({ machine: 'studio-b' });
        saved.set(t.kind, { id: t.id, path: output!.path });
      }
    } finally {
      await a.close();
    }
    const words = (kind: string) =>
      `its result was saved on machine 'studio-b' at ${saved.get(kind)!.path}; it is not in this machine's media folder ${mediaA}: ` +
      'share the media folder (Settings → Media folder, or --media)';
    const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

    const estimate = await cli(dirA, '--db', url, 'estimate', 'Fox', '--json');
    expect(estimate.code, estimate.err).toBe(0);
    const steps = (JSON.parse(estimate.out) as { steps: { key: string; action: string; lost: unknown }[] }).steps;
    expect(steps.filter((s) => s.action === 'rebuy').map((s) => [s.key, s.lost])).toEqual([
      ['dawn:image', expect.objectContaining({ taskId: saved.get('image')!.id, savedOn: 'studio-b', why: words('image') })],
      ['dawn:clip', expect.objectContaining({ taskId: saved.get('clip')!.id, savedOn: 'studio-b', why: words('clip') })],
    ]);

    const refused = await cli(dirA, '--db', url, 'generate', 'Fox');
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(
      new RegExp(
        `^studio: paid for before, result not on this machine: ` +
          `dawn:image \\(task ${saved.get('image')!.id}, \\d+\\.\\d{2,6} USD\\): ${esc(words('image'))}; ` +
          `dawn:clip \\(task ${saved.get('clip')!.id}, \\d+\\.\\d{2,6} USD\\): ${esc(words('clip'))}; ` +
          `nothing was enqueued\\. To buy again, run "studio generate Fox --rebuy-lost"\\.$`,
      ),
    );
    expect(refused.err).not.toMatch(/result lost|file is gone/);
    expect(simulator.charges).toHaveLength(charged);

    // On the machine that has the files, nothing is bought again.
    const there = await cli(dirB, '--db', url, 'estimate', 'Fox', '--json');
    expect((JSON.parse(there.out) as { steps: { action: string }[] }).steps.map((s) => s.action)).toEqual(['reuse', 'reuse', 'reuse']);

    const confirmed = await cli(dirA, '--db', url, 'generate', 'Fox', '--rebuy-lost');
    expect(confirmed.code, confirmed.err).toBe(0);
    expect(confirmed.out).toContain(`dawn:clip: paid, result not on this machine: task ${saved.get('clip')!.id} cost`);
    const rebought = await cli(dirA, '--db', url, 'worker', '--until-idle');
    expect(rebought.code, rebought.err).toBe(0);
    expect(simulator.charges).toHaveLength(charged + 2);
  });
});
