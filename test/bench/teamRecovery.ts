import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalOutputStore } from '../../main/adapters/outputStore.ts';
import { ReceiptJournal } from '../../main/adapters/receiptJournal.ts';
import { recoverExpired } from '../../main/engine/recoverySweep.ts';
import { connect } from '../../main/store/postgres/connection.ts';
import { initTeamDatabase } from '../../main/store/postgres/migrator.ts';
import { openPostgresStore } from '../../main/store/postgres/store.ts';

/**
 * A team database left by a machine that is gone: `finished` done tasks, and `inFlight` leased by its owner
 * on another host, whose leases have run out by the database's clock. A third each: claimed only, inside the
 * send window, and submitted with a request id.
 */
async function seed(url: string, finished: number, inFlight: number): Promise<void> {
  await initTeamDatabase(url);
  const team = connect(url, { max: 1 });
  try {
    const now = Date.now();
    await team.sql.query(`INSERT INTO projects (name, created_at) VALUES ('Bench', $1)`, [now]);
    await team.sql.query(
      `INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, status, charged, next_attempt_at,
                          submit_started_at, idempotency_key, remote_request_id, submitted_at, cost_estimated, cost_actual,
                          output_path, output_sha256, progress, created_at, updated_at, finished_at)
       SELECT 1, (ARRAY['image', 'clip', 'speech'])[1 + i % 3], 'simulator', 'm', json_build_object('prompt', 'p' || i)::text, 'h' || i,
              'SUCCEEDED', 'yes', $1, $1, 'k' || i, 'r' || i, $1, 40000, 41000, '/media/' || i || '.png', repeat('f', 64), 1, $1, $1, $1
         FROM generate_series(1, $2::integer) i`,
      [now, finished],
    );
    await team.sql.query(
      `INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, status, charged, next_attempt_at,
                          lease_owner, lease_expires_at, heartbeat_at, submit_started_at, idempotency_key, remote_request_id,
                          submitted_at, attempts, cost_estimated, created_at, updated_at)
       SELECT 1, (ARRAY['image', 'clip', 'speech'])[1 + i % 3], 'simulator', 'm', json_build_object('prompt', 'live' || i)::text, 'live' || i,
              CASE WHEN i % 3 = 2 THEN 'SUBMITTED' ELSE 'RUNNING' END,
              (ARRAY['no', 'maybe', 'yes'])[1 + i % 3], $1, 'gone@other-host', db.ms - 1000, db.ms - 31000,
              CASE WHEN i % 3 = 0 THEN NULL ELSE $1::bigint END, CASE WHEN i % 3 = 0 THEN NULL ELSE 'k-live' || i END,
              CASE WHEN i % 3 = 2 THEN 'live' || i END, CASE WHEN i % 3 = 2 THEN $1::bigint END,
              CASE WHEN i % 3 = 0 THEN 0 ELSE 1 END, 40000, $1, $1
         FROM generate_series(0, $2::integer - 1) i, (SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS ms) db`,
      [now, inFlight],
    );
    await team.sql.query('ANALYZE');
  } finally {
    await team.end();
  }
}

/**
 * What a studio joining the team does at start-up for the work of an owner that is gone: the recovery sweep over
 * every row whose lease ran out, with this machine's receipt journal and saved results (none) as its evidence.
 */
export async function teamRecovery(url: string, finished: number, inFlight: number) {
  await seed(url, finished, inFlight);
  const dataDir = mkdtempSync(join(tmpdir(), 'studio-bench-'));
  const store = await openPostgresStore(url);
  try {
    const outputs = new LocalOutputStore(dataDir);
    const receipts = new ReceiptJournal(dataDir, store.databaseId);
    const start = performance.now();
    await recoverExpired(
      { repo: store.tasks, transaction: store.transaction, receipts, hasResult: (task) => outputs.has(task), pollable: () => true },
      Date.now(),
      new Set(),
      () => undefined,
    );
    const ms = performance.now() - start;
    const by: Record<string, number> = {};
    for (const c of await store.tasks.counts()) by[c.status] = (by[c.status] ?? 0) + c.n;
    const expected = { requeued: Math.ceil(inFlight / 3), parked: Math.ceil((inFlight - 1) / 3), toPoll: Math.ceil((inFlight - 2) / 3) };
    const got = { requeued: by.PENDING ?? 0, parked: by.OUTCOME_UNKNOWN ?? 0, toPoll: by.SUBMITTED ?? 0 };
    if (got.requeued !== expected.requeued || got.parked !== expected.parked || got.toPoll !== expected.toPoll) {
      throw new Error(`recovery left ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
    }
    return { ms: Number(ms.toFixed(1)), ...got };
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
