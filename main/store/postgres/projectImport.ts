import type { Row, TeamRows } from '../../domain/projectRows.ts';
import type { Sql } from './sql.ts';

/**
 * A project moved here from a studio's own database (studio team push): all of its rows in one transaction of the
 * caller's, with ids taken from this database's sequences. Rows go in as JSON records of each table's own type,
 * column by column, so every value arrives as it was kept.
 */

const TASK_COLUMNS = [
  'id', 'project_id', 'kind', 'provider', 'model', 'input_json', 'input_hash', 'status', 'charged', 'attempts', 'max_attempts',
  'next_attempt_at', 'lease_owner', 'lease_expires_at', 'heartbeat_at', 'submit_started_at', 'idempotency_key', 'remote_request_id', 'remote_alias',
  'remote_handle', 'submitted_at', 'progress', 'cost_estimated', 'cost_estimate_source', 'cost_actual', 'cost_actual_source',
  'cost_abandoned', 'currency', 'output_path', 'output_sha256', 'error', 'unknown_reason', 'note', 'created_at', 'updated_at', 'finished_at',
  'billed_units', 'billed_unit',
];
const EVENT_COLUMNS = ['id', 'task_id', 'at', 'from_status', 'to_status', 'actor', 'reason', 'detail_json'];
const OUTPUT_COLUMNS = ['task_id', 'idx', 'path', 'sha256', 'machine', 'bytes', 'content_type'];
const TAKE_COLUMNS = [
  'project_id', 'scene', 'take', 'variant', 'image_prompt', 'motion_prompt', 'narration', 'duration', 'seed',
  'image_task_id', 'clip_task_id', 'speech_task_id', 'created_at',
];
const PICK_COLUMNS = ['project_id', 'scene', 'take', 'picked_at'];
const DEPENDENCY_COLUMNS = ['task_id', 'depends_on'];

/** A project here, and the move that brought it, if any. */
export interface TeamProject {
  id: number;
  name: string;
  push_id: string | null;
}

export async function projectByName(sql: Sql, name: string): Promise<TeamProject | undefined> {
  const [row] = await sql.query<TeamProject>(`SELECT id, name, push_id FROM projects WHERE name = $1`, [name]);
  return row;
}

/** The project a move brought here, found again when the move is run a second time. */
export async function projectByPush(sql: Sql, pushId: string): Promise<TeamProject | undefined> {
  const [row] = await sql.query<TeamProject>(`SELECT id, name, push_id FROM projects WHERE push_id = $1`, [pushId]);
  return row;
}

export interface NewProject {
  name: string;
  budget: number | null;
  currency: string;
  created_at: number;
  push_id: string;
  pushed_from: string;
  pushed_at: number;
}

/** Inside a transaction: the project's row, returning its id here. */
export async function insertProject(tx: Sql, project: NewProject): Promise<number> {
  const [row] = await tx.query<{ id: number }>(
    `INSERT INTO projects (name, budget, currency, created_at, push_id, pushed_from, pushed_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [project.name, project.budget, project.currency, project.created_at, project.push_id, project.pushed_from, project.pushed_at],
  );
  return row!.id;
}

/** `n` new task ids, in increasing order, for rows inserted with them. */
export async function taskIds(tx: Sql, n: number): Promise<number[]> {
  const rows = await tx.query<{ id: number }>(`SELECT nextval(pg_get_serial_sequence('tasks', 'id')) AS id FROM generate_series(1, $1::int)`, [n]);
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

async function insertRows(tx: Sql, table: string, columns: string[], rows: Row[], overriding = false): Promise<void> {
  if (rows.length === 0) return;
  const list = columns.join(', ');
  await tx.query(
    `INSERT INTO ${table} (${list}) ${overriding ? 'OVERRIDING SYSTEM VALUE' : ''}
     SELECT ${list} FROM json_populate_recordset(NULL::${table}, $1::json)`,
    [JSON.stringify(rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c] ?? null]))))],
  );
}

/** Inside the transaction that inserted the project: everything else of it. The history stays append-only: events are only inserted. */
export async function insertRowsOf(tx: Sql, projectId: number, rows: TeamRows): Promise<void> {
  if (rows.storyboard) {
    await tx.query(`INSERT INTO storyboards (project_id, json, updated_at) VALUES ($1, $2, $3)`, [projectId, rows.storyboard.json, rows.storyboard.updated_at]);
  }
  await insertRows(tx, 'tasks', TASK_COLUMNS, rows.tasks, true);
  await insertRows(tx, 'task_dependencies', DEPENDENCY_COLUMNS, rows.dependencies);
  const eventIds = await tx.query<{ id: number }>(
    `SELECT nextval(pg_get_serial_sequence('task_events', 'id')) AS id FROM generate_series(1, $1::int)`,
    [rows.events.length],
  );
  const ordered = eventIds.map((r) => r.id).sort((a, b) => a - b);
  await insertRows(tx, 'task_events', EVENT_COLUMNS, rows.events.map((e, i) => ({ ...e, id: ordered[i] })), true);
  await insertRows(tx, 'task_outputs', OUTPUT_COLUMNS, rows.outputs);
  await insertRows(tx, 'takes', TAKE_COLUMNS, rows.takes);
  await insertRows(tx, 'take_picks', PICK_COLUMNS, rows.picks);
}
