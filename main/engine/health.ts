/** A database error that says nothing about the task: locked by another program, disk full, I/O. */
export function databaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') && !code.startsWith('SQLITE_CONSTRAINT') && code !== 'SQLITE_ERROR';
}

/** The database's trouble in words a person can act on. */
export function describeDatabaseError(err: unknown): string {
  const code = String((err as { code?: unknown })?.code ?? '');
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'another program is holding the studio database locked';
  if (code === 'SQLITE_FULL') return 'the disk is full; free some space';
  if (code.startsWith('SQLITE_READONLY')) return 'the studio database cannot be written (read-only file or folder)';
  return `the studio database cannot be written (${code}: ${(err as Error).message})`;
}

/**
 * Whether the engine can write its database now. While it cannot, the engine claims nothing new, keeps
 * what it knows (request ids, results) in memory and on disk, retries, and says why; it resumes by itself.
 */
export class EngineHealth {
  private reason: string | null = null;
  private since: number | null = null;

  /** `changed` hears when the engine pauses and resumes (the database connection waits less while paused). */
  constructor(
    private readonly log: (message: string) => void,
    private readonly changed: (paused: boolean) => void = () => undefined,
  ) {}

  get paused(): { reason: string; since: number } | null {
    return this.reason === null ? null : { reason: this.reason, since: this.since! };
  }

  blocked(err: unknown, now: number): void {
    this.pause(describeDatabaseError(err), now);
  }

  pause(reason: string, now: number): void {
    if (reason === this.reason) return;
    if (this.reason === null) {
      this.since = now;
      this.changed(true);
    }
    this.reason = reason;
    this.log(`engine paused: ${reason}; retrying`);
  }

  clear(): void {
    if (this.reason === null) return;
    this.log(`engine resumed: the database can be written again`);
    this.reason = null;
    this.since = null;
    this.changed(false);
  }
}
