import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { send, startFake } from './fakes/server.ts';
import { tempDir } from './helpers/tmp.ts';

const ROOT = join(import.meta.dirname, '..');

interface Locked {
  name?: string;
  version: string;
  engines?: { node?: string } | string[];
}

const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, Locked> };
const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;

/**
 * Packages that declare Node 22.12 for one reason: it is the first 22.x where require() loads ES modules by
 * default, and they are ES modules, or (electron) require() one. Node 20 does so from 20.19.0 ("require(esm) is now
 * enabled by default", nodejs/node doc/changelogs/CHANGELOG_V20.md), the first 20.x this project supports. They are
 * Electron's npm package (from Electron 42; it downloads Electron with @electron/get and @electron-internal/extract-zip)
 * and electron-builder's @electron/rebuild with its node-abi (app-builder-lib 26.1 on; this project never rebuilds
 * in place, npmRebuild: false). Each is loaded, and Electron downloaded through them, on this Node below.
 */
const NODE_22_FOR_REQUIRE_ESM: Record<string, string> = {
  electron: '>= 22.12.0',
  '@electron/get': '>=22.12.0',
  '@electron-internal/extract-zip': '>=22.12.0',
  '@electron/rebuild': '>=22.12.0',
  'node-abi': '>=22.12.0',
};

/** The first release of each Node line a range admits: "^20.19.0 || >=22.13.0" gives 20.19.0 and 22.13.0. */
function firstReleases(range: string): string[] {
  return new semver.Range(range).set.map((comparators) => semver.minVersion(comparators.map((c) => c.value).join(' '))!.version);
}

/** A lockfile entry's package name: its own, or the last folder of its path. */
const nameOf = (path: string, entry: Locked) => entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

/** Every locked package whose engines.node excludes one of `nodes`, as "name@version needs <range>". */
function excluding(packages: Record<string, Locked>, nodes: string[], allowed: Record<string, string> = {}): string[] {
  return Object.entries(packages).flatMap(([path, entry]) => {
    const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (!path || !range || allowed[nameOf(path, entry)] === range) return [];
    const left = nodes.filter((node) => !semver.satisfies(node, range));
    return left.length > 0 ? [`${nameOf(path, entry)}@${entry.version} needs Node ${range}, not ${left.join(' or ')}`] : [];
  });
}

describe('the Node versions package.json promises are ones every dependency accepts', () => {
  it('names each locked package whose engines exclude the first release of a Node line the project supports', () => {
    expect(firstReleases(engines)).toEqual(['20.19.0', '22.13.0']);
    expect(excluding(lock.packages, firstReleases(engines), NODE_22_FOR_REQUIRE_ESM), `package.json's engines.node is "${engines}"`).toEqual([]);
  });

  it('checks every Node line a range admits, nested packages by their own name, and lets pass only the exact range it is told', () => {
    const sample: Record<string, Locked> = {
      '': { version: '0.1.0', engines: { node: '>=20' } },
      'node_modules/a': { version: '1.0.0', engines: { node: '>=22.12.0' } },
      'node_modules/a/node_modules/@s/b': { version: '2.0.0', engines: { node: '^20.19.0 || >=22.12.0' } },
      'node_modules/c': { version: '3.0.0', engines: { node: '20 || >=24' } },
      'node_modules/d': { version: '4.0.0' },
    };
    expect(excluding(sample, ['20.19.0', '22.12.0'])).toEqual(['a@1.0.0 needs Node >=22.12.0, not 20.19.0', 'c@3.0.0 needs Node 20 || >=24, not 22.12.0']);
    expect(excluding(sample, ['20.19.0', '22.12.0'], { a: '>=22.12.0' })).toEqual(['c@3.0.0 needs Node 20 || >=24, not 22.12.0']);
    expect(excluding(sample, ['20.19.0', '22.12.0'], { a: '>=24' })).toHaveLength(2);
  });

  it('lets pass only packages that still declare Node 22.12 and load on this Node', () => {
    for (const [name, range] of Object.entries(NODE_22_FOR_REQUIRE_ESM)) {
      const paths = Object.keys(lock.packages).filter((path) => path && nameOf(path, lock.packages[path]!) === name && (lock.packages[path]!.engines as { node?: string } | undefined)?.node === range);
      expect(paths, `no locked ${name} declares Node ${range} any more: take it out of NODE_22_FOR_REQUIRE_ESM`).not.toEqual([]);
      // Electron's own package downloads Electron when required; the download is run below.
      if (name === 'electron') continue;
      for (const path of paths) {
        const from = createRequire(join(ROOT, path.slice(0, path.lastIndexOf('node_modules/')), 'package.json'));
        expect(from(name), `${path} on Node ${process.versions.node}`).toBeTypeOf('object');
      }
    }
  });

  it("downloads and unpacks Electron through Electron's own package on this Node", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'electron', 'package.json'), 'utf8')) as { version: string };
    const file = `electron-v${version}-${process.platform}-${process.arch}.zip`;
    const executable = { linux: 'electron', darwin: 'Electron.app/Contents/MacOS/Electron', win32: 'electron.exe' }[process.platform as string]!;
    const archive = storedZip({ [executable]: Buffer.from('stand-in Electron\n'), version: Buffer.from(`v${version}`) });
    const sha = createHash('sha256').update(archive).digest('hex');
    // A mirror as @electron/get reads one (ELECTRON_MIRROR): the zip and its SHASUMS256.txt beside it.
    const mirror = await startFake((req, res) => {
      if (req.path === `/v${version}/${file}`) return send(res, 200, archive);
      if (req.path === `/v${version}/SHASUMS256.txt`) return send(res, 200, `${sha} *${file}\n`);
    });
    const dir = tempDir();
    const electron = join(dir, 'node_modules', 'electron');
    cpSync(join(ROOT, 'node_modules', 'electron'), electron, { recursive: true, filter: (src) => !/[/\\](dist|path\.txt)$/.test(src) });
    for (const scope of ['@electron', '@electron-internal']) symlinkSync(join(ROOT, 'node_modules', scope), join(dir, 'node_modules', scope));
    mkdirSync(join(dir, 'cache'));
    const env = { ...process.env, ELECTRON_MIRROR: `${mirror.url}/`, electron_use_remote_checksums: '1', electron_config_cache: join(dir, 'cache') };
    await promisify(execFile)(process.execPath, [join(electron, 'install.js')], { env, timeout: 60_000 });
    expect(readFileSync(join(electron, 'path.txt'), 'utf8')).toBe(executable);
    expect(readFileSync(join(electron, 'dist', executable), 'utf8')).toBe('stand-in Electron\n');
    expect(mirror.count('GET', new RegExp(`/${file.replace(/\./g, '\\.')}$`))).toBe(1);
  });
});

/** A zip archive holding `files` stored, not deflated (APPNOTE.TXT 4.3: local headers, central directory, end record). */
function storedZip(files: Record<string, Buffer>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  const DOS_1980_01_01 = (1 << 5) | 1;
  for (const [name, data] of Object.entries(files)) {
    const path = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(DOS_1980_01_01, 12);
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(path.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(DOS_1980_01_01, 14);
    central.writeUInt32LE(crc32(data), 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(path.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, path, data);
    centrals.push(central, path);
    offset += local.length + path.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
