/** What the supervisor is built with: the stores, providers, clock and folders it works with. */
import type { Clock, OutputStore, ReceiptLog } from '../domain/ports.ts';
import type { ProviderAdapter } from '../providers/port.ts';
import type { OwnerStore, Store, TaskStore } from '../store/port.ts';
import type { OwnPrices } from './estimator.ts';
import type { OutputLocator } from './outputLocator.ts';
import type { OwnerIdentity } from './owners.ts';

export interface SupervisorDeps {
  repo: TaskStore;
  owners: OwnerStore;
  /** Runs writes that belong together (a recovery sweep, a replay of receipts) as one transaction. */
  transaction: Store['transaction'];
  providers: (id: string) => ProviderAdapter | undefined;
  clock: Clock;
  outputs: OutputStore;
  receipts: ReceiptLog;
  /** Why the database file this process opened is no longer the one at its path (deleted, replaced), or null. */
  databaseMoved?: () => string | null;
  /** The database as a person knows it, in what is said when it cannot be used ("the team database at …"). */
  database?: string;
  /** The database's own id (Store.databaseId): in every idempotency key and receipt of its tasks. */
  databaseId: string;
  /** How long a write waits for another program's lock (none given: the usual wait); shortened while paused. */
  waitForLocks?: (ms?: number) => void;
  /** Where renders are written, and the ffmpeg and ffprobe that make and check them. */
  dataDir: string;
  /** Where saved results are found, and renders saved: the data folder's when not given (no media folder). */
  files?: OutputLocator;
  media: { ffmpegPath: string; ffprobePath: string };
  random?: () => number;
  log?: (message: string) => void;
  owner?: OwnerIdentity;
  /** Prices the person set for models with no documented one (settings "prices"). */
  prices?: () => OwnPrices;
  /** Measures this machine's clock against the team database's, kept on the owner's row; the clock follows it. */
  checkClock?: (owner: string) => Promise<number | null>;
}
