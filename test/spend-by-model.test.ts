import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { openStudio } from '../main/studio.ts';
import { cli } from './helpers/cli.ts';
import { writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

let sim: RunningSimulator | undefined;
afterEach(async () => sim?.close());

describe('spend per model', () => {
  it('sets what each model billed against what the same requests were estimated at, each figure saying how it was reached', async () => {
    sim = await startSimulator({ jobMs: 50 });
    const dir = tempDir();
    writeSettings(dir, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } } });
    const board = join(dir, 'board.json');
    writeFileSync(board, JSON.stringify({ width: 320, height: 180, scenes: [{ id: 'dawn', imagePrompt: 'a fox asleep', motionPrompt: 'push in', narration: 'Dawn.', duration: 1 }] }));
    expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', board)).code).toBe(0);
    expect((await cli(dir, 'generate', 'Fox')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);

    // The simulator bills a little off its quote, as real bills are (simulator/server.ts).
    const billed = new Map(sim.charges.map((c) => [c.model, c.billed]));
    const studio = await openStudio(dir);
    try {
      const project = (await studio.projects.byName('Fox'))!;
      const byModel = await studio.tasks.spendByModel(project.id);
      expect(byModel.map((m) => m.model)).toEqual(['sim-clip-1', 'sim-image-1', 'sim-speech-1']);
      for (const m of byModel) {
        expect(m).toMatchObject({ provider: 'simulator', tasks: 1, billed: billed.get(m.model), estimatedOnly: 0, possiblyCharged: 0, billedUnestimated: 0 });
        expect(m.estimatedForBilled).toBeGreaterThan(0);
      }
      for (const t of (await studio.tasks.page(project.id, 0, 10)).tasks) {
        expect(t.costActualSource).toBe(t.kind === 'render' ? 'made on this machine by ffmpeg, at no charge' : 'the simulator\'s "cost" field');
      }
    } finally {
      await studio.close();
    }

    const shown = await cli(dir, 'spend', '--project', 'Fox');
    expect(shown.out).toMatch(/MODEL\s+TASKS\s+BILLED\s+COUNTED FROM USAGE\s+ESTIMATED FOR THOSE\s+CHARGED, NO BILL\s+POSSIBLY CHARGED/);
    expect(shown.out).toMatch(/simulator sim-image-1 \(simulated\)\s+1\s+0\.0\d+ USD\s+0\.00 USD\s+0\.04 USD\s+0\.00 USD\s+0\.00 USD/);
    const tasks = await cli(dir, 'tasks');
    expect(tasks.out).toMatch(/BASIS/);
    // The simulator's three steps reported money; the render is made here, at no charge.
    expect(tasks.out.match(/\bbilled\b/g)).toHaveLength(3);
    expect(tasks.out.match(/\bnot charged\b/g)).toHaveLength(1);
  });
});
