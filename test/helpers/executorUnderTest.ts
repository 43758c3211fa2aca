import type { ExecutorOptions, ExecutorPorts } from '../../main/engine/executorPorts.ts';
import { EngineHealth } from '../../main/engine/health.ts';
import { dataFolderMedia } from '../../main/media/mediaFolder.ts';
import { OutputLocator } from '../../main/engine/outputLocator.ts';
import type { TaskStore } from '../../main/store/port.ts';
import { memoryOutputs, memoryReceipts, type FakeProvider } from './recording.ts';
import type { StoreUnderTest } from './storeUnderTest.ts';
import { tempDir } from './tmp.ts';

/** One executor run on a store of either kind, its time moved by hand, outputs and receipts in memory. */

export const LEASE = 10_000;
export const OWNER = 'worker-a';
const OPTIONS: Omit<ExecutorOptions, 'database'> = { owner: OWNER, leaseMs: LEASE, poll: { intervalMs: 1_000, maxIntervalMs: 5_000, deadlineMs: 60_000 } };

/** The executor's options on this store (its receipts and keys name its database), run by `owner`. */
export const optionsOf = (s: StoreUnderTest, owner = OWNER): ExecutorOptions => ({ ...OPTIONS, owner, database: s.store.databaseId });

export function executorPorts(s: StoreUnderTest, repo: TaskStore, provider: FakeProvider, logs: string[]): ExecutorPorts {
  return {
    repo,
    provider,
    clock: s.clock,
    outputs: memoryOutputs(),
    files: new OutputLocator(s.repo, dataFolderMedia(tempDir(), 'test')),
    receipts: memoryReceipts(),
    health: new EngineHealth(() => undefined),
    random: () => 0.5,
    log: (m) => logs.push(m),
  };
}

/** The store with its boundary write replaced by `mark`, to play what happens elsewhere while that write is out. */
export function withMark(repo: TaskStore, mark: TaskStore['markSubmitStarted']): TaskStore {
  return new Proxy(repo, { get: (target, prop) => (prop === 'markSubmitStarted' ? mark : Reflect.get(target, prop).bind(target)) });
}
