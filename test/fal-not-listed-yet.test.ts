import { beforeAll, describe, expect, it } from 'vitest';
import { makeMedia, type Media } from '../main/simulator/media.ts';
import { openStudio } from '../main/studio.ts';
import { realMedia, type Ledger } from './fakes/providers.ts';
import { startFake } from './fakes/server.ts';
import { falStandIn, KLING } from './fakes/falStandIn.ts';
import { runStudio, startStudio, writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

let media: { png: Media; clip: Media };
beforeAll(async () => {
  media = { png: (await realMedia()).png, clip: await makeMedia('clip', { prompt: 'push in', duration: 1 }) };
}, 60_000);

/**
 * fal lists a request once it has ended (fal.ai/docs/platform-apis/v1/models/requests/by-endpoint.md: statuses
 * success, error, user_error; sorted by end time). A Kling job queued longer than the lookups last is still
 * running, and will be charged: nobody may be told it was never accepted, nor asked to resubmit it.
 */
describe('a fal request not listed yet', () => {
  it('is looked for past the tries, never called "never accepted" while it could still be running, and adopted once it ends', async () => {
    const ledger: Ledger = { charged: [] };
    const fal = falStandIn(ledger, media, { jobMs: 8_000, dropAnswer: () => true });
    const fake = await startFake(fal.route);
    const dataDir = tempDir();
    writeSettings(dataDir, {
      engine: {
        leaseMs: 3_000,
        tickMs: 50,
        concurrency: { image: 0, clip: 2, speech: 0, render: 0 },
        poll: { intervalMs: 100, maxIntervalMs: 300, deadlineMs: 20_000 },
        lookup: { intervalMs: 300, tries: 3 },
      },
    });
    const env = { STUDIO_FAL_BASE_URL: fake.url, FAL_KEY: 'fal-key-0123456789' };
    const studio = await openStudio(dataDir);
    const project = await studio.projects.ensure('Fox', Date.now());
    const id = (await studio.tasks.enqueue({ projectId: project.id, kind: 'clip', provider: 'fal', model: KLING, input: { prompt: 'push in', image_url: 'https://example.com/start.png', duration: 5 } }, Date.now())).id;
    const lookups = async () => (await studio.tasks.events(id)).filter((e) => (e.detail as { lookup?: number } | null)?.lookup !== undefined);

    const worker = startStudio(dataDir, ['worker'], env);
    // More lookups than the tries, all while the request is still queued at fal.
    await until(async () => (await lookups()).length > 3, 6_000);
    expect(ledger.charged).toEqual(['fal-req-1']);
    expect((await studio.tasks.get(id))!.status).toBe('OUTCOME_UNKNOWN');
    const said = (await lookups()).map((e) => e.reason);
    expect(said.filter((r) => /never accepted|needs your decision/.test(r))).toEqual([]);
    expect(said.at(-1)).toMatch(/^looked for the request at fal: not listed yet: fal lists a request once it has ended, and one sent then could still be queued or running until \S+ \(twice fal's stated run of about 5 min, plus 10 min in the queue\)/);

    // A person who looks right after the lost answer is told the same, and offered no resubmit.
    const reconciled = await runStudio(dataDir, ['reconcile', String(id)], env);
    expect(reconciled.code).toBe(0);
    expect(reconciled.stdout).toContain(`No request at fal matches task ${id}, but it is not listed yet: fal lists a request once it has ended`);
    expect(reconciled.stdout).toContain(`Look again after then: studio reconcile ${id}`);
    expect(reconciled.stdout).not.toMatch(/never accepted|--resubmit/);
    expect((await runStudio(dataDir, ['unknown'], env)).stdout).toMatch(/\n  lookup: +looked for the request at fal: not listed yet: fal lists a request once it has ended/);

    await until(async () => (await studio.tasks.get(id))!.status === 'SUCCEEDED', 20_000);
    worker.child.kill('SIGTERM');
    await worker.exited;
    expect(await studio.tasks.get(id)).toMatchObject({ remoteRequestId: 'fal-req-1' });
    expect(ledger.charged).toEqual(['fal-req-1']);
    await studio.close();
  }, 60_000);
});
