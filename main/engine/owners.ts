import type { Db } from '../db/database.ts';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';

export interface OwnerIdentity {
  id: string;
  hostname: string;
  pid: number;
}

export function newOwner(): OwnerIdentity {
  const host = hostname();
  return { id: `${host}:${process.pid}:${randomBytes(4).toString('hex')}`, hostname: host, pid: process.pid };
}

/** True unless the process is certainly gone. A reused pid only delays recovery to the lease's end. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The processes that hold leases, by machine and pid, so that at start-up the rows of a process on this
 * machine that no longer exists can be recovered at once.
 */
export class OwnerRegistry {
  constructor(private readonly db: Db) {}

  register(owner: { id: string; hostname: string; pid: number }, now: number): void {
    this.db.prepare(
      `INSERT INTO lease_owners (id, hostname, pid, started_at, seen_at) VALUES (@id, @hostname, @pid, @now, @now)
       ON CONFLICT (id) DO UPDATE SET seen_at = @now`,
    ).run({ ...owner, now });
  }

  onHost(hostname: string): { id: string; pid: number }[] {
    return this.db.prepare(`SELECT id, pid FROM lease_owners WHERE hostname = ?`).all(hostname) as { id: string; pid: number }[];
  }

  remove(id: string): void {
    this.db.prepare(`DELETE FROM lease_owners WHERE id = ?`).run(id);
  }
}
