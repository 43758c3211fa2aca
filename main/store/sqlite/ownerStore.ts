import type { Db } from '../../db/database.ts';
import type { OwnerStore } from '../port.ts';

/**
 * The processes that hold leases, by machine and pid, so that at start-up the rows of a process on this
 * machine (by its id and boot, not its name) that no longer exists can be recovered at once.
 */
export class SqliteOwnerStore implements OwnerStore {
  constructor(private readonly db: Db) {}

  async register(owner: { id: string; hostname: string; machine: string; boot: string | null; pid: number }, now: number): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO lease_owners (id, hostname, machine_id, boot_id, pid, started_at, seen_at) VALUES (@id, @hostname, @machine, @boot, @pid, @now, @now)
         ON CONFLICT (id) DO UPDATE SET seen_at = @now`,
      )
      .run({ id: owner.id, hostname: owner.hostname, machine: owner.machine, boot: owner.boot, pid: owner.pid, now });
  }

  async onMachine(machine: string, boot: string): Promise<{ id: string; pid: number }[]> {
    return this.db.prepare(`SELECT id, pid FROM lease_owners WHERE machine_id = ? AND boot_id = ? ORDER BY id`).all(machine, boot) as { id: string; pid: number }[];
  }

  async remove(id: string): Promise<void> {
    this.db.prepare(`DELETE FROM lease_owners WHERE id = ?`).run(id);
  }

  /** One machine's file: its clock is the only one, so there is nothing to measure it against. */
  async checkClock(): Promise<null> {
    return null;
  }
}
