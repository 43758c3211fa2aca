import type { Options } from 'better-sqlite3';

let binding: string | undefined;

/**
 * better-sqlite3 is a native module built for one runtime's ABI: Node's build (in node_modules) serves the
 * CLI, the loopback host and the tests; the desktop app loads a build for Electron's ABI from its own path,
 * through better-sqlite3's `nativeBinding` option (docs/api.md of better-sqlite3). Set once, before any open.
 */
export function useNativeBinding(path: string): void {
  binding = path;
}

/** Options for every connection this process opens, carrying the binding its runtime needs. */
export function connectionOptions(options: Options = {}): Options {
  return binding ? { ...options, nativeBinding: binding } : options;
}
