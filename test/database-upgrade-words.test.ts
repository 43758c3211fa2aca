import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../main/db/migrator.ts';
import { runStudio } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

/** A long database upgrade: the upgrading studio says so, and another opening it meanwhile is told to wait. */

function olderStudio(): string {
  const dataDir = tempDir();
  const db = new Database(join(dataDir, 'studio.db'));
  migrate(db, loadMigrations().slice(0, 15));
  db.pragma('journal_mode = WAL');
  db.close();
  return dataDir;
}

describe('a database upgrade under way', () => {
  it('is announced by the studio that makes it', async () => {
    const dataDir = olderStudio();
    const opened = await runStudio(dataDir, ['tasks']);
    expect(opened.code, opened.stderr).toBe(0);
    expect(opened.stderr).toMatch(/upgrading the database .*studio\.db \(schema 15 to \d+\); on a large studio this takes a minute or more, do not stop it/);
    // Once done, nothing more is said.
    expect((await runStudio(dataDir, ['tasks'])).stderr).not.toMatch(/upgrading/);
  }, 60_000);

  it('is named to another studio that finds the database locked, with the words to wait', async () => {
    const dataDir = olderStudio();
    const path = join(dataDir, 'studio.db');
    // The upgrading studio, inside its upgrade: its note beside the file and the write lock held, as a large one
    // holds it for many seconds (a live process stands for it, so the note is not taken for one left by a crash).
    const upgrader = spawn('sleep', ['60']);
    writeFileSync(`${path}-upgrading`, JSON.stringify({ pid: upgrader.pid, from: 15, to: 17 }));
    const holder = new Database(path);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const other = await runStudio(dataDir, ['tasks']);
      expect(other.code).not.toBe(0);
      expect(other.stderr).toMatch(new RegExp(`is being upgraded by another studio \\(process ${upgrader.pid}, schema 15 to 17\\); wait for it to finish, then start again`));
      expect(other.stderr).not.toMatch(/locked by another program|upgrading the database/);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
      upgrader.kill();
    }
  }, 60_000);
});
