import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../main/simulator/server.ts';
import type { Task } from '../main/domain/tasks/model.ts';
import { chargesOf } from './helpers/charges.ts';
import { postgresAvailable } from './helpers/postgres.ts';
import { runStudio, startStudio } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import { storeKinds } from './helpers/stores.ts';
import { teamOn } from './helpers/team.ts';
import { until } from './helpers/wait.ts';

/**
 * A team machine whose wall clock is wrong, in a real worker process whose Date is shifted by a preload, on a real
 * PostgreSQL, against the simulator over HTTP, whose request listing is what the lookups ask. The simulator runs in
 * this process on the right clock, as a provider would. Its answer to the send is dropped after it accepted (and
 * charged) the request: only a lookup can tell the request was made.
 */

const SHIFT = fileURLToPath(new URL('./helpers/clockShift.mjs', import.meta.url));
const HOUR = 3_600_000;
const SETTINGS = {
  engine: { leaseMs: 3_000, tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200 }, lookup: { intervalMs: 300, tries: 3 } },
};
const postgres = storeKinds().find((k) => k.kind === 'postgres')!;

describe.skipIf(!postgresAvailable)('a team machine whose clock is wrong', () => {
  it.each([
    ['an hour ahead', HOUR, /1 h 0 min ahead of the team database's/, '1 h 0 min ahead'],
    ['3 minutes ahead', 3 * 60_000, /3 min 0 s ahead of the team database's/, '3 min 0 s ahead'],
    ['an hour behind', -HOUR, /1 h 0 min behind the team database's/, '1 h 0 min behind'],
  ])(
    '%s: after a dropped answer its lookup finds the request it sent and adopts it; nothing is paid twice',
    async (_, shiftMs, warned, shown) => {
      const sim: RunningSimulator = await simulatorForTest({ jobMs: 200, faults: { submit: ['drop-after-accept'] } });
      const { store, machine, where } = await teamOn(postgres, { STUDIO_SIMULATOR_BASE_URL: sim.url });
      const m = machine('skewed', SETTINGS);
      const project = await store.projects.ensure('Wrong clock', Date.now());
      const { id } = await store.tasks.enqueue(
        { projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'a lighthouse at dusk' }, maxAttempts: 3 },
        Date.now(),
      );

      const sentBy = Date.now();
      const worker = startStudio(m.dataDir, ['worker'], { ...m.env, NODE_OPTIONS: `--import ${SHIFT}`, CLOCK_SHIFT_MS: String(shiftMs) });
      // Warned at start, in words: which way, how far, and what to do.
      await worker.waitFor(warned);
      expect(worker.stderr()).toMatch(/set this computer's clock right: turn on automatic date and time/);

      // `studio team status`, run on a computer whose clock is right, shows how far off the worker's machine is.
      const status = await runStudio(m.dataDir, ['team', 'status'], { STUDIO_DATABASE_URL: where });
      expect(status.code, status.stderr).toBe(0);
      const row = status.stdout.split('\n').find((l) => l.startsWith('skewed'));
      expect(row).toMatch(new RegExp(`^skewed +1 +\\S+ +${shown} \\(set it right\\)$`));
      expect(status.stdout).toMatch(/this computer's clock: within 0\.\d s of the database's/);

      // The lookups settle it, or leave it to the person; a person then does what the studio suggests.
      let task: Task | undefined;
      await until(async () => {
        task = await store.tasks.get(id);
        if (task!.status === 'SUCCEEDED') return true;
        return task!.status === 'OUTCOME_UNKNOWN' && /it needs your decision$/.test((await store.tasks.events(id)).at(-1)!.reason);
      }, 30_000);
      if (task!.status === 'OUTCOME_UNKNOWN') {
        const resolved = await runStudio(m.dataDir, ['resolve', String(id), '--resubmit'], m.env);
        expect(resolved.code, resolved.stderr).toBe(0);
        await until(async () => (await store.tasks.get(id))!.status === 'SUCCEEDED', 30_000);
      }
      worker.child.kill('SIGTERM');
      await worker.exited;

      expect(chargesOf(sim, id)).toHaveLength(1);
      const done = (await store.tasks.get(id))!;
      expect(done.status).toBe('SUCCEEDED');
      expect(done.attempts).toBe(1);
      // The send's window is on the database's clock (the same host's as this test's), not the worker's.
      expect(Math.abs(done.submitStartedAt! - sentBy)).toBeLessThan(30_000);
      const events = await store.tasks.events(id);
      expect(events.some((e) => /^adopted by the studio after a lookup/.test(e.reason))).toBe(true);
      // Every time the worker wrote is the database's clock as it measured it, not its own.
      for (const e of events) expect(Math.abs(e.at - sentBy)).toBeLessThan(60_000);
    },
    60_000,
  );

  it('studio reconcile on a machine an hour behind offers the request a machine an hour ahead sent; adopting it pays once', async () => {
    const sim: RunningSimulator = await simulatorForTest({ jobMs: 200, faults: { submit: ['drop-after-accept'] } });
    const { store, machine } = await teamOn(postgres, { STUDIO_SIMULATOR_BASE_URL: sim.url });
    // No lookup falls due while this test runs: only the person's reconcile looks.
    const m = machine('sender', { engine: { ...SETTINGS.engine, lookup: { intervalMs: HOUR, tries: 10 } } });
    const behind = { ...m.env, NODE_OPTIONS: `--import ${SHIFT}`, CLOCK_SHIFT_MS: String(-HOUR) };
    const ahead = { ...m.env, NODE_OPTIONS: `--import ${SHIFT}`, CLOCK_SHIFT_MS: String(HOUR) };
    const project = await store.projects.ensure('Wrong clocks', Date.now());
    const { id } = await store.tasks.enqueue(
      { projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'a harbour at dawn' }, maxAttempts: 3 },
      Date.now(),
    );
    const worker = startStudio(m.dataDir, ['worker'], ahead);
    await until(async () => (await store.tasks.get(id))!.status === 'OUTCOME_UNKNOWN', 20_000);
    worker.child.kill('SIGTERM');
    await worker.exited;
    const [charge] = chargesOf(sim, id);

    const found = await runStudio(m.dataDir, ['reconcile', String(id), '--json'], behind);
    expect(found.code, found.stderr).toBe(0);
    expect((JSON.parse(found.stdout) as { candidates: { requestId: string }[] }).candidates.map((c) => c.requestId)).toEqual([charge!.requestId]);
    const adopted = await runStudio(m.dataDir, ['resolve', String(id), '--adopt', charge!.requestId], behind);
    expect(adopted.code, adopted.stderr).toBe(0);
    const collect = startStudio(m.dataDir, ['worker'], behind);
    await until(async () => (await store.tasks.get(id))!.status === 'SUCCEEDED', 20_000);
    collect.child.kill('SIGTERM');
    await collect.exited;
    expect(chargesOf(sim, id)).toHaveLength(1);
  }, 60_000);
});
