import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export class NativeBindingMissing extends Error {}

/**
 * Where the desktop app's better-sqlite3 binary for Electron lives: among the packaged app's resources
 * (electron-builder's extraResources), or under dist/ in a checkout, where `npm start` stages it
 * (scripts/electron-native.mjs), never over the Node build in node_modules.
 */
export function electronBindingDir(at: { packaged: boolean; resourcesPath: string; appRoot: string; platform: string; arch: string }): string {
  return at.packaged ? join(at.resourcesPath, 'native') : join(at.appRoot, 'dist', 'native', `electron-${at.platform}-${at.arch}`);
}

/** The binding built for this runtime's ABI (process.versions.modules), or a refusal that says how to get it. */
export function electronBinding(dir: string, abi: string): string {
  const file = join(dir, 'better_sqlite3.node');
  const stamp = join(dir, 'abi');
  const built = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : null;
  if (!existsSync(file) || built !== abi) {
    const found = built ? ` (the one there is for ABI ${built})` : '';
    throw new NativeBindingMissing(`the database driver for this Electron (ABI ${abi}) is not built${found}. Run "npm start" again, which builds it, or reinstall Take Studio`);
  }
  return file;
}

/**
 * The JavaScript of the better-sqlite3 version whose binary electronBinding finds: staged beside the bundle
 * (`bundleDir`, dist/app), so it is packed into the app's archive with it, or a refusal that says how to get it.
 */
export function electronDriverDir(bundleDir: string): string {
  const dir = join(bundleDir, 'better-sqlite3');
  if (!existsSync(join(dir, 'lib', 'index.js'))) {
    throw new NativeBindingMissing(`the database driver's JavaScript is not staged in ${dir}. Run "npm start" again, which stages it, or reinstall Take Studio`);
  }
  return dir;
}
