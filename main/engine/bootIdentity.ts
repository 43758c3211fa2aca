import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { uptime } from 'node:os';

/**
 * Which running system this process's pid belongs to: one boot of one kernel, and on Linux one pid namespace
 * (containers on one host share the kernel's boot, not their pids). A machine id kept in a data folder is not
 * enough to judge a pid by: a copied data folder, a volume shared by two containers or a home folder on a network
 * share carries the same id to another system, where that pid means nothing. Read once per process; null when it
 * cannot be read, and then no pid is judged at all, only leases.
 *
 * STUDIO_BOOT_ID replaces it, for tests only: a test's process plays one of another computer.
 */
export function bootIdentity(): string | null {
  if (known === undefined) known = process.env.STUDIO_BOOT_ID || read();
  return known;
}

let known: string | null | undefined;

function read(): string | null {
  try {
    if (process.platform === 'linux') {
      const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      return boot ? `${boot} ${readlinkSync('/proc/self/ns/pid')}` : null;
    }
    if (process.platform === 'darwin') {
      const boot = execFileSync('sysctl', ['-n', 'kern.bootsessionuuid'], { encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
      return boot || null;
    }
    // Elsewhere the boot time stands for the boot, to the second: two readings that disagree only make this
    // machine wait for the leases to run out, never judge a pid of another system.
    const bootedAt = Math.round(Date.now() / 1000 - uptime());
    return Number.isFinite(bootedAt) && uptime() > 0 ? `booted ${bootedAt}` : null;
  } catch {
    return null;
  }
}

/**
 * Which run of the monotonic clock this process reads: performance.now() counts from this process's start, so two
 * readings compare only when both name the same process of the same boot.
 */
export function monotonicRun(): string {
  return `${bootIdentity() ?? 'boot not known'}, pid ${process.pid} from ${performance.timeOrigin}`;
}
