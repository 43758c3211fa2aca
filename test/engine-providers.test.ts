import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LocalOutputStore } from '../main/adapters/outputStore.ts';
import type { Providers } from '../main/providers/registry.ts';
import type { Faults } from '../main/simulator/faults.ts';
import type { RunningSimulator } from '../main/simulator/server.ts';
import type { Studio } from '../main/studio.ts';
import type { NewTask } from '../main/domain/tasks/model.ts';
import { createSupervisor } from '../main/studio.ts';
import { realMedia } from './fakes/providers.ts';
import { simulatedStudio } from './helpers/simulatedStudio.ts';
import { sqlOf } from './helpers/sql.ts';
import { until } from './helpers/wait.ts';
import { tempDir } from './helpers/tmp.ts';

let sim: RunningSimulator;
let studio: Studio;
let providers: Providers;

async function setup(faults: Faults = {}, engine: Record<string, unknown> = {}) {
  const s = await simulatedStudio({
    jobMs: 300,
    faults,
    settings: (url) => ({
      engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100, deadlineMs: 5_000 }, ...engine },
      providers: { simulator: { baseUrl: url }, fal: { key: 'fal-secret-key-123456', baseUrl: 'http://127.0.0.1:9' } },
    }),
  });
  ({ sim, studio, providers } = s);
  const project = await studio.projects.ensure('Film', Date.now());
  const enqueue = async (t: Partial<NewTask> = {}) =>
    (await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'a fox' }, ...t }, Date.now())).id;
  return { dir: s.dir, enqueue, run: s.work };
}

describe('the engine with the simulator', () => {
  it('saves a checked result and both money figures: the quote before, the bill after', async () => {
    const { enqueue, run } = await setup();
    const id = await enqueue({ kind: 'clip', model: 'sim-clip-1', input: { prompt: 'runs', duration: 1 } });
    await run();
    const task = (await studio.tasks.get(id))!;
    expect(task).toMatchObject({ status: 'SUCCEEDED', costEstimated: 100_000, charged: 'yes' });
    expect(task.costEstimateSource).toBe('simulator quote');
    expect(task.costActual).toBeGreaterThanOrEqual(100_000);
    expect(existsSync(studio.media.resolve(task.outputPath!))).toBe(true);
    expect(readdirSync(join(studio.media.resolve(task.outputPath!), '..')).filter((f) => f.endsWith('.part'))).toEqual([]);
  });

  it('recovers an accepted request whose answer was lost: unknown, looked up before the run ends, adopted, collected, paid once', async () => {
    const { enqueue, run } = await setup({ submit: ['drop-after-accept'] });
    const id = await enqueue();
    await run();
    expect(await studio.tasks.get(id)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: sim.charges[0]!.requestId });
    expect((await studio.tasks.events(id)).map((e) => e.reason)).toContainEqual(expect.stringMatching(/^adopted by the studio after a lookup/));
    expect(sim.charges).toHaveLength(1);
  });

  it('looks up a clip made from another task’s image by the request as it was sent, and adopts it', async () => {
    const { enqueue, run } = await setup();
    const image = await enqueue();
    await run();
    sim.setFaults({ submit: ['drop-after-accept'] });
    const clip = await enqueue({ kind: 'clip', model: 'sim-clip-1', input: { prompt: 'push in', image_url: { $output: image }, duration: 1 }, dependsOn: [image] });
    await run();
    expect((await studio.tasks.events(clip)).map((e) => e.toStatus)).toContain('OUTCOME_UNKNOWN');
    expect(await studio.tasks.get(clip)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: sim.charges[1]!.requestId });
    expect(sim.charges).toHaveLength(2);
  });

  it('never takes a request that already belongs to another task: a twin sent at once holding its own leaves no doubt', async () => {
    const { enqueue, run } = await setup({ submit: ['drop-after-accept'] });
    const lost = await enqueue();
    const twin = await enqueue();
    await run();
    const held = (await studio.tasks.get(twin))!.remoteRequestId;
    expect(await studio.tasks.get(twin)).toMatchObject({ status: 'SUCCEEDED' });
    expect((await studio.tasks.events(lost)).map((e) => e.toStatus)).toContain('OUTCOME_UNKNOWN');
    const own = sim.charges.map((c) => c.requestId).find((id) => id !== held);
    expect(await studio.tasks.get(lost)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: own });
    expect(sim.charges).toHaveLength(2);
  });

  it('requeues what the provider refused before accepting and what it rate limited, and pays once', async () => {
    const { enqueue, run } = await setup({ submit: ['unavailable', 'rate-limit'] });
    const id = await enqueue();
    await run();
    expect(await studio.tasks.get(id)).toMatchObject({ status: 'SUCCEEDED', attempts: 3 });
    expect(sim.charges).toHaveLength(1);
  });

  it('tells the person a result expired at the provider, and counts it as paid', async () => {
    const { enqueue, run } = await setup({ job: ['expired-result'] });
    const id = await enqueue();
    await run();
    const task = (await studio.tasks.get(id))!;
    expect(task).toMatchObject({ status: 'FAILED', charged: 'yes' });
    expect(task.error).toMatch(/no longer has this result.*paid for/);
  });

  it('keeps a request the simulator says is still running past the poll deadline, looked at slowly, never unknown or failed', async () => {
    const { enqueue } = await setup({ job: ['never-finish'] }, { poll: { intervalMs: 50, maxIntervalMs: 100, deadlineMs: 600 } });
    const id = await enqueue();
    const engine = createSupervisor(studio, providers.get);
    engine.start();
    await until(async () => (await studio.tasks.get(id))!.note !== null);
    await engine.stop();
    const task = (await studio.tasks.get(id))!;
    expect(task).toMatchObject({ status: 'SUBMITTED', charged: 'yes', unknownReason: null });
    expect(task.note).toMatch(/still running at the provider/);
    expect(task.nextAttemptAt).toBeGreaterThan(Date.now() + 30_000);
    expect(sim.charges).toHaveLength(1);
  });

  it('fails without charging when a key is missing, naming the variable, and never writes a key anywhere', async () => {
    const { dir, enqueue, run } = await setup();
    const noKey = await enqueue({ provider: 'replicate', model: 'black-forest-labs/flux-schnell' });
    const withKey = await enqueue({ provider: 'fal', model: 'fal-ai/flux/dev', maxAttempts: 1 });
    await run();
    expect(await studio.tasks.get(noKey)).toMatchObject({ status: 'FAILED', charged: 'no' });
    expect((await studio.tasks.get(noKey))!.error).toMatch(/REPLICATE_API_TOKEN/);
    // Nothing listens at that fal address: the request provably never left, so nothing was charged.
    expect(await studio.tasks.get(withKey)).toMatchObject({ status: 'FAILED', charged: 'no' });
    expect((await studio.tasks.get(withKey))!.error).toMatch(/never reached the provider.*ECONNREFUSED/);
    const db = sqlOf(dir);
    const dump = JSON.stringify(db.prepare('SELECT * FROM tasks').all()) + JSON.stringify(db.prepare('SELECT * FROM task_events').all());
    expect(dump).not.toContain('fal-secret-key-123456');
    expect(existsSync(join(dir, 'studio.db'))).toBe(true);
  });
});

describe('output store', () => {
  it('refuses a file that is not the media asked for and leaves nothing behind', async () => {
    const dir = tempDir();
    const store = new LocalOutputStore(dir);
    await expect(
      store.save({ projectId: 1, taskId: 9, idempotencyKey: 'k', kind: 'clip', index: 0, contentType: 'video/mp4' }, Readable.from([Buffer.from('<html>not a video</html>')])),
    ).rejects.toThrow(/not readable media/);
    expect(readdirSync(join(dir, 'projects', '1', 'media'))).toEqual([]);
  });

  it('finds a result only for the attempt that saved it; each attempt\'s files have names of their own', async () => {
    const { png, speech } = await realMedia();
    const store = new LocalOutputStore(tempDir());
    const attempt1 = { projectId: 1, id: 9, idempotencyKey: 'studio-task-9-attempt-1' };
    const attempt2 = { ...attempt1, idempotencyKey: 'studio-task-9-attempt-2' };
    const target = (key: string) => ({ projectId: 1, taskId: 9, idempotencyKey: key, kind: 'image' as const, index: 0, contentType: 'image/png' });
    const first = await store.keep(target(attempt1.idempotencyKey), png.bytes);
    await store.record(attempt1, { idempotencyKey: attempt1.idempotencyKey, requestId: 'req-1', costActual: null, outputs: [first] });
    expect(await store.find(attempt1)).toMatchObject({ requestId: 'req-1', missing: 0, outputs: [{ path: first.path }] });
    // A person resubmitted: the new attempt is never completed with the old attempt's file, nor written over it.
    expect(await store.find(attempt2)).toBeNull();
    expect(store.has(attempt2)).toBe(false);
    const second = await store.keep({ ...target(attempt2.idempotencyKey), kind: 'speech', contentType: 'audio/wav' }, speech.bytes);
    expect(second.path).not.toBe(first.path);
    expect((await store.find(attempt1))!.outputs[0]!.sha256).toBe(first.sha256);
  });

  it('finds bytes in hand by the record written before them: a synced temporary file is put in place, a file never written is missing', async () => {
    const { png } = await realMedia();
    const dir = tempDir();
    const store = new LocalOutputStore(dir);
    const attempt = { projectId: 1, id: 9, idempotencyKey: 'studio-task-9-attempt-1' };
    const target = (index: number) => ({ projectId: 1, taskId: 9, idempotencyKey: attempt.idempotencyKey, kind: 'image' as const, index, contentType: 'image/png' });
    const planned = [store.plan(target(0), png.bytes), store.plan(target(1), png.bytes)];
    await store.record(attempt, { idempotencyKey: attempt.idempotencyKey, requestId: 'req_1', costActual: null, outputs: planned });
    // The studio died after syncing the first file's temporary copy, before renaming it, and before the second.
    mkdirSync(join(dir, 'projects', '1', 'media'), { recursive: true });
    writeFileSync(join(dir, `${planned[0]!.path}.0badc0de.part`), png.bytes);
    const found = await store.find(attempt);
    expect(found).toMatchObject({ missing: 1, outputs: [{ path: planned[0]!.path }] });
    expect(readFileSync(join(dir, planned[0]!.path))).toEqual(png.bytes);
  });

  it('keeps paid bytes that are not the media asked for under a name no recovery takes for a result', async () => {
    const dir = tempDir();
    const store = new LocalOutputStore(dir);
    const attempt = { projectId: 1, id: 9, idempotencyKey: 'studio-task-9-attempt-1' };
    await expect(store.keep({ ...attempt, taskId: 9, kind: 'image', index: 0, contentType: 'image/png' }, Buffer.from('{"error":"no"}'))).rejects.toThrow(/kept at .*\.unusable/);
    expect(readdirSync(join(dir, 'projects', '1', 'media'))).toEqual(['task-9-a1.png.unusable']);
    expect(await store.find(attempt)).toBeNull();
  });
});
