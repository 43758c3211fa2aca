import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../main/db/migrator.ts';
import { STATUSES } from '../main/domain/tasks/model.ts';
import { freshDatabase, postgresAvailable, queryRows } from './helpers/postgres.ts';
import { tempDir } from './helpers/tmp.ts';

const BEFORE = 15;

/** Everything in the schema but the tasks table's own text, which is the one thing the migration changes. */
function schema(db: Database.Database): unknown[] {
  return db.prepare(`SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name <> 'tasks' ORDER BY type, name`).all();
}

/** A database at schema 15 with one task of every status, its dependencies, events, outputs and a take. */
function olderDatabase(): { db: Database.Database; path: string } {
  const path = join(tempDir(), 'studio.db');
  const db = new Database(path);
  db.pragma('foreign_keys = ON');
  migrate(db, loadMigrations().slice(0, BEFORE));
  db.prepare(`INSERT INTO projects (id, name, created_at) VALUES (1, 'fox', 1)`).run();
  const add = db.prepare(
    `INSERT INTO tasks (id, project_id, kind, provider, model, input_json, input_hash, status, charged, next_attempt_at,
       lease_owner, lease_expires_at, remote_request_id, remote_handle, cost_estimated, output_path, note, remote_alias, created_at, updated_at)
     VALUES (?, 1, ?, 'simulator', 'sim-image-1', '{"prompt":"a fox"}', ?, ?, ?, 5, ?, ?, ?, ?, 40000, ?, ?, ?, 1, 2)`,
  );
  STATUSES.forEach((status, i) => {
    const leased = status === 'RUNNING' || status === 'SUBMITTED';
    const sent = status !== 'PENDING' && status !== 'RUNNING';
    add.run(i + 1, i % 2 ? 'clip' : 'image', `hash-${i}`, status, sent ? 'maybe' : 'no', leased ? 'owner-1' : null, leased ? 99 : null,
      sent ? `req-${i}` : null, sent ? '{"status_url":"u"}' : null, status === 'SUCCEEDED' ? 'outputs/a.png' : null, `note ${i}`, sent ? `alias-${i}` : null);
  });
  db.prepare(`INSERT INTO task_dependencies (task_id, depends_on) VALUES (2, 1), (4, 1)`).run();
  db.prepare(`INSERT INTO task_events (task_id, at, to_status, actor, reason) VALUES (1, 1, 'PENDING', 'engine', 'enqueued'), (4, 2, 'SUCCEEDED', 'engine', 'done')`).run();
  db.prepare(`INSERT INTO task_outputs (task_id, idx, path, sha256) VALUES (4, 0, 'outputs/a.png', 'ab')`).run();
  db.prepare(
    `INSERT INTO takes (project_id, scene, take, variant, image_prompt, motion_prompt, duration, seed, image_task_id, clip_task_id, created_at)
     VALUES (1, 's1', 1, 1, 'a fox', 'runs', 3, 7, 4, 4, 1)`,
  ).run();
  return { db, path };
}

describe('migration 016: a task may be a storyboard draft', () => {
  it('keeps every task of every status, and every index, reference and trigger, and takes "draft"', () => {
    const { db, path } = olderDatabase();
    const rows = db.prepare('SELECT * FROM tasks ORDER BY id').all();
    const columns = db.prepare('SELECT * FROM pragma_table_info(?)').all('tasks');
    const others = schema(db);
    expect(() => db.prepare(`INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, next_attempt_at, created_at, updated_at) VALUES (1, 'draft', 'p', 'm', '{}', 'h', 1, 1, 1)`).run()).toThrow(/CHECK/);

    // Through 016 only: later migrations change other tables, and are checked by their own tests.
    migrate(db, loadMigrations().slice(0, BEFORE + 1));

    expect(db.pragma('user_version', { simple: true })).toBe(BEFORE + 1);
    expect(db.prepare('SELECT * FROM tasks ORDER BY id').all()).toEqual(rows);
    expect(db.prepare('SELECT * FROM pragma_table_info(?)').all('tasks')).toEqual(columns);
    expect(schema(db)).toEqual(others);
    expect(db.pragma('foreign_key_check')).toEqual([]);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    // Foreign keys are on again, and the tables that name tasks still reach the new one.
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(() => db.prepare(`INSERT INTO task_events (task_id, at, to_status, actor, reason) VALUES (99, 1, 'PENDING', 'engine', 'x')`).run()).toThrow(/FOREIGN KEY/);
    expect(() => db.prepare(`UPDATE task_events SET reason = 'x'`).run()).toThrow(/append-only/);
    db.prepare(`INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, next_attempt_at, created_at, updated_at) VALUES (1, 'draft', 'simulator', 'sim-draft-1', '{}', 'h', 1, 1, 1)`).run();
    expect(() => db.prepare(`INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, next_attempt_at, created_at, updated_at) VALUES (1, 'poem', 'p', 'm', '{}', 'h', 1, 1, 1)`).run()).toThrow(/CHECK/);
    db.close();

    // The same as a database made new today, but for the order the columns were added in.
    const fresh = new Database(join(tempDir(), 'fresh.db'));
    migrate(fresh, loadMigrations().slice(0, BEFORE + 1));
    const indexes = (d: Database.Database) => d.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tasks' ORDER BY name`).all();
    expect(indexes(new Database(path))).toEqual(indexes(fresh));
  });

  it('leaves a database untouched when a reference would break, and foreign keys on', () => {
    const { db } = olderDatabase();
    db.pragma('foreign_keys = OFF');
    db.prepare(`INSERT INTO task_dependencies (task_id, depends_on) VALUES (3, 77)`).run();
    db.pragma('foreign_keys = ON');
    expect(() => migrate(db, loadMigrations())).toThrow(/1 reference\(s\) to rows that are not there/);
    expect(db.pragma('user_version', { simple: true })).toBe(BEFORE);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.prepare(`SELECT count(*) AS n FROM tasks`).get()).toEqual({ n: STATUSES.length });
  });
});

describe.skipIf(!postgresAvailable)('PostgreSQL migration 009: a task may be a storyboard draft', () => {
  it('takes "draft" and still refuses a kind it does not know', async () => {
    const url = await freshDatabase();
    const [project] = await queryRows<{ id: number }>(url, `INSERT INTO projects (name, created_at) VALUES ('fox', 1) RETURNING id`);
    const insert = (kind: string) =>
      queryRows(url, `INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, next_attempt_at, created_at, updated_at) VALUES ($1, $2, 'simulator', 'm', '{}', 'h', 1, 1, 1)`, [project!.id, kind]);
    await insert('draft');
    await expect(insert('poem')).rejects.toThrow(/tasks_kind_check/);
  });
});
