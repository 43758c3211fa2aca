import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it as base } from 'vitest';
import { MISSING_FOR_MS } from '../main/domain/engineOptions.ts';
import { collectPolicy, collectRetry, NO_ROUNDS, type MissingRounds, type RoundTime } from '../main/engine/collectRetry.ts';
import { openStudio } from '../main/studio.ts';
import { falStandIn, FLUX, type FalStandIn, type FalStandInOptions } from './fakes/falStandIn.ts';
import { openAiImages, realMedia, type Ledger } from './fakes/providers.ts';
import { send, startFake, type Route } from './fakes/server.ts';
import { falMedia, FAL_KEY, type FalMedia } from './helpers/falStudio.ts';
import { startStudio, untilIdle, writeSettings } from './helpers/processes.ts';
import { storeKinds, type StoreKind } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * A request the provider says is complete whose result is gone (its file URL answers 404, or its result URL answers
 * that nothing is there): a real `worker --until-idle` asks again in rounds that back off and span at least
 * `engine.poll.missingForMs`, then ends the task as paid, its result expired at the provider, with since when it was
 * found gone and which URL, and returns. Only an answer that nothing is there counts a round: an outage never does,
 * and a file the answer named, kept with the task, is fetched after the answer itself is gone. One charge each.
 */

let media: FalMedia;
beforeAll(async () => {
  media = await falMedia();
}, 60_000);

const [SQLITE, POSTGRES] = storeKinds() as [StoreKind, StoreKind];

interface Setup {
  kind?: StoreKind;
  standIn?: Partial<FalStandInOptions>;
  /** The stand-in's routes, around fal's own. */
  wrap?: (fal: FalStandIn) => Route;
  deadlineMs?: number;
  missingForMs?: number;
}

/** A studio whose task of `provider`'s `model` goes to a stand-in at `route`, its address in `urlVariable`. */
async function studioWith(route: Route, urlVariable: string, env: Record<string, string>, task: { provider: string; model: string }, s: Setup = {}) {
  const fake = await startFake(route);
  const dataDir = tempDir();
  const poll = { intervalMs: 100, maxIntervalMs: 300, deadlineMs: s.deadlineMs ?? 20_000, missingForMs: s.missingForMs ?? 2_000 };
  writeSettings(dataDir, { engine: { leaseMs: 3_000, tickMs: 50, concurrency: { image: 1, clip: 0, speech: 0, render: 0 }, poll } });
  const database = s.kind?.kind === 'postgres' ? await s.kind.fresh() : undefined;
  const studio = await openStudio(dataDir, undefined, { database });
  const project = await studio.projects.ensure('Fox', Date.now());
  const { id } = await studio.tasks.enqueue({ projectId: project.id, kind: 'image', ...task, input: { prompt: 'a fox' } }, Date.now());
  const teamEnv: Record<string, string> = database ? { STUDIO_DATABASE_URL: database, STUDIO_MACHINE_NAME: 'machine-a' } : {};
  return { fake, dataDir, env: { ...teamEnv, ...env, [urlVariable]: fake.url }, studio, projectId: project.id, id };
}

async function falSetup(s: Setup = {}) {
  const ledger: Ledger = { charged: [] };
  const fal = falStandIn(ledger, media, { jobMs: 200, ...s.standIn });
  const run = await studioWith(s.wrap?.(fal) ?? fal.route, 'STUDIO_FAL_BASE_URL', { FAL_KEY }, { provider: 'fal', model: FLUX }, s);
  return { ledger, ...run };
}

const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';
const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const expiredWords = (provider: string, url: string, status: number, tries = '5') =>
  new RegExp(
    `^paid; the result expired at ${provider}: it was found gone there since ${ISO} \\(${escaped(url)} answered HTTP ${status}\\) ` +
      `and still was after ${tries} tries until ${ISO}; ${provider} said the request was complete, so it cannot be collected$`,
  );
type Detail = { resultMissing?: { url: string } } | null;
const isRound = (e: { detail: unknown }) => !!(e.detail as Detail)?.resultMissing;

type Case = [string, StoreKind, Partial<FalStandInOptions>, (base: string) => string, number];
const cases: Case[] = [
  ['its file URL answers 404', SQLITE, { filesGone: true }, (u) => `${u}/files/fal-req-1.png`, 404],
  ['its file URL answers 404 (team database)', POSTGRES, { filesGone: true }, (u) => `${u}/files/fal-req-1.png`, 404],
  ['its result URL answers 404', SQLITE, { resultGone: { status: 404, body: { detail: 'Request not found' } } }, (u) => `${u}/fal-ai/flux/requests/fal-req-1`, 404],
  ['its result URL says it expired (410)', SQLITE, { resultGone: { status: 410, body: { detail: 'The result of this request has expired' } } }, (u) => `${u}/fal-ai/flux/requests/fal-req-1`, 410],
];

describe('a completed fal result that is gone', () => {
  for (const [name, kind, standIn, urlOf, status] of cases) {
    base.skipIf(!kind.available)(`${name}: ends FAILED, paid, expired at fal, found gone since when and where, after 5 tries over the span; the worker returns`, async () => {
      const { ledger, fake, dataDir, env, studio, projectId, id } = await falSetup({ kind, standIn });
      expect(await untilIdle(dataDir, env, 40_000)).toBe(true);

      const url = urlOf(fake.url);
      const task = (await studio.tasks.get(id))!;
      expect(task).toMatchObject({ status: 'FAILED', charged: 'yes', remoteRequestId: 'fal-req-1' });
      expect(task.error).toMatch(expiredWords('fal', url, status));
      // Five rounds, each asked once, backing off between them, spanning at least engine.poll.missingForMs (2 s).
      const asked = fake.seen.filter((s) => s.method === 'GET' && new URL(s.path, fake.url).pathname === new URL(url).pathname);
      expect(asked).toHaveLength(5);
      const events = await studio.tasks.events(id);
      const rounds = events.filter((e) => (e.detail as Detail)?.resultMissing?.url === url);
      expect(rounds.map((e) => e.reason)).toEqual(
        [1, 2, 3, 4].map((n) => expect.stringMatching(new RegExp(`\\(${escaped(url)}\\); found missing since ${ISO}, asking again \\(try ${n}; it is called expired only when still missing after 5 tries over 2 s\\)$`))),
      );
      // Every round and the end name the one moment it was first found gone.
      const since = [...rounds.map((e) => e.reason), task.error!].map((r) => new RegExp(`since (${ISO})`).exec(r)![1]!);
      expect(new Set(since).size).toBe(1);
      expect(events.at(-1)!.at - Date.parse(since[0]!)).toBeGreaterThanOrEqual(2_000);

      // Paid in the spend, never "possibly charged".
      const [spend] = await studio.tasks.spend(projectId);
      expect(spend).toMatchObject({ estimated: task.costEstimated, possiblyCharged: 0 });
      expect(ledger.charged).toEqual(['fal-req-1']);
      await studio.close();
    }, 60_000);
  }

  base('its result URL answers 404, then fal answers 404 about the request too: each answer is a round; still paid and expired, never "may still finish"', async () => {
    const standIn = { resultGone: { status: 404, body: { detail: 'Request not found' } }, forgetsGone: true };
    const { ledger, fake, dataDir, env, studio, id } = await falSetup({ standIn, deadlineMs: 4_000 });
    expect(await untilIdle(dataDir, env, 50_000)).toBe(true);
    const url = `${fake.url}/fal-ai/flux/requests/fal-req-1`;
    const task = (await studio.tasks.get(id))!;
    expect(task).toMatchObject({ status: 'FAILED', charged: 'yes', unknownReason: null });
    expect(task.error).toMatch(expiredWords('fal', url, 404));
    const events = await studio.tasks.events(id);
    expect(events.map((e) => e.toStatus)).not.toContain('OUTCOME_UNKNOWN');
    expect(events.filter(isRound).map((e) => e.reason)).toEqual([
      expect.stringMatching(/^fal said the request completed, but its result answered HTTP 404 \(.*\); found missing since .*\(try 1;/),
      ...[2, 3, 4].map((n) => expect.stringMatching(new RegExp(`^fal said the request was complete, and now answers HTTP 404 when asked about it \\(${escaped(url)}\\); .*\\(try ${n};`))),
    ]);
    expect(ledger.charged).toEqual(['fal-req-1']);
    await studio.close();
  }, 70_000);

  const firstAnswers: [string, RegExp][] = [
    ['its file', /^\/files\//],
    ['its result URL', /\/requests\/[\w-]+$/],
  ];
  for (const [what, first] of firstAnswers) {
    base(`one 404 on ${what}, then fal cannot be reached at all for 20 s: the outage counts no round, and the result is collected after it`, async () => {
      let downUntil = 0;
      const wrap = (fal: FalStandIn): Route => (req, res) => {
        if (req.method === 'GET' && first.test(req.path) && downUntil === 0) {
          downUntil = Date.now() + 20_000;
          return send(res, 404, { detail: 'Not Found' });
        }
        if (req.method === 'GET' && Date.now() < downUntil) return void res.socket?.destroy();
        return fal.route(req, res);
      };
      const { ledger, dataDir, env, studio, id } = await falSetup({ wrap, deadlineMs: 4_000 });
      expect(await untilIdle(dataDir, env, 110_000)).toBe(true);
      const task = (await studio.tasks.get(id))!;
      expect(task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', error: null });
      const events = await studio.tasks.events(id);
      expect(events.filter(isRound)).toHaveLength(1);
      expect(events.map((e) => e.toStatus)).not.toContain('OUTCOME_UNKNOWN');
      expect(events.map((e) => e.reason).join('\n')).not.toMatch(/^paid; the result expired|may still finish/m);
      expect(ledger.charged).toEqual(['fal-req-1']);
      await studio.close();
    }, 120_000);
  }

  base('its file fails (503) until fal no longer keeps the result (404), while the file is still there: collected from the file URL kept when the result came', async () => {
    let resultGets = 0;
    let fileGets = 0;
    const wrap = (fal: FalStandIn): Route => (req, res) => {
      if (req.method === 'GET' && /\/requests\/[\w-]+$/.test(req.path) && ++resultGets > 1) return send(res, 404, { detail: 'Request not found' });
      if (req.path.startsWith('/files/') && ++fileGets <= 3) return send(res, 503, { detail: 'Service Unavailable' });
      return fal.route(req, res);
    };
    const { ledger, fake, dataDir, env, studio, id } = await falSetup({ wrap });
    expect(await untilIdle(dataDir, env, 110_000)).toBe(true);
    const task = (await studio.tasks.get(id))!;
    expect(task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', error: null });
    expect(resultGets).toBeGreaterThan(1);
    const events = await studio.tasks.events(id);
    expect(events.filter(isRound)).toEqual([]);
    expect(events.map((e) => e.reason)).toContain(`the result is complete at fal; its files are at ${fake.url}/files/fal-req-1.png`);
    expect(ledger.charged).toEqual(['fal-req-1']);
    await studio.close();
  }, 120_000);

  base('the worker is killed while the file downloads and fal no longer keeps the result when the next one starts: collected from the kept file URL', async () => {
    let resultGets = 0;
    let holding = false;
    const wrap = (fal: FalStandIn): Route => (req, res) => {
      if (req.method === 'GET' && /\/requests\/[\w-]+$/.test(req.path) && ++resultGets > 1) return send(res, 404, { detail: 'Request not found' });
      // The first download gets headers never: the worker is killed while it waits.
      if (req.path.startsWith('/files/') && !holding) return new Promise<void>(() => (holding = true));
      return fal.route(req, res);
    };
    const { ledger, dataDir, env, studio, id } = await falSetup({ wrap });
    const first = startStudio(dataDir, ['worker', '--until-idle'], env);
    await expect.poll(() => holding, { timeout: 20_000 }).toBe(true);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(await untilIdle(dataDir, env, 40_000)).toBe(true);
    const task = (await studio.tasks.get(id))!;
    expect(task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', error: null });
    expect((await studio.tasks.events(id)).filter(isRound)).toEqual([]);
    expect(ledger.charged).toEqual(['fal-req-1']);
    await studio.close();
  }, 70_000);

  base('its file answers 404 for 6 s after fal said it was complete, then is there: five quick rounds do not call it expired before the span has passed', async () => {
    let firstMissing = 0;
    const wrap = (fal: FalStandIn): Route => (req, res) => {
      if (req.path.startsWith('/files/')) {
        firstMissing ||= Date.now();
        if (Date.now() - firstMissing < 6_000) return send(res, 404, { detail: 'Not Found' });
      }
      return fal.route(req, res);
    };
    const { ledger, dataDir, env, studio, id } = await falSetup({ wrap, missingForMs: 10_000 });
    expect(await untilIdle(dataDir, env, 50_000)).toBe(true);
    const task = (await studio.tasks.get(id))!;
    expect(task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', error: null });
    expect((await studio.tasks.events(id)).filter(isRound).length).toBeGreaterThanOrEqual(5);
    expect(ledger.charged).toEqual(['fal-req-1']);
    await studio.close();
  }, 60_000);

  base('by default a result is called expired only once missing for the hour each provider documents, however many rounds came before', () => {
    const policy = collectPolicy({ maxIntervalMs: 10_000 });
    expect(policy.missingForMs).toBe(MISSING_FOR_MS);
    expect(MISSING_FOR_MS).toBe(60 * 60_000);
    const missing = { url: 'https://v3.fal.media/files/x.png', status: 404, message: "fal's file of the result answered HTTP 404" };
    let rounds = NO_ROUNDS;
    let at = 0;
    for (let n = 1; n <= 12; n++) {
      const next = collectRetry('fal', missing, rounds, { wall: at, mono: at, run: 'one process' }, policy, 0.5);
      if (next.action === 'expired') {
        expect(at).toBeGreaterThanOrEqual(MISSING_FOR_MS);
        expect(next.error).toContain('it was found gone there since 1970-01-01T00:00:00.000Z');
        return;
      }
      expect(next.delayMs).toBeLessThanOrEqual(10 * 60_000);
      rounds = next.rounds;
      at += next.delayMs;
    }
    throw new Error('never called expired');
  });
});

describe('a result file that answers 404 at Replicate or OpenAI', () => {
  base('Replicate: its output file answers 404 while the prediction keeps data_removed false: bounded rounds, then paid and expired, said about the file', async () => {
    const ledger: Ledger = { charged: [] };
    const route: Route = (req, res) => {
      const host = `http://${req.headers.host}`;
      if (req.method === 'POST' && /\/predictions$/.test(req.path)) {
        ledger.charged.push('p1');
        return send(res, 201, { id: 'p1', status: 'starting', model: 'black-forest-labs/flux-schnell', created_at: new Date().toISOString(), urls: { get: `${host}/v1/predictions/p1` } });
      }
      // replicate-python-beta src/replicate/types/prediction.py: output, data_removed ("Whether the prediction output has been deleted").
      if (req.method === 'GET' && req.path === '/v1/predictions/p1') {
        return send(res, 200, { id: 'p1', status: 'succeeded', model: 'black-forest-labs/flux-schnell', output: [`${host}/delivery/p1/out-0.webp`], data_removed: false, created_at: new Date().toISOString() });
      }
      if (req.path.startsWith('/delivery/')) return send(res, 404, { detail: 'Not found' });
    };
    const token = { REPLICATE_API_TOKEN: 'r8_0123456789abcdef0123456789' };
    const { fake, dataDir, studio, id, env } = await studioWith(route, 'STUDIO_REPLICATE_BASE_URL', token, { provider: 'replicate', model: 'black-forest-labs/flux-schnell' });
    expect(await untilIdle(dataDir, env, 40_000)).toBe(true);
    const task = (await studio.tasks.get(id))!;
    expect(task).toMatchObject({ status: 'FAILED', charged: 'yes' });
    expect(task.error).toMatch(expiredWords('Replicate', `${fake.url}/delivery/p1/out-0.webp`, 404));
    const rounds = (await studio.tasks.events(id)).filter(isRound).map((e) => e.reason);
    expect(rounds).toHaveLength(4);
    for (const reason of rounds) expect(reason).toMatch(/^Replicate's file of the result answered HTTP 404 \(Not found\) \(/);
    expect(ledger.charged).toEqual(['p1']);
    await studio.close();
  }, 60_000);

  base('OpenAI: a dall-e-3 image URL that answers 404 is asked for in the same bounded rounds, then the task ends paid and expired; the worker returns', async () => {
    const ledger: Ledger = { charged: [] };
    const images = openAiImages(ledger, (await realMedia()).png, { urlFailures: 0 });
    const route: Route = (req, res) => (req.path === '/files/image.png' ? send(res, 404, { error: { message: 'Not found' } }) : images(req, res));
    const key = { OPENAI_API_KEY: 'sk-test-0123456789' };
    const { fake, dataDir, studio, id, env } = await studioWith(route, 'STUDIO_OPENAI_BASE_URL', key, { provider: 'openai', model: 'dall-e-3' });
    expect(await untilIdle(dataDir, env, 40_000)).toBe(true);
    const task = (await studio.tasks.get(id))!;
    expect(task).toMatchObject({ status: 'FAILED', charged: 'yes' });
    const url = `${fake.url}/files/image.png`;
    expect(task.error).toMatch(expiredWords('OpenAI', url, 404));
    expect(fake.seen.filter((s) => s.path === '/files/image.png')).toHaveLength(5);
    expect(ledger.charged).toEqual(['req_1']);
    await studio.close();
  }, 60_000);
});

/** A worker whose wall clock is stepped forward 2 h 2.5 s after it starts, as a clock set by hand or by network time. */
const SHIFT = fileURLToPath(new URL('./helpers/clockShift.mjs', import.meta.url));
const JUMP = { NODE_OPTIONS: `--import ${SHIFT}`, CLOCK_JUMP_MS: String(2 * 3600_000), CLOCK_JUMP_AFTER_MS: '2500' };

/** Answers 404 at `path` for the first `ms` after it was first asked for, as a CDN not caught up yet. */
function missingFor(path: (p: string) => boolean, ms: number, body: unknown) {
  let first = 0;
  return (req: { path: string }) => {
    if (!path(req.path)) return false;
    first ||= Date.now();
    return Date.now() - first < ms ? body : false;
  };
}

describe('rounds measured by the monotonic clock, not the wall clock', () => {
  const missing = { url: 'https://v3.fal.media/files/x.png', status: 404, message: "fal's file of the result answered HTTP 404" };
  const policy = { baseMs: 300, missingForMs: MISSING_FOR_MS };
  /** Rounds at the given times, each fed the one before; the last outcome. */
  const roundsAt = (times: RoundTime[]) => {
    let rounds: MissingRounds = NO_ROUNDS;
    let next = collectRetry('fal', missing, rounds, times[0]!, policy, 0.5);
    for (const at of times.slice(1)) {
      if (next.action !== 'later') break;
      rounds = next.rounds;
      next = collectRetry('fal', missing, rounds, at, policy, 0.5);
    }
    return next;
  };
  const HOURS_2 = 2 * 3600_000;

  base('a wall clock stepped forward 2 h between rounds of one process adds only the seconds that passed', () => {
    const one = (mono: number, jumped = 0) => ({ wall: 1_000_000 + mono + jumped, mono, run: 'worker A' });
    const next = roundsAt([one(0), one(300), one(900), one(2_100, HOURS_2), one(4_500, HOURS_2), one(9_300, HOURS_2)]);
    expect(next.action).toBe('later');
    expect(next.action === 'later' && next.rounds).toMatchObject({ count: 6, spanMs: 9_300 });
  });

  base('across a restart the wall clock counts, and a clock set back never makes the span negative', () => {
    const next = roundsAt([
      { wall: 5_000_000, mono: 10, run: 'worker A' },
      { wall: 5_000_000 - HOURS_2, mono: 99_999_999, run: 'worker B' },
      { wall: 5_000_000 - HOURS_2 + 700, mono: 3_000, run: 'worker C' },
    ]);
    expect(next.action === 'later' && next.rounds.spanMs).toBe(700);
  });

  base('rounds that come due together after a long stop count as one look: five of them never call the result expired', () => {
    const one = (mono: number) => ({ wall: mono, mono, run: 'worker A' });
    const stopped = roundsAt([one(0), one(HOURS_2), one(HOURS_2 + 10), one(HOURS_2 + 20), one(HOURS_2 + 30), one(HOURS_2 + 40)]);
    expect(stopped.action).toBe('later');
    expect(stopped.action === 'later' && stopped.rounds).toMatchObject({ count: 2, spanMs: HOURS_2 + 40 });
    // Spread as their waits say, the same rounds after the same stop do end it.
    const spread = roundsAt([one(0), one(HOURS_2), one(HOURS_2 + 600), one(HOURS_2 + 1_800), one(HOURS_2 + 4_200)]);
    expect(spread.action).toBe('expired');
  });

  base('fal: a file missing for 8 s while the worker clock is stepped forward 2 h is collected, not called expired', async () => {
    const gone = missingFor((p) => p.startsWith('/files/'), 8_000, { detail: 'Not Found' });
    const wrap = (fal: FalStandIn): Route => (req, res) => (gone(req) ? send(res, 404, gone(req)) : fal.route(req, res));
    const { ledger, dataDir, env, studio, id } = await falSetup({ wrap, missingForMs: MISSING_FOR_MS });
    expect(await untilIdle(dataDir, { ...env, ...JUMP }, 50_000)).toBe(true);
    expect(await studio.tasks.get(id)).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', error: null });
    expect((await studio.tasks.events(id)).filter(isRound).length).toBeGreaterThanOrEqual(5);
    expect(ledger.charged).toEqual(['fal-req-1']);
    await studio.close();
  }, 60_000);

  base('OpenAI: an image URL missing for 8 s while the worker clock is stepped forward 2 h is collected in its in-process rounds', async () => {
    const ledger: Ledger = { charged: [] };
    const images = openAiImages(ledger, (await realMedia()).png, { urlFailures: 0 });
    const gone = missingFor((p) => p === '/files/image.png', 8_000, { error: { message: 'Not found' } });
    const route: Route = (req, res) => (gone(req) ? send(res, 404, gone(req)) : images(req, res));
    const key = { OPENAI_API_KEY: 'sk-test-0123456789' };
    const { dataDir, studio, id, env } = await studioWith(route, 'STUDIO_OPENAI_BASE_URL', key, { provider: 'openai', model: 'dall-e-3' }, { missingForMs: MISSING_FOR_MS });
    expect(await untilIdle(dataDir, { ...env, ...JUMP }, 50_000)).toBe(true);
    expect(await studio.tasks.get(id)).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', error: null });
    expect(ledger.charged).toEqual(['req_1']);
    await studio.close();
  }, 60_000);
});
