import { TeamDatabaseUnreachable } from '../store/postgres/errors.ts';
import { TablesChanged } from '../store/postgres/prepared.ts';

const codeOf = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
};

/**
 * SQLSTATEs of a team database that say nothing about the task: the connection (08), the server shutting
 * down or the database gone (57P01-57P04), resources (53), a lock wait that ran out (55P03), a transaction
 * ended by the server after the process stalled (25P03), and a deadlock or serialization failure, whose
 * transaction was rolled back whole (40P01, 40001).
 */
function postgresTransient(code: string): boolean {
  return /^(08|53)/.test(code) || /^57P0[1-4]$/.test(code) || ['55P03', '25P03', '40P01', '40001'].includes(code);
}

/**
 * A database error that says nothing about the task: locked by another program, disk full, I/O, a team
 * database out of reach (its connections lost are TeamDatabaseUnreachable too, see lostConnection), or a
 * transaction rolled back because another machine changed a table's columns under it (TablesChanged; the
 * connections that prepared against the old columns are renewed, so the next try can succeed).
 */
export function databaseUnavailable(err: unknown): boolean {
  if (err instanceof TeamDatabaseUnreachable || err instanceof TablesChanged) return true;
  const code = codeOf(err);
  if (code.startsWith('SQLITE_')) return !code.startsWith('SQLITE_CONSTRAINT') && code !== 'SQLITE_ERROR';
  return postgresTransient(code);
}

/** The database's trouble in words a person can act on; `database` names it ("the team database at …"). */
export function describeDatabaseError(err: unknown, database = 'the studio database'): string {
  const code = codeOf(err);
  const message = (err as Error | null)?.message ?? String(err);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'another program is holding the studio database locked';
  if (code === 'SQLITE_FULL') return 'the disk is full; free some space';
  if (code.startsWith('SQLITE_READONLY')) return 'the studio database cannot be written (read-only file or folder)';
  if (code.startsWith('SQLITE_')) return `the studio database cannot be written (${code}: ${message})`;
  if (err instanceof TeamDatabaseUnreachable) return `${database} cannot be reached: ${message.replace(/\.$/, '')}`;
  if (err instanceof TablesChanged) return `another machine's studio changed the columns of tables in ${database} under a write, which was rolled back and is made again on new connections`;
  if (/^57P0[1-3]$/.test(code)) return `${database} cannot be reached: its server is shutting down or restarting (${code}: ${message})`;
  if (code === '55P03') return `another machine or program is holding rows of ${database} locked`;
  if (code === '40P01' || code === '40001') return `a write to ${database} met another machine's on the same rows (${code}) and is made again`;
  if (code === '53100') return `${database} is out of disk space on its server; free some there`;
  if (code === '53300') return `${database} has too many connections open; close some, or raise its max_connections`;
  if (code.startsWith('53')) return `the server of ${database} is short of resources (${code}: ${message})`;
  if (databaseUnavailable(err)) return `${database} cannot be reached (${code ? `${code}: ` : ''}${message})`;
  return `${database} cannot be written (${code ? `${code}: ` : ''}${message})`;
}

/**
 * Whether the engine can write its database now. While it cannot, the engine claims nothing new, keeps
 * what it knows (request ids, results) in memory and on disk, retries, and says why; it resumes by itself.
 */
export class EngineHealth {
  private reason: string | null = null;
  private since: number | null = null;
  /** A pause no write can end, only a restart (see hold). */
  private heldFor: string | null = null;

  /**
   * `changed` hears when the engine pauses and resumes (the database connection waits less while paused);
   * `database` names the database in what is said.
   */
  constructor(
    private readonly log: (message: string) => void,
    private readonly changed: (paused: boolean) => void = () => undefined,
    private readonly database?: string,
  ) {}

  get paused(): { reason: string; since: number } | null {
    return this.reason === null ? null : { reason: this.reason, since: this.since! };
  }

  /** Why the engine is paused until a restart (see hold), or null. */
  get held(): string | null {
    return this.heldFor;
  }

  blocked(err: unknown, now: number): void {
    this.pause(describeDatabaseError(err, this.database), now);
  }

  /**
   * Pauses until the studio restarts: the database file was moved, deleted or replaced, and the connection still
   * writes to the file it opened, so a write that succeeds says nothing about the place the studio runs from.
   */
  hold(reason: string, now: number): void {
    this.heldFor = reason;
    this.pause(reason, now);
  }

  pause(reason: string, now: number): void {
    if (reason === this.reason || (this.heldFor !== null && reason !== this.heldFor)) return;
    if (this.reason === null) {
      this.since = now;
      this.changed(true);
    }
    this.reason = reason;
    this.log(`engine paused: ${reason}; retrying`);
  }

  clear(): void {
    if (this.reason === null || this.heldFor !== null) return;
    this.log(`engine resumed: the database can be written again`);
    this.reason = null;
    this.since = null;
    this.changed(false);
  }
}
