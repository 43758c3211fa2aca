import Database from 'better-sqlite3';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DatabaseRefused, openDatabase } from '../main/db/database.ts';
import { loadMigrations } from '../main/db/migrator.ts';
import { tempDir } from './helpers/tmp.ts';

describe('database', () => {
  it('opens with WAL, synchronous=FULL, a busy timeout and foreign keys', () => {
    const db = openDatabase(join(tempDir(), 'studio.db'));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('user_version', { simple: true })).toBe(loadMigrations().length);
    db.close();
  });

  it('applies each migration in its own transaction and only once', () => {
    const dir = tempDir();
    const migrations = join(dir, 'migrations');
    mkdirSync(migrations);
    writeFileSync(join(migrations, '001_a.sql'), 'CREATE TABLE a (x INTEGER);');
    writeFileSync(join(migrations, '002_b.sql'), 'CREATE TABLE b (x INTEGER); CREATE TABLE broken (;');
    const path = join(dir, 'db.sqlite');
    expect(() => openDatabase(path, migrations)).toThrow();
    const db = new Database(path);
    expect(db.pragma('user_version', { simple: true })).toBe(1);
    expect(db.prepare(`SELECT name FROM sqlite_master WHERE name = 'b'`).get()).toBeUndefined();
    db.close();
    writeFileSync(join(migrations, '002_b.sql'), 'CREATE TABLE b (x INTEGER);');
    openDatabase(path, migrations).close();
    openDatabase(path, migrations).close();
    expect(new Database(path).pragma('user_version', { simple: true })).toBe(2);
  });

  it('refuses a database from a newer version and leaves it untouched', () => {
    const path = join(tempDir(), 'studio.db');
    const newer = new Database(path);
    newer.exec('CREATE TABLE future (x)');
    newer.pragma('user_version = 999');
    newer.close();
    const before = readFileSync(path);
    expect(() => openDatabase(path)).toThrow(DatabaseRefused);
    expect(() => openDatabase(path)).toThrow(/newer version of the studio/);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('refuses a file that is not SQLite and never overwrites it', () => {
    const path = join(tempDir(), 'studio.db');
    writeFileSync(path, 'my holiday notes, not a database\n'.repeat(200));
    const before = readFileSync(path);
    expect(() => openDatabase(path)).toThrow(/not a studio database/);
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});
