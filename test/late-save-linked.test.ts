import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { beforeAll, describe, expect, it as base } from 'vitest';
import { openStudio } from '../main/studio.ts';
import { openAiImages, realMedia, type Ledger } from './fakes/providers.ts';
import { startFake } from './fakes/server.ts';
import { runStudio, startStudio, whenStopped, writeSettings } from './helpers/processes.ts';
import { storeKinds } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * A worker stalls (SIGSTOP) while saving two OpenAI images it holds in memory; a second worker, once the lease has
 * run out, completes the row from what is on disk; then the first goes on, or is killed. Every file of the attempt
 * ends linked to the task, never onto a result the person deleted, and a task that already holds them all is left
 * alone; on a team whose machines have data folders of their own, the row the other failed as paid is completed.
 * Real processes, a real OpenAI stand-in counting its charges.
 */

let media: Awaited<ReturnType<typeof realMedia>>;
beforeAll(async () => {
  media = await realMedia();
}, 60_000);

const ENGINE = { leaseMs: 1_500, tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200, deadlineMs: 60_000 } };

describe.each(storeKinds())('a save cut halfway by a stall ($kind)', (kind) => {
  const it = base.skipIf(!kind.available);

  it('the other worker finds both files (each was synced before any was placed); the stalled one, going on, links nothing twice: 2 of 2, one charge', async () => {
    const { ledger, dataDir, studio, id, stalled } = await stalledThenOther('mid-save');
    expect(await studio.tasks.outputs(id)).toHaveLength(2);

    stalled.child.kill('SIGCONT');
    expect(await stalled.exited, stalled.stderr()).toBe(0);

    const task = (await studio.tasks.get(id))!;
    const outputs = await studio.tasks.outputs(id);
    expect(task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', remoteRequestId: 'req_1' });
    expect(outputs.map((o) => o.index)).toEqual([0, 1]);
    expect(new Set(outputs.map((o) => o.path)).size).toBe(2);
    for (const o of outputs) {
      const file = isAbsolute(o.path) ? o.path : join(dataDir, o.path);
      expect(createHash('sha256').update(readFileSync(file)).digest('hex')).toBe(o.sha256);
    }
    const events = await studio.tasks.events(id);
    expect(events.at(-1)!.reason).toBe('2 outputs saved');
    expect(ledger.charged).toEqual(['req_1']);
    await studio.close();
  }, 60_000);

  /** A worker stopped (SIGSTOP) at `point` while saving two OpenAI images in hand, and a second worker run to the end. */
  async function stalledThenOther(point: 'mid-save' | 'after-save') {
    const ledger: Ledger = { charged: [] };
    const fake = await startFake(openAiImages(ledger, media.png, { n: 2 }));
    const dataDir = tempDir();
    writeSettings(dataDir, { engine: ENGINE });
    const database = kind.kind === 'postgres' ? await kind.fresh() : undefined;
    const env = {
      ...(database ? { STUDIO_DATABASE_URL: database, STUDIO_MACHINE_NAME: 'machine-a' } : {}),
      STUDIO_OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: 'sk-test-0123456789',
    };
    const studio = await openStudio(dataDir, undefined, { database });
    const project = await studio.projects.ensure('Fox', Date.now());
    const { id } = await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'openai', model: 'gpt-image-1', input: { prompt: 'a fox', n: 2 } }, Date.now());
    const stalled = startStudio(dataDir, ['worker', '--until-idle'], { ...env, STUDIO_STOP_AT: point });
    await stalled.waitFor(new RegExp(`stopped at ${point} for task ${id}`));
    await whenStopped(stalled.child);
    const other = await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect(other.code, other.stderr).toBe(0);
    return { ledger, dataDir, studio, id, stalled };
  }

  it('a worker killed after placing the first of two images loses neither: every file was written and synced before any was placed', async () => {
    const { ledger, studio, id, stalled } = await stalledThenOther('mid-save');
    stalled.child.kill('SIGKILL');
    await stalled.exited;
    expect(await studio.tasks.get(id)).toMatchObject({ status: 'SUCCEEDED', charged: 'yes' });
    const outputs = await studio.tasks.outputs(id);
    expect(outputs.map((o) => o.path.split('/').at(-1))).toEqual(['task-1-a1.png', 'task-1-a1-1.png']);
    for (const o of outputs) expect((await studio.files.file(id, o.index, `task ${id}`))?.state).toBe('here');
    expect((await studio.tasks.events(id)).at(-1)!.reason).toBe('2 outputs saved');
    expect(ledger.charged).toEqual(['req_1']);
    await studio.close();
  }, 60_000);

  it('a late file is never linked onto a result the person deleted: it is kept, and the task says where', async () => {
    const { ledger, studio, id, stalled } = await stalledThenOther('mid-save');
    const saved = await studio.tasks.outputs(id);
    await studio.tasks.forgetOutputs(id, 'deleted by the person in the library', saved.map((o) => o.path), Date.now());
    for (const o of saved) rmSync(studio.media.resolve(o.path), { force: true });
    stalled.child.kill('SIGCONT');
    expect(await stalled.exited, stalled.stderr()).toBe(0);

    expect(await studio.tasks.get(id)).toMatchObject({ status: 'SUCCEEDED', outputPath: null });
    const last = (await studio.tasks.events(id)).at(-1)!;
    expect(last.reason).toMatch(/^the paid result of this attempt is kept at .*task-1-a1\.png, .*task-1-a1-1\.png, but the person had deleted the result of the task$/);
    expect(ledger.charged).toEqual(['req_1']);
    await studio.close();
  }, 60_000);

  it('a worker that goes on after another completed the row with every file says nothing more', async () => {
    const { ledger, studio, id, stalled } = await stalledThenOther('after-save');
    expect(await studio.tasks.outputs(id)).toHaveLength(2);
    stalled.child.kill('SIGCONT');
    expect(await stalled.exited, stalled.stderr()).toBe(0);
    expect((await studio.tasks.events(id)).at(-1)!.reason).toBe('2 outputs saved');
    expect(await studio.tasks.get(id)).toMatchObject({ status: 'SUCCEEDED', note: null });
    expect(ledger.charged).toEqual(['req_1']);
    await studio.close();
  }, 60_000);
});

describe('a save cut halfway, then the data folder moved with mv', () => {
  base('the stalled worker, going on at the old place, links neither image a second time: 2 of 2, one charge', async () => {
    const ledger: Ledger = { charged: [] };
    const fake = await startFake(openAiImages(ledger, media.png, { n: 2 }));
    const root = tempDir();
    const [dataDir, moved] = [join(root, 'ana'), join(root, 'bea')];
    mkdirSync(dataDir);
    writeSettings(dataDir, { engine: ENGINE });
    const env = { STUDIO_OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test-0123456789' };
    const first = await openStudio(dataDir);
    const project = await first.projects.ensure('Fox', Date.now());
    const { id } = await first.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'openai', model: 'gpt-image-1', input: { prompt: 'a fox', n: 2 } }, Date.now());
    await first.close();
    const stalled = startStudio(dataDir, ['worker', '--until-idle'], { ...env, STUDIO_STOP_AT: 'mid-save' });
    await stalled.waitFor(new RegExp(`stopped at mid-save for task ${id}`));
    await whenStopped(stalled.child);
    renameSync(dataDir, moved);
    expect((await runStudio(moved, ['worker', '--until-idle'], env)).code).toBe(0);
    stalled.child.kill('SIGCONT');
    await stalled.exited;

    const studio = await openStudio(moved);
    expect(await studio.tasks.get(id)).toMatchObject({ status: 'SUCCEEDED', charged: 'yes' });
    const outputs = await studio.tasks.outputs(id);
    expect(outputs.map((o) => o.path.split('/').at(-1))).toEqual(['task-1-a1.png', 'task-1-a1-1.png']);
    for (const o of outputs) expect((await studio.files.file(id, o.index, `task ${id}`))?.state).toBe('here');
    expect(ledger.charged).toEqual(['req_1']);
    await studio.close();
  }, 60_000);
});

describe('a save cut halfway on a team of two machines, each with a data folder of its own', () => {
  const pg = storeKinds().find((k) => k.kind === 'postgres')!;

  base.skipIf(!pg.available)('the other machine fails the row as paid but out of reach; the stalled one\'s result completes it: one charge', async () => {
    const ledger: Ledger = { charged: [] };
    const fake = await startFake(openAiImages(ledger, media.png, { n: 2 }));
    const root = tempDir();
    const [a, b] = [join(root, 'a'), join(root, 'b')];
    for (const dir of [a, b]) {
      mkdirSync(dir);
      writeSettings(dir, { engine: ENGINE });
    }
    const database = await pg.fresh();
    const env = { STUDIO_DATABASE_URL: database, STUDIO_OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test-0123456789' };
    const studio = await openStudio(a, undefined, { database });
    const project = await studio.projects.ensure('Fox', Date.now());
    const { id } = await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'openai', model: 'gpt-image-1', input: { prompt: 'a fox', n: 2 } }, Date.now());
    const stalled = startStudio(a, ['worker', '--until-idle'], { ...env, STUDIO_MACHINE_NAME: 'machine-a', STUDIO_STOP_AT: 'mid-save' });
    await stalled.waitFor(new RegExp(`stopped at mid-save for task ${id}`));
    await whenStopped(stalled.child);
    // Machine b has none of a's files: OpenAI keeps no copy of a synchronous result, so it is failed as paid.
    expect((await runStudio(b, ['worker', '--until-idle'], { ...env, STUDIO_MACHINE_NAME: 'machine-b' })).code).toBe(0);
    expect(await studio.tasks.get(id)).toMatchObject({ status: 'FAILED', charged: 'yes' });

    stalled.child.kill('SIGCONT');
    expect(await stalled.exited, stalled.stderr()).toBe(0);
    expect(await studio.tasks.get(id)).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', error: null });
    expect((await studio.tasks.outputs(id)).map((o) => [o.path.split('/').at(-1), o.machine])).toEqual([
      ['task-1-a1.png', 'machine-a'],
      ['task-1-a1-1.png', 'machine-a'],
    ]);
    expect((await studio.tasks.events(id)).at(-1)!.reason).toBe('the paid result of this attempt arrived after the task had moved on; it is kept');
    expect(ledger.charged).toEqual(['req_1']);
    await studio.close();
  }, 60_000);
});
