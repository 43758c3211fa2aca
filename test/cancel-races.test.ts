import { beforeAll, describe, expect, test as base } from 'vitest';
import { cancelTask, DecisionRefused } from '../main/engine/decisions.ts';
import type { ProviderAdapter } from '../main/providers/port.ts';
import { openStudio } from '../main/studio.ts';
import { SENT_BEFORE_CANCEL } from '../main/domain/tasks/cancelledAfterPaid.ts';
import type { NewTask } from '../main/domain/tasks/model.ts';
import { FAL_MODEL, falQueue, openAiImages, realMedia, type Ledger } from './fakes/providers.ts';
import { enqueueIn, falImage as falImageWith, openAiImage, paidStudio, readTask, studioAt } from './helpers/paidStudio.ts';
import { runStudio, startStudio, whenStopped } from './helpers/processes.ts';
import { storeKinds, type StoreKind } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

/**
 * Cancels that race the provider, with real worker processes stopped (SIGSTOP) or killed (SIGKILL) at the worst
 * moment, and stand-ins answering as each provider documents: fal's cancel answers OK (removed from the queue, and "you
 * are never charged for ... time spent waiting in the queue": fal.ai/docs/documentation/model-apis/pricing),
 * CANCELLATION_REQUESTED (the runner is only signalled and may finish) or ALREADY_COMPLETED
 * (fal.ai/docs/inference-api/queue/cancel); OpenAI's image API has no cancel. The stand-ins count every charge.
 */

let media: Awaited<ReturnType<typeof realMedia>>;
beforeAll(async () => {
  media = await realMedia();
}, 60_000);

const [SQLITE, POSTGRES] = storeKinds() as [StoreKind, StoreKind];
const setup = paidStudio;
const enqueue = (dataDir: string, task: Omit<NewTask, 'projectId'>) => enqueueIn(dataDir, task, 'Races');

async function read(dataDir: string, id: number) {
  const { events, ...rest } = await readTask(dataDir, id);
  return { ...rest, reasons: events.map((e) => e.reason).join('\n') };
}

const falImage = falImageWith();

describe.each([SQLITE, POSTGRES])('cancels that race the provider ($kind)', (kind) => {
  const it = base.skipIf(!kind.available);

  it.each([
    ['OpenAI', (l: Ledger) => openAiImages(l, media.png), openAiImage],
    ['fal', (l: Ledger) => falQueue(l, media.png, { jobMs: 500 }), falImage],
  ] as const)('%s: a worker stalled after the mark never sends what a completed cancel stopped', async (_, route, task) => {
    const { ledger, fake, dataDir, env } = await setup(route, kind);
    const id = await enqueue(dataDir, task);
    const worker = startStudio(dataDir, ['worker', '--until-idle'], { ...env, STUDIO_STOP_AT: 'after-mark' });
    await worker.waitFor(/stopped at after-mark/);
    await whenStopped(worker.child);
    const cancel = await runStudio(dataDir, ['cancel', String(id)], env);
    worker.child.kill('SIGCONT');
    expect(await worker.exited).toBe(0);
    expect(fake.count('POST', /./)).toBe(0);
    expect(ledger.charged).toHaveLength(0);
    expect(cancel.stdout).toMatch(/cancelled; its request was being sent to \w+, so it may have been sent and charged/);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'CANCELLED', charged: 'no', remoteRequestId: null });
  }, 60_000);

  it('OpenAI: cancelled while its named answer is still arriving, the cancel says it may be charged, and the result that arrives is kept', async () => {
    const { ledger, fake, dataDir, env } = await setup((l) => openAiImages(l, media.png, { holdBodyMs: 10_000 }), kind);
    const id = await enqueue(dataDir, openAiImage);
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    // OpenAI names the request in its headers (x-request-id), then sends the image: the cancel comes in between.
    await until(() => fake.count('POST', /./) === 1);
    await new Promise((r) => setTimeout(r, 500));
    const cancel = await runStudio(dataDir, ['cancel', String(id)], env);
    expect(cancel.stderr).toBe('');
    expect(cancel.stdout).toMatch(/cancelled; openai had named its request req_1 and its answer was still arriving, so it may be charged/);
    expect(await worker.exited).toBe(0);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes' });
    expect(fake.count('POST', /./)).toBe(1);
    expect(ledger.charged).toHaveLength(1);
  }, 60_000);

  it('fal: a worker killed during its late cancel leaves the request followed, and its paid result is collected', async () => {
    const ledger: Ledger = { charged: [] };
    const state: { kill?: number } = {};
    const inner = falQueue(ledger, media.png, { submitDelayMs: 8_000, jobMs: 5_000, cancelAnswer: [202, 'CANCELLATION_REQUESTED'] });
    const { fake, dataDir, env } = await setup(
      () => async (req, res) => {
        if (req.method === 'PUT' && /\/cancel$/.test(req.path) && state.kill) {
          process.kill(state.kill, 'SIGKILL');
          state.kill = undefined;
          return void res.socket?.destroy();
        }
        return inner(req, res);
      },
      kind,
    );
    const id = await enqueue(dataDir, falImage);
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    state.kill = worker.child.pid;
    await until(() => fake.count('POST', /./) === 1);
    expect((await runStudio(dataDir, ['cancel', String(id)], env)).code).toBe(0);
    await worker.exited;
    expect(fake.count('PUT', /\/cancel$/)).toBe(1);
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    const { task, outputs, reasons } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', remoteRequestId: ledger.charged[0], note: SENT_BEFORE_CANCEL });
    expect(outputs).toHaveLength(1);
    expect(reasons).toMatch(/was sent before the cancel reached the worker/);
    expect(reasons).not.toMatch(/after the provider had finished/);
    expect(ledger.charged).toHaveLength(1);
  }, 90_000);

  it('fal: a late cancel fal answers OK leaves the task cancelled and not charged', async () => {
    const { ledger, fake, dataDir, env } = await setup((l) => falQueue(l, media.png, { submitDelayMs: 8_000, jobMs: 5_000, cancelAnswer: [200, 'OK'] }), kind);
    const id = await enqueue(dataDir, falImage);
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    await until(() => fake.count('POST', /./) === 1);
    expect((await runStudio(dataDir, ['cancel', String(id)], env)).code).toBe(0);
    expect(await worker.exited).toBe(0);
    const { task, reasons } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'CANCELLED', charged: 'no', remoteRequestId: ledger.charged[0] });
    expect(reasons).toMatch(/fal stopped it before it ran, which it does not charge for/);
  }, 60_000);

  it('fal: cancelled while sending, then the worker is killed: the request is looked up, found and its paid result collected', async () => {
    const { ledger, fake, dataDir, env } = await setup((l) => falQueue(l, media.png, { submitDelayMs: 8_000, jobMs: 500, cancelAnswer: [400, 'ALREADY_COMPLETED'] }), kind);
    const id = await enqueue(dataDir, falImage);
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    await until(() => fake.count('POST', /./) === 1);
    expect((await runStudio(dataDir, ['cancel', String(id)], env)).code).toBe(0);
    worker.child.kill('SIGKILL');
    await worker.exited;
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'CANCELLED', charged: 'maybe', remoteRequestId: null });
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    const { task, outputs, reasons } = await read(dataDir, id);
    expect(reasons).toMatch(/found the request sent before the cancel after a lookup/);
    expect(task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', remoteRequestId: ledger.charged[0], note: SENT_BEFORE_CANCEL });
    expect(outputs).toHaveLength(1);
    expect(ledger.charged).toHaveLength(1);
  }, 90_000);

  it('fal: a request named after the cancel that a process which died left unfollowed (data from before) is followed and collected', async () => {
    const { ledger, fake, dataDir, env } = await setup((l) => falQueue(l, media.png, { jobMs: 200, cancelAnswer: [400, 'ALREADY_COMPLETED'] }), kind);
    const id = await enqueue(dataDir, falImage);
    // The request fal took, and the row a crash left: cancelled while it was being sent, holding the id named after
    // the cancel, with nothing said since of what became of it.
    expect((await fetch(`${fake.url}/${FAL_MODEL}`, { method: 'POST', body: JSON.stringify(falImage.input) })).status).toBe(200);
    const studio = await studioAt(dataDir);
    try {
      const lease = { owner: 'gone', now: Date.now() };
      await studio.tasks.claim('image', 1, 60_000, lease);
      await studio.tasks.markSubmitStarted(id, 'k1', 60_000, lease);
      await studio.tasks.cancel(id, Date.now());
      expect(await studio.tasks.foundAfterCancel(id, 'k1', ledger.charged[0]!, 'as a crash left it', {}, Date.now())).toBeDefined();
      expect((await studio.tasks.unfollowedAfterCancel()).map((t) => t.id)).toEqual([id]);
    } finally {
      await studio.close();
    }
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    const { task, outputs, reasons } = await read(dataDir, id);
    expect(reasons).toMatch(/was sent before the cancel reached the worker; fal had already finished it/);
    expect(task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', remoteRequestId: ledger.charged[0], note: SENT_BEFORE_CANCEL });
    expect(outputs).toHaveLength(1);
    expect(ledger.charged).toHaveLength(1);
  }, 60_000);

  // The cancel is a cold command (over 3 s on a loaded machine) that must reach fal while the job still runs, so the job
  // takes 8 s: one that ends first rightly lets the dependent be bought.
  it.each([
    ['passes the cancel on (CANCELLATION_REQUESTED) and finishes', [202, 'CANCELLATION_REQUESTED'], 8_000],
    ['fails the cancel with a 503', [503, 'x'], 8_000],
  ] as const)('fal %s: the pending dependent is cancelled with it and never bought', async (_, answer, jobMs) => {
    const { ledger, fake, dataDir, env } = await setup((l) => falQueue(l, media.png, { jobMs, cancelAnswer: [...answer] as [number, 'CANCELLATION_REQUESTED'] }), kind);
    const a = await enqueue(dataDir, falImage);
    const b = await enqueue(dataDir, { ...falImage, input: { prompt: 'a fox, later' }, dependsOn: [a] });
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    await until(() => fake.count('POST', /./) === 1);
    await new Promise((r) => setTimeout(r, 500));
    await runStudio(dataDir, ['cancel', String(a)], env);
    expect(await worker.exited).toBe(0);
    const dependent = (await read(dataDir, b)).task;
    expect((await read(dataDir, b)).reasons).toMatch(new RegExp(`cancelled with task ${a}`));
    expect(dependent).toMatchObject({ status: 'CANCELLED', charged: 'no', error: `cancelled with task ${a}, which this one needs` });
    expect((await read(dataDir, a)).task.status).not.toBe('PENDING');
    expect(ledger.charged).toHaveLength(1);
  }, 60_000);

  it('fal: a cancel whose answer hangs returns within seconds, and the task never claims fal had finished', async () => {
    const ledger: Ledger = { charged: [] };
    const inner = falQueue(ledger, media.png, { polls: 1_000 });
    const { dataDir, env } = await setup(
      () => async (req, res) => {
        if (req.method === 'PUT' && /\/cancel$/.test(req.path)) await new Promise((r) => setTimeout(r, 40_000));
        return inner(req, res);
      },
      kind,
    );
    const id = await enqueue(dataDir, falImage);
    const worker = startStudio(dataDir, ['worker'], env);
    await until(async () => (await read(dataDir, id)).task.status === 'SUBMITTED');
    const started = Date.now();
    const cancel = await runStudio(dataDir, ['cancel', String(id)], env);
    expect(Date.now() - started).toBeLessThan(12_000);
    expect(cancel.stderr).toMatch(/fal did not answer the cancel of request fal-req-1 \(no answer within 5 s\)/);
    worker.child.kill('SIGKILL');
    await worker.exited;
    const { reasons } = await read(dataDir, id);
    expect(reasons).not.toMatch(/had (already )?finished/);
    expect(ledger.charged).toHaveLength(1);
  }, 60_000);
});

describe('the words of a cancel whose request had ended', () => {
  base('a request Replicate answers the cancel of as failed is never called a paid result to collect', async () => {
    const dataDir = tempDir();
    const studio = await openStudio(dataDir);
    try {
      const project = await studio.projects.ensure('Races', Date.now());
      const task = await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'replicate', model: 'black-forest-labs/flux-schnell', input: { prompt: 'a fox' } }, Date.now());
      const [claimed] = await studio.tasks.claim('image', 1, 60_000, { owner: 'w', now: Date.now() });
      await studio.tasks.markSubmitStarted(claimed!.id, 'k1', 60_000, { owner: 'w', now: Date.now() });
      await studio.tasks.recordSubmitted(task.id, { requestId: 'p1', handle: null }, null, { owner: 'w', now: Date.now(), attempt: 'k1' });
      // Replicate's cancel answers with the prediction, here already failed (replicate.com/docs/reference/http#predictions.cancel).
      const replicate = { id: 'replicate', capabilities: { pollById: true, lookup: true }, cancel: async () => 'finished' as const } as unknown as ProviderAdapter;
      const refused = await cancelTask(studio.tasks, replicate, task.id, Date.now()).catch((err: Error) => err);
      expect(refused).toBeInstanceOf(DecisionRefused);
      expect((refused as Error).message).toMatch(/had already ended request p1; the studio collects its outcome, and its result if it made one/);
      expect((refused as Error).message).not.toMatch(/result you paid for/);
    } finally {
      await studio.close();
    }
  });
});
