import { beforeAll, describe, expect, it } from 'vitest';
import { FLUX } from './fakes/falStandIn.ts';
import { falMedia, falStudio, type FalMedia } from './helpers/falStudio.ts';
import { startStudio, whenStopped } from './helpers/processes.ts';
import { until } from './helpers/wait.ts';

let media: FalMedia;
beforeAll(async () => {
  media = await falMedia();
}, 60_000);

/**
 * fal lists a request once it has ended (fal.ai/docs/platform-apis/v1/models/requests/by-endpoint.md). A listing
 * asked for before the request could be listed proves nothing, however late its answer is read: a worker stopped
 * (SIGSTOP) while that answer is on its way judges it, on resuming, as of when it was asked for.
 */
describe('a fal listing read late', () => {
  it('is judged as of when it was asked for: the request, listed later, is adopted; one charge', async () => {
    const standIn = { jobMs: 300, dropAnswer: () => false };
    let onListing: (() => Promise<void>) | null = null;
    const { ledger, dataDir, studio, projectId, env } = await falStudio(
      media,
      standIn,
      // A short queue allowance keeps the run short; any stall across "listed by" does the same with the default.
      { image: 2, clip: 0, lookupTries: 3, deadlineMs: 60_000, lookup: { intervalMs: 700, queueMs: 6_000 } },
      async (req) => {
        if (req.path.startsWith('/v1/models/requests/by-endpoint') && onListing) {
          const hook = onListing;
          onListing = null;
          await hook();
        }
      },
    );
    const enqueue = async (prompt: string) => (await studio.tasks.enqueue({ projectId, kind: 'image', provider: 'fal', model: FLUX, input: { prompt } }, Date.now())).id;

    // Four runs first: how long this model runs here is learned.
    for (let i = 0; i < 4; i++) await enqueue(`warm ${i}`);
    const worker = startStudio(dataDir, ['worker'], env);
    await until(async () => (await studio.tasks.list({ status: 'SUCCEEDED' })).length === 4, 30_000);

    // A 6.5 s job whose answer is cut after fal queued and charged it.
    standIn.jobMs = 6_500;
    standIn.dropAnswer = () => true;
    const id = await enqueue('the fox at dawn');
    const lookups = async () => (await studio.tasks.events(id)).filter((e) => (e.detail as { lookup?: number } | null)?.lookup !== undefined);
    await until(async () => (await lookups()).length >= 3, 30_000);
    standIn.dropAnswer = () => false;
    // The next listing, asked for before the job ended, is answered while the worker is stopped for 8 s.
    onListing = async () => {
      worker.child.kill('SIGSTOP');
      await whenStopped(worker.child);
      setTimeout(() => worker.child.kill('SIGCONT'), 8_000);
    };
    await until(async () => (await studio.tasks.get(id))!.status === 'SUCCEEDED' || (await lookups()).some((e) => /needs your decision/.test(e.reason)), 40_000);
    worker.child.kill('SIGTERM');
    await worker.exited;

    expect((await lookups()).filter((e) => /never accepted|needs your decision/.test(e.reason))).toEqual([]);
    expect(await studio.tasks.get(id)).toMatchObject({ status: 'SUCCEEDED', attempts: 1, remoteRequestId: ledger.charged[4] });
    expect(ledger.charged).toHaveLength(5);
    await studio.close();
  }, 90_000);
});
