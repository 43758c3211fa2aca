import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimateCost } from '../main/engine/estimator.ts';
import { MOST_BILLED_MICROS, storableFailure, storableResult, unstorable } from '../main/engine/storableCost.ts';
import { ReplicateAdapter } from '../main/providers/replicate.ts';
import { openStudio } from '../main/studio.ts';
import { realMedia } from './fakes/providers.ts';
import { replicateStandIn } from './fakes/replicateStandIn.ts';
import { startFake } from './fakes/server.ts';
import { runStudio, untilIdle, writeSettings } from './helpers/processes.ts';
import { storeKinds, type StoreKind } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * Replicate bills a pinned version by time and an official model by output: a real `worker --until-idle` against a
 * stand-in that reports `metrics.predict_time` as Replicate's API does records the bill the stand-in keeps, to the
 * micro-unit, and the seconds it was billed for; the next run of that version is estimated from them.
 */

const VERSION = `black-forest-labs/flux-schnell:${'c846a699'.repeat(8)}`;
const OFFICIAL = 'black-forest-labs/flux-schnell';
/** Nvidia H100, resources/prices.json timeBilling.replicate (replicate.com/pricing). */
const H100 = 0.001525;
const TOKEN = { REPLICATE_API_TOKEN: 'r8_0123456789abcdef0123456789' };
const micros = (usd: number) => Math.round(usd * 1_000_000);

async function setup(kind: StoreKind, predictTimes: unknown[]) {
  const { png } = await realMedia();
  const replicate = replicateStandIn(png, { predictTime: (n) => predictTimes[n - 1] ?? 1, perImage: 0.003, perSecond: H100 });
  const fake = await startFake(replicate.route);
  const dataDir = tempDir();
  const poll = { intervalMs: 50, maxIntervalMs: 200, deadlineMs: 20_000 };
  writeSettings(dataDir, { engine: { leaseMs: 3_000, tickMs: 50, concurrency: { image: 1, clip: 0, speech: 0, render: 0 }, poll } });
  const database = kind.kind === 'postgres' ? await kind.fresh() : undefined;
  const studio = await openStudio(dataDir, undefined, { database });
  const project = await studio.projects.ensure('Fox', Date.now());
  const team: Record<string, string> = database ? { STUDIO_DATABASE_URL: database, STUDIO_MACHINE_NAME: 'machine-a' } : {};
  const env = { ...team, ...TOKEN, STUDIO_REPLICATE_BASE_URL: fake.url };
  const enqueue = async (model: string, prompt: string) => (await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'replicate', model, input: { prompt } }, Date.now())).id;
  return { replicate, fake, dataDir, studio, env, enqueue };
}

describe.each(storeKinds())('Replicate billed by time ($kind)', (kind) => {
  it('a pinned version is billed predict_time × the H100 price per second, the seconds kept; an official model is still billed per image', async () => {
    const { replicate, dataDir, studio, env, enqueue } = await setup(kind, [3.2, 9]);
    const pinned = await enqueue(VERSION, 'a fox');
    const official = await enqueue(OFFICIAL, 'a hare');
    expect(await untilIdle(dataDir, env, 40_000)).toBe(true);
    const [p, o] = [(await studio.tasks.get(pinned))!, (await studio.tasks.get(official))!];
    expect(replicate.bills.map((b) => [b.model, b.version === null ? 'official' : 'version', b.amount])).toEqual([
      [OFFICIAL, 'version', 3.2 * H100],
      [OFFICIAL, 'official', 0.003],
    ]);
    expect(p).toMatchObject({ status: 'SUCCEEDED', costActual: micros(3.2 * H100), billedUnits: { count: 3.2, unit: 'second' } });
    expect(p.costActualSource).toMatch(/^billed by time: Replicate reported 3\.2 s of run time \(metrics\.predict_time\); 3\.2 s at 0\.001525 USD a second on Nvidia H100 GPU/);
    expect(o).toMatchObject({ status: 'SUCCEEDED', costActual: micros(0.003), costReported: 'image', billedUnits: { count: 1, unit: 'image' } });
    expect(o.costActualSource).toMatch(/^1 output image returned, at 0\.003 USD each \(billed per output\)/);
    // The ledger and the studio agree to the micro-unit.
    expect(p.costActual! + o.costActual!).toBe(replicate.bills.reduce((sum, b) => sum + micros(b.amount), 0));
    await studio.close();
  }, 90_000);

  it('with no earlier run the price is unknown, never 0; after 3 runs of 2, 3 and 4 s the next is estimated at the 90th percentile, 4 s × 0.001525 = 0.0061 USD', async () => {
    const { dataDir, studio, env, enqueue } = await setup(kind, [2, 4, 3, 2.5]);
    const adapter = new ReplicateAdapter({ key: TOKEN.REPLICATE_API_TOKEN, baseUrl: null });
    const request = adapter.prepare({ kind: 'image', model: VERSION, input: { prompt: 'a fox' } });
    const past = (p: string, m: string) => studio.tasks.recentBilledSeconds(p, m);
    expect(await estimateCost(adapter, request, {}, false, past)).toBeNull();

    const first = await enqueue(VERSION, 'one');
    for (const prompt of ['two', 'three']) await enqueue(VERSION, prompt);
    expect(await untilIdle(dataDir, env, 60_000)).toBe(true);
    expect((await studio.tasks.get(first))!.costEstimated).toBeNull();
    expect(await studio.tasks.recentBilledSeconds('replicate', VERSION)).toEqual([3, 4, 2]);

    const estimate = (await estimateCost(adapter, request, {}, false, past))!;
    expect(estimate.cost).toBe(6100);
    expect(estimate.source).toMatch(/^estimated from time: 4 s at 0\.001525 USD a second on Nvidia H100 GPU.*90th percentile of the run time Replicate billed for this version's latest 3 runs here$/);
    // The engine writes the same figure on the next run's row before it is sent.
    const fourth = await enqueue(VERSION, 'four');
    expect(await untilIdle(dataDir, env, 40_000)).toBe(true);
    expect((await studio.tasks.get(fourth))!).toMatchObject({ costEstimated: 6100, costActual: micros(2.5 * H100) });
    // Another version of the model has no runs of its own: unknown, not priced as its model per image.
    const other = adapter.prepare({ kind: 'image', model: `${OFFICIAL}:${'0'.repeat(64)}`, input: { prompt: 'a fox' } });
    expect(await estimateCost(adapter, other, {}, false, past)).toBeNull();
    await studio.close();
  }, 120_000);

  // Replicate stops a prediction after 30 minutes unless its support raised the limit
  // (replicate.com/docs/topics/predictions/lifecycle, Timeouts): a run time past a day, below zero or not a number is
  // no measure of a run. JSON has no NaN: the stand-in sends it as null, as JSON.stringify does.
  const untrusted: [string, unknown][] = [['1e300', 1e300], ['1e15', 1e15], ['-1', -1], ['NaN', Number.NaN], ['a string', '12.5']];
  it('a run time that cannot be trusted gives no billed figure: the image is saved, the task succeeds, its history says why, and tasks and spend still read', async () => {
    const { replicate, dataDir, studio, env, enqueue } = await setup(kind, [...untrusted.map(([, t]) => t), 2]);
    const ids: number[] = [];
    for (const [name] of untrusted) ids.push(await enqueue(VERSION, name));
    expect(await untilIdle(dataDir, env, 60_000)).toBe(true);
    expect(replicate.bills).toHaveLength(untrusted.length);
    for (const [i, id] of ids.entries()) {
      const task = (await studio.tasks.get(id))!;
      expect(task, untrusted[i]![0]).toMatchObject({ status: 'SUCCEEDED', costActual: null, costEstimated: null, billedUnits: null });
      const [output] = await studio.tasks.outputs(id);
      const bytes = readFileSync(isAbsolute(output!.path) ? output!.path : join(dataDir, output!.path));
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(output!.sha256);
      const why = (await studio.tasks.events(id)).map((e) => e.reason).find((r) => r?.startsWith('no billed figure was recorded'));
      expect(why, untrusted[i]![0]).toMatch(/^no billed figure was recorded: Replicate reported .+ as the run time \(metrics\.predict_time\), which cannot be billed from; the estimate stands$/);
    }
    expect(await studio.tasks.recentBilledSeconds('replicate', VERSION)).toEqual([]);
    const tasks = await runStudio(dataDir, ['tasks', '--json'], env);
    expect(tasks.code, tasks.stderr).toBe(0);
    expect((JSON.parse(tasks.stdout) as { status: string }[]).map((t) => t.status)).toEqual(untrusted.map(() => 'SUCCEEDED'));
    const spend = await runStudio(dataDir, ['spend', '--project', 'Fox', '--json'], env);
    expect(spend.code, spend.stderr).toBe(0);
    // A run time that can be trusted is billed as before, after them.
    const next = await enqueue(VERSION, 'next');
    expect(await untilIdle(dataDir, env, 40_000)).toBe(true);
    expect((await studio.tasks.get(next))!).toMatchObject({ status: 'SUCCEEDED', costActual: micros(2 * H100) });
    await studio.close();
  }, 180_000);
});

describe('a billed figure the stores can hold', () => {
  const cost = (amount: number) => ({ amount, currency: 'USD', source: 'a test', reported: 'money' as const });
  it('is a whole number of micro-units from 0 to a million USD; anything else is dropped with why, the failure saying so', () => {
    for (const amount of [0, 6100, MOST_BILLED_MICROS]) expect(unstorable(cost(amount), 'USD')).toBeNull();
    for (const amount of [1.5e306, Number.MAX_SAFE_INTEGER + 1, MOST_BILLED_MICROS + 1, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(unstorable(cost(amount), 'USD'), String(amount)).toMatch(/^no billed figure was recorded: .+, worked out from what the provider reported \(a test\), is not an amount one request can cost \(from 0 to 1000000 USD\); the estimate stands$/);
    }
    expect(storableResult({ outputs: [], costActual: cost(1.5e306) }, 'USD')).toMatchObject({ costActual: null, costWhy: expect.stringMatching(/^no billed figure was recorded: 1\.5e\+300 USD/) });
    const failed = storableFailure({ error: 'canceled', costActual: cost(-5) }, 'USD');
    expect(failed).toMatchObject({ costActual: null, error: expect.stringMatching(/^canceled; no billed figure was recorded: -0\.000005 USD/) });
  });
});
