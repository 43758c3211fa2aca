import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alive } from '../../main/media/staleParts.ts';
import { freePort } from './ports.ts';

/**
 * A throwaway PostgreSQL cluster in a temporary folder, on a free port of 127.0.0.1, trusting local
 * connections; removed with everything in it when stopped. Used by the tests (one per run) and the benchmarks.
 */
export interface Cluster {
  port: number;
  /** The folder holding the data directory, the socket and the server's log. */
  dir: string;
  /** Where the PostgreSQL programs are (pg_dump among them). */
  bin: string;
  url(database?: string): string;
  /** Stops the server (fast shutdown: connections are cut), keeping its data, as an outage would. */
  stopServer(): Promise<void>;
  /** Starts the stopped server again on the same port. */
  startServer(): Promise<void>;
  /** Stops the server at once (immediate shutdown: no checkpoint, nothing flushed), as a crash of the server would. */
  crashServer(): Promise<void>;
  stop(): void;
}

export class ClusterUnavailable extends Error {}

const PREFIX = 'studio-pg-';
const SUPERUSER = 'studio';

/** The folder of initdb and pg_ctl: pg_config's, then the PATH's, then Debian's versioned folders, newest first. */
function findBin(): string | null {
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (existsSync(join(dir, 'initdb'))) return dir;
  } catch {
    // No pg_config: look elsewhere.
  }
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  }
  const debian = '/usr/lib/postgresql';
  if (!existsSync(debian)) return null;
  const versions = readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (existsSync(join(debian, v, 'bin', 'initdb'))) return join(debian, v, 'bin');
  return null;
}

/** PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const ids = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return { uid: ids('-u'), gid: ids('-g') };
  } catch {
    throw new ClusterUnavailable('running as root, and there is no `postgres` user to run the server as');
  }
}

function run(bin: string, program: string, args: string[], as: { uid: number; gid: number } | undefined, cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(join(bin, program), args, { cwd, uid: as?.uid, gid: as?.gid, encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      if (!err) return resolve();
      const said = `${stderr}\n${stdout}`.trim().split('\n').filter(Boolean).slice(-3).join(' / ');
      reject(new ClusterUnavailable(`${program} failed: ${said || err.message}`));
    });
  });
}

function stopIn(bin: string, dir: string, as: { uid: number; gid: number } | undefined): void {
  const data = join(dir, 'data');
  if (existsSync(join(data, 'postmaster.pid'))) {
    try {
      execFileSync(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], { cwd: dir, uid: as?.uid, gid: as?.gid, stdio: 'ignore', timeout: 30_000 });
    } catch {
      // Already stopped, or stopping: the folder goes either way.
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

/** Clusters left by runs that were killed before they could stop them. */
function sweepAbandoned(bin: string, as: { uid: number; gid: number } | undefined): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(tmpdir(), name);
    let owner: number;
    try {
      owner = Number(readFileSync(join(dir, 'owner'), 'utf8'));
    } catch {
      continue;
    }
    if (Number.isInteger(owner) && owner > 0 && !alive(owner)) stopIn(bin, dir, as);
  }
}

/**
 * Starts a cluster (about a second). Throws ClusterUnavailable saying why when PostgreSQL is not installed or
 * does not start. Its server syncs to disk (the studio refuses one that does not: see durability.ts) but commits
 * without waiting by default, so a session that does not ask for synchronous commits is caught by the crash
 * tests. `settings` are more lines of postgresql.conf (a later line of the same name wins).
 */
export async function startCluster(settings: string[] = []): Promise<Cluster> {
  const bin = findBin();
  if (!bin) throw new ClusterUnavailable('initdb was not found: install PostgreSQL (Debian: apt-get install postgresql)');
  const as = serverUser();
  sweepAbandoned(bin, as);
  const dir = mkdtempSync(join(tmpdir(), PREFIX));
  writeFileSync(join(dir, 'owner'), String(process.pid));
  if (as) chownSync(dir, as.uid, as.gid);
  const data = join(dir, 'data');
  try {
    await run(bin, 'initdb', ['-D', data, '-A', 'trust', '-U', SUPERUSER, '-E', 'UTF8', '--no-locale', '--no-sync'], as, dir);
    writeFileSync(
      join(data, 'postgresql.conf'),
      [
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${dir}'`,
        'synchronous_commit = off',
        'max_connections = 300',
        "log_min_messages = 'warning'",
        ...settings,
        '',
      ].join('\n'),
      { flag: 'a' },
    );
    let port = 0;
    const startServer = () => run(bin, 'pg_ctl', ['-D', data, '-o', `-p ${port}`, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start'], as, dir);
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        await startServer();
        break;
      } catch (err) {
        // Another program may have taken the port between finding it free and the server binding it.
        const log = existsSync(join(dir, 'server.log')) ? readFileSync(join(dir, 'server.log'), 'utf8') : '';
        if (attempt < 3 && /could not bind|address already in use/i.test(log)) continue;
        throw new ClusterUnavailable(`${(err as Error).message}${log ? ` (server log: ${log.trim().split('\n').slice(-2).join(' / ')})` : ''}`);
      }
    }
    return {
      port,
      dir,
      bin,
      url: (database = 'postgres') => `postgres://${SUPERUSER}@127.0.0.1:${port}/${database}`,
      stopServer: () => run(bin, 'pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop'], as, dir),
      startServer,
      crashServer: () => run(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '60', 'stop'], as, dir),
      stop: () => stopIn(bin, dir, as),
    };
  } catch (err) {
    stopIn(bin, dir, as);
    throw err;
  }
}
