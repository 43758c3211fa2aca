import Database from 'better-sqlite3';
import { unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCall, IpcRefused } from '../app/ipcValidation.ts';
import type { TakeView } from '../main/api/contract.ts';
import type { LaunchedHost } from '../main/host/launch.ts';
import type { RunningSimulator } from '../main/simulator/server.ts';
import { cli, storyboardRevision } from './helpers/cli.ts';
import { writeSettings } from './helpers/processes.ts';
import { hostForTest, simulatorForTest } from './helpers/running.ts';
import { apiCaller } from './helpers/studioApi.ts';
import { TWO_SCENES } from './helpers/boards.ts';
import { tempDir } from './helpers/tmp.ts';

let sim: RunningSimulator | undefined;
let host: LaunchedHost | undefined;

/** A data folder whose provider is a simulator this test holds (to count its charges), with a quick engine. */
async function simulatedDir() {
  sim = await simulatorForTest({ jobMs: 50 });
  const dir = tempDir();
  writeSettings(dir, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } } });
  return dir;
}

const BOARD = TWO_SCENES;

interface TakeJson {
  scene: string;
  take: number;
  picked: boolean;
  state: string;
  imagePrompt: string;
  seed: number;
  steps: { kind: string; taskId: number; provider: string; model: string; reused: boolean }[];
  costEstimated: number | null;
  costBilled: number | null;
  costBilledBasis: string | null;
}
interface TaskJson {
  id: number;
  kind: string;
  status: string;
  input: { scenes: { id: string; clip: { $output: number }; narration: { $output: number } | null }[] };
  outputPath: string | null;
  costEstimated: number | null;
  costActual: number | null;
}

const takesOf = async (dir: string, ...scene: string[]) => JSON.parse((await cli(dir, 'takes', 'Fox', ...scene, '--json')).out) as TakeJson[];
const lastRender = async (dir: string) => (JSON.parse((await cli(dir, 'tasks', '--json')).out) as TaskJson[]).filter((t) => t.kind === 'render').sort((a, b) => b.id - a.id)[0]!;
const taskOf = (take: TakeJson, kind: string) => take.steps.find((s) => s.kind === kind)!.taskId;

function dependenciesOf(dir: string, taskId: number): number[] {
  const db = new Database(join(dir, 'studio.db'), { readonly: true });
  try {
    return (db.prepare(`SELECT depends_on FROM task_dependencies WHERE task_id = ? ORDER BY depends_on`).all(taskId) as { depends_on: number }[]).map((r) => r.depends_on);
  } finally {
    db.close();
  }
}

async function made(dir: string, ...args: string[]) {
  const generated = await cli(dir, ...args);
  expect(generated.code, generated.err).toBe(0);
  expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
  return generated;
}

describe('takes', () => {
  it('keeps every take of a scene with its cost, renders the picked one even after the prompt changed, and a pick buys nothing', async () => {
    const dir = await simulatedDir();
    const file = join(dir, 'board.json');
    writeFileSync(file, JSON.stringify(BOARD));
    expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', file)).code).toBe(0);
    const first = await made(dir, 'generate', 'Fox');
    expect(first.out).toContain('dawn: take 1, picked for the render');
    const second = await made(dir, 'generate', 'Fox', '--new-take', 'dawn');
    expect(second.out).toContain('dawn: take 2, picked for the render');
    expect(second.out).not.toContain('home: take');

    const [one, two, home] = await takesOf(dir);
    expect([one, two, home].map((t) => [t!.scene, t!.take, t!.picked, t!.state])).toEqual([
      ['dawn', 1, false, 'ready'],
      ['dawn', 2, true, 'ready'],
      ['home', 1, true, 'ready'],
    ]);
    expect(two!.seed).not.toBe(one!.seed);
    expect(two!.steps.map((s) => [s.kind, s.reused])).toEqual([['image', false], ['clip', false], ['speech', true]]);
    expect(one!.steps.map((s) => `${s.provider} ${s.model}`)).toEqual(['simulator sim-image-1', 'simulator sim-clip-1', 'simulator sim-speech-1']);
    // Take 1 bought an image, a clip and the narration; take 2 only an image and a clip (the narration is the same).
    const costs = new Map((JSON.parse((await cli(dir, 'tasks', '--json')).out) as TaskJson[]).map((t) => [t.id, t]));
    const sum = (take: TakeJson, field: 'costActual' | 'costEstimated') => take.steps.filter((s) => !s.reused).reduce((n, s) => n + costs.get(s.taskId)![field]!, 0);
    expect(one!.costBilled).toBeCloseTo(sum(one!, 'costActual'), 6);
    expect(two!.costBilled).toBeCloseTo(sum(two!, 'costActual'), 6);
    expect(two!.costEstimated).toBeCloseTo(sum(two!, 'costEstimated'), 6);
    expect(two!.costBilled).toBeGreaterThan(0);
    // The simulator reports money: a bill, not a count the studio priced.
    expect(two!.costBilledBasis).toBe('billed');
    expect(await takesOf(dir, 'dawn')).toHaveLength(2);

    const table = await cli(dir, 'takes', 'Fox');
    expect(table.code).toBe(0);
    const lines = table.out.split('\n');
    expect(lines[0]).toMatch(/^SCENE +TAKE +PICKED +PROMPT +PROVIDER\/MODEL +SEED +COST +WHEN +STATUS$/);
    expect(lines[1]).toMatch(new RegExp(`^dawn +1 +a fox asleep in snow +simulator: sim-image-1, sim-clip-1, sim-speech-1 +${one!.seed} +\\d+\\.\\d{2,6} USD billed \\(simulated\\) +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d +ready$`));
    expect(lines[2]).toMatch(/^dawn +2 +picked +a fox asleep in snow/);

    const bought = sim!.charges.length;
    const picked = await cli(dir, 'pick', 'Fox', 'dawn', '1');
    expect(picked).toMatchObject({ code: 0, err: '' });
    expect(picked.out.split('\n')).toHaveLength(1);
    expect((await takesOf(dir, 'dawn')).map((t) => t.picked)).toEqual([true, false]);

    await made(dir, 'render', 'Fox');
    const render = await lastRender(dir);
    expect(render.status).toBe('SUCCEEDED');
    expect(render.input.scenes.map((s) => [s.id, s.clip.$output, s.narration?.$output ?? null])).toEqual([
      ['dawn', taskOf(one!, 'clip'), taskOf(one!, 'speech')],
      ['home', taskOf(home!, 'clip'), null],
    ]);
    expect(dependenciesOf(dir, render.id)).toEqual([taskOf(one!, 'clip'), taskOf(one!, 'speech'), taskOf(home!, 'clip')].sort((a, b) => a - b));

    // The prompt changes; take 1, picked again, is still what the render uses, as it was made.
    writeFileSync(file, JSON.stringify({ ...BOARD, scenes: [{ ...BOARD.scenes[0]!, imagePrompt: 'a fox asleep in rain' }, BOARD.scenes[1]] }));
    expect((await cli(dir, 'storyboard', 'edit', 'Fox', '--file', file, '--revision', await storyboardRevision(dir, 'Fox'))).code).toBe(0);
    expect((await cli(dir, 'pick', 'Fox', 'dawn', '1')).code).toBe(0);
    await made(dir, 'render', 'Fox');
    const again = await lastRender(dir);
    expect(again.id).toBeGreaterThan(render.id);
    expect(again.status).toBe('SUCCEEDED');
    expect(again.input.scenes[0]!.clip.$output).toBe(taskOf(one!, 'clip'));
    expect(sim!.charges).toHaveLength(bought);

    // A Generate makes the edited scene anew as take 3, picked; takes 1 and 2 stay.
    const third = await made(dir, 'generate', 'Fox');
    expect(third.out).toContain('dawn: take 3, picked for the render');
    const after = await takesOf(dir, 'dawn');
    expect(after.map((t) => [t.take, t.picked, t.imagePrompt])).toEqual([
      [1, false, 'a fox asleep in snow'],
      [2, false, 'a fox asleep in snow'],
      [3, true, 'a fox asleep in rain'],
    ]);
    expect((await lastRender(dir)).input.scenes[0]!.clip.$output).toBe(taskOf(after[2]!, 'clip'));
  }, 60_000);

  it('a Generate that makes nothing new for a scene keeps its picked earlier take in the render', async () => {
    const dir = await simulatedDir();
    const file = join(dir, 'board.json');
    writeFileSync(file, JSON.stringify(BOARD));
    await cli(dir, 'storyboard', 'create', 'Fox', '--file', file);
    await made(dir, 'generate', 'Fox');
    // Take 2 comes from an edited prompt, with the same seed; the storyboard keeps the edit after take 1 is picked.
    writeFileSync(file, JSON.stringify({ ...BOARD, scenes: [{ ...BOARD.scenes[0]!, imagePrompt: 'a fox asleep in rain' }, BOARD.scenes[1]] }));
    await cli(dir, 'storyboard', 'edit', 'Fox', '--file', file, '--revision', await storyboardRevision(dir, 'Fox'));
    expect((await made(dir, 'generate', 'Fox')).out).toContain('dawn: take 2, picked for the render');
    expect((await cli(dir, 'pick', 'Fox', 'dawn', '1')).code).toBe(0);
    const bought = sim!.charges.length;

    const generated = await made(dir, 'generate', 'Fox');
    expect(generated.out).not.toMatch(/take \d, picked/);
    const [one] = await takesOf(dir, 'dawn');
    const estimate = JSON.parse((await cli(dir, 'estimate', 'Fox', '--json')).out) as { steps: { key: string; action: string; taskId: number }[] };
    expect(estimate.steps.every((s) => s.action === 'reuse')).toBe(true);
    const render = (JSON.parse((await cli(dir, 'tasks', '--json')).out) as TaskJson[]).find((t) => t.id === estimate.steps.find((s) => s.key === 'render')!.taskId)!;
    expect(render.input.scenes[0]!.clip.$output).toBe(taskOf(one!, 'clip'));
    expect(sim!.charges).toHaveLength(bought);
    expect((await takesOf(dir, 'dawn')).map((t) => t.picked)).toEqual([true, false]);

    // A new take after the pick is past every earlier one: nothing of takes 1 or 2 is reused for its image.
    await made(dir, 'generate', 'Fox', '--new-take', 'dawn');
    const takes = await takesOf(dir, 'dawn');
    expect(takes.map((t) => [t.take, t.picked])).toEqual([[1, false], [2, false], [3, true]]);
    expect(takes[2]!.steps.find((s) => s.kind === 'image')!.reused).toBe(false);
    expect(takes[2]!.seed).not.toBe(takes[0]!.seed);
  }, 60_000);

  it.each([
    [['pick', 'Fox', 'dusk', '1'], /^studio: scene "dusk" of "Fox" has no takes; the scenes with takes are dawn, home$/],
    [['pick', 'Fox', 'dawn', '9'], /^studio: scene "dawn" has no take 9; its takes are 1$/],
    [['pick', 'Fox', 'dawn', 'one'], /^studio: TAKE must be a whole number/],
    [['pick', 'Fox', 'dawn'], /^studio: use: studio pick PROJECT SCENE TAKE/],
    [['pick', 'Otter', 'dawn', '1'], /^studio: there is no project "Otter"$/],
    [['takes', 'Fox', 'dusk'], /^studio: scene "dusk" has no takes; the scenes with takes are dawn, home$/],
    [['takes'], /^studio: name the project/],
  ])('refuses %j in one line, exit 2', async (args, message) => {
    const dir = await simulatedDir();
    const file = join(dir, 'board.json');
    writeFileSync(file, JSON.stringify(BOARD));
    await cli(dir, 'storyboard', 'create', 'Fox', '--file', file);
    await made(dir, 'generate', 'Fox');
    const result = await cli(dir, ...args);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
    expect(result.err.split('\n')).toHaveLength(1);
  }, 30_000);

  it('refuses to pick a take whose clip is lost, and to render a picked take that lost it', async () => {
    const dir = await simulatedDir();
    const file = join(dir, 'board.json');
    writeFileSync(file, JSON.stringify(BOARD));
    await cli(dir, 'storyboard', 'create', 'Fox', '--file', file);
    await made(dir, 'generate', 'Fox');
    await made(dir, 'generate', 'Fox', '--new-take', 'dawn');
    const [one, two] = await takesOf(dir, 'dawn');
    const tasks = JSON.parse((await cli(dir, 'tasks', '--json')).out) as TaskJson[];
    unlinkSync(join(dir, tasks.find((t) => t.id === taskOf(one!, 'clip'))!.outputPath!));

    const refused = await cli(dir, 'pick', 'Fox', 'dawn', '1');
    expect(refused.code).toBe(2);
    expect(refused.err).toBe(`studio: scene "dawn" take 1 cannot go into the render: its clip (task ${taskOf(one!, 'clip')}) its output file is gone. Pick another take, or make a new one`);
    expect((await takesOf(dir, 'dawn')).map((t) => [t.picked, t.state])).toEqual([[false, 'lost'], [true, 'ready']]);

    unlinkSync(join(dir, tasks.find((t) => t.id === taskOf(two!, 'clip'))!.outputPath!));
    const render = await cli(dir, 'render', 'Fox');
    expect(render.code).toBe(2);
    expect(render.err).toMatch(/^studio: scene "dawn" take 2, picked for the render, cannot go into it: its clip \(task \d+\) its output file is gone/);
  }, 30_000);
});

const call = apiCaller(() => host);

async function allReady(): Promise<TakeView[]> {
  for (let i = 0; i < 400; i++) {
    const { result } = await call<TakeView[]>('takes', 'Fox');
    if (result.length > 0 && result.every((t) => t.state === 'ready')) return result;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the takes were never all made');
}

describe('takes over the StudioApi', () => {
  it('lists each take with its media and cost, picks one without buying, and refuses a bad pick in words', async () => {
    const dir = await simulatedDir();
    const file = join(dir, 'board.json');
    writeFileSync(file, JSON.stringify(BOARD));
    await cli(dir, 'storyboard', 'create', 'Fox', '--file', file);
    host = await hostForTest(dir);
    await call('generate', 'Fox', []);
    await allReady();
    await call('generate', 'Fox', ['dawn']);
    await allReady();

    const { result: takes } = await call<TakeView[]>('takes', 'Fox', 'dawn');
    expect(takes.map((t) => [t.take, t.picked, t.state])).toEqual([[1, false, 'ready'], [2, true, 'ready']]);
    expect(takes[0]).toMatchObject({ imagePrompt: 'a fox asleep in snow', currency: 'USD', imageUrl: expect.stringMatching(/^\/media\/\d+$/), clipUrl: expect.stringMatching(/^\/media\/\d+$/) });
    expect(takes[1]!.costBilled).toBeGreaterThan(0);
    expect(takes[1]!.steps.find((s) => s.kind === 'speech')!.reused).toBe(true);

    const bought = sim!.charges.length;
    const picked = await call<TakeView>('pickTake', 'Fox', 'dawn', 1);
    expect(picked.result).toMatchObject({ scene: 'dawn', take: 1, picked: true });
    expect((await call<TakeView[]>('takes', 'Fox', 'dawn')).result.map((t) => t.picked)).toEqual([true, false]);
    expect(sim!.charges).toHaveLength(bought);

    expect(await call('pickTake', 'Fox', 'dawn', 7)).toMatchObject({ status: 400, error: 'scene "dawn" has no take 7; its takes are 1, 2' });
    expect(await call('pickTake', 'Fox', 'dawn', 0)).toMatchObject({ status: 400, error: 'a take is a whole number from 1, not 0' });
    expect(await call('takes', 'Otter')).toMatchObject({ status: 400, error: 'there is no project "Otter"' });
  }, 30_000);

  it('takes only well-formed calls from the app page', () => {
    const page = { url: 'app://studio/index.html', isMainFrame: true };
    expect(() => checkCall('takes', ['Fox'], page)).not.toThrow();
    expect(() => checkCall('takes', ['Fox', 'dawn'], page)).not.toThrow();
    expect(() => checkCall('pickTake', ['Fox', 'dawn', 2], page)).not.toThrow();
    for (const [method, args] of [
      ['takes', ['Fox', 3]],
      ['takes', ['']],
      ['pickTake', ['Fox', 'dawn', '2']],
      ['pickTake', ['Fox', 'dawn', 0]],
      ['pickTake', ['Fox', 'dawn', 1.5]],
      ['pickTake', ['Fox', '', 1]],
    ] as const) {
      expect(() => checkCall(method, [...args], page)).toThrow(IpcRefused);
    }
  });
});
