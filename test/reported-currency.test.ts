import { describe, expect, it } from 'vitest';
import { unstorable, unusableQuote } from '../main/engine/storableCost.ts';
import { openStudio } from '../main/studio.ts';
import { send, startFake, type Route } from './fakes/server.ts';
import { untilIdle, writeSettings } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import { storeKinds } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * A provider's quote or bill in another currency than the task's is never stored as the task's money: the simulator
 * reports `quote` at submit and `cost` in the result as {amount, currency} (simulator/server.ts); a stand-in in front of
 * it answers the same but in EUR, quoting 9.99 EUR, for a task priced in USD.
 */

/** The simulator's answers passed through, its quote and bill said in EUR; the status stream piped as it comes. */
function inEuros(simulator: string): Route {
  return async (req, res) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
    const answer = await fetch(`${simulator}${req.path}`, { method: req.method, headers, ...(req.method === 'GET' ? {} : { body: req.body }) });
    const passed: Record<string, string> = {};
    for (const name of ['x-request-id', 'content-type']) if (answer.headers.has(name)) passed[name] = answer.headers.get(name)!;
    if (!(answer.headers.get('content-type') ?? '').includes('application/json')) {
      res.writeHead(answer.status, passed);
      if (answer.body) for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
      res.end();
      return;
    }
    const body = (await answer.json()) as Record<string, unknown>;
    if (body.quote) body.quote = { amount: 9.99, currency: 'EUR' };
    if (body.cost) body.cost = { ...(body.cost as object), currency: 'EUR' };
    send(res, answer.status, body, { 'x-request-id': passed['x-request-id'] ?? '' });
  };
}

describe.each(storeKinds())('a quote and a bill in another currency than the task\'s ($kind)', (kind) => {
  it.skipIf(!kind.available)('are not stored as its estimate or its actual: the estimate already on the row stands, and the history says why', async () => {
    const sim = await simulatorForTest({ jobMs: 50 });
    const euros = await startFake(inEuros(sim.url));
    const dataDir = tempDir();
    const poll = { intervalMs: 50, maxIntervalMs: 200, deadlineMs: 20_000 };
    writeSettings(dataDir, { engine: { leaseMs: 3_000, tickMs: 50, poll }, providers: { simulator: { baseUrl: euros.url } } });
    const database = kind.kind === 'postgres' ? await kind.fresh() : undefined;
    const studio = await openStudio(dataDir, undefined, { database });
    const project = await studio.projects.ensure('Fox', Date.now());
    const env: Record<string, string> = database ? { STUDIO_DATABASE_URL: database, STUDIO_MACHINE_NAME: 'machine-a' } : {};
    const task = await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'a fox' } }, Date.now());
    expect(await untilIdle(dataDir, env, 40_000)).toBe(true);

    // The simulator did charge it (in its own ledger, in USD): the studio keeps its estimate, not a figure in euros.
    expect(sim.charges).toHaveLength(1);
    const done = (await studio.tasks.get(task.id))!;
    expect(done).toMatchObject({ status: 'SUCCEEDED', currency: 'USD', costActual: null });
    expect(done.costEstimated).toBe(sim.charges[0]!.quoted);
    expect(done.costEstimateSource).toMatch(/^catalogue/);
    const history = (await studio.tasks.events(task.id)).map((e) => e.reason ?? '');
    expect(history).toContainEqual(
      "The simulator's quote at submit, 9.99 EUR, is in another currency than the task's USD, and no rate is known to convert it with: not used as its estimate; the estimate already on the task stands",
    );
    expect(history.find((r) => r.startsWith('no billed figure was recorded'))).toMatch(
      /^no billed figure was recorded: [\d.]+ EUR, worked out from what the provider reported \(the simulator's "cost" field\), is in another currency than the task's USD, and no rate is known to convert it with; the estimate stands$/,
    );
    const spend = (await studio.tasks.spend(project.id))[0]!;
    expect(spend.actual).toBe(0);
    expect(spend.estimated).toBe(done.costEstimated);
    await studio.close();
  }, 90_000);
});

describe('money in the task\'s currency only', () => {
  it('a quote or a bill in the task\'s currency is used; in another one it is not, saying why', () => {
    const bill = { amount: 40_000, currency: 'EUR', source: 'a test', reported: 'money' as const };
    expect(unstorable(bill, 'EUR')).toBeNull();
    expect(unstorable(bill, 'USD')).toBe('no billed figure was recorded: 0.04 EUR, worked out from what the provider reported (a test), is in another currency than the task\'s USD, and no rate is known to convert it with; the estimate stands');
    expect(unusableQuote({ amount: 50_000, currency: 'USD' }, 'USD', 'fal')).toBeNull();
    expect(unusableQuote({ amount: 50_000, currency: 'GBP' }, 'USD', 'fal')).toMatch(/^fal's quote at submit, 0\.05 GBP, is in another currency than the task's USD/);
  });
});
