import { unlinkSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { EstimateView, TaskPage, UnknownTask } from '../main/api/contract.ts';
import { launchHost, type LaunchedHost } from '../main/host/launch.ts';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { openStudio, type Studio } from '../main/studio.ts';
import { writeSettings } from './helpers/processes.ts';
import { apiCaller } from './helpers/studioApi.ts';
import { tempDir } from './helpers/tmp.ts';

let host: LaunchedHost | undefined;
let sim: RunningSimulator | undefined;
let studio: Studio | undefined;
afterEach(async () => {
  await host?.stop();
  await studio?.close();
  await sim?.close();
  host = sim = studio = undefined;
});

/** The loopback host (engine included) on a data folder whose provider is a simulator this test holds. */
async function start() {
  sim = await startSimulator({ jobMs: 50 });
  const dir = tempDir();
  writeSettings(dir, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } } });
  host = await launchHost(dir);
  studio = await openStudio(dir);
  return studio;
}

const call = apiCaller(() => host);

async function eventually<T>(read: () => Promise<T>, holds: (value: T) => boolean): Promise<T> {
  const end = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    if (Date.now() > end) throw new Error(`never held; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the StudioApi keeps one purchase per result', () => {
  it('answers 400, naming the other task, to an adoption of a request that already belongs to it', async () => {
    const studio = await start();
    const project = await studio.projects.ensure('Fox', Date.now());
    const enqueue = (prompt: string) =>
      studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt } }, Date.now());
    const first = await enqueue('first');
    await eventually(async () => (await studio.tasks.get(first.id))!, (t) => t.status === 'SUCCEEDED');
    sim!.setFaults({ submit: ['drop-after-accept'] });
    await enqueue('second');
    const [unknown] = await eventually(async () => (await call<UnknownTask[]>('unknownTasks')).result, (list) => list.length === 1);
    const taken = (await studio.tasks.get(first.id))!.remoteRequestId!;

    const refused = await call('resolve', unknown!.id, { adopt: taken });
    expect(refused.status).toBe(400);
    expect(refused.error).toMatch(new RegExp(`^request ${taken} already belongs to task ${first.id} \\(SUCCEEDED\\)`));
    expect(await studio.tasks.get(unknown!.id)).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null });
    expect((await studio.tasks.events(unknown!.id)).map((e) => e.reason)).not.toContain('adopted a request id found at the provider');
  }, 30_000);

  it('lists a paid step whose result was lost, refuses to buy it again with 400, and buys it when confirmed', async () => {
    const studio = await start();
    expect((await call('createProject', 'Fox')).status).toBe(200);
    await call('saveStoryboard', 'Fox', { width: 320, height: 180, scenes: [{ id: 'dawn', imagePrompt: 'a fox asleep', motionPrompt: 'push in', duration: 1 }] });
    expect((await call('generate', 'Fox')).status).toBe(200);
    const done = await eventually(async () => (await call<TaskPage>('listTasks', 'Fox', 0, 50)).result.tasks, (ts) => ts.length === 3 && ts.every((t) => t.status === 'SUCCEEDED'));
    const clip = done.find((t) => t.kind === 'clip')!;
    unlinkSync(studio.media.resolve((await studio.tasks.get(clip.id))!.outputPath!));
    unlinkSync(studio.media.resolve((await studio.tasks.get(done.find((t) => t.kind === 'render')!.id))!.outputPath!));

    const { result: estimate } = await call<EstimateView>('estimate', 'Fox');
    expect(estimate.steps.find((s) => s.key === 'dawn:clip')).toMatchObject({
      action: 'rebuy',
      lost: { taskId: clip.id, paid: 'yes', cost: clip.costActual ?? clip.costEstimated, currency: 'USD', why: 'its output file is gone' },
    });
    const refused = await call('generate', 'Fox');
    expect(refused.status).toBe(400);
    expect(refused.error).toMatch(/^dawn:clip was paid, result lost: .*needs your confirmation; nothing was enqueued\.$/);
    expect(await studio.tasks.list()).toHaveLength(3);

    const confirmed = await call<EstimateView>('generate', 'Fox', [], { rebuyLost: true });
    expect(confirmed.status).toBe(200);
    expect(confirmed.result.steps.filter((s) => s.action !== 'reuse').map((s) => s.key)).toEqual(['dawn:clip', 'render']);
    expect(await studio.tasks.list()).toHaveLength(5);
  }, 30_000);
});
