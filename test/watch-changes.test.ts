import { afterEach, describe, expect, it } from 'vitest';
import type { ChangeEvent } from '../main/api/contract.ts';
import { databasePath } from '../main/config/paths.ts';
import { openDatabase, type Db } from '../main/db/database.ts';
import { watchChanges } from '../main/host/server.ts';
import { watchSqliteFile } from '../main/store/sqlite/store.ts';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

let projects = 0;
function addProject(db: Db): void {
  db.prepare('INSERT INTO projects (name, created_at) VALUES (?, ?)').run(`p${++projects}`, Date.now());
}

function watch(dataDir: string, onChange: (e: ChangeEvent) => void) {
  const logs: string[] = [];
  cleanups.push(watchChanges(watchSqliteFile(databasePath(dataDir)), onChange, (m) => logs.push(m)));
  return logs;
}

function studioDb(dataDir: string): Db {
  const db = openDatabase(databasePath(dataDir));
  cleanups.push(() => db.close());
  return db;
}

describe('watchChanges keeps watching through faults (real SQLite file)', () => {
  it('a listener that throws once still receives the later changes', async () => {
    const dir = tempDir();
    const db = studioDb(dir);
    const seen: ChangeEvent[] = [];
    const logs = watch(dir, (e) => {
      seen.push(e);
      if (seen.length === 1) throw new Error('the window is gone');
    });
    await until(() => seen.length === 1);
    addProject(db);
    await until(() => seen.length === 2);
    addProject(db);
    await until(() => seen.length === 3);
    expect(seen.map((e) => e.version)).toEqual([1, 2, 3]);
    expect(logs).toEqual([expect.stringContaining('the window is gone')]);
  });

  it('a tick blocked by a lock held past the busy timeout is logged, and the change arrives after release', async () => {
    const dir = tempDir();
    const db = studioDb(dir);
    // In WAL mode (the studio's) a writer never blocks readers; in rollback-journal mode an EXCLUSIVE
    // transaction does, which makes the watcher's own reads fail with SQLITE_BUSY.
    db.pragma('journal_mode = DELETE');
    const seen: ChangeEvent[] = [];
    const logs = watch(dir, (e) => seen.push(e));
    await until(() => seen.length === 1);

    db.exec('BEGIN EXCLUSIVE');
    addProject(db);
    // The watcher waits its 2 s busy timeout, then its tick fails; the lock is held until that is logged.
    await until(() => logs.length > 0, 15_000);
    db.exec('COMMIT');
    expect(logs[0]).toMatch(/database is locked/);
    expect(seen).toHaveLength(1);

    await until(() => seen.length === 2);
    addProject(db);
    await until(() => seen.length === 3);
    expect(seen.map((e) => e.version)).toEqual([1, 2, 3]);
  });
});
