import { existsSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it as plain, test as base } from 'vitest';
import type { TaskView } from '../main/api/contract.ts';
import { lateCancelVerdict } from '../main/engine/lateCancel.ts';
import { launchHost, type LaunchedHost } from '../main/host/launch.ts';
import { CANCELLED_AFTER_PAID, SENT_BEFORE_CANCEL } from '../main/domain/tasks/cancelledAfterPaid.ts';
import type { NewTask } from '../main/domain/tasks/model.ts';
import { elevenLabs, falQueue, openAiImages, realMedia, type Ledger } from './fakes/providers.ts';
import { startFake } from './fakes/server.ts';
import { elevenSpeech, ENGINE, enqueueIn, falImage as falImageWith, fileIn, openAiImage, paidStudio, readTask } from './helpers/paidStudio.ts';
import { runStudio, startStudio, writeSettings } from './helpers/processes.ts';
import { storeKinds, type StoreKind } from './helpers/stores.ts';
import { apiCaller } from './helpers/studioApi.ts';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

/**
 * Cancel stops what is not paid for yet; whatever is paid is collected and kept. Real worker processes, a real data
 * folder, and stand-ins that answer as each provider documents: fal's cancel answers one of OK, CANCELLATION_REQUESTED,
 * ALREADY_COMPLETED, NOT_FOUND (fal.ai/docs/inference-api/queue/cancel), and a running request it was asked to cancel
 * may still finish ("the model app decides how to stop the work"); ElevenLabs has no cancel and bills the audio it made.
 * Each case counts the charges at the stand-in (one, before and after) and what the task collected: nothing before
 * this change, the paid result after.
 */

let media: Awaited<ReturnType<typeof realMedia>>;
beforeAll(async () => {
  media = await realMedia();
}, 60_000);

const [SQLITE, POSTGRES] = storeKinds() as [StoreKind, StoreKind];
const setup = paidStudio;
const enqueue = (dataDir: string, task: Omit<NewTask, 'projectId'>) => enqueueIn(dataDir, task, 'Cancels');
const read = readTask;

/**
 * The paid result is saved, linked and counted as charged, and the task says it was cancelled after the provider
 * finished; `cancelled`: the row was cancelled before its request was found paid (else the cancel was turned down).
 */
async function expectKept(dataDir: string, id: number, requestId: string, cancelled = true, note = CANCELLED_AFTER_PAID) {
  const { task, events, outputs } = await read(dataDir, id);
  expect(task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', remoteRequestId: requestId, note });
  expect(outputs).toHaveLength(1);
  expect(existsSync(fileIn(dataDir, outputs[0]!.path))).toBe(true);
  expect(events.at(-1)).toMatchObject({ toStatus: 'SUCCEEDED', reason: note });
  expect(events.some((e) => e.actor === 'person' && e.reason === 'cancelled')).toBe(cancelled);
  return events;
}

const falImage = falImageWith();

describe.each([SQLITE, POSTGRES])('a request whose id arrives after the cancel is followed ($kind)', (kind) => {
  const it = base.skipIf(!kind.available);
  // fal queues (and charges) the request when the submit arrives, and answers it 8 s later: the cancel command, a
  // process that starts cold (several seconds on a loaded machine), arrives while the request is being sent.
  it.each([
    ['refuses the cancel with 400 ALREADY_COMPLETED', [400, 'ALREADY_COMPLETED'], 100],
    ['answers the cancel with ALREADY_COMPLETED', [200, 'ALREADY_COMPLETED'], 100],
    ['only passes the cancel on (202 CANCELLATION_REQUESTED) and the job finishes anyway', [202, 'CANCELLATION_REQUESTED'], 4_500],
  ] as const)('fal %s: the result is collected, charged, and the task says it was cancelled after fal finished', async (_, answer, jobMs) => {
    const { ledger, fake, dataDir, env } = await setup((l) => falQueue(l, media.png, { submitDelayMs: 8_000, jobMs, cancelAnswer: [...answer] }), kind);
    const id = await enqueue(dataDir, falImage);
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    await until(() => fake.count('POST', /./) === 1);
    expect((await runStudio(dataDir, ['cancel', String(id)], env)).code).toBe(0);
    expect(await worker.exited).toBe(0);
    // Sent before the cancel reached the worker: never said to be cancelled after fal had finished.
    const events = await expectKept(dataDir, id, ledger.charged[0]!, true, SENT_BEFORE_CANCEL);
    expect(events.map((e) => e.reason).join('\n')).toMatch(/was sent before the cancel reached the worker; .*it is followed, and its result is collected if it makes one/);
    expect(events.map((e) => e.reason).join('\n')).not.toMatch(/refused the input/);
    expect(fake.count('PUT', new RegExp(`/requests/${ledger.charged[0]}/cancel$`))).toBe(1);
    expect(fake.count('POST', /./)).toBe(1);
    expect(ledger.charged).toHaveLength(1);
  }, 60_000);

  it('ElevenLabs, which has no cancel: the audio it made and billed is kept, and the task says so', async () => {
    const { ledger, fake, dataDir, env } = await setup((l) => elevenLabs(l, media.speech, { holdMs: 8_000 }), kind);
    const id = await enqueue(dataDir, elevenSpeech);
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    await until(() => fake.count('POST', /./) === 1);
    expect((await runStudio(dataDir, ['cancel', String(id)], env)).code).toBe(0);
    expect(await worker.exited).toBe(0);
    await expectKept(dataDir, id, 'el-req-1', true, SENT_BEFORE_CANCEL);
    expect(fake.count('POST', /./)).toBe(1);
    expect(ledger.charged).toHaveLength(1);
  }, 60_000);
});

describe.each([SQLITE, POSTGRES])('studio cancel replays the receipt journal first ($kind)', (kind) => {
  const it = base.skipIf(!kind.available);
  it('a fal request only journaled by a worker that died is cancelled at fal as sent with that id', async () => {
    const { ledger, fake, dataDir, env } = await setup((l) => falQueue(l, media.png, { polls: 1_000 }), kind);
    const id = await enqueue(dataDir, falImage);
    const doomed = startStudio(dataDir, ['worker', '--until-idle'], { ...env, STUDIO_STOP_AT: 'after-send' });
    await doomed.waitFor(/stopped at after-send/);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'RUNNING', remoteRequestId: null });
    const cancel = await runStudio(dataDir, ['cancel', String(id)], env);
    expect(cancel.stdout).toMatch(/cancelled; fal cancelled the request/);
    expect(fake.count('PUT', new RegExp(`/requests/${ledger.charged[0]}/cancel$`))).toBe(1);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'CANCELLED', charged: 'no', remoteRequestId: ledger.charged[0] });
    expect(ledger.charged).toHaveLength(1);
  }, 60_000);

  it('an ElevenLabs request only journaled is paid: not cancelled, its audio collected from the history', async () => {
    const { ledger, fake, dataDir, env } = await setup((l) => elevenLabs(l, media.speech), kind);
    const id = await enqueue(dataDir, elevenSpeech);
    const doomed = startStudio(dataDir, ['worker', '--until-idle'], { ...env, STUDIO_STOP_AT: 'after-send' });
    await doomed.waitFor(/stopped at after-send/);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const cancel = await runStudio(dataDir, ['cancel', String(id)], env);
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toMatch(/not cancelled yet: elevenlabs cannot stop request el-req-1/);
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    await expectKept(dataDir, id, 'el-req-1', false);
    expect(fake.count('POST', /./)).toBe(1);
    expect(ledger.charged).toHaveLength(1);
  }, 60_000);
});

describe.each([SQLITE, POSTGRES])('cancelling a submitted synchronous task whose result is saved ($kind)', (kind) => {
  const it = base.skipIf(!kind.available);
  it.each([
    ['OpenAI', (l: Ledger) => openAiImages(l, media.png), openAiImage, 'req_1'],
    ['ElevenLabs', (l: Ledger) => elevenLabs(l, media.speech), elevenSpeech, 'el-req-1'],
  ] as const)('%s: the saved files are linked, charged stays yes, nothing is bought again', async (_, route, task, requestId) => {
    const { ledger, fake, dataDir, env } = await setup(route, kind);
    const id = await enqueue(dataDir, task);
    const doomed = startStudio(dataDir, ['worker', '--until-idle'], { ...env, STUDIO_STOP_AT: 'after-save' });
    await doomed.waitFor(/stopped at after-save/);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'SUBMITTED', charged: 'yes', remoteRequestId: requestId });
    const cancel = await runStudio(dataDir, ['cancel', String(id)], env);
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toMatch(/not cancelled: .*had already made it and it was paid for; its result is kept/);
    await expectKept(dataDir, id, requestId);
    expect(fake.count('POST', /./)).toBe(1);
    expect(ledger.charged).toHaveLength(1);
  }, 60_000);
});

describe('the StudioApi cancel replays the receipt journal first', () => {
  let host: LaunchedHost | undefined;
  afterEach(async () => {
    await host?.stop();
    host = undefined;
  });
  const call = apiCaller(() => host);

  plain('a fal request journaled by a worker that died while the studio runs is cancelled at fal as sent with that id', async () => {
    const ledger: Ledger = { charged: [] };
    const fake = await startFake(falQueue(ledger, media.png, { polls: 1_000 }));
    const dataDir = tempDir();
    const fal = { fal: { baseUrl: fake.url, key: 'fal-key-0123456789' } };
    // The studio's own engine takes no image work, so the worker process below is the one that sends it.
    writeSettings(dataDir, { engine: { ...ENGINE, concurrency: { image: 0 } }, providers: fal });
    host = await launchHost(dataDir);
    const id = await enqueue(dataDir, falImage);
    writeSettings(dataDir, { engine: ENGINE, providers: fal });
    const doomed = startStudio(dataDir, ['worker', '--until-idle'], { STUDIO_STOP_AT: 'after-send' });
    await doomed.waitFor(/stopped at after-send/);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'RUNNING', remoteRequestId: null });
    const answer = await call<TaskView>('cancel', id);
    expect(answer.status).toBe(200);
    expect(answer.result).toMatchObject({ status: 'CANCELLED', charged: 'no', remoteRequestId: ledger.charged[0] });
    expect(fake.count('PUT', new RegExp(`/requests/${ledger.charged[0]}/cancel$`))).toBe(1);
    expect(ledger.charged).toHaveLength(1);
  }, 60_000);
});

describe('what becomes of a request that arrives after its task was cancelled', () => {
  plain('only a provider that says it stopped the request leaves it cancelled; any other answer is followed where it can be asked by id', () => {
    // fal charges nothing for a request it removed from its queue (fal.ai/docs/documentation/model-apis/pricing).
    expect(lateCancelVerdict('fal', 'cancelled', true, false, true)).toMatchObject({ stopped: true, charged: 'no' });
    expect(lateCancelVerdict('replicate', 'cancelled', true, false)).toMatchObject({ stopped: true, charged: 'maybe' });
    for (const answer of ['finished', 'requested', { error: 'HTTP 404' }] as const) {
      expect(lateCancelVerdict('fal', answer, true, false)).toMatchObject({ stopped: false, said: expect.stringMatching(/it is followed, and its result is collected if it makes one$/) });
    }
    // Charged yes only where the answer says the request ran; a cancel passed on, or unanswered, says nothing of it.
    expect(lateCancelVerdict('fal', 'finished', true, false).charged).toBe('yes');
    expect(lateCancelVerdict('fal', 'requested', true, false).charged).toBeNull();
    expect(lateCancelVerdict('fal', { error: 'no answer within 5 s' }, true, false).charged).toBeNull();
    expect(lateCancelVerdict('elevenlabs', { none: true }, true, true)).toEqual({ stopped: false, charged: 'yes', said: 'elevenlabs cannot cancel it; its result, already received, is kept' });
    expect(lateCancelVerdict('openai', { none: true }, false, false)).toEqual({ stopped: false, charged: null, said: 'openai cannot cancel it, so it may be charged' });
  });
});
