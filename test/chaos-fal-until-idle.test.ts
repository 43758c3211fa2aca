import { describe, expect, it } from 'vitest';
import { chaosFal, chaosOutcome, expectPaidOnce, keepFigures, killWorkerAtRandom } from './helpers/chaosFal.ts';
import { runStudio } from './helpers/processes.ts';
import { sqlOf } from './helpers/sql.ts';

const SEED = Number(process.env.CHAOS_SEED ?? 20261201);
const TASKS = 40;
/** Worker processes SIGKILLed at random before the last run, at most. */
const KILLS = 4;

/**
 * A CLI run ends with `worker --until-idle`: before it returns it looks up every unknown outcome once, due or not,
 * so what the app would adopt a minute later is adopted and collected now. Against a fal stand-in that lists a
 * request once it has ended, with the studio's own lookup schedule (one every 30 s): workers SIGKILLed at random,
 * answers dropped after the request was queued. The figure is the share of tasks that still need a person when
 * the run returns.
 */
describe('chaos against fal, then worker --until-idle', () => {
  it('leaves at most 10 % of the tasks to a person when it returns, and pays for no prompt twice', async () => {
    const chaos = await chaosFal({ seed: SEED, tasks: TASKS });
    const { ledger, fake, dataDir, env, studio } = chaos;
    const db = sqlOf(dataDir);
    const active = () => db.prepare(`SELECT count(*) FROM tasks WHERE status IN ('PENDING', 'RUNNING', 'SUBMITTED')`).pluck().get() as number;

    const started = Date.now();
    let kills = 0;
    while (active() > 0 && kills < KILLS) {
      await killWorkerAtRandom(chaos);
      kills++;
    }
    const unknownBeforeLastRun = db.prepare(`SELECT count(*) FROM tasks WHERE status = 'OUTCOME_UNKNOWN'`).pluck().get() as number;
    const last = await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect(last.code, last.stderr).toBe(0);

    const outcome = await chaosOutcome(studio, fake, ledger);
    const { tasks, events, everUnknown, adopted, needPerson } = outcome;
    const figures = {
      seed: SEED,
      tasks: tasks.length,
      kills,
      charges: ledger.charged.length,
      answersDropped: chaos.drops.count,
      everUnknown: everUnknown.length,
      unknownBeforeLastRun,
      adoptedByStudio: adopted.length,
      needPerson: needPerson.length,
      shareOfTasksNeedingPerson: Number((needPerson.length / tasks.length).toFixed(3)),
      needPersonWhy: needPerson.map((t) => events.get(t.id)!.at(-1)!.reason),
      succeeded: tasks.filter((t) => t.status === 'SUCCEEDED').length,
      seconds: Math.round((Date.now() - started) / 1000),
    };
    keepFigures('chaos-fal-until-idle.json', 'chaos against fal, then worker --until-idle', figures);

    expectPaidOnce(outcome);
    expect(tasks.filter((t) => ['PENDING', 'RUNNING', 'SUBMITTED'].includes(t.status))).toEqual([]);
    expect(figures.shareOfTasksNeedingPerson).toBeLessThanOrEqual(0.1);
  }, 300_000);
});
