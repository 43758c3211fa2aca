import { beforeAll, describe, expect, it } from 'vitest';
import { KLING } from './fakes/falStandIn.ts';
import { falMedia, falStudio, type FalMedia } from './helpers/falStudio.ts';
import { runStudio, startStudio } from './helpers/processes.ts';
import { until } from './helpers/wait.ts';

let media: FalMedia;
beforeAll(async () => {
  media = await falMedia();
}, 60_000);

/**
 * fal lists a request once it has ended (fal.ai/docs/platform-apis/v1/models/requests/by-endpoint.md: statuses
 * success, error, user_error; sorted by end time). A Kling job queued longer than the lookups last is still
 * running, and will be charged: nobody may be told it was never accepted, nor asked to resubmit it.
 */
describe('a fal request not listed yet', () => {
  it('is looked for past the tries, never called "never accepted" while it could still be running, and adopted once it ends', async () => {
    const { ledger, dataDir, studio, projectId, env } = await falStudio(media, { jobMs: 20_000, dropAnswer: () => true }, { image: 0, clip: 2, lookupTries: 3 });
    const id = (await studio.tasks.enqueue({ projectId, kind: 'clip', provider: 'fal', model: KLING, input: { prompt: 'push in', image_url: 'https://example.com/start.png', duration: 5 } }, Date.now())).id;
    const lookups = async () => (await studio.tasks.events(id)).filter((e) => (e.detail as { lookup?: number } | null)?.lookup !== undefined);

    const worker = startStudio(dataDir, ['worker'], env);
    // More lookups than the tries, all while the request is still queued at fal.
    await until(async () => (await lookups()).length > 3, 15_000);
    expect(ledger.charged).toEqual(['fal-req-1']);
    expect((await studio.tasks.get(id))!.status).toBe('OUTCOME_UNKNOWN');
    const said = (await lookups()).map((e) => e.reason);
    expect(said.filter((r) => /never accepted|needs your decision/.test(r))).toEqual([]);
    expect(said.at(-1)).toMatch(/^looked for the request at fal: not listed yet: fal lists a request once it has ended, and one sent then could still be queued or running until \S+ \(twice fal's stated run of about 5 min, up to 10 runs as fal retries a failed one, plus 10 min in the queue\)/);

    // A person who looks right after the lost answer is told the same, and offered no resubmit. The job runs 20 s, so
    // two cold command starts on a loaded machine still find it running.
    const reconciled = await runStudio(dataDir, ['reconcile', String(id)], env);
    expect(reconciled.code).toBe(0);
    expect(reconciled.stdout).toContain(`No request at fal matches task ${id}, but it is not listed yet: fal lists a request once it has ended`);
    expect(reconciled.stdout).toContain(`Look again after then: studio reconcile ${id}`);
    expect(reconciled.stdout).not.toMatch(/never accepted|--resubmit/);
    expect((await runStudio(dataDir, ['unknown'], env)).stdout).toMatch(/\n  lookup: +looked for the request at fal: not listed yet: fal lists a request once it has ended/);

    await until(async () => (await studio.tasks.get(id))!.status === 'SUCCEEDED', 40_000);
    worker.child.kill('SIGTERM');
    await worker.exited;
    expect(await studio.tasks.get(id)).toMatchObject({ remoteRequestId: 'fal-req-1' });
    expect(ledger.charged).toEqual(['fal-req-1']);
    await studio.close();
  }, 90_000);

  it.each([
    ['then fails', false],
    ['fails from the first lookup', true],
  ])('whose listing %s is looked for again past the tries while it could still be running, never handed to a person', async (_, failsFirst) => {
    const standIn = { jobMs: 20_000, dropAnswer: () => true, listingFails: failsFirst };
    const { ledger, dataDir, studio, projectId, env } = await falStudio(media, standIn, { image: 0, clip: 2, lookupTries: 3 });
    const id = (await studio.tasks.enqueue({ projectId, kind: 'clip', provider: 'fal', model: KLING, input: { prompt: 'push in', image_url: 'https://example.com/start.png', duration: 5 } }, Date.now())).id;
    const lookups = async () => (await studio.tasks.events(id)).filter((e) => (e.detail as { lookup?: number } | null)?.lookup !== undefined);

    const worker = startStudio(dataDir, ['worker'], env);
    // fal's listing answers 500 (from the first lookup, or after 3 that found nothing yet) while the job is queued.
    if (!failsFirst) await until(async () => (await lookups()).length >= 3, 15_000);
    standIn.listingFails = true;
    const before = (await lookups()).length;
    await until(async () => (await lookups()).length >= before + 3, 15_000);
    const failed = (await lookups()).slice(before);
    expect(failed.map((e) => (e.detail as { verdict: string }).verdict)).toEqual(failed.map(() => 'again'));
    expect(failed.at(-1)!.reason).toMatch(/; it could still be queued or running until \S+, so it is looked for again$/);
    expect((await studio.tasks.get(id))!.status).toBe('OUTCOME_UNKNOWN');

    standIn.listingFails = false;
    await until(async () => (await studio.tasks.get(id))!.status === 'SUCCEEDED', 40_000);
    worker.child.kill('SIGTERM');
    await worker.exited;
    expect(await studio.tasks.get(id)).toMatchObject({ remoteRequestId: 'fal-req-1' });
    expect((await lookups()).filter((e) => (e.detail as { verdict: string }).verdict === 'ask')).toEqual([]);
    expect(ledger.charged).toEqual(['fal-req-1']);
    await studio.close();
  }, 90_000);
});
