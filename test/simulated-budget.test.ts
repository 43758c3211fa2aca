import { moneyWords } from '../main/domain/money.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it as base } from 'vitest';
import type { ProjectSummary } from '../main/api/contract.ts';
import { budgetCheck, SIMULATOR } from '../main/domain/simulated.ts';
import { FAL_MODEL } from './fakes/providers.ts';
import { cli } from './helpers/cli.ts';
import { imageTask } from './helpers/engine.ts';
import { LEASE, OWNER } from './helpers/executorUnderTest.ts';
import { falAndSimulatorFolderForTest } from './helpers/running.ts';
import { openUnderTest } from './helpers/storeUnderTest.ts';
import { apiForTest } from './helpers/studioApi.ts';
import { storeKinds } from './helpers/stores.ts';

/**
 * The simulator's made-up money never uses up a budget meant for real money: a budget holds each kind apart, each
 * checked against the whole budget on its own (so a budget can still be tried with the simulator alone), at the
 * boundary write of both stores and in a Generate's estimate. Every listing of costs marks the simulated ones.
 */

describe('budgetCheck', () => {
  base('checks real and simulated money each against the whole budget, apart', () => {
    expect(budgetCheck(100, { spent: 60, added: 30 }, { spent: 80, added: 10 })).toEqual({ left: 10, overBy: 0 });
    expect(budgetCheck(100, { spent: 60, added: 50 }, { spent: 0, added: 0 })).toEqual({ left: -10, overBy: 10 });
    expect(budgetCheck(100, { spent: 0, added: 0 }, { spent: 90, added: 30 })).toEqual({ left: -20, overBy: 20 });
    expect(budgetCheck(100, { spent: 0, added: 0 }, { spent: 0, added: 0 })).toEqual({ left: 100, overBy: 0 });
  });

  base('lets a Generate of one kind through when only the other kind is already past the budget', () => {
    expect(budgetCheck(50, { spent: 0, added: 30 }, { spent: 57, added: 0 })).toEqual({ left: 20, overBy: 0 });
    expect(budgetCheck(50, { spent: 70, added: 0 }, { spent: 10, added: 20 })).toEqual({ left: 20, overBy: 0 });
    expect(budgetCheck(50, { spent: 30, added: 30 }, { spent: 57, added: 0 })).toEqual({ left: -10, overBy: 10 });
  });
});

describe.each(storeKinds())('the $kind boundary write under a budget', (kind) => {
  const it = base.skipIf(!kind.available);

  it('counts simulated spend only against simulated requests, and real spend only against real ones', async () => {
    const s = await openUnderTest(kind);
    await s.store.projects.setBudget(s.projectId, 50_000);
    const at = (cost: number) => ({ estimate: { cost, source: 'catalogue', currency: 'USD' } });
    const simulated = await s.repo.enqueue({ ...imageTask(s.projectId, 'made up', at(40_000)), provider: SIMULATOR }, s.clock.now());
    await s.repo.claim('image', 4, LEASE, s.as(OWNER));
    expect(await s.repo.markSubmitStarted(simulated.id, 'k1', LEASE, s.as(OWNER))).toHaveProperty('marked');

    // 40,000 of simulated money and 40,000 of real money each fit a budget of 50,000.
    const real = await s.repo.enqueue(imageTask(s.projectId, 'paid for', at(40_000)), s.clock.now());
    await s.repo.claim('image', 4, LEASE, s.as(OWNER));
    expect(await s.repo.markSubmitStarted(real.id, 'k2', LEASE, s.as(OWNER))).toHaveProperty('marked');

    // A second simulated request of 20,000 would take the simulated money to 60,000: refused.
    const more = await s.repo.enqueue({ ...imageTask(s.projectId, 'more made up', at(20_000)), provider: SIMULATOR }, s.clock.now());
    await s.repo.claim('image', 4, LEASE, s.as(OWNER));
    expect(await s.repo.markSubmitStarted(more.id, 'k3', LEASE, s.as(OWNER))).toMatchObject({ refused: 'budget' });

    const [spend] = await s.repo.spend(s.projectId);
    // The refused one waits, enqueued, for its worker to fail it.
    expect(spend).toMatchObject({ possiblyCharged: 80_000, queued: 20_000, simulated: 60_000 });
  });
});

describe('simulated money in a Generate under a budget, and in the listings', () => {
  base('a budget that fits each kind apart lets a Generate go; the listings mark the simulated costs', async () => {
    const { sim, ledger, dir } = await falAndSimulatorFolderForTest({ tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } });
    const file = join(dir, 'board.json');
    const steps = { image: { provider: 'fal', model: FAL_MODEL }, clip: { provider: 'simulator', model: 'sim-clip-1' } };
    writeFileSync(file, JSON.stringify({ width: 320, height: 180, steps, scenes: [{ id: 'dawn', imagePrompt: 'a red fox asleep in snow', motionPrompt: 'slow push in', duration: 1 }] }));
    expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', file)).code).toBe(0);
    expect((await cli(dir, 'generate', 'Fox')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    expect(ledger.charged).toHaveLength(1);

    const before = JSON.parse((await cli(dir, 'estimate', 'Fox', '--new-take', 'dawn', '--json')).out);
    expect(before.spentSimulated).toBeGreaterThan(0);
    expect(before.spent - before.spentSimulated).toBeGreaterThan(0);
    const realNeeds = before.spent - before.spentSimulated + before.total - before.simulatedTotal;
    const simulatedNeeds = before.spentSimulated + before.simulatedTotal;
    const fits = Math.max(realNeeds, simulatedNeeds);
    // Summed together the two kinds would not fit: the budget is what each needs on its own, no more.
    expect(fits).toBeLessThan(before.spent + before.total);

    expect((await cli(dir, 'budget', 'Fox', String((fits - 1) / 1e6))).code).toBe(0);
    const refused = await cli(dir, 'generate', 'Fox', '--new-take', 'dawn');
    expect(refused.code).toBe(2);
    // Each kind said apart with its own sum, so the figures add up: never one total that mixes the two.
    const m = (micros: number) => moneyWords(micros, 'USD');
    const realSpent = before.spent - before.spentSimulated;
    expect(refused.err).toContain(`over the budget of ${m(fits - 1)}, which holds real money and simulated money each on its own: `);
    expect(refused.err).toContain(`real money, about ${m(realNeeds - realSpent)} new with ${m(realSpent)} already spent, possibly charged or enqueued, comes to ${m(realNeeds)}`);
    expect(refused.err).toContain(
      `simulated money (the simulator's made-up prices, never charged), about ${m(before.simulatedTotal)} new with ${m(before.spentSimulated)} already spent, possibly charged or enqueued, comes to ${m(simulatedNeeds)}`,
    );
    expect(refused.err).toContain(`${m(fits - (fits - 1))} over it`);

    expect((await cli(dir, 'budget', 'Fox', String(fits / 1e6))).code).toBe(0);
    const shown = await cli(dir, 'estimate', 'Fox', '--new-take', 'dawn');
    expect(shown.out).toMatch(/Already spent or possibly charged: 0\.0\d+ USD, and 0\.\d+ USD simulated \(never charged\)\./);
    expect(shown.out).toContain('Budget ');
    expect(shown.out).toMatch(/: 0\.00 USD would be left\./);
    expect(shown.out).toContain('Simulated money is held against the budget apart from real money: it never uses up what is there for real spending.');
    const went = await cli(dir, 'generate', 'Fox', '--new-take', 'dawn');
    expect(went.code, went.err).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    expect(ledger.charged).toHaveLength(2);

    const tasks = await cli(dir, 'tasks', '--project', 'Fox');
    const rows = tasks.out.split('\n').filter((l) => /^\d+\s/.test(l));
    expect(rows.filter((l) => / simulator /.test(l)).every((l) => /\d USD \(simulated\)/.test(l))).toBe(true);
    expect(rows.filter((l) => / fal /.test(l)).some((l) => /simulated/.test(l))).toBe(false);
    const json = JSON.parse((await cli(dir, 'tasks', '--project', 'Fox', '--json')).out) as { provider: string; simulated: boolean }[];
    expect(json.every((t) => t.simulated === (t.provider === SIMULATOR))).toBe(true);
    expect((await cli(dir, 'takes', 'Fox')).out).toContain('(partly simulated)');

    const call = await apiForTest(dir);
    const [project] = (await call<ProjectSummary[]>('listProjects')).result;
    // The sidebar's "spent" is real money only; the simulator's is apart.
    const simulatedSpent = sim.charges.reduce((sum, c) => sum + c.billed, 0) / 1e6;
    expect(project!.simulated.actual + project!.simulated.estimated).toBeCloseTo(simulatedSpent, 6);
    expect(project!.spend.actual + project!.spend.estimated).toBeCloseTo(before.spent / 1e6 - before.spentSimulated / 1e6 + (before.total - before.simulatedTotal) / 1e6, 2);
  }, 80_000);
});
