import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, test as base } from 'vitest';
import { ffprobePath } from '../main/media/binaries.ts';
import { openStudio } from '../main/studio.ts';
import type { NewTask } from '../main/domain/tasks/model.ts';
import { elevenLabs, falQueue, openAiImages, realMedia, type Ledger } from './fakes/providers.ts';
import { type Route } from './fakes/server.ts';
import { elevenSpeech, ENGINE, enqueueIn, falImage, fileIn, openAiImage, paidStudio, readTask } from './helpers/paidStudio.ts';
import { runStudio, startStudio, whenStopped, writeSettings } from './helpers/processes.ts';
import { storeKinds, type StoreKind } from './helpers/stores.ts';
import { until } from './helpers/wait.ts';

/**
 * The promise against stand-ins for the real providers, with real worker processes (killed with SIGKILL
 * or SIGSTOP by pid), a real SQLite file held locked by another connection, and real files on disk. What does
 * not hang on SQLite's file (the provider's answers, cancels, kills while a result is saved) runs on the team
 * database too.
 */

let media: Awaited<ReturnType<typeof realMedia>>;
beforeAll(async () => {
  media = await realMedia();
}, 60_000);

const [SQLITE, POSTGRES] = storeKinds() as [StoreKind, StoreKind];

const setup = (route: (ledger: Ledger) => Route, kind = SQLITE) => paidStudio(route, kind);
const enqueue = (dataDir: string, task: Omit<NewTask, 'projectId'>) => enqueueIn(dataDir, task, 'Promise');
const read = readTask;

describe.each([SQLITE, POSTGRES])('a request the provider names, whatever its answer ($kind)', (kind) => {
  const it = base.skipIf(!kind.available);
  it.each([500, 504])('fal queues and charges, then answers %i with x-fal-request-id: the request is polled and collected, charged once', async (status) => {
    const { ledger, fake, dataDir, env } = await setup((l) => falQueue(l, media.png, { submitStatus: status }), kind);
    const id = await enqueue(dataDir, falImage());
    const run = await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect(run.code).toBe(0);
    const { task } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: ledger.charged[0], charged: 'yes' });
    expect(fake.count('POST', /./)).toBe(1);
    expect(ledger.charged).toHaveLength(1);
  });

  it('OpenAI names the request in x-request-id, then the body is cut: unknown with the id kept, never sent again', async () => {
    const { ledger, fake, dataDir, env } = await setup((l) => openAiImages(l, media.png, { cutBody: true }), kind);
    const id = await enqueue(dataDir, openAiImage);
    await runStudio(dataDir, ['worker', '--until-idle'], env);
    const { task } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: 'req_1', charged: 'maybe' });
    expect(task.unknownReason).toMatch(/named the request \(req_1\).*cannot be asked/);
    expect(fake.count('POST', /./)).toBe(1);
    expect(ledger.charged).toHaveLength(1);
  });

  it('ElevenLabs names the request in request-id, then the body is cut: the audio is found in the history, no person involved', async () => {
    const { ledger, fake, dataDir, env } = await setup((l) => elevenLabs(l, media.speech, { cutBody: true }), kind);
    const id = await enqueue(dataDir, elevenSpeech);
    await runStudio(dataDir, ['worker', '--until-idle'], env);
    const { task } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'el-req-1', charged: 'yes' });
    expect(existsSync(fileIn(dataDir, task.outputPath!))).toBe(true);
    expect(fake.count('POST', /./)).toBe(1);
    expect(fake.count('GET', /\/v1\/history\/hist-0\/audio/)).toBe(1);
    expect(ledger.charged).toHaveLength(1);
  });

  it('a 401 from a finished result is asked again, not taken as the end of a paid job', async () => {
    const { ledger, dataDir, env } = await setup((l) => falQueue(l, media.png, { resultUnauthorizedOnce: true }), kind);
    const id = await enqueue(dataDir, falImage());
    await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes' });
    expect(ledger.charged).toHaveLength(1);
  });
});

describe('a paid result is never dropped', () => {
  it('keeps and links every file of a request for several images', async () => {
    const { dataDir, env } = await setup((l) => falQueue(l, media.png, { images: 3 }));
    const id = await enqueue(dataDir, falImage({ num_images: 3 }));
    await runStudio(dataDir, ['worker', '--until-idle'], env);
    const { task, outputs } = await read(dataDir, id);
    expect(task.status).toBe('SUCCEEDED');
    expect(outputs.map((o) => o.index)).toEqual([0, 1, 2]);
    expect(new Set(outputs.map((o) => o.path)).size).toBe(3);
    for (const o of outputs) expect(createHash('sha256').update(readFileSync(fileIn(dataDir, o.path))).digest('hex')).toBe(o.sha256);
    expect(task.outputPath).toBe(outputs[0]!.path);
  });

  it('keeps a synchronous result in the rescue place when the project\'s folder cannot be written', async () => {
    const { ledger, dataDir, env } = await setup((l) => openAiImages(l, media.png));
    const id = await enqueue(dataDir, openAiImage);
    blockMedia(dataDir);
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    const { task } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'req_1', outputPath: 'rescued/task-1-a1.png' });
    expect(readFileSync(fileIn(dataDir, task.outputPath!))).toEqual(media.png.bytes);
    expect(ledger.charged).toHaveLength(1);
  });

  it('keeps a synchronous result whose save fails everywhere for a while, says why, and saves it when it can', async () => {
    const { ledger, dataDir, env } = await setup((l) => openAiImages(l, media.png));
    const id = await enqueue(dataDir, openAiImage);
    const unblock = blockMedia(dataDir, true);
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    await worker.waitFor(/the paid result could not be saved yet/);
    await until(async () => (await read(dataDir, id)).task.note !== null);
    expect((await read(dataDir, id)).task.note).toMatch(/could not be saved yet.*kept and saving is retried/);
    unblock();
    expect(await worker.exited).toBe(0);
    const { task } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'SUCCEEDED', note: null, remoteRequestId: 'req_1' });
    expect(readFileSync(fileIn(dataDir, task.outputPath!))).toEqual(media.png.bytes);
    expect(ledger.charged).toHaveLength(1);
  });
});

describe.each([SQLITE, POSTGRES])('a worker killed while it saves a synchronous result ($kind)', (kind) => {
  const it = base.skipIf(!kind.available);
  it('a worker killed after placing a synchronous result and before its record: the restart completes it from the files', async () => {
    const { ledger, dataDir, env } = await setup((l) => openAiImages(l, media.png), kind);
    const id = await enqueue(dataDir, openAiImage);
    const doomed = startStudio(dataDir, ['worker', '--until-idle'], { ...env, STUDIO_STOP_AT: 'mid-save' });
    await doomed.waitFor(new RegExp(`stopped at mid-save for task ${id}`));
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    await runStudio(dataDir, ['worker', '--until-idle'], env);
    const { task } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'req_1' });
    expect(readFileSync(fileIn(dataDir, task.outputPath!))).toEqual(media.png.bytes);
    expect(ledger.charged).toHaveLength(1);
  });

  it('a worker killed after saving a synchronous result and before writing SUCCEEDED: the restart completes it from disk', async () => {
    const { ledger, fake, dataDir, env } = await setup((l) => openAiImages(l, media.png), kind);
    const id = await enqueue(dataDir, openAiImage);
    const doomed = startStudio(dataDir, ['worker', '--until-idle'], { ...env, STUDIO_STOP_AT: 'after-save' });
    await doomed.waitFor(new RegExp(`stopped at after-save for task ${id}`));
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    expect((await read(dataDir, id)).task.status).toBe('SUBMITTED');

    await runStudio(dataDir, ['worker', '--until-idle'], env);
    const { task } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'req_1' });
    expect(readFileSync(fileIn(dataDir, task.outputPath!))).toEqual(media.png.bytes);
    expect(fake.count('POST', /./)).toBe(1);
    expect(ledger.charged).toHaveLength(1);
  });
});

/** A file stands where the project's media folder belongs (and, with `everywhere`, the rescue place): saves fail. */
function blockMedia(dataDir: string, everywhere = false): () => void {
  const blocked = [join(dataDir, 'projects', '1', 'media'), ...(everywhere ? [join(dataDir, 'rescued')] : [])];
  mkdirSync(join(dataDir, 'projects', '1'), { recursive: true });
  for (const path of blocked) writeFileSync(path, 'in the way');
  return () => blocked.forEach((path) => rmSync(path));
}

/** Another program holds the database's write lock (BEGIN EXCLUSIVE) until released. */
function holdLock(dataDir: string): () => void {
  const db = new Database(join(dataDir, 'studio.db'));
  db.pragma('busy_timeout = 10000');
  db.exec('BEGIN EXCLUSIVE');
  return () => {
    db.exec('COMMIT');
    db.close();
  };
}

describe('a database that cannot be written while a request is out', () => {
  it('a lock held longer than the busy timeout: the worker keeps the request id, says why it waits, and finishes', async () => {
    const { ledger, dataDir, env } = await setup((l) => falQueue(l, media.png));
    const id = await enqueue(dataDir, falImage());
    const worker = startStudio(dataDir, ['worker', '--until-idle'], { ...env, STUDIO_STOP_AT: 'after-send' });
    await worker.waitFor(/stopped at after-send/);
    await whenStopped(worker.child);
    const release = holdLock(dataDir);
    worker.child.kill('SIGCONT');
    await worker.waitFor(/engine paused: another program is holding the studio database locked/, 30_000);
    await new Promise((r) => setTimeout(r, 7_000));
    release();
    expect(await worker.exited).toBe(0);
    expect(worker.stderr()).toMatch(/engine resumed/);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: ledger.charged[0] });
    expect(ledger.charged).toHaveLength(1);
  }, 60_000);

  it('a worker killed while the lock is held: its journaled request id is recorded at the next start, and collected once', async () => {
    const { ledger, dataDir, env } = await setup((l) => falQueue(l, media.png));
    const id = await enqueue(dataDir, falImage());
    const doomed = startStudio(dataDir, ['worker', '--until-idle'], { ...env, STUDIO_STOP_AT: 'after-send' });
    await doomed.waitFor(/stopped at after-send/);
    await whenStopped(doomed.child);
    const release = holdLock(dataDir);
    doomed.child.kill('SIGCONT');
    await doomed.waitFor(/engine paused/, 30_000);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    release();
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'RUNNING', remoteRequestId: null });

    const restart = await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect(restart.stderr).toMatch(new RegExp(`recorded request ${ledger.charged[0]} from the receipt journal`));
    const { task, events } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: ledger.charged[0] });
    expect(events.map((e) => e.toStatus)).not.toContain('OUTCOME_UNKNOWN');
    expect(ledger.charged).toHaveLength(1);
  }, 60_000);
});

describe.each([SQLITE, POSTGRES])('cancel ($kind)', (kind) => {
  const it = base.skipIf(!kind.available);
  // Each request runs for 40 status calls: the cancel command, a process that starts cold, arrives while it runs, even on a busy machine.
  it.each([
    ['refuses with 400', [400, 'ALREADY_COMPLETED']],
    ['answers ALREADY_COMPLETED', [200, 'ALREADY_COMPLETED']],
  ] as const)('of a request fal had already finished (it %s): refused, and the paid result is collected', async (_, answer) => {
    const { ledger, fake, dataDir, env } = await setup((l) => falQueue(l, media.png, { cancelAnswer: [...answer], polls: 40 }), kind);
    const id = await enqueue(dataDir, falImage());
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    await until(async () => (await read(dataDir, id)).task.status === 'SUBMITTED');
    const cancel = await runStudio(dataDir, ['cancel', String(id)], env);
    expect(cancel.code).toBe(2);
    expect(cancel.stderr).toMatch(/was not cancelled: fal had already ended request .*; the studio collects its outcome, and its result if it made one/);
    expect(await worker.exited).toBe(0);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes' });
    expect(fake.count('PUT', /\/cancel$/)).toBe(1);
    expect(ledger.charged).toHaveLength(1);
  });

  it('of a request fal only passes the cancel on to (it was running): the task is kept, said so, and collected if it finishes', async () => {
    const { fake, dataDir, env } = await setup((l) => falQueue(l, media.png, { cancelAnswer: [202, 'CANCELLATION_REQUESTED'], polls: 40 }), kind);
    const id = await enqueue(dataDir, falImage());
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    await until(async () => (await read(dataDir, id)).task.status === 'SUBMITTED');
    const cancel = await runStudio(dataDir, ['cancel', String(id)], env);
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toMatch(/not cancelled yet: asked fal to cancel request .*may still finish and be charged, and then its result is collected/);
    expect(await worker.exited).toBe(0);
    const { task, events } = await read(dataDir, id);
    expect(task.status).toBe('SUCCEEDED');
    expect(events.map((e) => e.reason).join('\n')).toMatch(/asked fal to cancel request/);
    expect(fake.count('PUT', /\/cancel$/)).toBe(1);
  });

  it('of a queued request fal removed: the task is cancelled, not charged (fal bills no time spent in its queue)', async () => {
    const { fake, dataDir, env } = await setup((l) => falQueue(l, media.png, { polls: 1_000 }), kind);
    const id = await enqueue(dataDir, falImage());
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    await until(async () => (await read(dataDir, id)).task.status === 'SUBMITTED');
    expect((await runStudio(dataDir, ['cancel', String(id)], env)).stdout).toMatch(/cancelled; fal cancelled the request; it had not started, so it is not charged/);
    expect(await worker.exited).toBe(0);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'CANCELLED', charged: 'no' });
    expect(fake.count('PUT', /\/cancel$/)).toBe(1);
  });
});

describe.each([SQLITE, POSTGRES])('cancel while the request is being sent ($kind)', (kind) => {
  const it = base.skipIf(!kind.available);
  // The submit is held long enough for the cancel command (a process that starts cold) to arrive while it is being sent.
  it('cancels the job at the provider when its id arrives, records it, and counts it as not charged: fal removed it from its queue', async () => {
    const { ledger, fake, dataDir, env } = await setup((l) => falQueue(l, media.png, { submitDelayMs: 8_000 }), kind);
    const id = await enqueue(dataDir, falImage());
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    await until(() => fake.count('POST', /./) === 1);
    const cancel = await runStudio(dataDir, ['cancel', String(id)], env);
    expect(cancel.code).toBe(0);
    expect(await worker.exited).toBe(0);
    const { task, events } = await read(dataDir, id);
    // fal's OK removed it from the queue, and fal charges nothing for time waiting in its queue (see cancelledUnbilled).
    expect(task).toMatchObject({ status: 'CANCELLED', charged: 'no', remoteRequestId: ledger.charged[0] });
    expect(fake.count('PUT', new RegExp(`/requests/${ledger.charged[0]}/cancel`))).toBe(1);
    expect(events.map((e) => e.reason).join('\n')).toMatch(/was sent before the cancel reached the worker; fal stopped it before it ran, which it does not charge for/);
  });
});

describe('a worker that stalls or stops while a paid answer is arriving', () => {
  it('stalled (SIGSTOP) while OpenAI\'s answer arrives, parked by another worker meanwhile: the result it then saves completes the task', async () => {
    const { ledger, fake, dataDir, env } = await setup((l) => openAiImages(l, media.png, { holdBodyMs: 2_500 }));
    writeSettings(dataDir, { engine: { ...ENGINE, leaseMs: 1_000 } });
    const id = await enqueue(dataDir, openAiImage);
    const stalled = startStudio(dataDir, ['worker', '--until-idle'], env);
    await until(() => fake.count('POST', /./) === 1);
    await new Promise((r) => setTimeout(r, 200));
    stalled.child.kill('SIGSTOP');
    const other = startStudio(dataDir, ['worker'], env);
    await until(async () => (await read(dataDir, id)).task.status === 'OUTCOME_UNKNOWN', 20_000);
    expect((await read(dataDir, id)).task).toMatchObject({ remoteRequestId: 'req_1' });
    expect((await read(dataDir, id)).task.unknownReason).toMatch(/while the answer to request req_1 was arriving/);
    other.child.kill('SIGTERM');
    await other.exited;
    stalled.child.kill('SIGCONT');
    await stalled.exited;
    const { task } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'req_1', charged: 'yes', unknownReason: null });
    expect(readFileSync(fileIn(dataDir, task.outputPath!))).toEqual(media.png.bytes);
    expect(ledger.charged).toHaveLength(1);
  }, 60_000);

  it('stopped (SIGTERM) while a synchronous result cannot be saved anywhere: the request id is on the row, never "before the provider confirmed"', async () => {
    const { dataDir, env } = await setup((l) => openAiImages(l, media.png));
    const id = await enqueue(dataDir, openAiImage);
    blockMedia(dataDir, true);
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    await worker.waitFor(/the paid result could not be saved yet/);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.stderr()).toMatch(/stopped before a paid result held only in memory could be saved/);
    const { task } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req_1', charged: 'yes' });
    expect(task.note).toMatch(/could not be saved yet/);
  });

  it('cancelled after fal named the request, then killed before the answer: the cancel, reading the journal, cancels it at fal', async () => {
    // The cold cancel (over 3 s on a loaded machine) must come while fal still holds the answer's body.
    const { ledger, fake, dataDir, env } = await setup((l) => falQueue(l, media.png, { holdBodyMs: 10_000 }));
    const id = await enqueue(dataDir, falImage());
    const doomed = startStudio(dataDir, ['worker', '--until-idle'], env);
    await until(() => fake.count('POST', /./) === 1);
    await new Promise((r) => setTimeout(r, 300));
    const cancel = await runStudio(dataDir, ['cancel', String(id)], env);
    expect(cancel.stdout).toMatch(/cancelled; fal cancelled the request/);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    await runStudio(dataDir, ['worker', '--until-idle'], env);
    const { task, events } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'CANCELLED', charged: 'no', remoteRequestId: ledger.charged[0] });
    expect(fake.count('PUT', /\/cancel$/)).toBe(1);
    expect(events.map((e) => e.reason).join('\n')).toMatch(/recorded the request id kept in the receipt journal\ncancelled/);
  });
});

describe('results that are only partly usable', () => {
  it('a crash while two images in hand are being placed: both were staged on disk before either was placed, so both are kept', async () => {
    const { ledger, dataDir, env } = await setup((l) => openAiImages(l, media.png, { n: 2 }));
    const id = await enqueue(dataDir, { ...openAiImage, input: { prompt: 'a fox', n: 2 } });
    const doomed = startStudio(dataDir, ['worker', '--until-idle'], { ...env, STUDIO_STOP_AT: 'mid-save' });
    await doomed.waitFor(new RegExp(`stopped at mid-save for task ${id}`));
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    await runStudio(dataDir, ['worker', '--until-idle'], env);
    const { task, outputs, events } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'req_1' });
    expect(outputs).toHaveLength(2);
    expect(events.some((e) => /left out/.test(e.reason))).toBe(false);
    expect(ledger.charged).toHaveLength(1);
  });

  it('an ffprobe that cannot run for a while (killed, as by the out-of-memory killer) leaves a good result to be checked again, never failed', async () => {
    const { ledger, dataDir, env } = await setup((l) => falQueue(l, media.png));
    const id = await enqueue(dataDir, falImage());
    const count = join(dataDir, 'probes');
    const probe = join(dataDir, 'ffprobe.sh');
    writeFileSync(probe, `#!/bin/sh\necho x >> '${count}'\n[ "$(wc -l < '${count}')" -le 2 ] && kill -9 $$\nexec '${ffprobePath()}' "$@"\n`, { mode: 0o755 });
    await runStudio(dataDir, ['worker', '--until-idle'], { ...env, FFPROBE_PATH: probe });
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes' });
    expect(readFileSync(count, 'utf8').split('\n').filter(Boolean).length).toBeGreaterThan(2);
    expect(ledger.charged).toHaveLength(1);
  });

  it('keeps the good files of a multi-image result when one file is not an image, and says which was left out', async () => {
    const { ledger, dataDir, env } = await setup((l) => falQueue(l, media.png, { images: 2, badFile: 1 }));
    const id = await enqueue(dataDir, falImage({ num_images: 2 }));
    await runStudio(dataDir, ['worker', '--until-idle'], env);
    const { task, outputs, events } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes' });
    expect(outputs).toHaveLength(1);
    expect(events.at(-1)!.reason).toMatch(/kept 1 of 2 files; left out: file 2: .*not readable media/);
    expect(ledger.charged).toHaveLength(1);
  });

  it('a synchronous result given as a link that fails a few times is downloaded when it can be, never failed', async () => {
    const { ledger, dataDir, env } = await setup((l) => openAiImages(l, media.png, { urlFailures: 4 }));
    const id = await enqueue(dataDir, { ...openAiImage, model: 'dall-e-3' });
    await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', remoteRequestId: 'req_1' });
    expect(ledger.charged).toHaveLength(1);
  }, 60_000);

  it('a receipts file with damaged lines stops nothing: the good receipts are replayed and the queue runs', async () => {
    const { ledger, dataDir, env } = await setup((l) => falQueue(l, media.png));
    const id = await enqueue(dataDir, falImage());
    mkdirSync(join(dataDir, 'receipts'));
    writeFileSync(join(dataDir, 'receipts', 'elsewhere-1-00000000.jsonl'), 'null\n{"taskId":"x"}\n[1,2]\n{"taskId":1,"idempotencyKey":7}\n{cut');
    const run = await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect(run.code).toBe(0);
    expect((await read(dataDir, id)).task.status).toBe('SUCCEEDED');
    expect(ledger.charged).toHaveLength(1);
  });
});

describe('a request id known only to a receipt journal', () => {
  it('cannot be adopted by another task: the decision records it for its own task first, and refuses, naming it', async () => {
    const { ledger, dataDir, env } = await setup((l) => falQueue(l, media.png));
    // Task 1 waits for a decision; task 2 is sent, and its worker dies while the database is locked.
    const parked = await enqueue(dataDir, falImage({ seed: 1 }));
    const studio = await openStudio(dataDir);
    const lease = { owner: 'gone', now: Date.now() };
    await studio.tasks.claim('image', 1, 60_000, lease);
    await studio.tasks.markSubmitStarted(parked, 'studio-task-1-attempt-1', 60_000, lease);
    await studio.tasks.parkUnknown(parked, 'the answer was lost', lease);
    await studio.close();
    const owner = await enqueue(dataDir, falImage());
    const doomed = startStudio(dataDir, ['worker', '--until-idle'], { ...env, STUDIO_STOP_AT: 'after-send' });
    await doomed.waitFor(/stopped at after-send/);
    await whenStopped(doomed.child);
    const release = holdLock(dataDir);
    doomed.child.kill('SIGCONT');
    await doomed.waitFor(/engine paused/, 30_000);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    release();

    const adopt = await runStudio(dataDir, ['resolve', String(parked), '--adopt', ledger.charged[0]!.toUpperCase()], env);
    expect(adopt.code).toBe(2);
    expect(adopt.stderr).toMatch(new RegExp(`request ${ledger.charged[0]!.toUpperCase()} already belongs to task ${owner}`));
    expect((await read(dataDir, owner)).task).toMatchObject({ status: 'SUBMITTED', remoteRequestId: ledger.charged[0] });
    expect((await read(dataDir, parked)).task).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null });
  }, 60_000);
});

describe.each([SQLITE, POSTGRES])('a receipt journal that cannot be written ($kind)', (kind) => {
  const it = base.skipIf(!kind.available);
  it('sends the request id heard in the headers to the task at once, so a worker killed before the answer loses nothing', async () => {
    const { ledger, fake, dataDir, env } = await setup((l) => falQueue(l, media.png, { holdBodyMs: 3_000 }), kind);
    const id = await enqueue(dataDir, falImage());
    writeFileSync(join(dataDir, 'receipts'), 'in the way');
    const doomed = startStudio(dataDir, ['worker', '--until-idle'], env);
    await doomed.waitFor(/could not be journaled .*writing it to the task now/);
    await until(async () => (await read(dataDir, id)).task.status === 'SUBMITTED');
    expect((await read(dataDir, id)).task).toMatchObject({ remoteRequestId: ledger.charged[0] });
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: ledger.charged[0] });
    expect(fake.count('POST', /./)).toBe(1);
  });
});

describe('a provider that drips its answer', () => {
  it('is cut at the call\'s deadline, not after minutes: an answer with no request id is an unknown outcome', async () => {
    const { ledger, dataDir, env } = await setup((l) => falQueue(l, media.png, { drip: { named: false } }));
    writeSettings(dataDir, { engine: ENGINE, providers: { fal: { timeouts: { submit: { headersMs: 1_000, bodyMs: 1_000 } } } } });
    const id = await enqueue(dataDir, falImage());
    const started = Date.now();
    await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect(Date.now() - started).toBeLessThan(10_000);
    const { task } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'OUTCOME_UNKNOWN', charged: 'maybe' });
    expect(task.unknownReason).toMatch(/its answer could not be read \(.*timeout\)/);
    expect(ledger.charged).toHaveLength(1);
  });

  it('does not hold a stop: SIGTERM ends the worker within seconds, and the named request is collected at the next start', async () => {
    const { ledger, fake, dataDir, env } = await setup((l) => falQueue(l, media.png, { drip: { named: true } }));
    const id = await enqueue(dataDir, falImage());
    const worker = startStudio(dataDir, ['worker'], env);
    await until(() => fake.count('POST', /./) === 1);
    await new Promise((r) => setTimeout(r, 300));
    const stopping = Date.now();
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(Date.now() - stopping).toBeLessThan(6_000);
    await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: ledger.charged[0] });
    expect(ledger.charged).toHaveLength(1);
  });
});
