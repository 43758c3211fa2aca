import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EstimateView, SpendOverview, SpendReport, TaskView } from '../main/api/contract.ts';
import type { LaunchedHost } from '../main/host/launch.ts';
import { FAL_MODEL } from './fakes/providers.ts';
import { cli } from './helpers/cli.ts';
import { falAndSimulatorFolderForTest, hostForTest } from './helpers/running.ts';
import { sqlOf } from './helpers/sql.ts';
import { apiCaller } from './helpers/studioApi.ts';
import { tempDir } from './helpers/tmp.ts';

let host: LaunchedHost | undefined;
afterEach(() => vi.unstubAllEnvs());

const call = apiCaller(() => host);

/** fal's FLUX for the stills and OpenAI's tts-1 for the words, both priced in the catalogue; the simulator for the clips. */
function keyedBoard(dir: string): string {
  const file = join(dir, 'board.json');
  writeFileSync(
    file,
    JSON.stringify({
      width: 320,
      height: 180,
      steps: { image: { provider: 'fal', model: 'fal-ai/flux/schnell' }, clip: { provider: 'simulator', model: 'sim-clip-1' }, speech: { provider: 'openai', model: 'tts-1' } },
      scenes: [{ id: 'dawn', imagePrompt: 'a red fox asleep in snow', motionPrompt: 'slow push in', narration: 'At dawn, the fox wakes.', duration: 2 }],
    }),
  );
  return file;
}

/** No key for fal or OpenAI anywhere: not in settings, and not in the environment. */
function noKeys(): void {
  for (const variable of ['FAL_KEY', 'OPENAI_API_KEY', 'REPLICATE_API_TOKEN', 'ELEVENLABS_API_KEY']) vi.stubEnv(variable, '');
}

const taskCount = (dir: string) => (sqlOf(dir).prepare(`SELECT count(*) AS n FROM tasks`).get() as { n: number }).n;

describe('a price before a key', () => {
  it('CLI: the estimate prices steps whose provider has no key, names the missing keys, and Generate refuses naming them, enqueueing nothing', async () => {
    noKeys();
    const dir = tempDir();
    expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', keyedBoard(dir))).code).toBe(0);

    const shown = await cli(dir, 'estimate', 'Fox');
    expect(shown.code).toBe(0);
    expect(shown.out).toMatch(/dawn:image\s+new\s+fal\s+fal-ai\/flux\/schnell\s+0\.003 USD, no key yet\s+catalogue:/);
    expect(shown.out).toMatch(/dawn:speech\s+new\s+openai\s+tts-1\s+0\.000345 USD, no key yet\s+catalogue:/);
    expect(shown.out).toContain('Missing keys: fal (Settings, or FAL_KEY), OpenAI (Settings, or OPENAI_API_KEY).');
    expect(shown.out).toMatch(/dawn:clip\s+new\s+simulator\s+sim-clip-1\s+0\.\d{2,6} USD \(simulated\)/);
    expect(shown.out).toMatch(/Of the new steps, 0\.\d{2,6} USD is simulated \(the simulator's made-up prices, never charged\) and 0\.003345 USD is real money\./);

    const json = JSON.parse((await cli(dir, 'estimate', 'Fox', '--json')).out);
    expect(json.missingKeys).toEqual([
      { provider: 'fal', title: 'fal', variable: 'FAL_KEY' },
      { provider: 'openai', title: 'OpenAI', variable: 'OPENAI_API_KEY' },
    ]);
    // 1 megapixel at 0.003 USD, and 23 characters at 0.000015 USD (resources/prices.json).
    expect(json.steps.find((s: { key: string }) => s.key === 'dawn:image')).toMatchObject({ cost: 3_000, keyMissing: { provider: 'fal' }, simulated: false });
    expect(json.steps.find((s: { key: string }) => s.key === 'dawn:speech')).toMatchObject({ cost: 345, keyMissing: { provider: 'openai' } });
    expect(json.unpriced).toEqual([]);
    const clip = json.steps.find((s: { key: string }) => s.key === 'dawn:clip');
    expect(clip).toMatchObject({ simulated: true, keyMissing: null });
    expect(clip.cost).toBeGreaterThan(0);
    expect(json.simulatedTotal).toBe(clip.cost);
    expect(json.total).toBe(clip.cost + 3_000 + 345);

    const refused = await cli(dir, 'generate', 'Fox');
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('no API key yet for fal (Settings, or FAL_KEY), OpenAI (Settings, or OPENAI_API_KEY); add them and generate again. Nothing was enqueued.');
    expect(taskCount(dir)).toBe(0);
  });

  it('API: the estimate says which keys are missing and prices every step; Generate is refused with the keys named, and nothing is enqueued', async () => {
    noKeys();
    const dir = tempDir();
    host = await hostForTest(dir);
    expect((await call('createProject', 'Fox')).status).toBe(200);
    const board = JSON.parse(readFileSync(keyedBoard(dir), 'utf8'));
    expect((await call('saveStoryboard', 'Fox', board)).status).toBe(200);

    const estimate = await call<EstimateView>('estimate', 'Fox');
    expect(estimate.status).toBe(200);
    expect(estimate.result.missingKeys.map((k) => k.title)).toEqual(['fal', 'OpenAI']);
    expect(estimate.result.unpriced).toBe(0);
    expect(estimate.result.steps.filter((s) => s.keyMissing).map((s) => [s.key, s.cost])).toEqual([
      ['dawn:image', 0.003],
      ['dawn:speech', 0.000345],
    ]);
    expect(estimate.result.simulatedTotal).toBe(estimate.result.steps.find((s) => s.key === 'dawn:clip')!.cost);
    expect(estimate.result.steps.find((s) => s.key === 'dawn:clip')!.simulated).toBe(true);

    const refused = await call('generate', 'Fox');
    expect(refused.status).toBe(400);
    expect(refused.error).toMatch(/no API key yet for fal \(Settings, or FAL_KEY\), OpenAI \(Settings, or OPENAI_API_KEY\).*Nothing was enqueued\./);
    expect(taskCount(dir)).toBe(0);
  });
});

describe('simulated money looks simulated', () => {
  it('spend, CSV, tasks and the CLI keep the simulator\'s made-up money apart from real money', async () => {
    const { sim, ledger, dir } = await falAndSimulatorFolderForTest({ tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } });
    const file = join(dir, 'board.json');
    writeFileSync(
      file,
      JSON.stringify({
        width: 320,
        height: 180,
        steps: { image: { provider: 'fal', model: FAL_MODEL } },
        scenes: [{ id: 'dawn', imagePrompt: 'a red fox asleep in snow', motionPrompt: 'slow push in', narration: 'At dawn, the fox wakes.', duration: 1 }],
      }),
    );
    expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', file)).code).toBe(0);
    expect((await cli(dir, 'generate', 'Fox')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    expect(ledger.charged).toHaveLength(1);

    const shown = await cli(dir, 'spend', '--project', 'Fox');
    expect(shown.out).toMatch(/^Fox\s+0\.0\d USD/m);
    expect(shown.out).toMatch(/^Fox, simulated\s+0\.\d+ USD \(simulated\)/m);
    expect(shown.out).toContain('Rows marked "simulated" are the simulator\'s made-up prices: never charged, and not in the other rows.');
    expect(shown.out).toMatch(/simulator sim-clip-1 \(simulated\)/);
    const [json] = JSON.parse((await cli(dir, 'spend', '--project', 'Fox', '--json')).out);
    const simulatedCharges = sim.charges.reduce((sum, c) => sum + c.billed, 0) / 1e6;

    host = await hostForTest(dir);
    const report = (await call<SpendReport>('spend', 'Fox')).result;
    expect(report.simulated.actual).toBeCloseTo(simulatedCharges, 6);
    expect(json.simulated.actual).toBeCloseTo(simulatedCharges, 6);
    // fal's part, whatever its bill: real money, and only that, in the real figures.
    const falMoney = report.real.actual + report.real.estimated;
    expect(falMoney).toBeGreaterThan(0);
    expect(json.actual + json.estimated).toBeCloseTo(falMoney, 6);
    expect(report.totals.actual + report.totals.estimated).toBeCloseTo(falMoney + report.simulated.actual + report.simulated.estimated, 6);
    expect(report.rows.map((r) => [r.provider, r.simulated])).toEqual([
      ['fal', false],
      ['simulator', true],
    ]);
    expect(report.byModel.every((m) => m.simulated === (m.provider === 'simulator'))).toBe(true);

    const csv = (await call<string>('spendCsv', 'Fox')).result.trim().split('\n');
    expect(csv[0]).toBe('day,provider,billed,counted_from_usage,estimated,possibly_charged,currency,simulated');
    expect(csv.slice(1).map((l) => l.split(',').slice(1, 2).concat(l.split(',').slice(-1)))).toEqual([
      ['fal', 'no'],
      ['simulator', 'yes'],
    ]);
    const all = (await call<string>('spendCsv', null)).result.trim().split('\n');
    expect(all[0]).toBe('project,day,provider,billed,counted_from_usage,estimated,possibly_charged,currency,simulated');

    const overview = (await call<SpendOverview>('spendOverview')).result;
    expect(overview.projects[0]!.simulated.actual).toBeCloseTo(simulatedCharges, 6);
    expect(overview.byProvider.map((p) => [p.provider, p.simulated])).toEqual([
      ['fal', false],
      ['simulator', true],
    ]);

    const tasks = (await call<{ tasks: TaskView[] }>('listTasks', 'Fox', 0, 50)).result.tasks;
    expect(tasks.map((t) => [t.provider, t.simulated]).sort()).toEqual([
      ['fal', false],
      ['local', false],
      ['simulator', true],
      ['simulator', true],
    ]);
  }, 60_000);
});
