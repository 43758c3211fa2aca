import { beforeAll, describe, expect, it } from 'vitest';
import { FalBills } from '../main/engine/falBills.ts';
import { attributeUsage, type SentRequest, type UsageLine } from '../main/pricing/falBills.ts';
import { entryFor, type CatalogueEntry } from '../main/pricing/catalogue.ts';
import type { Kind } from '../main/domain/tasks/model.ts';
import { openStudio, type Studio } from '../main/studio.ts';
import type { SpendReport } from '../main/api/contract.ts';
import { falUsage, type FalUsage } from './fakes/falPlatform.ts';
import { falStandIn, FLUX, KLING } from './fakes/falStandIn.ts';
import type { Ledger } from './fakes/providers.ts';
import { send, startFake } from './fakes/server.ts';
import { falMedia, FAL_KEY, type FalMedia } from './helpers/falStudio.ts';
import { untilIdle, writeSettings } from './helpers/processes.ts';
import { apiForTest } from './helpers/studioApi.ts';
import { storeKinds, type StoreKind } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * fal's bill per request from its usage API (GET /v1/models/usage, an admin key only), read when a spend view is
 * asked for: a real worker makes two FLUX.1 [dev] images at a fal stand-in that records each charge in its usage
 * ledger, summed per endpoint and hour as fal's docs show; the spend view then reads it over the loopback host.
 */

const ADMIN = 'fal-admin-key-9f8e7d6c5b4a';
const API_SCOPE = 'fal-api-scope-key-1a2b3c';

let media: FalMedia;
beforeAll(async () => {
  media = await falMedia();
}, 60_000);

const [SQLITE, POSTGRES] = storeKinds() as [StoreKind, StoreKind];

/**
 * fal bills per hour, and a request that spans the top of one is rightly left at its estimate: so the requests of a
 * test that expects a bill are not sent in the last seconds of an hour.
 */
async function clearOfTheHour(marginMs = 20_000): Promise<void> {
  const left = 3_600_000 - (Date.now() % 3_600_000);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 1_000));
}

async function twoImages(adminKey: string | null, kind: StoreKind = SQLITE) {
  await clearOfTheHour();
  const ledger: Ledger = { charged: [] };
  const usage = falUsage({ admin: ADMIN, apiScope: API_SCOPE });
  const fal = falStandIn(ledger, media, { jobMs: 100, usage: usage.ledger });
  const fake = await startFake((req, res) => (req.path.startsWith('/v1/models/usage') ? usage.route(req, res) : fal.route(req, res)));
  const dataDir = tempDir();
  const fals = { key: FAL_KEY, baseUrl: fake.url, ...(adminKey ? { adminKey } : {}) };
  const poll = { intervalMs: 50, maxIntervalMs: 100 };
  writeSettings(dataDir, { engine: { tickMs: 50, poll, concurrency: { image: 1, clip: 0, speech: 0, render: 0 } }, providers: { fal: fals } });
  const database = kind.kind === 'postgres' ? await kind.fresh() : undefined;
  const studio = await openStudio(dataDir, undefined, { database });
  const project = await studio.projects.ensure('Fox', Date.now());
  const inputs = [{ prompt: 'a fox at dawn', image_size: { width: 2048, height: 2048 } }, { prompt: 'a fox at dusk', image_size: { width: 1920, height: 1080 }, num_images: 2 }];
  const ids: number[] = [];
  for (const input of inputs) ids.push((await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: FLUX, input }, Date.now())).id);
  const env: Record<string, string> = database ? { STUDIO_DATABASE_URL: database, STUDIO_MACHINE_NAME: 'machine-a' } : {};
  expect(await untilIdle(dataDir, env, 30_000)).toBe(true);
  return { dataDir, studio, usage, ids, fake, ledger };
}

/** The stand-in's ledger in micro-USD, per charge, as fal computes cost (quantity × unit_price). */
const micros = (usage: FalUsage) => usage.ledger.map((c) => Math.round(c.quantity * c.unitPrice * 1_000_000));

async function spendOf(dataDir: string): Promise<SpendReport> {
  const call = await apiForTest(dataDir);
  const answer = await call<SpendReport>('spend', 'Fox');
  expect(answer.status).toBe(200);
  return answer.result;
}

async function costs(studio: Studio, ids: number[]) {
  return Promise.all(ids.map(async (id) => (await studio.tasks.get(id))!));
}

describe("fal's bill from its usage API", () => {
  it('with an admin key, the spend view bills each request as the stand-in\'s ledger does, to the micro-unit', async () => {
    const { dataDir, studio, usage, ids } = await twoImages(ADMIN);
    // 2048² is 4 megapixels, 1920×1080 × 2 is 2 × 2: 0.10 USD each, in the ledger.
    expect(micros(usage)).toEqual([100_000, 100_000]);
    const report = await spendOf(dataDir);
    expect(report.bills).toEqual([{ provider: 'fal', state: 'read', message: "read fal's usage records: 2 requests billed from them" }]);
    expect(usage.calls.map((c) => [c.key, c.query.get('timeframe'), c.query.getAll('endpoint_id')])).toEqual([[ADMIN, 'hour', [FLUX]]]);
    const tasks = await costs(studio, ids);
    expect(tasks.map((t) => t.costActual)).toEqual(micros(usage));
    expect(tasks[0]!.costActualSource).toMatch(/^fal's usage API: 4 of the 8 image at 0\.025 USD \(0\.2 USD\) fal-ai\/flux\/dev billed in the hour from \d{4}-\d\d-\d\d \d\d:00 UTC, all of them this studio's requests$/);
    expect(report.real.actual).toBe(0.2);
    expect(report.real.estimated).toBe(0);
    expect(report.byModel.find((m) => m.model === FLUX)).toMatchObject({ billed: 0.2, estimatedOnly: 0 });
    await studio.close();
  }, 60_000);

  it('without an admin key, fal is never asked for usage and its figures stay estimates, said so', async () => {
    const { dataDir, studio, usage, ids } = await twoImages(null);
    const report = await spendOf(dataDir);
    expect(report.bills![0]).toMatchObject({ provider: 'fal', state: 'off' });
    expect(report.bills![0]!.message).toMatch(/estimates: fal reports no cost per request\. An admin key for fal in Settings/);
    expect(usage.calls).toEqual([]);
    expect((await costs(studio, ids)).map((t) => [t.costActual, t.costActualSource, t.costEstimated])).toEqual([
      [null, null, 100_000],
      [null, null, 100_000],
    ]);
    expect(report.real).toMatchObject({ actual: 0, estimated: 0.2 });
    await studio.close();
  }, 60_000);

  it('a bucket shared with a request from elsewhere keeps the estimates, and says why on each', async () => {
    const { dataDir, studio, usage, ids } = await twoImages(ADMIN);
    // Another app of the same workspace made one 1-megapixel image in the same hour.
    usage.ledger.push({ ...usage.ledger[0]!, quantity: 1 });
    const report = await spendOf(dataDir);
    expect(report.bills![0]).toEqual({ provider: 'fal', state: 'read', message: "read fal's usage records: 0 requests billed from them, 2 kept at the estimate (each says why)" });
    const tasks = await costs(studio, ids);
    expect(tasks.map((t) => t.costActual)).toEqual([null, null]);
    for (const t of tasks) expect(t.costActualSource).toMatch(/^an estimate: fal's usage for fal-ai\/flux\/dev in the hour from .* bills 9 image where this studio's 2 requests asked for 8: requests from elsewhere share it$/);
    expect(report.real).toMatchObject({ actual: 0, estimated: 0.2 });
    await studio.close();
  }, 60_000);

  for (const [name, setUp, said] of [
    ['a wrong key (401)', (u: FalUsage) => void u, /refused the admin key \(HTTP 401: \{"detail":"Invalid API key"\}\); check it in Settings/],
    ['an API-scope key (403)', (u: FalUsage) => void u, /refused the admin key \(HTTP 403: \{"detail":"Admin API key required"\}\)/],
    ['a 503', (u: FalUsage) => void (u.answer = { status: 503, body: { detail: 'Service Unavailable' } }), /answered HTTP 503 \(\{"detail":"Service Unavailable"\}\); it is asked again next time/],
  ] as const) {
    it(`${name} from the usage API changes nothing and says so, the key never in the words`, async () => {
      const key = name.startsWith('a wrong') ? 'fal-admin-key-wrong-000' : name.startsWith('an API') ? API_SCOPE : ADMIN;
      const { dataDir, studio, usage, ids } = await twoImages(key);
      setUp(usage);
      const report = await spendOf(dataDir);
      expect(report.bills![0]!.state).toBe('failed');
      expect(report.bills![0]!.message).toMatch(said);
      expect(report.bills![0]!.message).toMatch(/No figure was changed: fal's stay estimates$/);
      expect(report.bills![0]!.message).not.toContain(key);
      expect((await costs(studio, ids)).map((t) => [t.costActual, t.costActualSource])).toEqual([
        [null, null],
        [null, null],
      ]);
      expect(report.real).toMatchObject({ actual: 0, estimated: 0.2 });
      await studio.close();
    }, 60_000);
  }

  it.skipIf(!POSTGRES.available)('on the team database too: the bills recorded, and a billed figure never replaced', async () => {
    const { studio, usage, ids, fake } = await twoImages(ADMIN, POSTGRES);
    await studio.tasks.recordBill(ids[0]!, 123_456, 'reported by the provider');
    const bills = new FalBills(studio.tasks, () => ADMIN, () => fake.url);
    expect(await bills.refresh()).toEqual({ state: 'read', message: "read fal's usage records: 1 request billed from them" });
    const tasks = await costs(studio, ids);
    expect(tasks.map((t) => t.costActual)).toEqual([123_456, micros(usage)[1]]);
    expect(tasks[0]!.costActualSource).toBe('reported by the provider');
    await studio.close();
  }, 90_000);
});

/**
 * One line of fal's usage API (fal.ai/docs/platform-apis/v1/models/usage.md: endpoint_id, unit, quantity, unit_price,
 * cost, currency) in the last full hour, against one request of this studio inside that hour.
 */
const HOUR = 3_600_000;
const AT = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
const line = (endpointId: string, unit: string, quantity: number, unitPrice: number, currency = 'USD'): UsageLine => ({
  bucket: AT,
  endpointId,
  unit,
  quantity,
  unitPrice,
  cost: Math.round(quantity * unitPrice * 1e9) / 1e9,
  currency,
});
const sent = (endpointId: string, kind: Kind, input: Record<string, unknown>, entry: CatalogueEntry | undefined): SentRequest => ({
  id: 1,
  endpointId,
  kind,
  input,
  sentAt: AT + 60_000,
  endedAt: AT + 120_000,
  settled: true,
  currency: 'USD',
  entry,
});
const klingClip = sent(KLING, 'clip', { prompt: 'x', duration: '5' }, entryFor('fal', KLING, 'clip'));
const devImage = sent(FLUX, 'image', { prompt: 'x', image_size: { width: 2048, height: 2048 } }, entryFor('fal', FLUX, 'image'));
const perImageEntry: CatalogueEntry = { ...entryFor('fal', FLUX, 'image')!, model: 'fal-ai/flat', pricing: { per: 'image', price: 0.04 } };
const flatImage = sent('fal-ai/flat', 'image', { prompt: 'x', image_size: { width: 2048, height: 2048 } }, perImageEntry);

describe("a usage line is read in the one unit the endpoint is billed in, and in the task's currency", () => {
  it.each([
    // Kling's 5 s clip is one video; 5 videos in the hour are four from elsewhere, not our 5 seconds.
    ['Kling, 5 videos for one 5 s clip', line(KLING, 'video', 5, 0.28), klingClip, /bills 5 video where this studio's 1 request asked for 1: requests from elsewhere share it$/],
    // A flat price per image: 4 images in the hour are three from elsewhere, not our 4 megapixels.
    ['a per-image model, 4 images for one 4-megapixel image', line('fal-ai/flat', 'images', 4, 0.04), flatImage, /bills 4 images where this studio's 1 request asked for 1: requests from elsewhere share it$/],
    ['a unit the model is not billed in', line(FLUX, 'seconds', 4, 0.025), devImage, /bills in "seconds", not a unit this studio can count a request of fal-ai\/flux\/dev in, so each request's share is not known$/],
    ['a line in euros for a task in dollars', line(FLUX, 'megapixels', 4, 0.025, 'EUR'), devImage, /is in EUR where this studio counts the request in USD: a bill in another currency is not recorded as this one$/],
  ])('%s keeps the estimate, saying why', (_, l, r, why) => {
    const [verdict] = attributeUsage([l], [r], HOUR, Date.now());
    expect(verdict).toMatchObject({ id: 1, billed: false });
    expect(verdict!.billed ? '' : verdict!.why).toMatch(why);
  });

  it.each([
    ['Kling per video', line(KLING, 'video', 1, 0.28), klingClip, 280_000],
    ['Kling per second', line(KLING, 'video_seconds', 5, 0.056), klingClip, 280_000],
    ['FLUX [dev] per image, scaled by resolution', line(FLUX, 'image', 4, 0.025), devImage, 100_000],
    ['FLUX [dev] per megapixel', line(FLUX, 'megapixels', 4, 0.025), devImage, 100_000],
    ['a per-image model per image', line('fal-ai/flat', 'image', 1, 0.04), flatImage, 40_000],
  ])('%s bills the request', (_, l, r, micros) => {
    expect(attributeUsage([l], [r], HOUR, Date.now())).toMatchObject([{ id: 1, billed: true, amount: micros }]);
  });
});

describe('a reading of fal\'s usage that fal drags out or that echoes the key', () => {
  it('is cut at its time limit, the reading cleared and tried again, however slowly the answer drips', async () => {
    const { studio, ids } = await twoImages(ADMIN);
    let calls = 0;
    // Headers, then a byte every 200 ms: each under any per-read timeout, the whole never ending.
    const drip = await startFake((_req, res) => {
      calls++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"time_series": [');
      const t = setInterval(() => res.write(' '), 200);
      res.on('close', () => clearInterval(t));
    });
    const bills = new FalBills(studio.tasks, () => ADMIN, () => drip.url, Date.now, 1_000);
    const within = <T>(p: Promise<T>) => Promise.race([p, new Promise<string>((r) => setTimeout(() => r('still reading after 10 s'), 10_000))]);
    const first = await within(bills.refresh());
    expect(first).toEqual({
      state: 'failed',
      message: "fal's usage API did not finish answering within 1 second, so the reading was cut; it is tried again the next time spend is shown. No figure was changed: fal's stay estimates",
    });
    expect(await within(bills.refresh())).toEqual(first);
    expect(calls).toBe(2);
    expect((await costs(studio, ids)).map((t) => t.costActual)).toEqual([null, null]);
    await studio.close();
  }, 60_000);

  const KEY = '5b1e2c3d-aaaa-bbbb-cccc-0123456789ab:9f8e7d6c5b4a3f2e1d0c/+=';
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const echoes = (auth: string) => ({ raw: auth, url: encodeURIComponent(auth), b64: b64(auth), secret: auth.split(':').pop(), query: `?key=${encodeURIComponent(KEY).toLowerCase()}` });
  it.each([
    ['in a line', (auth: string) => ({ time_series: [{ bucket: '2026-12-02T07:00:00+00:00', results: [{ endpoint_id: FLUX, quantity: 'n/a', echo: echoes(auth) }] }] })],
    ['in a bucket', (auth: string) => ({ time_series: [{ bucket: 'n/a', echo: echoes(auth) }] })],
  ])('an answer echoing the Authorization header %s never puts the key, in any form, into the words', async (_, answer) => {
    const { studio } = await twoImages(ADMIN);
    const echo = await startFake((req, res) => send(res, 200, answer(String(req.headers.authorization))));
    const status = await new FalBills(studio.tasks, () => KEY, () => echo.url).refresh();
    expect(status.state).toBe('failed');
    expect(status.message).toMatch(/^fal's usage API answered a (line|bucket) it does not document: \{.*\[the admin key\]/);
    const secret = KEY.split(':')[1]!;
    for (const form of [KEY, secret, encodeURIComponent(KEY), encodeURIComponent(KEY).toLowerCase(), b64(KEY), b64(`Key ${KEY}`), b64(secret).slice(4, -4)]) {
      expect(status.message).not.toContain(form);
    }
    await studio.close();
  }, 60_000);
});
