// Builds better-sqlite3 for the installed Electron's ABI into dist/native/electron-<platform>-<arch>/, from a
// copy of the module, so the Node build in node_modules, which the CLI and the tests load, is never touched
// (electron-builder's npmRebuild and @electron/rebuild both rebuild in place). The desktop app loads the copy
// through better-sqlite3's nativeBinding option.
//   node scripts/electron-native.mjs [--platform linux|darwin|win32] [--arch x64|arm64]
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, sep } from 'node:path';
import { parseArgs } from 'node:util';

const require = createRequire(import.meta.url);
const { values } = parseArgs({ options: { platform: { type: 'string' }, arch: { type: 'string' } } });
const platform = values.platform ?? process.platform;
const arch = values.arch ?? process.arch;
const electronDir = join('node_modules', 'electron');
const version = JSON.parse(readFileSync(join(electronDir, 'package.json'), 'utf8')).version;
const abi = readFileSync(join(electronDir, 'abi_version'), 'utf8').trim();
const out = join('dist', 'native', `electron-${platform}-${arch}`);
const stamp = join(out, 'abi');

if (existsSync(join(out, 'better_sqlite3.node')) && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === abi) process.exit(0);

const stage = join('dist', 'native', `stage-${platform}-${arch}`);
const module = join(stage, 'node_modules', 'better-sqlite3');
rmSync(stage, { recursive: true, force: true });
const source = join('node_modules', 'better-sqlite3');
cpSync(source, module, { recursive: true, filter: (path) => !path.startsWith(join(source, 'build') + sep) && path !== join(source, 'build') });
const sqliteVersion = JSON.parse(readFileSync(join(module, 'package.json'), 'utf8')).version;
writeFileSync(join(stage, 'package.json'), JSON.stringify({ name: 'native-stage', private: true, dependencies: { 'better-sqlite3': sqliteVersion } }));

// better-sqlite3 publishes prebuilds for Electron (its build workflow runs `prebuild -r electron`); else compile.
const prebuilt = spawnSync(process.execPath, [require.resolve('prebuild-install/bin.js'), '--runtime', 'electron', '--target', version, '--platform', platform, '--arch', arch], { cwd: module, stdio: 'inherit' });
if (prebuilt.status !== 0) {
  if (platform !== process.platform) {
    console.error(`No prebuilt database driver for Electron ${version} on ${platform}-${arch} could be fetched, and one cannot be compiled for another OS here; build on ${platform}.`);
    rmSync(stage, { recursive: true, force: true });
    process.exit(1);
  }
  console.log(`No prebuilt database driver for Electron ${version}; compiling one (this needs a C++ toolchain).`);
  // npm's nodedir setting points node-gyp at Node's own headers, which would build for Node's ABI.
  delete process.env.npm_config_nodedir;
  const { rebuild } = await import('@electron/rebuild');
  try {
    await rebuild({ buildPath: join(process.cwd(), stage), electronVersion: version, arch, onlyModules: ['better-sqlite3'], force: true });
  } catch (err) {
    console.error(`The database driver for the desktop app could not be built: ${err.message}`);
    rmSync(stage, { recursive: true, force: true });
    process.exit(1);
  }
}
const built = join(module, 'build', 'Release', 'better_sqlite3.node');
// Under Node an Electron build must refuse to load, naming Electron's module version; anything else is no
// Electron build, whatever it was made from (checked where the build is for this OS).
if (platform === process.platform && arch === process.arch) {
  const probe = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(join(process.cwd(), built))})`], { encoding: 'utf8' });
  if (probe.status === 0 || !probe.stderr.includes(`NODE_MODULE_VERSION ${abi}`)) {
    console.error(`The database driver built for the desktop app is not for Electron ${version} (ABI ${abi}); nothing was installed.`);
    rmSync(stage, { recursive: true, force: true });
    process.exit(1);
  }
}
// The stamp goes first and comes back last, and the file arrives whole by a rename: a run killed halfway
// leaves nothing the next run (or the app) would trust.
mkdirSync(out, { recursive: true });
rmSync(stamp, { force: true });
copyFileSync(built, join(out, 'better_sqlite3.node.part'));
renameSync(join(out, 'better_sqlite3.node.part'), join(out, 'better_sqlite3.node'));
writeFileSync(stamp, `${abi}\n`);
rmSync(stage, { recursive: true, force: true });
console.log(`Built the database driver for Electron ${version} (ABI ${abi}) in ${out}.`);
