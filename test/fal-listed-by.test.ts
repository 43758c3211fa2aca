import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../main/api/contract.ts';
import { launchHost, type LaunchedHost } from '../main/host/launch.ts';
import { KLING } from './fakes/falStandIn.ts';
import { FAL_KEY, falMedia, falStudio, type FalMedia } from './helpers/falStudio.ts';
import { runStudio, startStudio, writeSettings } from './helpers/processes.ts';
import { apiCaller } from './helpers/studioApi.ts';
import { until } from './helpers/wait.ts';

const SHIFT = fileURLToPath(new URL('./helpers/clockShift.mjs', import.meta.url));
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

let media: FalMedia;
beforeAll(async () => {
  media = await falMedia();
}, 60_000);

let host: LaunchedHost | undefined;
afterEach(async () => {
  await host?.stop();
  host = undefined;
});

const kling = (projectId: number, prompt: string) => ({ projectId, kind: 'clip' as const, provider: 'fal', model: KLING, input: { prompt, image_url: 'https://example.com/start.png', duration: 5 } });
/** The CLI with its wall clock `ms` ahead: a person looking later. */
const later = (env: Record<string, string>, ms: number) => ({ ...env, NODE_OPTIONS: `--import ${SHIFT}`, CLOCK_SHIFT_MS: String(ms) });

/**
 * fal lists a request once it has ended (fal.ai/docs/platform-apis/v1/models/requests/by-endpoint.md: statuses
 * success, error, user_error; sorted by end time). How long that can take is what these pin.
 */
describe('when a fal request is surely listed', () => {
  it('waits for the requests it was queued behind: 8 still in flight keep the 9th "not listed yet" two hours on; a resubmit then is refused, and taken only with --even-if-running', async () => {
    // "Requests are never rejected due to concurrency limits": over the account's concurrency they wait in fal's
    // queue (docs.fal.ai/documentation/model-apis/concurrency-limits), here behind 8 clips still running.
    const { ledger, dataDir, studio, projectId, env } = await falStudio(media, { jobMs: 3 * HOUR, dropAnswer: (n) => n === 9 }, { image: 0, clip: 9, lookupTries: 2 });
    const worker = startStudio(dataDir, ['worker'], env);
    for (let i = 1; i <= 8; i++) await studio.tasks.enqueue(kling(projectId, `shot ${i}`), Date.now());
    await until(() => ledger.charged.length === 8, 20_000);
    const lost = (await studio.tasks.enqueue(kling(projectId, 'shot 9'), Date.now())).id;
    await until(async () => (await studio.tasks.get(lost))!.status === 'OUTCOME_UNKNOWN', 20_000);
    worker.child.kill('SIGTERM');
    await worker.exited;

    const twoHours = later(env, 2 * HOUR);
    const said = await runStudio(dataDir, ['reconcile', String(lost)], twoHours);
    expect(said.code, said.stderr).toBe(0);
    expect(said.stdout).toContain(`No request at fal matches task ${lost}, but it is not listed yet`);
    expect(said.stdout).toContain('after the 8 request(s) to fal sent before it that had not ended then, 8 of them still queued or running');
    expect(said.stdout).not.toMatch(/never accepted|--resubmit/);

    // --json carries it too: an empty list alone would read as "nothing there".
    const json = await runStudio(dataDir, ['reconcile', String(lost), '--json'], twoHours);
    expect(json.code, json.stderr).toBe(0);
    const found = JSON.parse(json.stdout) as { taskId: number; candidates: unknown[]; notListedYet: { until: string; why: string } | null; cut: string | null };
    expect(found).toMatchObject({ taskId: lost, candidates: [], cut: null, notListedYet: { why: expect.stringContaining('still queued or running') } });
    expect(Date.parse(found.notListedYet!.until)).toBeGreaterThan(Date.now() + 2 * HOUR);

    const refused = await runStudio(dataDir, ['resolve', String(lost), '--resubmit'], twoHours);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(
      new RegExp(`^studio: task ${lost} was not resubmitted: its request may still be queued or running at fal, which could list it only by \\S+Z; .*studio resolve ${lost} --resubmit --even-if-running\\n$`),
    );
    expect((await studio.tasks.get(lost))!.status).toBe('OUTCOME_UNKNOWN');

    const forced = await runStudio(dataDir, ['resolve', String(lost), '--resubmit', '--even-if-running'], twoHours);
    expect(forced.code, forced.stderr).toBe(0);
    expect((await studio.tasks.events(lost)).at(-1)).toMatchObject({
      actor: 'person',
      toStatus: 'PENDING',
      detail: { evenIfRunning: true, listedBy: expect.any(String), why: expect.stringContaining('not ended then') },
    });
    expect(ledger.charged).toHaveLength(9);
    await studio.close();
  }, 90_000);

  it("counts fal's own retries: a lone Kling request is not listed yet 90 min on, until 10 runs of twice its stated 5 min and the queue allowance", async () => {
    // "Retries happen transparently, up to 10 attempts, before the request is marked as failed" (fal.ai/docs/documentation/serverless/reliability/retries).
    const { ledger, dataDir, studio, projectId, env } = await falStudio(media, { jobMs: 3 * HOUR, dropAnswer: (n) => n === 1 }, { image: 0, clip: 1, lookupTries: 1 });
    const id = (await studio.tasks.enqueue(kling(projectId, 'push in'), Date.now())).id;
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    const sent = (await studio.tasks.get(id))!;
    expect(sent.status).toBe('OUTCOME_UNKNOWN');

    for (const on of [21 * MIN, 90 * MIN]) {
      const said = await runStudio(dataDir, ['reconcile', String(id)], later(env, on));
      expect(said.stdout).toContain(`but it is not listed yet: fal lists a request once it has ended, and one sent then could still be queued or running until ${new Date(sent.submitStartedAt! + 110 * MIN).toISOString()} (twice fal's stated run of about 5 min, up to 10 runs as fal retries a failed one, plus 10 min in the queue)`);
      expect(said.stdout).not.toMatch(/never accepted/);
      expect((await runStudio(dataDir, ['resolve', String(id), '--resubmit'], later(env, on))).code).toBe(2);
    }
    expect(ledger.charged).toEqual(['fal-req-1']);
    await studio.close();
  }, 60_000);

  it('asks the listing only for the life of the request: a day on, 1,500 requests ended since do not push it out of what a lookup reads', async () => {
    let falClock = 0;
    const { ledger, fal, dataDir, studio, projectId, env } = await falStudio(media, { jobMs: 5_000, dropAnswer: (n) => n === 1, now: () => Date.now() + falClock }, { image: 0, clip: 1, lookupTries: 1 });
    const id = (await studio.tasks.enqueue(kling(projectId, 'push in'), Date.now())).id;
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    const sentAt = (await studio.tasks.get(id))!.submitStartedAt!;
    // Other apps of a busy account: 1,500 Kling requests that ended over the day after.
    for (let i = 0; i < 1_500; i++) {
      const endedAt = sentAt + 3 * HOUR + i * 40_000;
      fal.history.push({ id: `other-${i}`, model: KLING, sentAt: endedAt - MIN, endedAt, input: { prompt: `other ${i}` } });
    }
    falClock = DAY;

    const json = await runStudio(dataDir, ['reconcile', String(id), '--json'], later(env, DAY));
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ candidates: [{ requestId: 'fal-req-1' }], notListedYet: null, cut: null });
    expect((await runStudio(dataDir, ['resolve', String(id), '--adopt', 'fal-req-1'], later(env, DAY))).code).toBe(0);
    expect((await runStudio(dataDir, ['worker', '--until-idle'], later(env, DAY))).code).toBe(0);
    expect((await studio.tasks.get(id))!.status).toBe('SUCCEEDED');
    expect(ledger.charged).toEqual(['fal-req-1']);
    await studio.close();
  }, 60_000);

  it('says the listing could not be looked through whole, never "never accepted", when more requests ended in its life than a lookup reads', async () => {
    let falClock = 0;
    const { ledger, fal, dataDir, studio, projectId, env } = await falStudio(media, { jobMs: 5_000, dropAnswer: (n) => n === 1, now: () => Date.now() + falClock }, { image: 0, clip: 1, lookupTries: 1 });
    const id = (await studio.tasks.enqueue(kling(projectId, 'push in'), Date.now())).id;
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    const sentAt = (await studio.tasks.get(id))!.submitStartedAt!;
    // 1,200 others ended after it and before it is surely listed: it comes last, past the 1,000 read.
    for (let i = 0; i < 1_200; i++) {
      const endedAt = sentAt + 10_000 + i * 4_000;
      fal.history.push({ id: `other-${i}`, model: KLING, sentAt: endedAt - MIN, endedAt, input: { prompt: `other ${i}` } });
    }
    falClock = DAY;

    const said = await runStudio(dataDir, ['reconcile', String(id)], later(env, DAY));
    expect(said.code, said.stderr).toBe(0);
    expect(said.stdout).toContain(`No request at fal matching task ${id} was among those read, but the listing could not be looked through whole: fal listed more than the 1000 requests`);
    expect(said.stdout).not.toMatch(/never accepted/);
    const json = JSON.parse((await runStudio(dataDir, ['reconcile', String(id), '--json'], later(env, DAY))).stdout) as { candidates: unknown[]; cut: string | null };
    expect(json.candidates).toEqual([]);
    expect(json.cut).toMatch(/^fal listed more than the 1000 requests of fal-ai\/kling/);

    expect((await runStudio(dataDir, ['worker', '--until-idle'], later(env, DAY))).code).toBe(0);
    const last = (await studio.tasks.events(id)).at(-1)!;
    expect(last.reason).toMatch(/^looked for the request at fal: the listing could not be looked through whole: .*; whether it was accepted cannot be told from it \(after \d+ lookups\); it needs your decision$/);
    expect(ledger.charged).toEqual(['fal-req-1']);
    await studio.close();
  }, 60_000);

  it('refuses a resubmit through the StudioApi too while the request may still be running, and takes it when chosen anyway', async () => {
    const { ledger, fake, dataDir, studio, projectId } = await falStudio(media, { jobMs: 3 * HOUR, dropAnswer: (n) => n === 1 }, { image: 0, clip: 1, lookupTries: 2 });
    writeSettings(dataDir, {
      engine: { leaseMs: 3_000, tickMs: 50, concurrency: { image: 0, clip: 1, speech: 0, render: 0 }, poll: { intervalMs: 100, maxIntervalMs: 300 }, lookup: { intervalMs: 300, tries: 2 } },
      providers: { fal: { key: FAL_KEY, baseUrl: fake.url } },
    });
    host = await launchHost(dataDir);
    const call = apiCaller(() => host);
    const id = (await studio.tasks.enqueue(kling(projectId, 'push in'), Date.now())).id;
    await until(async () => (await studio.tasks.get(id))!.status === 'OUTCOME_UNKNOWN', 20_000);

    const refused = await call<TaskView>('resolve', id, { resubmit: true });
    expect(refused.status).toBe(400);
    expect(refused.error).toMatch(new RegExp(`^task ${id} was not resubmitted: its request may still be queued or running at fal, which could list it only by \\S+Z; .*choose to resubmit even if it is running$`));
    expect((await studio.tasks.get(id))!.status).toBe('OUTCOME_UNKNOWN');
    expect(ledger.charged).toEqual(['fal-req-1']);

    const forced = await call<TaskView>('resolve', id, { resubmit: true, evenIfRunning: true });
    expect(forced.status, forced.error).toBe(200);
    expect((await studio.tasks.events(id)).find((e) => e.fromStatus === 'OUTCOME_UNKNOWN' && e.toStatus === 'PENDING')).toMatchObject({ detail: { evenIfRunning: true } });
    await studio.close();
  }, 60_000);
});
