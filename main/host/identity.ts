import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writePrivateFile } from '../config/privateFile.ts';

/**
 * What a browser tab needs to find the loopback host again after it restarts on the same data folder: the
 * token (so the tab's copy stays valid) and the port it last listened on (so the tab's address does).
 */
export interface HostIdentity {
  token: string;
  /** The port the host last listened on, which it asks for again; null before its first start. */
  port: number | null;
}

export const hostFilePath = (dataDir: string): string => join(dataDir, 'host.json');

const TOKEN = /^[0-9a-f]{48}$/;
const fresh = (): HostIdentity => ({ token: randomBytes(24).toString('hex'), port: null });

/**
 * The identity kept in the data folder, or a new one. A file anyone but this user can read (or that belongs
 * to someone else) may have given its token away, so its token is not used again. Windows has no such mode
 * bits; there the data folder sits in the user's own profile, which only they can read.
 */
export function readHostIdentity(dataDir: string): HostIdentity {
  const path = hostFilePath(dataDir);
  let text: string;
  try {
    const stats = statSync(path);
    if (process.platform !== 'win32' && ((stats.mode & 0o077) !== 0 || stats.uid !== process.getuid?.())) return fresh();
    text = readFileSync(path, 'utf8');
  } catch {
    return fresh();
  }
  try {
    const kept = JSON.parse(text) as { token?: unknown; port?: unknown };
    if (typeof kept.token !== 'string' || !TOKEN.test(kept.token)) return fresh();
    const port = Number.isInteger(kept.port) && (kept.port as number) > 0 && (kept.port as number) <= 65535 ? (kept.port as number) : null;
    return { token: kept.token, port };
  } catch {
    return fresh();
  }
}

/** Writes the identity readable by this user alone (0600), whole or not at all. */
export function writeHostIdentity(dataDir: string, identity: HostIdentity): void {
  writePrivateFile(hostFilePath(dataDir), JSON.stringify({ token: identity.token, port: identity.port }));
}
