import { beforeAll, describe, expect, it } from 'vitest';
import type { Studio } from '../main/studio.ts';
import { KLING } from './fakes/falStandIn.ts';
import { falMedia, falStudio, imageThenClip, type FalMedia } from './helpers/falStudio.ts';
import { runStudio, startStudio } from './helpers/processes.ts';
import { until } from './helpers/wait.ts';

let media: FalMedia;
beforeAll(async () => {
  media = await falMedia();
}, 60_000);

/** The start image's URL each Kling request named, in the order sent. */
const klingImages = (seen: { method: string; path: string; body: string }[]) =>
  seen.filter((s) => s.method === 'POST' && s.path === `/${KLING}`).map((s) => (JSON.parse(s.body) as { image_url: string }).image_url);

/** The URLs each attempt's boundary mark keeps, in order. */
const markedUploads = async (studio: Studio, id: number) =>
  (await studio.tasks.events(id)).filter((e) => e.reason === 'submit started').map((e) => ((e.detail as { uploads?: { url: string }[] }).uploads ?? []).map((u) => u.url));

describe('fal input uploads, one per attempt, looked up as sent', () => {
  it("a stalled worker's upload finishing after another worker sent the clip changes nothing: the lookup finds the request really sent, paid once", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let putHeld = false;
    const { ledger, fake, dataDir, studio, projectId, env } = await falStudio(
      media,
      { jobMs: 3_000, dropAnswer: (_n, model) => model === KLING, holdPut: (n) => (n === 1 ? ((putHeld = true), held) : null) },
      { image: 1, clip: 1, lookupTries: 5 },
    );
    const clip = await imageThenClip(studio, projectId);

    // Worker A stops while fal's storage holds its PUT; its lease runs out, and B sends the clip with its own upload.
    const a = startStudio(dataDir, ['worker'], env);
    await until(() => putHeld, 30_000);
    a.child.kill('SIGSTOP');
    const b = startStudio(dataDir, ['worker'], env);
    await until(async () => (await studio.tasks.get(clip))!.status === 'OUTCOME_UNKNOWN', 30_000);
    const [sent] = klingImages(fake.seen);
    expect(sent).toMatch(new RegExp(`^${fake.url}/stored/2/`));

    // A wakes, its PUT answers: it must leave no trace that a lookup would take for what B sent.
    release();
    a.child.kill('SIGCONT');
    await until(async () => (await studio.tasks.get(clip))!.status === 'SUCCEEDED', 30_000);
    b.child.kill('SIGTERM');
    a.child.kill('SIGTERM');
    await Promise.all([a.exited, b.exited]);

    expect(await studio.tasks.get(clip)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'fal-req-2' });
    expect(await markedUploads(studio, clip)).toEqual([[sent]]);
    expect(JSON.stringify(await studio.tasks.events(clip))).not.toContain(`${fake.url}/stored/1/`);
    // One image, one clip: B's request was found and collected, not bought again.
    expect(ledger.charged).toEqual(['fal-req-1', 'fal-req-2']);
    await studio.close();
  }, 90_000);

  it('a clip tried again after fal refused its send uploads its start image again: each request names its own upload, which its mark keeps', async () => {
    const { ledger, fal, fake, dataDir, studio, projectId, env } = await falStudio(
      media,
      // The first clip's send (the second send) is answered as nothing queued, a rate limit: the clip is sent again as
      // a new attempt a couple of seconds later.
      { jobMs: 300, submitAnswer: (n) => (n === 2 ? { status: 429, body: { detail: 'Too many requests' } } : null) },
      { image: 1, clip: 1, lookupTries: 5 },
    );
    const clip = await imageThenClip(studio, projectId);
    await runStudio(dataDir, ['worker', '--until-idle'], env);

    expect(await studio.tasks.get(clip)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'fal-req-2' });
    expect(fal.uploads).toHaveLength(2);
    const sent = klingImages(fake.seen);
    expect(sent).toEqual([expect.stringMatching(new RegExp(`^${fake.url}/stored/1/`)), expect.stringMatching(new RegExp(`^${fake.url}/stored/2/`))]);
    expect(await markedUploads(studio, clip)).toEqual([[sent[0]], [sent[1]]]);
    expect(ledger.charged).toEqual(['fal-req-1', 'fal-req-2']);
    await studio.close();
  }, 60_000);
});
