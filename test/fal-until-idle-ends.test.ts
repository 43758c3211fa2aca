import { beforeAll, describe, expect, it } from 'vitest';
import { FLUX, type FalStandInOptions } from './fakes/falStandIn.ts';
import { falMedia, falStudio, imageThenClip, type FalMedia } from './helpers/falStudio.ts';
import { untilIdle } from './helpers/processes.ts';

let media: FalMedia;
beforeAll(async () => {
  media = await falMedia();
}, 60_000);

const initiations = (seen: { method: string; path: string }[]) => seen.filter((s) => s.method === 'POST' && s.path.startsWith('/storage/upload/initiate')).length;

describe('worker --until-idle ends whatever fal answers', () => {
  const refusals: [string, NonNullable<FalStandInOptions['uploadAnswer']>, RegExp][] = [
    ['the key refused (401)', () => ({ status: 401, body: { detail: 'Invalid API key' } }), /^fal's storage refused task-\d+-a1\.png: fal refused the API key \(HTTP 401.*\); fix the fal key .*Nothing was sent or charged/],
    ['an answer with no upload_url', () => ({ status: 200, body: { file_url: 'https://example.com/x.png' } }), /^fal's storage refused task-\d+-a1\.png: fal answered the upload without an upload_url and a file_url\. Nothing was sent or charged/],
  ];
  for (const [name, uploadAnswer, words] of refusals) {
    it(`fal storage refusing the start image for good (${name}) fails the clip at once, charged nothing, saying what to fix`, async () => {
      const { ledger, fake, dataDir, studio, projectId, env } = await falStudio(media, { jobMs: 300, uploadAnswer }, { image: 1, clip: 1, lookupTries: 2 });
      const clip = await imageThenClip(studio, projectId);
      expect(await untilIdle(dataDir, env, 20_000)).toBe(true);
      const task = (await studio.tasks.get(clip))!;
      expect(task).toMatchObject({ status: 'FAILED', charged: 'no', attempts: 0 });
      expect(task.error).toMatch(words);
      expect(initiations(fake.seen)).toBe(1);
      expect(ledger.charged).toEqual(['fal-req-1']);
      await studio.close();
    }, 40_000);
  }

  it('fal storage answering 503 to every upload: the clip is tried a bounded number of times, backing off, then fails charged nothing', async () => {
    const { ledger, fake, dataDir, studio, projectId, env } = await falStudio(
      media,
      { jobMs: 300, uploadAnswer: () => ({ status: 503, body: { detail: 'Service Unavailable' } }) },
      { image: 1, clip: 1, lookupTries: 2 },
    );
    const clip = await imageThenClip(studio, projectId);
    const started = Date.now();
    // Five tries, backing off 2, 4, 8 and 16 s (each within a quarter either way): ended within a minute.
    expect(await untilIdle(dataDir, env, 60_000)).toBe(true);
    expect(Date.now() - started).toBeGreaterThan(20_000);
    const task = (await studio.tasks.get(clip))!;
    expect(task).toMatchObject({ status: 'FAILED', charged: 'no', attempts: 0 });
    expect(task.error).toMatch(/^fal's storage did not take task-\d+-a1\.png in 5 tries \(last: fal had a problem on its side \(HTTP 503.*\)\)\. Nothing was sent or charged; generate again later$/);
    expect(initiations(fake.seen)).toBe(5);
    expect(ledger.charged).toEqual(['fal-req-1']);
    await studio.close();
  }, 80_000);

  // A new cursor each page that still names the first page ('0', '00', '000', ...).
  const onward = (q: URLSearchParams) => Buffer.from(`${Buffer.from(q.get('cursor') ?? '', 'base64').toString()}0`).toString('base64');
  const loops: [string, FalStandInOptions['listingPage'], string, number][] = [
    ['the same cursor again', (q, normal) => ({ ...(normal() as object), has_more: true, next_cursor: q.get('cursor') ?? 'MA==' }), 'it gave a cursor it had given before', 2],
    ['empty pages that say more follow', (q) => ({ items: [], has_more: true, next_cursor: onward(q) }), 'a page with no requests said more follow', 1],
    // The studio reads at most 1,000 requests a lookup: at most twice as many pages of 100 as that takes.
    ['the same requests under new cursors', (q, normal) => ({ ...(normal() as object), has_more: true, next_cursor: onward(q) }), '20 pages of 100 without reaching its end', 20],
  ];
  for (const [name, listingPage, why, pages] of loops) {
    it(`a listing that never ends (${name}) ends the lookup, which says it could not be finished, and the worker ends`, async () => {
      const { ledger, fal, dataDir, studio, projectId, env } = await falStudio(media, { jobMs: 200, dropAnswer: (n) => n === 1, listingPage }, { image: 1, clip: 0, lookupTries: 2 });
      // Another app's request, ended just now: each page of the listing shows it.
      fal.history.push({ id: 'other-1', model: FLUX, sentAt: Date.now() - 2_000, endedAt: Date.now(), input: { prompt: 'a cat' } });
      const id = (await studio.tasks.enqueue({ projectId, kind: 'image', provider: 'fal', model: FLUX, input: { prompt: 'a fox' } }, Date.now())).id;
      expect(await untilIdle(dataDir, env, 20_000)).toBe(true);
      expect((await studio.tasks.get(id))!.status).toBe('OUTCOME_UNKNOWN');
      const reasons = (await studio.tasks.events(id)).map((e) => e.reason);
      expect(reasons).toContainEqual(`the lookup at fal could not be made (fal's listing went on without end (${why}), so the lookup could not be finished); lookup 1 of 2`);
      expect(reasons.filter((r) => /never accepted/.test(r))).toEqual([]);
      expect(fal.pages).toHaveLength(pages);
      expect(ledger.charged).toEqual(['fal-req-1']);
      await studio.close();
    }, 40_000);
  }
});
