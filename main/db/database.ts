import type Database from 'better-sqlite3';
import { upgradeUnderWay, whileUpgrading } from './upgradeMarker.ts';
import { connect } from './nativeBinding.ts';
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { assertKnownVersion, loadMigrations, migrate } from './migrator.ts';
import { DatabaseRefused } from './refused.ts';

export type Db = Database.Database;

const SQLITE_HEADER = 'SQLite format 3\0';

function assertNoOrphanWal(path: string, state: string): void {
  const wal = `${path}-wal`;
  if (existsSync(wal) && statSync(wal).size > 0) {
    throw new DatabaseRefused(
      `${path} ${state} but ${wal} is not: its recent writes are only in the WAL. Nothing was changed; restore ` +
        'studio.db from a backup (keep the -wal file beside it), or move the -wal file away to start afresh.',
    );
  }
}

/**
 * Refuses a file that exists and is not SQLite before SQLite can touch it, and a database file that is gone
 * or empty while its WAL holds writes: SQLite would start afresh and throw the WAL's committed rows away.
 */
function assertSqliteFile(path: string): void {
  if (path === ':memory:') return;
  if (!existsSync(path)) return assertNoOrphanWal(path, 'is missing');
  if (!statSync(path).isFile()) throw new DatabaseRefused(`${path} is not a file. Point the studio at its data folder.`);
  if (statSync(path).size === 0) return assertNoOrphanWal(path, 'is empty');
  const header = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (header.toString('latin1') !== SQLITE_HEADER) {
    throw new DatabaseRefused(
      `${path} is not a studio database (not a SQLite file). It was left as it is; move it away or choose another data folder.`,
    );
  }
}

/**
 * Opens the studio database with the pragmas the promise depends on and brings its schema up to date.
 * synchronous=FULL: better-sqlite3 builds WAL with NORMAL, under which a committed boundary write
 * (submit_started_at, the request id) can vanish on power loss. FULL syncs the WAL at every commit.
 */
export function openDatabase(path: string, migrationsDir?: string): Db {
  assertSqliteFile(path);
  // Created readable by the person alone; SQLite gives its -wal and -shm files the database file's mode.
  if (path !== ':memory:' && !existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  const migrations = loadMigrations(migrationsDir);
  let db: Db;
  try {
    db = connect(path);
  } catch (err) {
    throw refusal(path, err);
  }
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Before any pragma that writes (journal_mode rewrites the header), so a refused file stays byte-identical.
    const from = assertKnownVersion(db, migrations);
    applyPragmas(db);
    whileUpgrading(path, from, migrations.length, (words) => process.stderr.write(`${words}\n`), () => migrate(db, migrations));
  } catch (err) {
    db.close();
    throw refusal(path, err);
  }
  return db;
}

/** SQLite's refusal to open or set up the file, in words that name it and say what to do. */
function refusal(path: string, err: unknown): unknown {
  const code = String((err as { code?: unknown }).code ?? '');
  if (!code.startsWith('SQLITE_')) return err;
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') {
    return new DatabaseRefused(`${path} is damaged (${code}); it was left as it is. Restore it from a backup, or move it away to start afresh.`);
  }
  if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_PERM')) {
    return new DatabaseRefused(`${path} cannot be opened for writing (${code}); check that it and its folder can be written by you.`);
  }
  if (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR')) {
    return new DatabaseRefused(`${path} cannot be opened: the disk is full or failing (${code}); free some space, then start again.`);
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    const upgrade = upgradeUnderWay(path);
    if (upgrade) {
      return new DatabaseRefused(`${path} is being upgraded by another studio (process ${upgrade.pid}, schema ${upgrade.from} to ${upgrade.to}); wait for it to finish, then start again. Do not stop it.`);
    }
    return new DatabaseRefused(`${path} is locked by another program (${code}); close it, then start again.`);
  }
  return new DatabaseRefused(`${path} could not be opened (${code}: ${(err as Error).message}).`);
}

/** How long a write waits for another connection's lock: two studio processes on one folder take turns. */
export const BUSY_TIMEOUT_MS = 5_000;

export function applyPragmas(db: Db): void {
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
}
