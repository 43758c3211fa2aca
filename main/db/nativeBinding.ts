import { createRequire } from 'node:module';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { Database, Options } from 'better-sqlite3';

type Driver = typeof BetterSqlite3;

const require = createRequire(import.meta.url);
let chosen: { driver: Driver; binding: string } | undefined;

/**
 * better-sqlite3 is a native module: its binary serves one runtime. Node's build in node_modules (12, which runs
 * on Node 20) serves the CLI, the loopback host and the tests. The desktop app loads the build staged for
 * Electron (scripts/electron-native.mjs, better-sqlite3 13) with that version's own JavaScript from `driverDir`,
 * since 12's and 13's JavaScript speak to their binaries differently; without `driverDir`, node_modules'
 * JavaScript loads `binding`. Through better-sqlite3's `nativeBinding` option (docs/api.md of better-sqlite3).
 * Set once, before any open.
 */
export function useNativeBinding(binding: string, driverDir?: string): void {
  const driver = (driverDir ? require(join(driverDir, 'lib', 'index.js')) : require('better-sqlite3')) as Driver;
  chosen = { driver, binding };
}

/** A connection with the driver and binding this process's runtime needs; node_modules' by default. */
export function connect(path: string, options: Options = {}): Database {
  if (!chosen) return new (require('better-sqlite3') as Driver)(path, options);
  return new chosen.driver(path, { ...options, nativeBinding: chosen.binding });
}
