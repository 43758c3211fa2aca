import { beforeAll, describe, expect, it } from 'vitest';
import { FalAdapter } from '../main/providers/fal.ts';
import type { Studio } from '../main/studio.ts';
import { KLING, type FalStandInOptions, type HistoryEntry } from './fakes/falStandIn.ts';
import { FAL_KEY, falMedia, falStudio, imageThenClip, type FalMedia } from './helpers/falStudio.ts';
import { runStudio, startStudio } from './helpers/processes.ts';
import { until } from './helpers/wait.ts';

/** The studio reads at most 1 MiB of a provider's JSON answer. */
const CAP = 1 << 20;

let media: FalMedia;
beforeAll(async () => {
  media = await falMedia();
}, 60_000);

/** A start image sent inline, as apps that do not upload send it: a data: URI of `bytes` bytes. */
const inline = (bytes: number) => `data:image/png;base64,${Buffer.alloc(bytes, 7).toString('base64')}`;

/**
 * Kling requests of other apps on the account, already ended, each with its start image inline (~270 KB as
 * base64): ten of them make a page over the cap. One is larger than the cap by itself; it was sent an hour ago,
 * so it is no candidate for a send made now.
 */
function busyHistory(now: number): HistoryEntry[] {
  const others = Array.from({ length: 12 }, (_, i) => ({
    id: `other-${i}`,
    model: KLING,
    sentAt: now - 60_000,
    endedAt: now - 1_000 + i,
    input: { prompt: `someone else's clip ${i}`, image_url: inline(200_000), duration: '5' },
  }));
  return [...others, { id: 'huge', model: KLING, sentAt: now - 3_600_000, endedAt: now, input: { prompt: 'long ago', image_url: inline(1_600_000) } }];
}

const setup = (opts: FalStandInOptions) => falStudio(media, opts, { image: 2, clip: 2, lookupTries: 5 });

const events = async (studio: Studio, id: number) => (await studio.tasks.events(id)).map((e) => e.reason);

describe('fal lookups that fit in what the studio reads', () => {
  it('uploads the start image to fal storage and sends its URL; a lookup over pages of inline images still finds and adopts the request', async () => {
    const { ledger, fal, fake, dataDir, studio, projectId, env } = await setup({ jobMs: 1_500, dropAnswer: (_n, model) => model === KLING });
    fal.history.push(...busyHistory(Date.now()));
    const clip = await imageThenClip(studio, projectId);

    const worker = startStudio(dataDir, ['worker'], env);
    await until(async () => (await studio.tasks.get(clip))!.status === 'SUCCEEDED', 30_000);
    worker.child.kill('SIGTERM');
    await worker.exited;

    // The start image went to fal's storage (fal-js storage.ts), and the request names it by URL.
    expect(fal.uploads).toEqual([{ name: expect.stringMatching(/\.png$/), contentType: 'image/png', bytes: media.png.bytes.length }]);
    const sent = JSON.parse(fake.seen.find((s) => s.method === 'POST' && s.path === `/${KLING}`)!.body) as { image_url: string };
    expect(sent.image_url).toMatch(new RegExp(`^${fake.url}/stored/1/`));
    // Pages over the cap were asked again smaller; none of the studio's lookups failed.
    expect(fal.pages.some((p) => p.payloads && p.bytes > CAP)).toBe(true);
    expect(fal.pages.filter((p) => p.limit === 1).length).toBeGreaterThan(0);
    const history = await events(studio, clip);
    expect(history.filter((r) => /the lookup at fal could not be/.test(r))).toEqual([]);
    // The clip's boundary mark keeps the URL its request named, for a lookup to rebuild that request.
    const marks = (await studio.tasks.events(clip)).filter((e) => e.reason === 'submit started');
    expect(marks.map((e) => (e.detail as { uploads?: { url: string }[] }).uploads?.map((u) => u.url))).toEqual([[sent.image_url]]);
    expect(history).toContainEqual(expect.stringMatching(/^adopted by the studio after a lookup/));
    expect(await studio.tasks.get(clip)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'fal-req-2' });
    // One image, one clip: the lost answer's request was collected, not bought again.
    expect(ledger.charged).toEqual(['fal-req-1', 'fal-req-2']);
    await studio.close();
  }, 60_000);

  it('a start image fal storage did not take sends nothing: the clip is tried again later, then sent once', async () => {
    const { ledger, fal, dataDir, studio, projectId, env } = await setup({ jobMs: 300, uploadFailsOnce: true });
    const clip = await imageThenClip(studio, projectId);
    await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect(await studio.tasks.get(clip)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'fal-req-2' });
    expect(await events(studio, clip)).toContainEqual(expect.stringMatching(/^could not put .*\.png in fal's storage \(.*503.*\); nothing was sent$/));
    expect(fal.uploads).toHaveLength(1);
    expect(ledger.charged).toEqual(['fal-req-1', 'fal-req-2']);
    await studio.close();
  }, 30_000);

  it('lists a request too large to read even alone without its input, saying so, and reads the rest', async () => {
    const { fake, fal, studio } = await setup({ jobMs: 0 });
    const now = Date.now();
    fal.history.push(...busyHistory(now));
    await studio.close();
    const adapter = new FalAdapter({ key: FAL_KEY, baseUrl: fake.url });
    const request = adapter.prepare({ kind: 'clip', model: KLING, input: { prompt: "someone else's clip 3", image_url: inline(200_000), duration: '5' } });
    const found = await adapter.lookup({ from: now - 7_200_000, to: now + 60_000 }, request);
    expect(found).toHaveLength(13);
    expect(found.filter((c) => c.inputMatches).map((c) => c.requestId)).toEqual(['other-3']);
    expect(found.find((c) => c.requestId === 'huge')).toMatchObject({ inputMatches: false, inputGone: expect.stringMatching(/too large to read here/) });
  });

  it('says in words, with no stack, when reconcile cannot make its lookup, and changes nothing', async () => {
    const { dataDir, studio, projectId, env } = await setup({ jobMs: 500, dropAnswer: () => true, listingFails: true });
    const id = (await studio.tasks.enqueue({ projectId, kind: 'clip', provider: 'fal', model: KLING, input: { prompt: 'push in', image_url: 'https://example.com/start.png', duration: 5 } }, Date.now())).id;
    await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect((await studio.tasks.get(id))!.status).toBe('OUTCOME_UNKNOWN');

    const reconciled = await runStudio(dataDir, ['reconcile', String(id)], env);
    expect(reconciled.code).toBe(1);
    expect(reconciled.stderr).toMatch(new RegExp(`^studio: the lookup at fal could not be made \\(.*500.*\\); nothing was changed\\. Try again later: studio reconcile ${id}\\n$`));
    expect(reconciled.stderr).not.toMatch(/\n\s+at /);
    expect((await studio.tasks.get(id))!.status).toBe('OUTCOME_UNKNOWN');
    await studio.close();
  }, 30_000);
});
