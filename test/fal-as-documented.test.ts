import { beforeAll, describe, expect, it } from 'vitest';
import { openStudio } from '../main/studio.ts';
import { FAL_MODEL, falQueue, realMedia, type FalOptions, type Ledger } from './fakes/providers.ts';
import { startFake, type FakeServer } from './fakes/server.ts';
import { runStudio, startStudio, writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

/**
 * fal's answers as fal documents them, against real worker processes and a real SQLite file: a failed request's
 * error in its result URL's answer, cancel answered as fal's per-endpoint OpenAPI documents it, and URLs in a
 * submit answer that are not fal's. Charges are counted at the stand-in.
 */

let media: Awaited<ReturnType<typeof realMedia>>;
beforeAll(async () => {
  media = await realMedia();
}, 60_000);

/** A short poll deadline: a result error taken for a passing one would run into it and leave the outcome unknown. */
const ENGINE = { leaseMs: 60_000, tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200, deadlineMs: 4_000 } };
const KEY = 'fal-key-0123456789';

async function setup(opts: FalOptions, engine = ENGINE) {
  const ledger: Ledger = { charged: [] };
  const fake = await startFake(falQueue(ledger, media.png, opts));
  const dataDir = tempDir();
  writeSettings(dataDir, { engine });
  const studio = await openStudio(dataDir);
  const project = await studio.projects.ensure('fal as documented', Date.now());
  const id = (await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: FAL_MODEL, input: { prompt: 'a fox' } }, Date.now())).id;
  await studio.close();
  return { ledger, fake, dataDir, id, env: { STUDIO_FAL_BASE_URL: fake.url, FAL_KEY: KEY } };
}

async function read(dataDir: string, id: number) {
  const studio = await openStudio(dataDir);
  try {
    const task = (await studio.tasks.get(id))!;
    return { task, events: await studio.tasks.events(id), spend: (await studio.tasks.spend(task.projectId))[0]! };
  } finally {
    await studio.close();
  }
}

const resultAsks = (fake: FakeServer) => fake.count('GET', /\/requests\/fal-req-1$/);

describe('a failed fal request, as fal reports it: COMPLETED, the error in the result answer', () => {
  it('a request error (504, X-Fal-Error-Type request_timeout) ends the task at once: FAILED, not charged, nothing in the money views', async () => {
    const { ledger, fake, dataDir, id, env } = await setup({ resultError: 'request' });
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    const { task, spend } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'FAILED', charged: 'no', remoteRequestId: 'fal-req-1' });
    expect(task.error).toMatch(/Request timed out \(request_timeout, HTTP 504\)/);
    expect(resultAsks(fake)).toBe(1);
    expect(spend).toMatchObject({ actual: 0, estimated: 0, possiblyCharged: 0 });
    expect(ledger.charged).toEqual(['fal-req-1']);
  });

  it('a model error (422 with a detail array) ends the task at once: FAILED, possibly charged, shown as possibly charged', async () => {
    const { ledger, fake, dataDir, id, env } = await setup({ resultError: 'model' });
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    const { task, spend } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'FAILED', charged: 'maybe' });
    expect(task.error).toMatch(/the model refused the request: prompt: The content could not be processed.*\(HTTP 422\)/);
    expect(resultAsks(fake)).toBe(1);
    expect(task.costEstimated).toBeGreaterThan(0);
    expect(spend).toMatchObject({ actual: 0, estimated: 0, possiblyCharged: task.costEstimated });
    expect(ledger.charged).toHaveLength(1);
  });

  it('a 502 without fal\'s markers stays a passing failure: asked again, and the paid result is collected', async () => {
    const { ledger, fake, dataDir, id, env } = await setup({ resultError: 'gateway' });
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes' });
    expect(resultAsks(fake)).toBe(2);
    expect(ledger.charged).toHaveLength(1);
  });
});

describe('fal retries its own server failures', () => {
  it('the submit does not send x-fal-no-retry: a run that failed on fal\'s runner is retried by fal, and the result collected, paid once', async () => {
    const { ledger, fake, dataDir, id, env } = await setup({ runnerFailsOnce: true });
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', remoteRequestId: 'fal-req-1' });
    const post = fake.seen.find((s) => s.method === 'POST')!;
    expect(post.headers).not.toHaveProperty('x-fal-no-retry');
    expect(ledger.charged).toEqual(['fal-req-1']);
  });
});

describe('cancel and the URLs fal gives', () => {
  it('a cancel answered {"success": true} (fal\'s OpenAPI): the task is kept, said so, and collected if the request finishes', async () => {
    // Each request runs for 40 status calls, so the cancel command arrives while it runs.
    const { ledger, fake, dataDir, id, env } = await setup({ cancelBody: { success: true }, polls: 40 }, { ...ENGINE, poll: { ...ENGINE.poll, deadlineMs: 60_000 } });
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    await until(async () => (await read(dataDir, id)).task.status === 'SUBMITTED');
    const cancel = await runStudio(dataDir, ['cancel', String(id)], env);
    expect(cancel.stderr).toBe('');
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toMatch(/not cancelled yet: asked fal to cancel request fal-req-1/);
    expect(await worker.exited).toBe(0);
    const { task, events } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes' });
    expect(events.map((e) => e.reason).join('\n')).toMatch(/asked fal to cancel request fal-req-1/);
    expect(fake.count('PUT', /\/requests\/fal-req-1\/cancel$/)).toBe(1);
    expect(ledger.charged).toHaveLength(1);
  });

  it('URLs in the submit answer off fal\'s queue host and the configured base are not followed: the request is reached by its id, the key stays home', async () => {
    const elsewhere = await startFake(() => undefined);
    const { ledger, fake, dataDir, id, env } = await setup({ urlsOn: elsewhere.url });
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', remoteRequestId: 'fal-req-1' });
    expect(elsewhere.seen).toEqual([]);
    expect(fake.count('GET', /^\/fal-ai\/flux\/requests\/fal-req-1\/status/)).toBeGreaterThan(0);
    expect(ledger.charged).toHaveLength(1);
  });
});
