import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { safeKeyStore, type Encryptor } from '../app/keys.ts';
import { isLeftover, writePrivateFile } from '../main/config/privateFile.ts';
import { loadSettings } from '../main/config/settings.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * keys.json, and every other file holding a secret (host.json's token, settings.json with keys or the team
 * database's password), is written through a new file made 0600 and renamed over the old: never readable by
 * others, whatever the umask or the old file's mode, and a writer killed at any moment leaves the old file whole.
 * Real child processes, killed with SIGKILL.
 */

const ROOT = join(import.meta.dirname, '..');
const module = (path: string) => JSON.stringify(pathToFileURL(join(ROOT, path)).href);
const encryptor: Encryptor = {
  isEncryptionAvailable: () => true,
  getSelectedStorageBackend: () => 'gnome_libsecret',
  encryptString: (s) => Buffer.from(`enc:${s}`),
  decryptString: (b) => b.toString().replace(/^enc:/, ''),
};

/** A child process with umask 0 that runs `body` (an ES module's text) with `dir` as its argument. */
function child(dir: string, body: string) {
  const script = join(dir, '..', `writer-${Math.random().toString(16).slice(2)}.mts`);
  writeFileSync(
    script,
    `process.umask(0);
const encryptor = { isEncryptionAvailable: () => true, getSelectedStorageBackend: () => 'gnome_libsecret', encryptString: (s: string) => Buffer.from('enc:' + s), decryptString: (b: Buffer) => b.toString().slice(4) };
const dir = process.argv[2]!;
${body}`,
  );
  return [process.execPath, ['--import', 'tsx', script, dir]] as const;
}

const mode = (path: string) => statSync(path).mode & 0o777;
const leftovers = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.tmp'));

describe.runIf(process.platform !== 'win32')('files that hold a secret', () => {
  it('are 0600 even with umask 0, over an older file (and an older temporary file) readable by all', () => {
    const dir = join(tempDir(), 'data');
    mkdirSync(dir);
    writeFileSync(join(dir, 'keys.json'), '{}');
    chmodSync(join(dir, 'keys.json'), 0o644);
    // What the old way of writing left beside it, made by a process with a permissive umask.
    writeFileSync(join(dir, 'keys.json.tmp'), '');
    chmodSync(join(dir, 'keys.json.tmp'), 0o666);
    writeFileSync(join(dir, 'settings.json'), '{}');
    chmodSync(join(dir, 'settings.json'), 0o666);
    const [cmd, args] = child(
      dir,
      `const { safeKeyStore } = await import(${module('app/keys.ts')});
const { updateSettings } = await import(${module('main/config/settings.ts')});
const { writeHostIdentity } = await import(${module('main/host/identity.ts')});
safeKeyStore(dir, encryptor, () => ({}), {}).set('fal', 'fal-secret-123456');
updateSettings(dir, (raw) => (raw.team = { databaseUrl: 'postgres://ana:secret@db.example:5432/studio' }));
writeHostIdentity(dir, { token: 'ab'.repeat(24), port: 4000 });`,
    );
    const run = spawnSync(cmd, args, { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    for (const file of ['keys.json', 'settings.json', 'host.json']) expect(mode(join(dir, file)), file).toBe(0o600);
    expect(safeKeyStore(dir, encryptor, () => loadSettings(dir), {}).get('fal')).toBe('fal-secret-123456');
    expect(leftovers(dir)).toEqual(['keys.json.tmp']);
  });

  it('stay whole when the writer is killed between writing the new file and renaming it over the old', async () => {
    const dir = join(tempDir(), 'data');
    mkdirSync(dir);
    safeKeyStore(dir, encryptor, () => loadSettings(dir), {}).set('fal', 'fal-old-key-123456');
    const before = readFileSync(join(dir, 'keys.json'), 'utf8');
    // The writer stops where a crash would hurt most: the new file written and flushed, the rename not yet made.
    const [cmd, args] = child(
      dir,
      `const fs = (await import('node:fs')).default;
fs.renameSync = () => {
  process.stdout.write('written\\n');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
};
(await import('node:module')).syncBuiltinESMExports();
const { safeKeyStore } = await import(${module('app/keys.ts')});
safeKeyStore(dir, encryptor, () => ({}), {}).set('fal', 'fal-new-key-654321');`,
    );
    const writer = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    writer.stderr.on('data', (d) => (err += d));
    await new Promise<void>((resolve, reject) => {
      writer.stdout.on('data', (d) => String(d).includes('written') && resolve());
      writer.on('exit', () => reject(new Error(`the writer ended first: ${err}`)));
    });
    const [temporary] = readdirSync(dir).filter((f) => f.startsWith('.keys.json.'));
    expect(mode(join(dir, temporary!))).toBe(0o600);
    expect(readFileSync(join(dir, temporary!), 'utf8')).toContain(Buffer.from('enc:fal-new-key-654321').toString('base64'));
    // A save made meanwhile by another process leaves the new file of a writer that still runs, even a minute old.
    const minuteAgo = new Date(Date.now() - 61_000);
    utimesSync(join(dir, temporary!), minuteAgo, minuteAgo);
    writePrivateFile(join(dir, 'keys.json'), before);
    expect(existsSync(join(dir, temporary!))).toBe(true);
    const killed = new Promise((resolve) => writer.on('exit', (_code, signal) => resolve(signal)));
    writer.kill('SIGKILL');
    expect(await killed).toBe('SIGKILL');
    expect(readFileSync(join(dir, 'keys.json'), 'utf8')).toBe(before);
    const keys = safeKeyStore(dir, encryptor, () => loadSettings(dir), {});
    expect(keys.get('fal')).toBe('fal-old-key-123456');
    // The next save is not held up by what the killed one left, and removes it (over a minute old): it holds a key.
    keys.set('fal', 'fal-next-key-111111');
    expect(keys.get('fal')).toBe('fal-next-key-111111');
    expect(mode(join(dir, 'keys.json'))).toBe(0o600);
    expect(existsSync(join(dir, temporary!))).toBe(false);
  });

  it("are removed once left by a writer that died before its rename, and never while one may still write", () => {
    const gone = () => false;
    const MINUTE = 60_000;
    expect(isLeftover('.keys.json.4242.0a1b2c3d.tmp', 'keys.json', MINUTE + 1, gone)).toBe(true);
    // Just made: a writer in another container sharing the folder looks gone from here, but takes milliseconds.
    expect(isLeftover('.keys.json.4242.0a1b2c3d.tmp', 'keys.json', 5_000, gone)).toBe(false);
    expect(isLeftover('.keys.json.4242.0a1b2c3d.tmp', 'keys.json', MINUTE + 1, () => true)).toBe(false);
    // An hour old, whatever runs under that id now: ids are reused.
    expect(isLeftover('.keys.json.4242.0a1b2c3d.tmp', 'keys.json', 60 * MINUTE + 1, () => true)).toBe(true);
    for (const other of ['.settings.json.4242.0a1b2c3d.tmp', '.keys.json.4242.0a1b2c3d.tmp.bak', 'keys.json.tmp', '.keys.json.x.0a1b2c3d.tmp', '.keys.json.bak']) {
      expect(isLeftover(other, 'keys.json', 60 * MINUTE + 1, gone), other).toBe(false);
    }
  });

  it('stay whole when the writer is killed in the middle of a large write', async () => {
    const dir = join(tempDir(), 'data');
    mkdirSync(dir);
    const target = join(dir, 'secret.json');
    writeFileSync(target, 'old');
    const size = 128 << 20;
    const [cmd, args] = child(dir, `const { writePrivateFile } = await import(${module('main/config/privateFile.ts')});
writePrivateFile(dir + '/secret.json', Buffer.alloc(${size}, 0x61));`);
    // Killed as soon as its new file has some of the content; tried again in the rare run where the write was done first.
    for (let attempt = 0; ; attempt++) {
      const writer = spawn(cmd, args, { stdio: 'ignore' });
      const exited = new Promise((resolve) => writer.on('exit', resolve));
      let partial: string | undefined;
      while (!partial && writer.exitCode === null) {
        partial = readdirSync(dir).find((f) => f.startsWith('.secret.json.') && statSync(join(dir, f), { throwIfNoEntry: false })?.size);
        await new Promise((r) => setTimeout(r, 1));
      }
      writer.kill('SIGKILL');
      await exited;
      const cut = partial !== undefined && existsSync(join(dir, partial)) && statSync(join(dir, partial)).size < size;
      if (!cut && attempt < 5) {
        writeFileSync(target, 'old');
        continue;
      }
      expect(cut).toBe(true);
      expect(mode(join(dir, partial!))).toBe(0o600);
      expect(readFileSync(target, 'utf8')).toBe('old');
      return;
    }
  });
});
