import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spendReport } from '../main/api/spendViews.ts';
import { moneyWords } from '../main/domain/money.ts';
import { toMicros } from '../main/domain/tasks/model.ts';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { openStudio } from '../main/studio.ts';
import { cli } from './helpers/cli.ts';
import { writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

let sim: RunningSimulator | undefined;
afterEach(async () => sim?.close());

describe('the spend view against the provider stand-in ledger', () => {
  it('every row and total is the ledger sum to the micro-unit, and the words say it exactly', async () => {
    // The simulator bills a little off its quote (simulator/server.ts), so its bills have sub-cent digits.
    sim = await startSimulator({ jobMs: 50 });
    const dir = tempDir();
    writeSettings(dir, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } } });
    const board = join(dir, 'board.json');
    const scene = (id: string, prompt: string) => ({ id, imagePrompt: prompt, motionPrompt: 'push in', narration: `${prompt}.`, duration: 1 });
    writeFileSync(board, JSON.stringify({ width: 320, height: 180, scenes: [scene('dawn', 'a fox asleep'), scene('noon', 'a heron fishing'), scene('dusk', 'an owl waking')] }));
    expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', board)).code).toBe(0);
    expect((await cli(dir, 'generate', 'Fox')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);

    const ledger = sim.charges.reduce((sum, c) => sum + c.billed, 0);
    expect(sim.charges).toHaveLength(9);
    expect(sim.charges.some((c) => c.billed % 10_000 !== 0)).toBe(true);

    const studio = await openStudio(dir);
    try {
      const report = await spendReport(studio.tasks, (await studio.projects.byName('Fox'))!);
      const micros = (n: number) => toMicros(n);
      expect(micros(report.simulated.actual)).toBe(ledger);
      expect(micros(report.totals.actual)).toBe(ledger);
      expect(report.rows.reduce((sum, r) => sum + micros(r.actual), 0)).toBe(ledger);
      for (const m of report.byModel) {
        const billed = sim.charges.filter((c) => c.model === m.model).reduce((sum, c) => sum + c.billed, 0);
        expect(micros(m.billed)).toBe(billed);
      }
    } finally {
      await studio.close();
    }

    const json = JSON.parse((await cli(dir, 'spend', '--project', 'Fox', '--json')).out) as { simulated: { actual: number } }[];
    expect(toMicros(json[0]!.simulated.actual)).toBe(ledger);
    // The words are exact: the ledger sum shows as it is, and each model's bill as the stand-in billed it.
    const shown = (await cli(dir, 'spend', '--project', 'Fox')).out;
    const exact = (micros: number) => (micros / 1e6).toFixed(6).replace(/0{1,4}$/, '');
    expect(moneyWords(ledger, 'USD')).toBe(`${exact(ledger)} USD`);
    expect(shown).toContain(`${exact(ledger)} USD (simulated)`);
    for (const model of new Set(sim.charges.map((c) => c.model))) {
      const billed = sim.charges.filter((c) => c.model === model).reduce((sum, c) => sum + c.billed, 0);
      expect(shown).toMatch(new RegExp(`simulator ${model} \\(simulated\\)\\s+3\\s+${moneyWords(billed, 'USD').replace('.', '\\.')}`));
    }
    expect(shown).toContain('the totals and the budget count it alike');
  });
});
