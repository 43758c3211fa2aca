import PgBoss from 'pg-boss';
import { connect } from '../../main/store/postgres/connection.ts';
import { initTeamDatabase } from '../../main/store/postgres/migrator.ts';
import { PostgresProjectStore } from '../../main/store/postgres/projectStore.ts';
import { PostgresTaskStore } from '../../main/store/postgres/taskStore.ts';

/**
 * Team task cycles on one PostgreSQL server: our task store against pg-boss doing the equivalent work.
 *
 * What makes the comparison fair:
 * - the same server, the same run, each side in a database of its own, in short rounds taken in turn, so that
 *   drift in the machine's load falls on both;
 * - `workers` workers on each side, each a "machine" with its own connection pool (our store's pool and a pg-boss
 *   instance each, both at their default size), working one job at a time;
 * - the same number of jobs, enqueued by the workers themselves, `batch` at a time, one call per job;
 * - the same batch per claim: a pg-boss worker fetches `batch` jobs; our claim takes the free slots of a kind
 *   whose concurrency, counted across every machine, is `workers` x `batch`, so both hold at most that many jobs
 *   in flight across the team (the average claimed is reported);
 * - each job is settled on its own on both sides, as each paid task finishes at its own time;
 * - durable defaults on both: every write of ours is committed when its promise resolves, pg-boss keeps its default
 *   queue and retention, and the server syncs every commit (see team.ts).
 *
 * The same work as pg-boss's (send, fetch, complete) is our enqueue, claim and complete: that is what `equivalent`
 * runs, each write with its event in task_events as our store always writes it, the completion with its output
 * linked. The `paid` cycle is the writes the engine really makes per paid task, two more than pg-boss makes: the
 * boundary write before the request leaves (fenced by the lease) and the provider's request id recorded, between
 * the claim and the completion. The project has no budget; with one, each boundary write also sums the project's
 * spend, one machine after another.
 */

const LEASE_MS = 60_000;

/** Seconds taken for a number of jobs, and how many jobs the claims or fetches that found any took. */
export interface CycleRound {
  seconds: number;
  takes: number;
  taken: number;
}

/** One side of the comparison, its workers connected: `cycles` runs jobs through it, as often as asked. */
export interface Side {
  cycles(jobs: number): Promise<CycleRound>;
  close(): Promise<void>;
}

interface Worker {
  enqueue(n: number): Promise<void>;
  take(): Promise<number>;
}

/** Runs the workers until `jobs` jobs are done, handing out the jobs to enqueue `batch` at a time. */
async function cycles(workers: readonly Worker[], jobs: number, batch: number): Promise<CycleRound> {
  let toEnqueue = jobs;
  let done = 0;
  let takes = 0;
  let taken = 0;
  const loop = async (worker: Worker) => {
    while (done < jobs) {
      const n = Math.min(batch, toEnqueue);
      toEnqueue -= n;
      if (n > 0) await worker.enqueue(n);
      const got = await worker.take();
      if (got > 0) {
        takes += 1;
        taken += got;
      } else {
        // Everything is enqueued and the other workers hold what is left.
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      done += got;
    }
  };
  const start = performance.now();
  await Promise.all(workers.map(loop));
  const seconds = (performance.now() - start) / 1000;
  if (done !== jobs) throw new Error(`${done} jobs were done of ${jobs}`);
  return { seconds, takes, taken };
}

/** Our task store: `workers` machines on one task table, each with its own pool, running the equivalent or the paid cycle. */
export async function ourSide(url: string, workers: number, batch: number, cycle: 'equivalent' | 'paid'): Promise<Side> {
  await initTeamDatabase(url);
  const pools = Array.from({ length: workers }, () => connect(url));
  const projectId = (await new PostgresProjectStore(pools[0]!.sql).ensure('Bench', Date.now())).id;
  let serial = 0;
  const team = pools.map((pool, w): Worker => {
    const tasks = new PostgresTaskStore(pool.sql, `bench-${w}`);
    const lease = () => ({ owner: `bench-${w}`, now: Date.now() });
    return {
      enqueue: async (n) => {
        for (let i = 0; i < n; i++) {
          const input = { prompt: `p${serial++}` };
          const estimate = { cost: 40_000, source: 'catalogue', currency: 'USD' };
          await tasks.enqueue({ projectId, kind: 'image', provider: 'simulator', model: 'sim-image-1', input, estimate }, Date.now());
        }
      },
      take: async () => {
        const claimed = await tasks.claim('image', workers * batch, LEASE_MS, lease());
        for (const { id } of claimed) {
          if (cycle === 'paid') {
            if ('refused' in (await tasks.markSubmitStarted(id, `k${id}`, LEASE_MS, lease()))) throw new Error(`task ${id}: the boundary write was refused`);
            if (!(await tasks.recordSubmitted(id, { requestId: `r${id}`, handle: null }, { cost: 40_000, source: 'quote' }, lease()))) {
              throw new Error(`task ${id}: the request id was not recorded`);
            }
          }
          const output = { path: `/media/${id}.png`, sha256: 'f'.repeat(64), bytes: 1, contentType: 'image/png' };
          if (!(await tasks.complete(id, { outputs: [output], costActual: 41_000 }, lease()))) throw new Error(`task ${id}: not completed`);
        }
        return claimed.length;
      },
    };
  });
  return { cycles: (jobs) => cycles(team, jobs, batch), close: async () => void (await Promise.all(pools.map((p) => p.end()))) };
}

/** pg-boss: `workers` instances on one queue, each with its own pool; send, fetch a batch, complete each job. */
export async function bossSide(url: string, workers: number, batch: number): Promise<Side> {
  const bosses: PgBoss[] = [];
  const close = async () => void (await Promise.all(bosses.map((b) => b.stop({ graceful: false }))));
  try {
    for (let w = 0; w < workers; w++) {
      const boss = new PgBoss(url);
      boss.on('error', (err) => console.error(`pg-boss: ${String(err)}`));
      bosses.push(await boss.start());
    }
    await bosses[0]!.createQueue('image');
  } catch (err) {
    await close();
    throw err;
  }
  let serial = 0;
  const team = bosses.map(
    (boss): Worker => ({
      enqueue: async (n) => {
        for (let i = 0; i < n; i++) if (!(await boss.send('image', { prompt: `p${serial++}` }))) throw new Error('pg-boss did not create a job');
      },
      take: async () => {
        const fetched = await boss.fetch<{ prompt: string }>('image', { batchSize: batch });
        for (const { id } of fetched) {
          const result = await boss.complete('image', id, { path: `/media/${id}.png` });
          // Typed as void, the response says how many jobs it settled (mapCommandResponse, src/manager.js).
          if ((result as unknown as { affected?: number }).affected !== 1) throw new Error(`pg-boss job ${id}: not completed`);
        }
        return fetched.length;
      },
    }),
  );
  return { cycles: (jobs) => cycles(team, jobs, batch), close };
}
