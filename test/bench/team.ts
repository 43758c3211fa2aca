import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { ClusterUnavailable, startCluster, type Cluster } from '../helpers/pgCluster.ts';
import { bossSide, ourSide, type Side } from './teamCycles.ts';
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
 * team.cyclesPerSec (our enqueue, claim and complete), pg-boss's send, fetch and complete on the same server, and
 * their ratio; team.paidCyclesPerSec, our whole paid cycle (the boundary write and the request id besides), and its
 * ratio to the same pg-boss figure; and team.recoveryMs. See teamCycles.ts for what makes the comparison fair. Each
 * runs RUNS times on one throwaway cluster, the median reported with its runs. A run of the cycles is JOBS jobs on
 * each side, in ROUNDS rounds, the sides taking turns to go first.
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
    const names = ['ours', 'paid', 'boss'] as const;
    const rates = { ours: [] as number[], paid: [] as number[], boss: [] as number[] };
    const batches = { ours: [] as number[], paid: [] as number[], boss: [] as number[] };
    const ratios: number[] = [];
    const paidRatios: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const sides: Side[] = [];
      try {
        sides.push(await ourSide(await freshDatabase(cluster), WORKERS, BATCH, 'equivalent'));
        sides.push(await ourSide(await freshDatabase(cluster), WORKERS, BATCH, 'paid'));
        sides.push(await bossSide(await freshDatabase(cluster), WORKERS, BATCH));
        const totals = sides.map(() => ({ seconds: 0, takes: 0, taken: 0 }));
        for (let round = 0; round < ROUNDS; round++) {
          for (let turn = 0; turn < sides.length; turn++) {
            const s = (round + turn) % sides.length;
            const done = await sides[s]!.cycles(JOBS / ROUNDS);
            totals[s]!.seconds += done.seconds;
            totals[s]!.takes += done.takes;
            totals[s]!.taken += done.taken;
          }
        }
        const rate = totals.map((t) => JOBS / t.seconds);
        names.forEach((name, i) => {
          rates[name].push(Math.round(rate[i]!));
          batches[name].push(Number((totals[i]!.taken / totals[i]!.takes).toFixed(2)));
        });
        ratios.push(Number((rate[0]! / rate[2]!).toFixed(3)));
        paidRatios.push(Number((rate[1]! / rate[2]!).toFixed(3)));
      } finally {
        await Promise.all(sides.map((side) => side.close()));
      }
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
      cyclesPerSec: median(rates.ours),
      cyclesRuns: rates.ours,
      bossCyclesPerSec: median(rates.boss),
      bossRuns: rates.boss,
      ratio: median(ratios),
      ratios,
      paidCyclesPerSec: median(rates.paid),
      paidRuns: rates.paid,
      paidRatio: median(paidRatios),
      paidRatios,
      ourBatch: median(batches.ours),
      paidBatch: median(batches.paid),
      bossBatch: median(batches.boss),
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
