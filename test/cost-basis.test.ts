import { describe, expect, it } from 'vitest';
import type { SpendReport, TaskView } from '../main/api/contract.ts';
import { costBasis } from '../main/domain/costBasis.ts';
import type { Task } from '../main/domain/tasks/model.ts';
import { openStudio } from '../main/studio.ts';
import { elevenLabs, openAiImages, realMedia, type Ledger } from './fakes/providers.ts';
import { replicateStandIn } from './fakes/replicateStandIn.ts';
import { startFake, type Route } from './fakes/server.ts';
import { runStudio, untilIdle, writeSettings } from './helpers/processes.ts';
import { hostForTest, simulatorForTest } from './helpers/running.ts';
import { storeKinds, type StoreKind } from './helpers/stores.ts';
import { apiCaller } from './helpers/studioApi.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * "Billed" only where the provider reported money or credits: the simulator's "cost" field (money) and ElevenLabs'
 * character-cost header (credits) are bills; a Replicate official model's images and a GPT image's usage tokens are
 * counted from usage at the catalogue's price. A real `worker --until-idle` against stand-ins answering as each
 * provider documents, then `studio tasks --json`, the API's task view and the spend report, on both stores.
 */

const micros = (amount: number) => Math.round(amount * 1_000_000);
/** A GPT image's usage: 20 text tokens at 5 USD and 272 output tokens (a low-quality 1024x1024 image) at 40 USD per million (resources/prices.json gpt-image-1). */
const USAGE = { text: 20, image: 0, output: 272 };
const OPENAI_COST = (20 * 5 + 272 * 40) / 1_000_000;

/** Replicate, OpenAI and ElevenLabs on one stand-in: their paths do not overlap. */
function oneStandIn(...routes: Route[]): Route {
  return async (req, res) => {
    for (const route of routes) {
      await route(req, res);
      if (res.headersSent || res.destroyed) return;
    }
  };
}

async function run(kind: StoreKind) {
  const { png, speech } = await realMedia();
  const ledger: Ledger = { charged: [] };
  const replicate = replicateStandIn(png, { predictTime: () => 1.5, perImage: 0.003, perSecond: 0.001525 });
  const fake = await startFake(oneStandIn(replicate.route, openAiImages(ledger, png, { usage: USAGE }), elevenLabs(ledger, speech)));
  const sim = await simulatorForTest({ jobMs: 20 });
  const dataDir = tempDir();
  const engine = { leaseMs: 3_000, tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 200 }, concurrency: { image: 2, clip: 0, speech: 1, render: 0 } };
  writeSettings(dataDir, { engine, providers: { simulator: { baseUrl: sim.url } } });
  const database = kind.kind === 'postgres' ? await kind.fresh() : undefined;
  const studio = await openStudio(dataDir, undefined, { database });
  const project = await studio.projects.ensure('Fox', Date.now());
  const enqueue = async (kindOf: 'image' | 'speech', provider: string, model: string, input: Record<string, unknown>) =>
    (await studio.tasks.enqueue({ projectId: project.id, kind: kindOf, provider, model, input }, Date.now())).id;
  const ids = {
    replicate: await enqueue('image', 'replicate', 'black-forest-labs/flux-schnell', { prompt: 'a fox' }),
    openai: await enqueue('image', 'openai', 'gpt-image-1', { prompt: 'a hare', quality: 'low', size: '1024x1024' }),
    elevenlabs: await enqueue('speech', 'elevenlabs', 'eleven_multilingual_v2', { text: 'hello there', voice_id: 'voice-1' }),
    simulator: await enqueue('image', 'simulator', 'sim-image-1', { prompt: 'an owl' }),
  };
  const team: Record<string, string> = database ? { STUDIO_DATABASE_URL: database, STUDIO_MACHINE_NAME: 'machine-a' } : {};
  const env = {
    ...team,
    REPLICATE_API_TOKEN: 'r8_0123456789abcdef0123456789',
    STUDIO_REPLICATE_BASE_URL: fake.url,
    OPENAI_API_KEY: 'sk-test-0123456789',
    STUDIO_OPENAI_BASE_URL: fake.url,
    ELEVENLABS_API_KEY: 'el-key-0123456789',
    STUDIO_ELEVENLABS_BASE_URL: fake.url,
  };
  expect(await untilIdle(dataDir, env, 60_000)).toBe(true);
  return { dataDir, database, studio, ids, env, sim };
}

describe.each(storeKinds())('billed only where the provider reported money or credits ($kind)', (kind) => {
  it.skipIf(!kind.available)('a Replicate official image and a GPT image are counted from usage, an ElevenLabs speech and a simulator step billed; spend splits them to the micro-unit', async () => {
    const { dataDir, database, studio, ids, env, sim } = await run(kind);
    const tasks = Object.fromEntries(await Promise.all(Object.entries(ids).map(async ([k, id]) => [k, (await studio.tasks.get(id))!] as const))) as Record<keyof typeof ids, Task>;
    for (const t of Object.values(tasks)) expect(t).toMatchObject({ status: 'SUCCEEDED', charged: 'yes' });
    expect(tasks.replicate).toMatchObject({ costActual: micros(0.003), costReported: 'image', billedUnits: { count: 1, unit: 'image' } });
    expect(tasks.openai).toMatchObject({ costActual: micros(OPENAI_COST), costReported: 'token', billedUnits: { count: 20 + 272, unit: 'token' } });
    expect(tasks.elevenlabs).toMatchObject({ costReported: 'credit', billedUnits: { count: 11, unit: 'credit' } });
    expect(tasks.simulator).toMatchObject({ costReported: 'money', costActual: sim.charges.reduce((sum, c) => sum + c.billed, 0) });
    const expected = { replicate: 'counted from usage', openai: 'counted from usage', elevenlabs: 'billed', simulator: 'billed' };

    // `studio tasks --json`.
    const listed = await runStudio(dataDir, ['tasks', '--json'], env);
    expect(listed.code).toBe(0);
    const json = JSON.parse(listed.stdout) as { id: number; costBasis: string }[];
    for (const [k, id] of Object.entries(ids)) expect(json.find((t) => t.id === id)!.costBasis).toBe(expected[k as keyof typeof ids]);
    const text = await runStudio(dataDir, ['tasks'], env);
    expect(text.stdout).toMatch(new RegExp(`^${ids.replicate}\\s+Fox\\s+image\\s+SUCCEEDED\\s+replicate\\s+\\S+\\s+0\\.003 USD\\s+counted from usage`, 'm'));

    // The API's task view says the same, so the app never decides again.
    const host = await hostForTest(dataDir, { database });
    const call = apiCaller(() => host);
    const views = (await call<{ tasks: TaskView[] }>('listTasks', 'Fox', 0, 50)).result.tasks;
    for (const [k, id] of Object.entries(ids)) expect(views.find((t) => t.id === id)!.costBasis).toBe(expected[k as keyof typeof ids]);

    // Spend: billed and counted from usage, whose parts add up to the figure that was all called billed, to the micro-unit.
    const report = (await call<SpendReport>('spend', 'Fox')).result;
    const real = [tasks.replicate, tasks.openai, tasks.elevenlabs].reduce((sum, t) => sum + t.costActual!, 0);
    expect(micros(report.real.billed)).toBe(tasks.elevenlabs.costActual);
    expect(micros(report.real.countedFromUsage)).toBe(tasks.replicate.costActual! + tasks.openai.costActual!);
    expect(micros(report.real.billed) + micros(report.real.countedFromUsage)).toBe(real);
    expect(micros(report.real.actual)).toBe(real);
    expect(report.simulated).toMatchObject({ billed: report.simulated.actual, countedFromUsage: 0 });
    expect(micros(report.simulated.billed)).toBe(tasks.simulator.costActual);
    const byModel = new Map(report.byModel.map((m) => [m.provider, m]));
    expect(byModel.get('replicate')).toMatchObject({ billed: 0, countedFromUsage: 0.003 });
    expect(byModel.get('openai')).toMatchObject({ billed: 0, countedFromUsage: OPENAI_COST });
    expect(byModel.get('elevenlabs')).toMatchObject({ billed: tasks.elevenlabs.costActual! / 1e6, countedFromUsage: 0 });
    // Every row adds up to its total, part by part.
    for (const part of ['billed', 'countedFromUsage'] as const) {
      const rows = report.rows.filter((r) => !r.simulated).reduce((sum, r) => sum + micros(r[part]), 0);
      expect(rows).toBe(micros(report.real[part]));
    }
    const overview = (await call<{ projects: { billed: number; countedFromUsage: number }[]; byProvider: { provider: string; billed: number; countedFromUsage: number }[] }>('spendOverview')).result;
    expect(micros(overview.projects[0]!.billed)).toBe(tasks.elevenlabs.costActual! + tasks.simulator.costActual!);
    expect(micros(overview.projects[0]!.countedFromUsage)).toBe(tasks.replicate.costActual! + tasks.openai.costActual!);

    // The CSV: billed and counted_from_usage columns, each row's parts as in the report.
    const csv = (await call<string>('spendCsv', 'Fox')).result.trim().split('\n');
    expect(csv[0]).toBe('day,provider,billed,counted_from_usage,estimated,possibly_charged,currency,simulated');
    const replicateRow = csv.find((l) => l.split(',')[1] === 'replicate')!.split(',');
    expect(replicateRow.slice(2, 4)).toEqual(['0', '0.003']);

    // `studio spend`: the split in words and in JSON.
    const spend = await runStudio(dataDir, ['spend', '--json'], env);
    const [fox] = JSON.parse(spend.stdout) as { billed: number; countedFromUsage: number; actual: number }[];
    expect(micros(fox!.billed) + micros(fox!.countedFromUsage)).toBe(micros(fox!.actual));
    expect(micros(fox!.countedFromUsage)).toBe(tasks.replicate.costActual! + tasks.openai.costActual!);
    const words = await runStudio(dataDir, ['spend', '--project', 'Fox'], env);
    expect(words.stdout).toMatch(/PROJECT\s+BILLED\s+COUNTED FROM USAGE\s+ESTIMATED\s+TOTAL\s+POSSIBLY CHARGED/);
    expect(words.stdout).toContain('counted from usage is what a provider reported it bills by');
    await studio.close();
  }, 120_000);
});

describe('a task finished before what the provider reported was kept', () => {
  const older = (provider: string): Pick<Task, 'kind' | 'provider' | 'costActual' | 'costReported' | 'costEstimated' | 'charged' | 'status'> => ({
    kind: 'image',
    provider,
    costActual: 3_000,
    costReported: null,
    costEstimated: 3_000,
    charged: 'yes',
    status: 'SUCCEEDED',
  });

  it('is judged by its provider: the simulator and ElevenLabs reported money or credits, the others were counted from usage', () => {
    expect(costBasis(older('simulator'))).toBe('billed');
    expect(costBasis(older('elevenlabs'))).toBe('billed');
    expect(costBasis(older('replicate'))).toBe('counted from usage');
    expect(costBasis(older('openai'))).toBe('counted from usage');
    expect(costBasis({ ...older('fal'), costReported: 'money' })).toBe('billed');
    expect(costBasis({ ...older('simulator'), kind: 'render', provider: 'local', costActual: 0 })).toBe('not charged');
  });
});
