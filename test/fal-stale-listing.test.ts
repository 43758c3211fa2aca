import { beforeAll, describe, expect, it } from 'vitest';
import { openStudio } from '../main/studio.ts';
import { falStandIn, FLUX } from './fakes/falStandIn.ts';
import type { Ledger } from './fakes/providers.ts';
import { startFake } from './fakes/server.ts';
import { FAL_KEY, falMedia, type FalMedia } from './helpers/falStudio.ts';
import { startStudio, whenStopped, writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';
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
    const ledger: Ledger = { charged: [] };
    const standIn = { jobMs: 300, dropAnswer: () => false };
    const fal = falStandIn(ledger, media, standIn);
    let onListing: (() => Promise<void>) | null = null;
    const fake = await startFake(async (req, res) => {
      if (req.path.startsWith('/v1/models/requests/by-endpoint') && onListing) {
        const hook = onListing;
        onListing = null;
        await hook();
      }
      return fal.route(req, res);
    });
    const dataDir = tempDir();
    // A short queue allowance keeps the run short; any stall across "listed by" does the same with the default.
    writeSettings(dataDir, {
      engine: {
        leaseMs: 3_000,
        tickMs: 50,
        concurrency: { image: 2, clip: 0, speech: 0, render: 0 },
        poll: { intervalMs: 100, maxIntervalMs: 300, deadlineMs: 60_000 },
        lookup: { intervalMs: 700, tries: 3, queueMs: 6_000 },
      },
    });
    const studio = await openStudio(dataDir);
    const project = await studio.projects.ensure('Flux', Date.now());
    const enqueue = async (prompt: string) => (await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: FLUX, input: { prompt } }, Date.now())).id;
    const env = { STUDIO_FAL_BASE_URL: fake.url, FAL_KEY };

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
