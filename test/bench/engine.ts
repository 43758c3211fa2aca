import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyPragmas, openDatabase } from '../../main/db/database.ts';
import { loadMigrations } from '../../main/db/migrator.ts';
import { SqliteProjectStore } from '../../main/store/sqlite/projectStore.ts';
import { SqliteTaskStore } from '../../main/store/sqlite/taskStore.ts';

const LEASE = 30_000;

function freshDir(): string {
  return mkdtempSync(join(tmpdir(), 'studio-bench-'));
}

/** One task's life through the real SQLite store: enqueue, claim, mark, record, progress, complete. */
async function engineCycles(n: number): Promise<{ seconds: number; rowsWritten: number }> {
  const dir = freshDir();
  const db = openDatabase(join(dir, 'studio.db'));
  const repo = new SqliteTaskStore(db);
  const projectId = (await new SqliteProjectStore(db).ensure('Bench', 0)).id;
  const lease = (now: number) => ({ owner: 'bench', now });
  const changesBefore = db.prepare('SELECT total_changes() AS n').pluck().get() as number;
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const now = 1_000_000 + i;
    const { id } = await repo.enqueue(
      { projectId, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: `p${i}` } },
      now,
    );
    await repo.claim('image', 4, LEASE, lease(now));
    await repo.markSubmitStarted(id, `k${i}`, LEASE, lease(now));
    await repo.recordSubmitted(id, { requestId: `r${i}`, handle: null }, { cost: 40_000, source: 'quote' }, lease(now));
    await repo.saveProgress(id, 0.5, LEASE, lease(now));
    await repo.complete(id, { outputs: [{ path: `/m/${i}.png`, sha256: 'f'.repeat(64), bytes: 1, contentType: 'image/png' }], costActual: 41_000 }, lease(now));
  }
  const seconds = (performance.now() - start) / 1000;
  const rowsWritten = (db.prepare('SELECT total_changes() AS n').pluck().get() as number) - changesBefore;
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return { seconds, rowsWritten };
}

/** The same writes, in the same transactions, as bare prepared statements with the same pragmas. */
function bareCycles(n: number): number {
  const dir = freshDir();
  const db = new Database(join(dir, 'studio.db'));
  applyPragmas(db);
  for (const m of loadMigrations()) db.exec(m.sql);
  db.prepare(`INSERT INTO projects (name, created_at) VALUES ('Bench', 0)`).run();
  const ev = db.prepare(`INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json) VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const ins = db.prepare(
    `INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, next_attempt_at, created_at, updated_at)
     VALUES (1, 'image', 'simulator', 'sim-image-1', ?, ?, ?, ?, ?)`,
  );
  const claim = db.prepare(
    `UPDATE tasks SET lease_owner = 'bench', lease_expires_at = ?, heartbeat_at = ?, updated_at = ?, status = 'RUNNING'
      WHERE id = (SELECT id FROM tasks WHERE kind = 'image' AND status = 'PENDING' ORDER BY created_at, id LIMIT 1)`,
  );
  const mark = db.prepare(
    `UPDATE tasks SET submit_started_at = ?, attempts = attempts + 1, idempotency_key = ?, charged = 'maybe',
       lease_expires_at = ?, heartbeat_at = ?, updated_at = ? WHERE id = ? AND lease_owner = 'bench'`,
  );
  const record = db.prepare(
    `UPDATE tasks SET status = 'SUBMITTED', remote_request_id = ?, submitted_at = ?, charged = 'yes', cost_estimated = ?,
       updated_at = ? WHERE id = ? AND lease_owner = 'bench'`,
  );
  const progress = db.prepare(
    `UPDATE tasks SET progress = ?, lease_expires_at = ?, heartbeat_at = ?, updated_at = ? WHERE id = ? AND lease_owner = 'bench'`,
  );
  const complete = db.prepare(
    `UPDATE tasks SET status = 'SUCCEEDED', output_path = ?, output_sha256 = ?, cost_actual = ?, progress = 1,
       lease_owner = NULL, lease_expires_at = NULL, finished_at = ?, updated_at = ? WHERE id = ? AND lease_owner = 'bench'`,
  );
  const output = db.prepare(`INSERT INTO task_outputs (task_id, idx, path, sha256, bytes, content_type) VALUES (?, 0, ?, ?, 1, 'image/png')`);
  const tx = (fn: () => void) => db.transaction(fn).immediate();
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const now = 1_000_000 + i;
    let id = 0;
    tx(() => {
      id = Number(ins.run(JSON.stringify({ prompt: `p${i}` }), `h${i}`, now, now, now).lastInsertRowid);
      ev.run(id, now, null, 'PENDING', 'person', 'enqueued', null);
    });
    tx(() => {
      claim.run(now + LEASE, now, now);
      ev.run(id, now, 'PENDING', 'RUNNING', 'engine', 'claimed', '{"owner":"bench"}');
    });
    tx(() => {
      mark.run(now, `k${i}`, now + LEASE, now, now, id);
      ev.run(id, now, 'RUNNING', 'RUNNING', 'engine', 'submit started', null);
    });
    tx(() => {
      record.run(`r${i}`, now, 40_000, now, id);
      ev.run(id, now, 'RUNNING', 'SUBMITTED', 'engine', 'provider accepted the request', null);
    });
    progress.run(0.5, now + LEASE, now, now, id);
    tx(() => {
      complete.run(`/m/${i}.png`, 'f'.repeat(64), 41_000, now, now, id);
      output.run(id, `/m/${i}.png`, 'f'.repeat(64));
      ev.run(id, now, 'SUBMITTED', 'SUCCEEDED', 'engine', 'output saved', null);
    });
  }
  const seconds = (performance.now() - start) / 1000;
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return seconds;
}

export const COMMITS_PER_CYCLE = 6;

export async function benchEngine(cycles: number, rounds = 5) {
  // Interleave short rounds of the two loops so drift in the disk's sync time hits both alike.
  let engineSeconds = 0;
  let bareSeconds = 0;
  let rowsWritten = 0;
  for (let round = 0; round < rounds; round++) {
    const e = await engineCycles(cycles);
    rowsWritten = e.rowsWritten;
    engineSeconds += e.seconds;
    bareSeconds += bareCycles(cycles);
  }
  const engineRate = (cycles * rounds) / engineSeconds;
  const bareRate = (cycles * rounds) / bareSeconds;
  return {
    cycles: cycles * rounds,
    cyclesPerSec: Math.round(engineRate),
    bareCyclesPerSec: Math.round(bareRate),
    ratio: Number((engineRate / bareRate).toFixed(3)),
    writesPerCycle: COMMITS_PER_CYCLE,
    rowsWrittenPerCycle: Number((rowsWritten / cycles).toFixed(2)),
  };
}
