import type { OwnerStore } from '../port.ts';
import type { Sql } from './sql.ts';

/**
 * The processes that hold leases, by machine and pid. A machine recovers at once the rows of its own processes
 * that no longer exist (onMachine, by the machine's id and boot: two computers may share a name, and a copied data
 * folder an id); another machine's owners are never judged by pid here, only by their leases' expiry on the
 * database's clock.
 */
export class PostgresOwnerStore implements OwnerStore {
  constructor(private readonly sql: Sql) {}

  async register(owner: { id: string; hostname: string; machine: string; boot: string | null; pid: number }, now: number): Promise<void> {
    await this.sql.query(
      `INSERT INTO lease_owners (id, hostname, machine_id, boot_id, pid, started_at, seen_at) VALUES ($1, $2, $3, $4, $5, $6, $6)
       ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`,
      [owner.id, owner.hostname, owner.machine, owner.boot, owner.pid, now],
    );
  }

  async onMachine(machine: string, boot: string): Promise<{ id: string; pid: number }[]> {
    return this.sql.query<{ id: string; pid: number }>(`SELECT id, pid FROM lease_owners WHERE machine_id = $1 AND boot_id = $2 ORDER BY id`, [machine, boot]);
  }

  async remove(id: string): Promise<void> {
    await this.sql.query(`DELETE FROM lease_owners WHERE id = $1`, [id]);
  }

  /**
   * Reads the database's clock between two readings of this machine's, twice, and keeps the reading with the
   * shorter round trip (the first may include opening a connection): the database read it about halfway.
   */
  async checkClock(local: () => number, owner?: string): Promise<number> {
    let best: { offset: number; trip: number; at: number } | null = null;
    for (let i = 0; i < 2; i++) {
      const before = local();
      const [row] = await this.sql.query<{ ms: number }>(`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms`);
      const after = local();
      const trip = after - before;
      if (!best || trip < best.trip) best = { offset: Math.round((before + after) / 2 - row!.ms), trip, at: row!.ms };
    }
    if (owner) await this.sql.query(`UPDATE lease_owners SET clock_offset_ms = $2, clock_checked_at = $3 WHERE id = $1`, [owner, best!.offset, best!.at]);
    return best!.offset;
  }
}
