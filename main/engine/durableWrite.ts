import type { Clock } from '../domain/ports.ts';
import { databaseUnavailable, type EngineHealth } from './health.ts';

const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 10_000;

/**
 * Runs a database write that records something paid for, retrying with backoff while the database
 * cannot be written (locked, full) instead of dropping what it records. Gives up only when the engine
 * stops (undefined); what it carried is on disk too (the receipt journal, the result record).
 */
export async function untilWritten<T>(
  write: () => Promise<T>,
  ports: { clock: Clock; health: EngineHealth },
  signal: AbortSignal,
): Promise<T | undefined> {
  for (let wait = FIRST_WAIT_MS; ; wait = Math.min(LONGEST_WAIT_MS, wait * 2)) {
    try {
      const result = await write();
      ports.health.clear();
      return result;
    } catch (err) {
      if (!databaseUnavailable(err)) throw err;
      ports.health.blocked(err, ports.clock.now());
      if (signal.aborted) return undefined;
      await ports.clock.sleep(wait, signal).catch(() => undefined);
    }
  }
}
