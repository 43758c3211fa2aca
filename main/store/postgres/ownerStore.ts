import type { OwnerStore } from '../port.ts';
import type { Sql } from './sql.ts';

/**
 * The processes that hold leases, by machine and pid. A machine recovers at once the rows of its own processes
 * that no longer exist (onHost); another machine's owners are never judged by pid here, only by their leases'
 * expiry on the database's clock.
 */
export class PostgresOwnerStore implements OwnerStore {
  constructor(private readonly sql: Sql) {}

  async register(owner: { id: string; hostname: string; pid: number }, now: number): Promise<void> {
    await this.sql.query(
      `INSERT INTO lease_owners (id, hostname, pid, started_at, seen_at) VALUES ($1, $2, $3, $4, $4)
       ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`,
      [owner.id, owner.hostname, owner.pid, now],
    );
  }

  async onHost(hostname: string): Promise<{ id: string; pid: number }[]> {
    return this.sql.query<{ id: string; pid: number }>(`SELECT id, pid FROM lease_owners WHERE hostname = $1 ORDER BY id`, [hostname]);
  }

  async remove(id: string): Promise<void> {
    await this.sql.query(`DELETE FROM lease_owners WHERE id = $1`, [id]);
  }
}
