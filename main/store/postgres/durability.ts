import { TeamDatabaseRefused } from './errors.ts';
import type { Sql } from './sql.ts';

/** The server settings that decide whether a committed boundary write survives a crash of the server or its machine. */
export interface Durability {
  fsync: string;
  fullPageWrites: string;
  /** This session's, which the studio sets to `on` on every connection (see connect). */
  synchronousCommit: string;
}

/** Reads the settings as this session sees them. */
export async function readDurability(sql: Sql): Promise<Durability> {
  const [row] = await sql.query<Durability>(
    `SELECT current_setting('fsync') AS fsync, current_setting('full_page_writes') AS "fullPageWrites",
            current_setting('synchronous_commit') AS "synchronousCommit"`,
  );
  return row!;
}

const fix = (setting: string) =>
  `Turn it on as a superuser: ALTER SYSTEM SET ${setting} = on; SELECT pg_reload_conf(); (or set ${setting} = on in postgresql.conf and reload the server).`;

/**
 * Why a server with these settings cannot keep the write that says a paid request was sent, or null when it can.
 * The reasons are PostgreSQL's own (its documentation, "Write Ahead Log" settings): with fsync off "unrecoverable
 * data corruption" may follow a power failure or crash; with full_page_writes off "unrecoverable data corruption,
 * or silent data corruption, after a system failure"; with synchronous_commit off a commit is reported before it
 * is on disk, and a crash of the server just after loses it. Any other value of synchronous_commit waits for the
 * local flush.
 */
export function durabilityRefusal(d: Durability, where: string): string | null {
  const lost = 'the studio could lose its record that a paid request was sent, and send it again';
  if (d.fsync !== 'on') {
    return `The team database server at ${where} runs with fsync = off: it does not make sure its writes reach the disk, so after a crash or power loss of that server ${lost}. ${fix('fsync')}`;
  }
  if (d.fullPageWrites !== 'on') {
    return `The team database server at ${where} runs with full_page_writes = off: a crash of that server in the middle of a write can leave pages it cannot repair, so ${lost}. ${fix('full_page_writes')}`;
  }
  if (d.synchronousCommit === 'off') {
    return (
      `The team database at ${where} kept synchronous_commit = off for the studio's session although the studio set it on: it would report a write done before it is on disk, so after a crash of that server ${lost}. ` +
      "Remove what overrides it for the studio's connections: an options= part of the address, or a connection pooler that does not pass the setting on."
    );
  }
  return null;
}

/** The settings of a server that can keep the boundary write; one that cannot is refused, in the words above. */
export async function requireDurable(sql: Sql, where: string): Promise<Durability> {
  const settings = await readDurability(sql);
  const refused = durabilityRefusal(settings, where);
  if (refused) throw new TeamDatabaseRefused(refused);
  return settings;
}
