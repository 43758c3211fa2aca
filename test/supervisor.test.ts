import { describe, expect, it as base } from 'vitest';
import { recoverExpired } from '../main/engine/recoverySweep.ts';
import { DEFAULT_ENGINE_OPTIONS, type EngineOptions } from '../main/domain/engineOptions.ts';
import { Supervisor } from '../main/engine/supervisor.ts';
import type { PollResult } from '../main/providers/port.ts';
import type { RemoteRef } from '../main/domain/tasks/model.ts';
import { imageTask } from './helpers/engine.ts';
import { FakeProvider, memoryOutputs, memoryReceipts, sweepOf } from './helpers/recording.ts';
import { openUnderTest } from './helpers/storeUnderTest.ts';
import { storeKinds } from './helpers/stores.ts';
import { until } from './helpers/wait.ts';

/** A provider whose job never ends and whose poll waits until it is aborted: the task stays in flight. */
class HangingProvider extends FakeProvider {
  override poll(_remote: RemoteRef, signal?: AbortSignal): Promise<PollResult> {
    return new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
  }
}

/** No render runs in these tests; the paths are never used. */
const LOCAL = { databaseId: 'f'.repeat(32), dataDir: '/nonexistent', media: { ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe' } };

const OPTIONS: EngineOptions = { ...DEFAULT_ENGINE_OPTIONS, leaseMs: 60_000, tickMs: 3_600_000 };

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

/** A provider that quotes (so the executor waits before the mark) only when the test says. */
class SlowQuoteProvider extends FakeProvider {
  quotes = 0;
  release: () => void = () => undefined;
  override readonly capabilities = { ...new FakeProvider().capabilities, quote: 'endpoint' as const };
  quote() {
    this.quotes++;
    return new Promise<null>((resolve) => (this.release = () => resolve(null)));
  }
}

describe.each(storeKinds())('on the $kind store', (kind) => {
  const setup = () => openUnderTest(kind);
  const it = base.skipIf(!kind.available);

  describe('supervisor after a system sleep', () => {
    it('renews its own leases before anybody judges them expired, even when another process wakes first', async () => {
      const { store, repo, owners, projectId, clock, sleep, pass, leaseNow } = await setup();
      const { id } = await repo.enqueue(imageTask(projectId), clock.now());
      const make = (owner: string) =>
        new Supervisor(
          {
            repo,
            owners,
            transaction: (fn) => store.transaction(fn),
            providers: () => new HangingProvider(),
            clock,
            outputs: memoryOutputs(), receipts: memoryReceipts(),
            ...LOCAL,
            owner: { id: owner, hostname: 'test-host', machine: 'test-machine', boot: 'test-boot', pid: process.pid },
          },
          OPTIONS,
        );
      const a = make('a');
      const b = make('b');
      await a.start();
      await b.start();
      await until(async () => (await repo.get(id))!.status === 'SUBMITTED');
      expect(await repo.get(id)).toMatchObject({ status: 'SUBMITTED', leaseOwner: 'a' });

      // The lid closes for an hour: the wall clock moves on, the monotonic clock does not.
      await sleep(3_600_000);
      await b.tick();
      await a.tick();
      await settle();
      expect(await repo.get(id)).toMatchObject({ status: 'SUBMITTED', leaseOwner: 'a' });
      expect((await repo.get(id))!.leaseExpiresAt).toBeGreaterThan(await leaseNow());

      await pass(OPTIONS.leaseMs / 2);
      await b.tick();
      expect((await repo.get(id))!.leaseOwner).toBe('a');
      expect((await repo.events(id)).map((e) => e.toStatus)).toEqual(['PENDING', 'RUNNING', 'RUNNING', 'SUBMITTED']);
      await Promise.all([a.stop(), b.stop()]);
    });

    it('judges the leases of a process that stopped (SIGSTOP) once they run out', async () => {
      const { store, repo, owners, projectId, clock, pass } = await setup();
      const { id } = await repo.enqueue(imageTask(projectId), clock.now());
      await repo.claim('image', 4, OPTIONS.leaseMs, { owner: 'stopped', now: clock.now() });
      const b = new Supervisor(
        { repo, owners, transaction: (fn) => store.transaction(fn), providers: () => new FakeProvider(), clock, outputs: memoryOutputs(), receipts: memoryReceipts(), ...LOCAL, owner: { id: 'b', hostname: 'h', machine: 'm', boot: 'test-boot', pid: process.pid } },
        OPTIONS,
      );
      await b.start();
      await settle();
      expect((await repo.get(id))!.leaseOwner).toBe('stopped');
      await pass(OPTIONS.leaseMs + 1);
      await b.tick();
      await b.tick();
      await until(async () => (await repo.get(id))!.status === 'SUCCEEDED');
      await b.stop();
      expect(await repo.get(id)).toMatchObject({ status: 'SUCCEEDED' });
    });
  });

  describe('supervisor, one executor per task', () => {
    it('does not start a second executor when a task it is still running comes back to it', async () => {
      const { store, repo, owners, projectId, clock, pass } = await setup();
      const provider = new SlowQuoteProvider();
      const { id } = await repo.enqueue(imageTask(projectId), clock.now());
      const a = new Supervisor(
        { repo, owners, transaction: (fn) => store.transaction(fn), providers: () => provider, clock, outputs: memoryOutputs(), receipts: memoryReceipts(), ...LOCAL, owner: { id: 'a', hostname: 'h', machine: 'm', boot: 'test-boot', pid: process.pid } },
        OPTIONS,
      );
      await a.start();
      await until(() => provider.quotes === 1);
      // A stalls past its lease; another process requeues the row; A claims it again on its next tick.
      await pass(OPTIONS.leaseMs + 1);
      await recoverExpired(sweepOf(store), clock.now(), new Set(), () => undefined);
      expect((await repo.get(id))!.status).toBe('PENDING');
      await a.tick();
      await settle();
      expect(provider.quotes).toBe(1);
      provider.release();
      await until(async () => (await repo.get(id))!.status === 'SUCCEEDED');
      await a.stop();
      expect(provider.keys).toHaveLength(1);
      expect((await repo.get(id))!.status).toBe('SUCCEEDED');
    });
  });
});
