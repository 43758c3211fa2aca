import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { ClusterUnavailable, startCluster, type Cluster } from '../helpers/pgCluster.ts';
import { bossSide, ourSide } from './teamCycles.ts';
import { teamRecovery } from './teamRecovery.ts';

const WORKERS = 4;
const JOBS = 2_000;
const ROUNDS = 5;
const BATCH = 10;
const FINISHED = 100_000;
const IN_FLIGHT = 1_000;
const RUNS = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function asAdmin<T>(cluster: Cluster, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: cluster.url() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * The throwaway cluster skips syncing to disk, which suits tests; a team database syncs every commit, and both
 * libraries count on it, so the benchmark turns syncing back on.
 */
async function durableServer(cluster: Cluster): Promise<void> {
  await asAdmin(cluster, async (admin) => {
    for (const setting of ['fsync = on', 'synchronous_commit = on', 'full_page_writes = on']) await admin.query(`ALTER SYSTEM SET ${setting}`);
    await admin.query('SELECT pg_reload_conf()');
    // The reload is signalled, not awaited: wait until a new session sees it.
    for (let tries = 0; ; tries++) {
      const [row] = (await admin.query<{ fsync: string }>('SELECT current_setting($1) AS fsync', ['fsync'])).rows;
      if (row?.fsync === 'on') return;
      if (tries === 50) throw new Error('the benchmark cluster did not turn fsync on');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
}

let databases = 0;
async function freshDatabase(cluster: Cluster): Promise<string> {
  const name = `bench_${++databases}`;
  await asAdmin(cluster, (admin) => admin.query(`CREATE DATABASE ${name}`));
  return cluster.url(name);
}

/**
 * team.cyclesPerSec, pg-boss's on the same server and their ratio (see teamCycles.ts for what makes it fair), and
 * team.recoveryMs; each run RUNS times on one throwaway cluster, the median reported with its runs. A run of the
 * cycles is JOBS jobs on each side, in ROUNDS rounds taken in turn.
 */
export async function benchTeam() {
  let cluster: Cluster;
  try {
    cluster = await startCluster();
  } catch (err) {
    if (err instanceof ClusterUnavailable) return { skipped: `PostgreSQL could not start (${err.message})` };
    throw err;
  }
  try {
    await durableServer(cluster);
    const ourRates: number[] = [];
    const bossRates: number[] = [];
    const ratios: number[] = [];
    const ourBatches: number[] = [];
    const bossBatches: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const sides = [await ourSide(await freshDatabase(cluster), WORKERS, BATCH)];
      try {
        sides.push(await bossSide(await freshDatabase(cluster), WORKERS, BATCH));
      } catch (err) {
        await sides[0]!.close();
        throw err;
      }
      const totals = sides.map(() => ({ seconds: 0, takes: 0, taken: 0 }));
      try {
        for (let round = 0; round < ROUNDS; round++) {
          // Each side goes first in turn.
          for (const s of round % 2 === 0 ? [0, 1] : [1, 0]) {
            const done = await sides[s]!.cycles(JOBS / ROUNDS);
            totals[s]!.seconds += done.seconds;
            totals[s]!.takes += done.takes;
            totals[s]!.taken += done.taken;
          }
        }
      } finally {
        await Promise.all(sides.map((side) => side.close()));
      }
      const [a, b] = totals.map((t) => JOBS / t.seconds);
      ourRates.push(Math.round(a!));
      bossRates.push(Math.round(b!));
      ratios.push(Number((a! / b!).toFixed(3)));
      ourBatches.push(Number((totals[0]!.taken / totals[0]!.takes).toFixed(2)));
      bossBatches.push(Number((totals[1]!.taken / totals[1]!.takes).toFixed(2)));
    }
    const recovery: number[] = [];
    let outcome = { requeued: 0, parked: 0, toPoll: 0 };
    for (let run = 0; run < RUNS; run++) {
      const { ms, ...left } = await teamRecovery(await freshDatabase(cluster), FINISHED, IN_FLIGHT);
      recovery.push(ms);
      outcome = left;
    }
    return {
      workers: WORKERS,
      jobs: JOBS,
      batch: BATCH,
      cyclesPerSec: median(ourRates),
      cyclesRuns: ourRates,
      bossCyclesPerSec: median(bossRates),
      bossRuns: bossRates,
      ratio: median(ratios),
      ratios,
      ourBatch: median(ourBatches),
      bossBatch: median(bossBatches),
      finished: FINISHED,
      inFlight: IN_FLIGHT,
      recoveryMs: median(recovery),
      recoveryRuns: recovery,
      ...outcome,
    };
  } finally {
    cluster.stop();
  }
}

// `npx tsx test/bench/team.ts` prints the team figures alone, as JSON.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) console.log(JSON.stringify(await benchTeam()));
