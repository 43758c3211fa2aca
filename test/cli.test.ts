import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultDataDir } from '../main/config/paths.ts';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { writeSettings } from './helpers/processes.ts';
import { cli, ENQUEUE } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';



let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** A data folder whose provider is a simulator this test holds (to inject faults and see charges), with a quick engine. */
async function simulatedDir() {
  sim = await startSimulator({ jobMs: 50 });
  const dir = tempDir();
  writeSettings(dir, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } } });
  return dir;
}

interface TaskJson {
  id: number;
  kind: string;
  status: string;
  remoteRequestId: string | null;
  outputPath: string | null;
}
const tasksOf = async (dir: string) => JSON.parse((await cli(dir, 'tasks', '--json')).out) as TaskJson[];

describe('studio CLI', () => {
  it('enqueues and prints the id; tasks --json gives the documented fields', async () => {
    const dir = tempDir();
    expect(await cli(dir, ...ENQUEUE, '--input', '{"prompt":"a fox"}')).toMatchObject({ code: 0, out: '1' });
    const { out } = await cli(dir, 'tasks', '--json');
    const [task] = JSON.parse(out);
    expect(Object.keys(task)).toEqual(
      expect.arrayContaining([
        'id', 'project', 'kind', 'status', 'provider', 'model', 'remoteRequestId', 'submitStartedAt',
        'costEstimated', 'costActual', 'outputPath', 'unknownReason',
      ]),
    );
    expect(task).toMatchObject({ id: 1, project: 'Film', kind: 'image', status: 'PENDING', provider: 'simulator', remoteRequestId: null });
  });

  it.each([
    [['enqueue', '--project', 'Film', '--kind', 'image', '--provider', 'simulator', '--model', 'sim-image-1'], /--input is required/],
    [[...ENQUEUE, '--input', '{not json'], /--input is not JSON .*for example --input/],
    [[...ENQUEUE, '--input', '{"text":"no prompt"}'], /"prompt" is required/],
    [['enqueue', '--project', 'Film', '--kind', 'video', '--provider', 'simulator', '--model', 'sim-image-1', '--input', '{}'], /--kind must be one of image, clip, speech/],
    [['enqueue', '--project', 'Film', '--kind', 'image', '--provider', 'nowhere', '--model', 'sim-image-1', '--input', '{"prompt":"x"}'], /unknown provider "nowhere"/],
    [[...ENQUEUE, '--input', '{"prompt":"x"}', '--depends-on', '99'], /there is no task 99/],
    [[...ENQUEUE, '--input', '{"prompt":"x"}', '--colour', 'red'], /Unknown option '--colour'/],
    [['resolve', '7'], /choose exactly one of --adopt/],
    [['resolve', 'seven', '--give-up'], /give a task id/],
    [['frobnicate'], /unknown command "frobnicate"/],
  ])('refuses %j with a clear message, exit 2, and writes nothing', async (args, message) => {
    const dir = tempDir();
    await cli(dir, ...ENQUEUE, '--input', '{"prompt":"kept"}');
    const db = join(dir, 'studio.db');
    const before = readFileSync(db);
    const result = await cli(dir, ...args);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
    expect(readFileSync(db).equals(before)).toBe(true);
    expect(JSON.parse((await cli(dir, 'tasks', '--json')).out)).toHaveLength(1);
  });

  it('refuses a decision on a task that does not need one, exit 2', async () => {
    const dir = tempDir();
    await cli(dir, ...ENQUEUE, '--input', '{"prompt":"x"}');
    const result = await cli(dir, 'resolve', '1', '--resubmit');
    expect(result).toMatchObject({ code: 2 });
    expect(result.err).toContain('task 1 is PENDING');
  });

  it('refuses a data folder whose database is not SQLite, without touching it', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'studio.db'), 'not a database');
    const result = await cli(dir, 'tasks');
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/not a studio database/);
    expect(readFileSync(join(dir, 'studio.db'), 'utf8')).toBe('not a database');
  });

  it('shows spend per project as JSON', async () => {
    const dir = tempDir();
    await cli(dir, ...ENQUEUE, '--input', '{"prompt":"x"}');
    expect(JSON.parse((await cli(dir, 'spend', '--json')).out)).toEqual([
      { project: 'Film', currency: 'USD', actual: 0, billed: 0, countedFromUsage: 0, estimated: 0, possiblyCharged: 0, total: 0, budget: null, simulated: { actual: 0, billed: 0, countedFromUsage: 0, estimated: 0, possiblyCharged: 0 }, otherCurrencies: [] },
    ]);
  });

  it('creates a storyboard from a file, estimates it, and refuses a bad one naming the scene and field', async () => {
    const dir = tempDir();
    const good = join(dir, 'good.json');
    const bad = join(dir, 'bad.json');
    writeFileSync(good, readFileSync(join(import.meta.dirname, '..', 'examples', 'fox.storyboard.json')));
    writeFileSync(bad, JSON.stringify({ scenes: [{ id: 'dawn', imagePrompt: 'x', duration: 99 }] }));
    expect(await cli(dir, 'storyboard', 'create', 'Fox', '--file', good)).toMatchObject({ code: 0, out: 'Fox: storyboard created with 3 scene(s)' });
    const estimate = JSON.parse((await cli(dir, 'estimate', 'Fox', '--json')).out);
    expect(estimate.steps).toHaveLength(9);
    expect(estimate.total).toBe(931_400);
    const refused = await cli(dir, 'storyboard', 'edit', 'Fox', '--file', bad);
    expect(refused).toMatchObject({ code: 2 });
    expect(refused.err).toContain('scene 1 ("dawn") duration: must be a number from 0.5 to 60');
    const shown = await cli(dir, 'storyboard', 'show', 'Fox', '--json');
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.out).scenes).toHaveLength(3);
    expect((await cli(dir, 'budget', 'Fox', 'lots')).err).toMatch(/amount like 12.50/);
  });

  it('refuses to buy again a step whose paid result was lost unless --rebuy-lost is given: one line naming the flag, exit 2', async () => {
    const dir = await simulatedDir();
    const board = join(dir, 'board.json');
    writeFileSync(board, JSON.stringify({ width: 320, height: 180, scenes: [{ id: 'dawn', imagePrompt: 'a fox asleep', motionPrompt: 'push in', duration: 1 }] }));
    await cli(dir, 'storyboard', 'create', 'Fox', '--file', board);
    expect((await cli(dir, 'generate', 'Fox')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    const made = await tasksOf(dir);
    expect(made.map((t) => t.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    const clip = made.find((t) => t.kind === 'clip')!;
    unlinkSync(join(dir, clip.outputPath!));
    unlinkSync(join(dir, made.find((t) => t.kind === 'render')!.outputPath!));

    const estimate = await cli(dir, 'estimate', 'Fox');
    expect(estimate.out).toMatch(new RegExp(`dawn:clip: paid, result lost: task ${clip.id} cost \\d+\\.\\d{2,6} USD \\(its output file is gone\\), looked for at ${join(dir, clip.outputPath!)}; buying it again needs "studio generate Fox --rebuy-lost"`));
    const refused = await cli(dir, 'generate', 'Fox');
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(new RegExp(`^studio: paid for before, result lost: dawn:clip \\(task ${clip.id}, \\d+\\.\\d{2,6} USD\\), looked for at ${join(dir, clip.outputPath!)}; nothing was enqueued\\. To buy again, run "studio generate Fox --rebuy-lost"\\.$`));
    expect(await tasksOf(dir)).toHaveLength(3);
    expect(sim!.charges).toHaveLength(2);

    const confirmed = await cli(dir, 'generate', 'Fox', '--rebuy-lost');
    expect(confirmed.code).toBe(0);
    expect(confirmed.out).toContain('Enqueued 2 step(s)');
    expect((await tasksOf(dir)).slice(3).map((t) => t.kind)).toEqual(['clip', 'render']);
  }, 30_000);

  it('refuses to adopt a request that already belongs to another task, naming it, exit 2; adopts the task\'s own request', async () => {
    const dir = await simulatedDir();
    await cli(dir, ...ENQUEUE, '--input', '{"prompt":"first"}');
    await cli(dir, 'worker', '--until-idle');
    // Two lost answers to the same input at once: which request is whose cannot be told, so the run's own lookup
    // leaves them to a person.
    sim!.setFaults({ submit: ['drop-after-accept', 'drop-after-accept'] });
    await cli(dir, ...ENQUEUE, '--input', '{"prompt":"second"}');
    await cli(dir, ...ENQUEUE, '--input', '{"prompt":"second"}');
    await cli(dir, 'worker', '--until-idle');
    const [first, second] = await tasksOf(dir);
    expect(first).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: expect.any(String) });
    expect(second).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null });

    const refused = await cli(dir, 'resolve', String(second!.id), '--adopt', first!.remoteRequestId!);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(`request ${first!.remoteRequestId} already belongs to task ${first!.id} (SUCCEEDED)`);
    expect((await tasksOf(dir))[1]).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null });

    const own = sim!.charges.find((c) => c.requestId !== first!.remoteRequestId)!.requestId;
    expect(await cli(dir, 'resolve', String(second!.id), '--adopt', own)).toMatchObject({ code: 0, out: `task ${second!.id}: adopted request ${own}; a worker will collect its result` });
  }, 30_000);

  it('defaults to the per-user folder the desktop app uses, unless STUDIO_DATA_DIR says otherwise', () => {
    expect(defaultDataDir({ HOME: '/home/ana' }, 'linux')).toMatch(/\.config\/take-studio$/);
    expect(defaultDataDir({ XDG_CONFIG_HOME: '/x' }, 'linux')).toBe('/x/take-studio');
    expect(defaultDataDir({ STUDIO_DATA_DIR: '/data' }, 'linux')).toBe('/data');
    expect(defaultDataDir({}, 'darwin')).toMatch(/Library\/Application Support\/take-studio$/);
  });
});
