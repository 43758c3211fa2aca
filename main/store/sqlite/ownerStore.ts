import type { Db } from '../../db/database.ts';
import type { OwnerStore } from '../port.ts';

/**
 * The processes that hold leases, by machine and pid, so that at start-up the rows of a process on this
 * machine that no longer exists can be recovered at once.
 */
export class SqliteOwnerStore implements OwnerStore {
  constructor(private readonly db: Db) {}

  async register(owner: { id: string; hostname: string; pid: number }, now: number): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO lease_owners (id, hostname, pid, started_at, seen_at) VALUES (@id, @hostname, @pid, @now, @now)
         ON CONFLICT (id) DO UPDATE SET seen_at = @now`,
      )
      .run({ id: owner.id, hostname: owner.hostname, pid: owner.pid, now });
  }

  async onHost(hostname: string): Promise<{ id: string; pid: number }[]> {
    return this.db.prepare(`SELECT id, pid FROM lease_owners WHERE hostname = ?`).all(hostname) as { id: string; pid: number }[];
  }

  async remove(id: string): Promise<void> {
    this.db.prepare(`DELETE FROM lease_owners WHERE id = ?`).run(id);
  }
}
