import { describe, expect, it } from 'vitest';
import { chaosFal, chaosOutcome, expectPaidOnce, keepFigures, killWorkerAtRandom } from './helpers/chaosFal.ts';
import { startStudio } from './helpers/processes.ts';
import { sqlOf } from './helpers/sql.ts';
import type { Task } from '../main/domain/tasks/model.ts';

const SEED = Number(process.env.CHAOS_SEED ?? 20261130);
const TASKS = 120;

/**
 * Unknown outcomes against a fal stand-in, measured: worker processes SIGKILLed at random (some inside the send
 * window), and answers dropped after the request was queued. The studio looks each one up in fal's request history
 * by itself and adopts exactly the request it sent; the figure is the share of those whose request fal received
 * that still need a person. The stand-in lists a request only once it has ended (the narrow reading of fal's docs),
 * so the first lookups of a request still queued find nothing and are made again.
 *
 * A kill between the send's mark and the request reaching fal leaves nothing any lookup could find: the studio
 * rightly looks until the request would surely be listed, then asks. How many kills land there depends on the
 * machine, not the studio: on a loaded one that stretch widens while the answer's delay stays 150 ms (a run at
 * load 6 had 4 of its 22 unknowns never received, all 4 still looked for or asked "most likely never accepted").
 */
describe('chaos against fal: unknown outcomes resolved by lookups', () => {
  it('leaves fewer than 10 % of the unknown outcomes fal received to a person, adopts no other request, pays once', async () => {
    const chaos = await chaosFal({
      seed: SEED,
      tasks: TASKS,
      // A request's time in fal's queue here is seconds: a request never accepted is known as such soon after.
      lookup: { intervalMs: 1_000, tries: 10, queueMs: 2_000 },
    });
    const { ledger, fake, dataDir, env, studio } = chaos;
    // Work that will still move by itself: active rows, and unknown outcomes whose lookups have not yet ended in a question.
    const db = sqlOf(dataDir);
    const moving = () =>
      db
        .prepare(
          `SELECT count(*) FROM tasks t WHERE status IN ('PENDING', 'RUNNING', 'SUBMITTED')
              OR (status = 'OUTCOME_UNKNOWN' AND NOT EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = t.id
                    AND e.at >= t.finished_at AND json_extract(e.detail_json, '$.verdict') = 'ask'))`,
        )
        .pluck()
        .get() as number;

    const started = Date.now();
    let kills = 0;
    while (moving() > 0 && Date.now() - started < 120_000) {
      await killWorkerAtRandom(chaos);
      kills++;
    }
    // A last worker with no kill finishes the lookups and polls still under way.
    const last = startStudio(dataDir, ['worker'], env);
    const end = Date.now() + 60_000;
    while (moving() > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
    last.child.kill('SIGTERM');
    await last.exited;

    const outcome = await chaosOutcome(studio, fake, ledger);
    const { tasks, events, everUnknown, adopted, needPerson, neverReceived } = outcome;
    const unreceived = new Set(neverReceived.map((t) => t.id));
    const received = everUnknown.filter((t) => !unreceived.has(t.id));
    const receivedNeedPerson = needPerson.filter((t) => !unreceived.has(t.id));
    const lastReason = (id: number) => events.get(id)!.at(-1)!.reason;
    const held = new Set(tasks.map((t) => t.remoteRequestId));
    const figures = {
      seed: SEED,
      tasks: tasks.length,
      kills,
      charges: ledger.charged.length,
      answersDropped: chaos.drops.count,
      everUnknown: everUnknown.length,
      adoptedByStudio: adopted.length,
      lookupsBeforeAdoption: adopted.map((t) => (events.get(t.id)!.find((e) => e.reason.startsWith('adopted by the studio'))!.detail as { lookups: number }).lookups),
      needPerson: needPerson.length,
      neverReceivedByFal: neverReceived.length,
      shareOfUnknownsNeedingPerson: Number((needPerson.length / Math.max(1, everUnknown.length)).toFixed(3)),
      shareOfReceivedUnknownsNeedingPerson: Number((receivedNeedPerson.length / Math.max(1, received.length)).toFixed(3)),
      shareOfAllTasksNeedingPerson: Number((needPerson.length / tasks.length).toFixed(3)),
      needPersonWhy: needPerson.map((t) => `${unreceived.has(t.id) ? 'never received by fal' : 'received by fal'}: ${lastReason(t.id)}`),
      succeeded: tasks.filter((t) => t.status === 'SUCCEEDED').length,
      seconds: Math.round((Date.now() - started) / 1000),
    };
    keepFigures('chaos-fal.json', 'chaos against fal', figures);

    expectPaidOnce(outcome);
    // Every request fal charged is held by a task, or waits with a person's decision.
    expect(ledger.charged.filter((id) => !held.has(id)).length).toBeLessThanOrEqual(needPerson.length);
    expect(tasks.filter((t) => ['PENDING', 'RUNNING', 'SUBMITTED'].includes(t.status))).toEqual([]);
    expect(figures.shareOfReceivedUnknownsNeedingPerson).toBeLessThan(0.1);
    // A request fal never received is never adopted, and left to a person only as "most likely never accepted".
    const askedOtherwise = (t: Task) =>
      (events.get(t.id)!.at(-1)!.detail as { verdict?: string } | null)?.verdict === 'ask' && !/: it was most likely never accepted; it needs your decision$/.test(lastReason(t.id));
    expect(neverReceived.filter((t) => t.status !== 'OUTCOME_UNKNOWN' || askedOtherwise(t)).map((t) => [t.id, t.status, lastReason(t.id)])).toEqual([]);
  }, 300_000);
});
