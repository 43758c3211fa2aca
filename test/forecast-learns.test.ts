import { describe, expect, it } from 'vitest';
import { Pipeline } from '../main/pipeline/generate.ts';
import { openProviders } from '../main/providers/registry.ts';
import { openStudio, type Studio } from '../main/studio.ts';
import { writeSettings } from './helpers/processes.ts';
import { queryRows } from './helpers/postgres.ts';
import { simulatorForTest } from './helpers/running.ts';
import { sqlOf } from './helpers/sql.ts';
import { storeKinds, type StoreKind } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * The forecast learns from this store's billed runs (a team's, on a team database): five runs of a model billed at
 * 1.2 times their estimates make its next estimate "usually bills 20 % over" with a forecast of 1.2 times it; four say
 * nothing. With settings "budgetUsesForecast" the budget holds the new steps at the forecast.
 */

const BOARD = {
  width: 320,
  height: 180,
  steps: { image: { provider: 'simulator', model: 'sim-image-1' }, clip: { provider: 'simulator', model: 'sim-clip-1' } },
  scenes: [{ id: 'dawn', imagePrompt: 'a red fox asleep in snow', duration: 2 }],
};

async function setup(kind: StoreKind, settings: object = {}) {
  const sim = await simulatorForTest({ jobMs: 50 });
  const dir = tempDir();
  writeSettings(dir, { providers: { simulator: { baseUrl: sim.url } }, ...settings });
  const database = kind.kind === 'postgres' ? await kind.fresh() : undefined;
  const studio = await openStudio(dir, undefined, { database });
  const providers = await openProviders(studio.settings, studio.dataDir);
  const pipeline = new Pipeline({ studio, provider: providers.get, defaults: studio.settings.defaults });
  const project = await studio.projects.ensure('Fox', Date.now());
  await studio.storyboards.save(project.id, BOARD as never, Date.now(), 0);
  /** `n` earlier runs of sim-image-1 in another project, each estimated at 0.1 and billed `billed` USD. */
  const billedRuns = async (n: number, billed: number) => {
    const other = await studio.projects.ensure('Earlier', Date.now());
    for (let i = 0; i < n; i++) {
      const { id } = await studio.tasks.enqueue({ projectId: other.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: `run ${i}` } }, Date.now());
      const update = `UPDATE tasks SET status = 'SUCCEEDED', charged = 'yes', cost_estimated = 100000, cost_actual = ${Math.round(billed * 1_000_000)} WHERE id = ${id}`;
      if (database) await queryRows(database, update);
      else sqlOf(dir).prepare(update).run();
    }
  };
  const close = async () => {
    await providers.close();
    await studio.close();
  };
  return { studio, pipeline, project, billedRuns, close };
}

const taskCount = async (studio: Studio, projectId: number) => (await studio.tasks.counts()).filter((c) => c.projectId === projectId).reduce((n, c) => n + c.n, 0);

describe.each(storeKinds())('a forecast that learns ($kind)', (kind) => {
  it.skipIf(!kind.available)('five runs billed at 1.2 times their estimates: "usually bills 20 % over" and a forecast of 1.2 times the estimate, to the micro-unit', async () => {
    const { studio, pipeline, billedRuns, close } = await setup(kind);
    await billedRuns(5, 0.12);
    expect(await studio.tasks.billedRatios()).toEqual([{ provider: 'simulator', model: 'sim-image-1', currency: 'USD', runs: 5, billed: 600_000, estimated: 500_000 }]);
    const e = await pipeline.estimate('Fox');
    const image = e.steps.find((s) => s.key === 'dawn:image')!;
    expect(image.cost).toBeGreaterThan(0);
    expect(image.forecast).toEqual({ cost: Math.round((image.cost! * 12) / 10), runs: 5, percent: 20, words: 'usually bills 20 % over (5 billed runs)' });
    // A model with no billed runs forecasts nothing.
    expect(e.steps.find((s) => s.key === 'dawn:clip')!.forecast).toBeUndefined();
    await close();
  }, 60_000);

  it.skipIf(!kind.available)('four billed runs say nothing', async () => {
    const { pipeline, billedRuns, close } = await setup(kind);
    await billedRuns(4, 0.12);
    expect((await pipeline.estimate('Fox')).steps.find((s) => s.key === 'dawn:image')!.forecast).toBeUndefined();
    await close();
  }, 60_000);

  it.skipIf(!kind.available)('the budget refuses with "budgetUsesForecast" where it passes with it off', async () => {
    const { studio, pipeline, project, billedRuns, close } = await setup(kind, { budgetUsesForecast: true });
    await billedRuns(5, 0.12);
    const e = await pipeline.estimate('Fox');
    const image = e.steps.find((s) => s.key === 'dawn:image')!;
    // A budget between the estimate and the forecast.
    const budget = e.total + Math.floor((image.forecast!.cost - image.cost!) / 2);
    await studio.projects.setBudget(project.id, budget);
    await expect(pipeline.generate('Fox')).rejects.toThrow(/over the budget .*\(counted at the forecast from past bills, above the estimate, as settings "budgetUsesForecast" asks\)\. Raise the budget/);
    expect(await taskCount(studio, project.id)).toBe(0);

    studio.settings = { ...studio.settings, budgetUsesForecast: false };
    const done = await pipeline.generate('Fox');
    expect(done.overBy).toBe(0);
    expect(await taskCount(studio, project.id)).toBeGreaterThan(0);
    await close();
  }, 60_000);

  it.skipIf(!kind.available)('a model that usually bills under its estimate shows it, and the budget still holds the estimate', async () => {
    const { pipeline, billedRuns, close } = await setup(kind, { budgetUsesForecast: true });
    await billedRuns(5, 0.08);
    const e = await pipeline.estimate('Fox');
    expect(e.steps.find((s) => s.key === 'dawn:image')!.forecast).toMatchObject({ percent: -20, words: 'usually bills 20 % under (5 billed runs)' });
    expect(e.held).toEqual({ total: e.total, simulated: e.simulatedTotal, byForecast: false });
    await close();
  }, 60_000);
});
