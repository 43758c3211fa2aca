import pg from 'pg';
import { checkTeamUrl, redactUrl, type TeamAddress } from './address.ts';
import { TeamDatabaseUnreachable } from './errors.ts';
import { explainConnectionError, lostConnection } from './connectionErrors.ts';
import { PreparedStatements, stalePlan, TablesChanged } from './prepared.ts';
import type { Sql } from './sql.ts';

const INT8 = 20;
const INT8_ARRAY = 1016;
const NUMERIC = 1700;

/** Times are milliseconds and money micro-units, always below 2^53: a BIGINT beyond that would be read wrong, so it is refused. */
function int8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`the team database returned ${text}, beyond the integers the studio reads exactly`);
  return n;
}

/** BIGINT as numbers; NUMERIC too, which is what sum() and avg() of BIGINT columns return. */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (format === 'binary') return pg.types.getTypeParser(oid, 'binary');
    if (oid === INT8) return int8;
    if (oid === NUMERIC) return Number;
    if (oid === INT8_ARRAY) {
      const parseArray = (pg.types.getTypeParser as (oid: number, format: 'text') => (text: string) => (string | null)[])(INT8_ARRAY, 'text');
      return (text: string) => parseArray(text).map((n) => (n === null ? null : int8(n)));
    }
    return pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** How long a statement waits for another machine's lock before it gives up, unless told otherwise. */
export const LOCK_TIMEOUT_MS = 5_000;

/** A connection that has not answered in this long is given up, so an unreachable host is said, not waited on. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * A transaction left open by a process that stopped (suspended, or its machine asleep) would hold its row and
 * advisory locks from every other machine; the server ends it after this long, and nothing of it is committed.
 * No transaction of the studio idles between its statements anywhere near this long.
 */
const IDLE_IN_TRANSACTION_MS = 15_000;

export interface TeamPool {
  pool: pg.Pool;
  sql: Sql;
  address: TeamAddress;
  /** The address without its password. */
  where: string;
  /** How long a statement waits for a lock held elsewhere; null restores the default. */
  waitForLocks(ms: number | null): void;
  /** Closes the pool; again is a no-op. */
  end(): Promise<void>;
}

/**
 * A pool of connections to the team database at `url`. Nothing connects until the first statement; a failure to
 * connect then arrives as TeamDatabaseUnreachable, worded.
 */
export function connect(url: string, options: { max?: number } = {}): TeamPool {
  const address = checkTeamUrl(url);
  const where = redactUrl(url);
  const settings = new LockWait(LOCK_TIMEOUT_MS);
  const prepared = new PreparedStatements();
  const pool = new pg.Pool({
    connectionString: url,
    types,
    max: options.max ?? 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    lock_timeout: LOCK_TIMEOUT_MS,
    // A boundary write must be on disk before the studio sends what it marks: a server tuned with
    // synchronous_commit=off would report it done first and lose it in a crash (see durability.ts).
    options: '-c synchronous_commit=on',
    keepAlive: true,
    fallback_application_name: 'studio',
  });
  // An idle connection the server closed (a restart, a network drop) is dropped by the pool; the next statement
  // opens another. Without a listener the error would end the process.
  pool.on('error', () => undefined);
  // A connection cut while taken (its statement is under way) says so twice: the statement fails, which the
  // caller hears, and the connection emits an error, which would otherwise end the process.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    settings.connected(client);
    prepared.connected(client);
  });
  let ended: Promise<void> | null = null;
  return {
    pool,
    sql: pooled(pool, { address, settings, prepared }),
    address,
    where,
    waitForLocks: (ms) => settings.set(ms ?? LOCK_TIMEOUT_MS),
    end: () => (ended ??= pool.end()),
  };
}

/**
 * The lock wait every connection carries. A connection starts with the one the pool was made with; a changed
 * one is set on each connection as it is next taken.
 */
export class LockWait {
  private version = 0;
  private readonly applied = new WeakMap<pg.ClientBase, number>();

  constructor(private ms: number) {}

  /** A new connection, which has the pool's first lock wait. */
  connected(client: pg.ClientBase): void {
    this.applied.set(client, 0);
  }

  set(ms: number): void {
    if (ms === this.ms) return;
    this.ms = ms;
    this.version += 1;
  }

  async apply(client: pg.PoolClient): Promise<void> {
    if (this.applied.get(client) === this.version) return;
    const version = this.version;
    await client.query(`SET lock_timeout = ${Math.max(0, Math.round(this.ms))}`);
    this.applied.set(client, version);
  }
}

/**
 * What a pool of the studio's own knows besides its connections: the address for messages, the lock wait and the
 * statements its connections prepared.
 */
export interface PoolContext {
  address: TeamAddress;
  settings: LockWait;
  prepared: PreparedStatements;
}

/**
 * A connection of the pool, with this pool's lock wait; one whose prepared statements may read tables whose
 * columns changed is closed instead. A connection lost meanwhile is said as TeamDatabaseUnreachable.
 */
async function take(pool: pg.Pool, context?: PoolContext): Promise<pg.PoolClient> {
  let client: pg.PoolClient;
  for (;;) {
    try {
      client = await pool.connect();
    } catch (err) {
      const words = context && explainConnectionError(err, context.address);
      if (!words) throw err;
      throw new TeamDatabaseUnreachable(words, String((err as { code?: unknown }).code ?? 'ECONNECT'));
    }
    if (!context?.prepared.stale(client)) break;
    client.release(true);
  }
  if (context) {
    try {
      await context.settings.apply(client);
    } catch (err) {
      client.release(err as Error);
      throw lostConnection(err, context.address) ?? err;
    }
  }
  return client;
}

/**
 * A statement on `client`, prepared when it has parameters (see PreparedStatements). A lost connection is said as
 * TeamDatabaseUnreachable (see lostConnection). A prepared statement refused because its table changed has the
 * pool's connections renewed, and in a transaction is said as TablesChanged.
 */
async function run<R>(client: pg.ClientBase, text: string, params: readonly unknown[] | undefined, context?: PoolContext, inTransaction = false): Promise<R[]> {
  try {
    const statement = context && params && params.length > 0 ? context.prepared.statement(text, params) : { text, values: params as unknown[] };
    // A text of several statements (no parameters) answers with each one's result: the last one's rows are its answer.
    const result = (await client.query(statement)) as pg.QueryResult | pg.QueryResult[];
    return (Array.isArray(result) ? result[result.length - 1]! : result).rows as R[];
  } catch (err) {
    if (context && stalePlan(err)) {
      context.prepared.changedUnder(client);
      if (inTransaction) throw new TablesChanged(err);
    }
    throw (context && lostConnection(err, context.address)) ?? err;
  }
}

/** Statements on one connection, in its transaction; a transaction opened within one runs on that same connection. */
function onClient(client: pg.ClientBase, context?: PoolContext): Sql {
  const sql: Sql = {
    query: <R>(text: string, params?: readonly unknown[]) => run<R>(client, text, params, context, true),
    tx: (fn) => fn(sql),
  };
  return sql;
}

/**
 * The Sql port over a pool: each statement on a connection of its own, and run once more on a new connection if a
 * table it reads changed its columns since it was prepared there (see PreparedStatements); each transaction on one
 * connection from BEGIN to COMMIT (ROLLBACK when its function throws). The connection always goes back to the
 * pool; one whose ROLLBACK failed is closed instead, as its state is unknown.
 */
export function pooled(pool: pg.Pool, context?: PoolContext): Sql {
  return {
    query: async <R>(text: string, params?: readonly unknown[]) => {
      for (let again = false; ; again = true) {
        const client = await take(pool, context);
        let broken: Error | undefined;
        try {
          return await run<R>(client, text, params, context);
        } catch (err) {
          if (!(err instanceof pg.DatabaseError)) broken = err as Error;
          else if (stalePlan(err)) {
            // Refused before it did anything: made again once, on a connection that prepares it afresh.
            broken = err;
            if (!again) continue;
          }
          throw err;
        } finally {
          client.release(broken);
        }
      }
    },
    tx: async (fn) => {
      const client = await take(pool, context);
      let broken: Error | undefined;
      try {
        await run(client, 'BEGIN', undefined, context);
        const result = await fn(onClient(client, context));
        await run(client, 'COMMIT', undefined, context);
        return result;
      } catch (err) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackFailed) {
          broken = rollbackFailed as Error;
        }
        throw err;
      } finally {
        client.release(broken);
      }
    },
  };
}
