import { extractFile, listPackage } from '@electron/asar';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { outsideAsar } from '../main/media/binaries.ts';
import { FONTS_DIR } from '../main/media/fonts.ts';
import { tempDir } from './helpers/tmp.ts';

// electron-builder run on the real configuration and the real dependencies as far as a packaged folder (its
// `dir` target), from a stand-in Electron: what needs the network (Electron's zip, the deb and AppImage tools)
// is left out, and what the deb and the desktop entry would say is asked of electron-builder's own classes.
const ROOT = join(import.meta.dirname, '..');
const require = createRequire(join(ROOT, 'package.json'));
const { build, Platform, Arch } = require('electron-builder');
const FpmTarget = require('app-builder-lib/out/targets/FpmTarget.js').default;
const { LinuxTargetHelper } = require('app-builder-lib/out/targets/LinuxTargetHelper.js');
const { getCurrentFuseWire, FuseV1Options } = require('@electron/fuses');
const config = require('js-yaml').load(readFileSync(join(ROOT, 'electron-builder.yml'), 'utf8'));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
/** scripts/iconFiles.mjs, plain JavaScript as the scripts are, imported by its address to type it here. */
const { OUTPUTS, SOURCE, pngSize, stampOf } = (await import(new URL('../scripts/iconFiles.mjs', import.meta.url).href)) as {
  OUTPUTS: { file: string; size: number }[];
  SOURCE: string;
  pngSize: (png: Buffer) => { width: number; height: number };
  stampOf: (png: Buffer) => string | null;
};

// @electron/fuses finds the fuse wire right after this sentinel: a version byte (1), the wire's length, then
// one byte per fuse, '0' off and '1' on (src/constants.ts SENTINEL and FuseState, src/index.ts setFuseWire).
const SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';
const [OFF, ON] = [48, 49];

/** A folder shaped like Electron's Linux zip: an `electron` executable carrying Electron's defaults on its fuse wire. */
function standInElectron(dir: string): string {
  mkdirSync(join(dir, 'resources'), { recursive: true });
  mkdirSync(join(dir, 'locales'));
  const defaults = [ON, OFF, ON, ON, OFF, OFF, OFF, ON];
  writeFileSync(join(dir, 'electron'), Buffer.concat([Buffer.from('#!/bin/sh\nexit 0\n'), Buffer.from(SENTINEL), Buffer.from([1, defaults.length, ...defaults])]));
  chmodSync(join(dir, 'electron'), 0o755);
  return dir;
}

const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));

interface Seen {
  appOutDir: string;
  executableName: string;
  deb: { name: string; maintainer: string; url: string };
  desktopEntry: string;
  desktopFile: string;
  linuxIcons: number[];
  artifacts: string[];
}

/** Packs the app for Linux into a temp folder, and what electron-builder's deb and AppImage targets would take from it. */
async function pack(): Promise<Seen> {
  // The bundle and the UI as `npm run dist` builds them; a build already in dist/ is used as it is.
  if (!existsSync(join(ROOT, 'dist', 'app', 'main.mjs'))) execFileSync(process.execPath, ['scripts/build-app.mjs'], { cwd: ROOT });
  if (!existsSync(join(ROOT, 'dist', 'renderer', 'index.html'))) execFileSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn'], { cwd: ROOT });
  const dir = tempDir();
  // The database driver's Electron build, which scripts/electron-native.mjs stages; a stand-in file here.
  mkdirSync(join(dir, 'native', `electron-linux-${process.arch}`), { recursive: true });
  writeFileSync(join(dir, 'native', `electron-linux-${process.arch}`, 'better_sqlite3.node'), 'stand-in');
  let seen: Seen | undefined;
  await build({
    projectDir: ROOT,
    targets: Platform.LINUX.createTarget('dir', Arch[process.arch as 'x64' | 'arm64']),
    publish: 'never',
    // Merged into electron-builder.yml (arrays are joined): where to write, which Electron, the driver.
    config: {
      directories: { output: join(dir, 'out') },
      electronDist: standInElectron(join(dir, 'electron')),
      extraResources: [{ from: join(dir, 'native', 'electron-${platform}-${arch}'), to: 'native' }],
      afterPack: async (context: { packager: any; appOutDir: string; outDir: string; arch: number }) => {
        const { packager } = context;
        const helper = new LinuxTargetHelper(packager);
        const deb = new FpmTarget('deb', packager, helper, context.outDir);
        const options = (target: string) => ({ ...packager.platformSpecificBuildOptions, ...config[target] });
        seen = {
          appOutDir: context.appOutDir,
          executableName: packager.executableName,
          deb: await deb.checkOptions(),
          desktopEntry: await helper.computeDesktopEntry(deb.options),
          desktopFile: helper.getDesktopFileName(),
          linuxIcons: (await helper.icons).map((icon: { size: number }) => icon.size),
          artifacts: ['deb', 'AppImage'].map((ext) => packager.expandArtifactNamePattern(options(ext === 'deb' ? 'deb' : 'appImage'), ext, context.arch)),
        };
      },
    },
  });
  return seen!;
}

describe('the packaged app, as electron-builder makes it', () => {
  it('builds a Linux folder whose deb, desktop entry, archive and fuses are what the installers need', async () => {
    const seen = await pack();
    const resources = join(seen.appOutDir, 'resources');

    // The deb could not be built at all without a maintainer (FpmTarget computeFpmMetaInfoOptions).
    expect(seen.deb).toMatchObject({ name: 'take-studio', maintainer: 'Take Studio <support@takestudio.app>', url: pkg.homepage });

    // One executable name; the desktop entry and its file follow package.json's desktopName, as Electron's window class does.
    expect(seen.executableName).toBe('take-studio');
    expect(existsSync(join(seen.appOutDir, 'take-studio'))).toBe(true);
    expect(pkg.desktopName).toBe('take-studio.desktop');
    expect(seen.desktopFile).toBe('take-studio');
    const entry = Object.fromEntries(seen.desktopEntry.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    expect(entry).toMatchObject({
      Name: 'Take Studio',
      Comment: pkg.description,
      Categories: 'AudioVideo;Video;',
      StartupWMClass: 'take-studio',
      Icon: 'take-studio',
      Exec: '"/opt/Take Studio/take-studio" %U',
    });
    expect(JSON.parse(extractFile(join(resources, 'app.asar'), 'package.json').toString()).desktopName).toBe('take-studio.desktop');

    // Names without spaces, as a download URL and the update feed keep them.
    expect(seen.artifacts).toEqual([`Take-Studio-${pkg.version}-linux-${process.arch === 'x64' ? 'amd64' : 'arm64'}.deb`, `Take-Studio-${pkg.version}-linux-${process.arch === 'x64' ? 'x86_64' : 'arm64'}.AppImage`]);
    for (const section of ['mac', 'win', 'linux', 'dmg', 'nsis', 'deb', 'appImage']) expect(config[section]?.artifactName).toBeUndefined();
    expect(config.artifactName).not.toMatch(/\s|productName/);

    // Outside the archive only what ffmpeg runs or reads; no JavaScript escapes the integrity check.
    const unpacked = filesUnder(join(resources, 'app.asar.unpacked'));
    expect(unpacked.filter((f) => !/^(ffmpeg|ffprobe)(\.exe)?$/.test(basename(f)) && !f.endsWith('.ttf'))).toEqual([]);
    // ...and each sits where the engine looks once packaged: the path inside the archive, moved out by outsideAsar.
    const packaged = (path: string) => outsideAsar(join(resources, 'app.asar', relative(ROOT, path)));
    for (const binary of [require('@ffmpeg-installer/ffmpeg').path, require('@ffprobe-installer/ffprobe').path]) expect(existsSync(packaged(binary))).toBe(true);
    expect(existsSync(join(packaged(FONTS_DIR), 'DejaVuSans.ttf'))).toBe(true);

    // The archive: the bundle and the UI, no source maps (the build writes them), no native code, no icons.
    const archived = listPackage(join(resources, 'app.asar'), { isPack: false });
    expect(archived).toContain(`${join('/', 'dist', 'app', 'main.mjs')}`);
    expect(existsSync(join(ROOT, 'dist', 'app', 'main.mjs.map'))).toBe(true);
    expect(archived.filter((f) => f.endsWith('.map') || f.endsWith('.node') || basename(f).startsWith('icon'))).toEqual([]);
    expect(readdirSync(join(resources, 'native'))).toContain('better_sqlite3.node');

    // The fuses flipped as electron-builder.yml says, in the renamed executable.
    const wire = await getCurrentFuseWire(join(seen.appOutDir, 'take-studio'));
    const expected: Record<string, boolean> = {
      RunAsNode: config.electronFuses.runAsNode,
      EnableCookieEncryption: config.electronFuses.enableCookieEncryption,
      EnableNodeOptionsEnvironmentVariable: config.electronFuses.enableNodeOptionsEnvironmentVariable,
      EnableNodeCliInspectArguments: config.electronFuses.enableNodeCliInspectArguments,
      EnableEmbeddedAsarIntegrityValidation: config.electronFuses.enableEmbeddedAsarIntegrityValidation,
      OnlyLoadAppFromAsar: config.electronFuses.onlyLoadAppFromAsar,
      GrantFileProtocolExtraPrivileges: config.electronFuses.grantFileProtocolExtraPrivileges,
    };
    for (const [fuse, on] of Object.entries(expected)) expect([fuse, wire[FuseV1Options[fuse]]]).toEqual([fuse, on ? ON : OFF]);

    // Linux installs every drawn size; macOS and Windows take the 1024 px PNG.
    expect(seen.linuxIcons).toEqual([16, 24, 32, 48, 64, 128, 256, 512]);
  }, 90_000);

  it('signs ad hoc after the fuses on macOS without a Developer ID, and the database driver on Windows', () => {
    expect(config.electronFuses.resetAdHocDarwinSignature).toBe(true);
    // An identity of "-" would also stop a Developer ID from the environment being used (MacTargetHelper findSigningIdentity).
    expect(config.mac.identity).toBeUndefined();
    expect(config.win.signExts).toEqual(['.node']);
    expect(config.asar).toEqual({ smartUnpack: false });
  });
});

describe('the icons', () => {
  it('are all drawn from resources/icon.svg as it is now (run node scripts/icons.mjs after changing it)', () => {
    const hash = createHash('sha256').update(readFileSync(join(ROOT, SOURCE))).digest('hex');
    for (const { file, size } of OUTPUTS) {
      const png = readFileSync(join(ROOT, file));
      expect([file, stampOf(png)]).toEqual([file, hash]);
      expect([file, pngSize(png)]).toEqual([file, { width: size, height: size }]);
    }
    expect(config.icon).toBe('resources/icon.png');
    expect(config.linux.icon).toBe('resources/icons');
  });
});
