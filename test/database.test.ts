import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../main/db/database.ts';
import { DatabaseRefused } from '../main/db/refused.ts';
import { loadMigrations } from '../main/db/migrator.ts';
import { openStudio } from '../main/studio.ts';
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

describe('the database files on disk', () => {
  // The studio died without a checkpoint, and something emptied or deleted the database file meanwhile.
  it.each([
    ['empty', (path: string) => writeFileSync(path, '')],
    ['missing', (path: string) => rmSync(path)],
  ] as const)('refuses a studio.db that is %s beside a WAL that holds rows, changing neither', (state, damage) => {
    const path = join(tempDir(), 'studio.db');
    const db = openDatabase(path);
    db.pragma('wal_autocheckpoint = 0');
    db.prepare(`INSERT INTO projects (name, created_at) VALUES ('Fox', 1)`).run();
    const wal = readFileSync(`${path}-wal`);
    expect(wal.length).toBeGreaterThan(0);
    damage(path);
    const before = existsSync(path) ? readFileSync(path) : null;
    expect(() => openDatabase(path)).toThrow(DatabaseRefused);
    expect(() => openDatabase(path)).toThrow(new RegExp(`studio\\.db is ${state} but .*studio\\.db-wal is not: its recent writes are only in the WAL`));
    expect(existsSync(path) ? readFileSync(path) : null).toEqual(before);
    expect(readFileSync(`${path}-wal`)).toEqual(wal);
  });

  it('creates the database, its WAL and the data folder readable by the person alone', async () => {
    const dir = join(tempDir(), 'data');
    const studio = await openStudio(dir);
    await studio.projects.ensure('Fox', 1);
    const mode = (p: string) => statSync(p).mode & 0o777;
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, 'studio.db'))).toBe(0o600);
    expect(mode(join(dir, 'studio.db-wal'))).toBe(0o600);
    await studio.close();
  });
});

describe('a database file SQLite cannot use', () => {
  it('with a SQLite header over garbage is refused in words, and left byte-identical', () => {
    const dir = tempDir();
    const path = join(dir, 'studio.db');
    const garbage = Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(4080, 0x5a)]);
    writeFileSync(path, garbage);
    expect(() => openDatabase(path)).toThrow(DatabaseRefused);
    expect(() => openDatabase(path)).toThrow(/studio\.db is damaged \(SQLITE_(CORRUPT|NOTADB)\); it was left as it is/);
    expect(readFileSync(path)).toEqual(garbage);
  });
});
