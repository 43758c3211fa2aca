import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProviderAdapter } from '../../main/providers/port.ts';
import { openProviders } from '../../main/providers/registry.ts';
import { startSimulator } from '../../main/simulator/server.ts';
import { createSupervisor, openStudio } from '../../main/studio.ts';
import { median } from './pipeline.ts';

const JOBS = 60;
/** Job times from 0.5 s to 6 s, in a fixed shuffled order. */
const durationOf = (i: number) => 500 + ((i * 7919) % 12) * 500;

function percentile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Counts the status calls an adapter makes (a stream opened counts as one); `stream: false` hides its stream. */
function counted(adapter: ProviderAdapter, calls: { status: number }, stream: boolean): ProviderAdapter {
  return new Proxy(adapter, {
    get(target, name, receiver) {
      if (name === 'watch' && !stream) return undefined;
      const value = Reflect.get(target, name, receiver);
      if ((name !== 'poll' && name !== 'watch') || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return (...args: unknown[]) => {
        calls.status++;
        return value.apply(target, args);
      };
    },
  });
}

/**
 * JOBS simulator images of mixed durations through the engine with its default settings: from each job's end
 * at the simulator (accepted + its duration) to its output saved on the row, and the status calls made per job
 * per minute of job time. `stream: false` makes the engine poll, on the schedule it learns.
 */
export async function detectOnce(stream = true) {
  const sim = await startSimulator({});
  const dir = mkdtempSync(join(tmpdir(), 'studio-bench-detect-'));
  writeFileSync(join(dir, 'settings.json'), JSON.stringify({ engine: { concurrency: { image: 12 } }, providers: { simulator: { baseUrl: sim.url } } }));
  const studio = await openStudio(dir);
  const providers = await openProviders(studio.settings, dir, {});
  const calls = { status: 0 };
  const engine = createSupervisor(studio, (id) => {
    const adapter = providers.get(id);
    return adapter && counted(adapter, calls, stream);
  });
  try {
    const projectId = (await studio.projects.ensure('Detect', Date.now())).id;
    const ids: number[] = [];
    for (let i = 0; i < JOBS; i++) {
      ids.push((await studio.tasks.enqueue({ projectId, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: `fox ${i}`, duration_ms: durationOf(i) } }, Date.now())).id);
    }
    engine.start();
    const end = Date.now() + 180_000;
    const allDone = async () => {
      for (const id of ids) if ((await studio.tasks.get(id))!.status !== 'SUCCEEDED') return false;
      return true;
    };
    while (!(await allDone())) {
      if (Date.now() > end) throw new Error('the detection benchmark did not finish');
      await new Promise((r) => setTimeout(r, 50));
    }
    const charges = new Map(sim.charges.map((c) => [c.requestId, c]));
    const late: number[] = [];
    let jobMinutes = 0;
    for (const id of ids) {
      const task = (await studio.tasks.get(id))!;
      const charge = charges.get(task.remoteRequestId!)!;
      const duration = Number((task.input as { duration_ms: number }).duration_ms);
      late.push(task.finishedAt! - (charge.at + duration));
      jobMinutes += duration / 60_000;
    }
    return { late, requestsPerJobMinute: calls.status / jobMinutes };
  } finally {
    await engine.stop();
    await providers.close();
    await studio.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchDetect(runs = 3) {
  const results = [];
  for (let i = 0; i < runs; i++) results.push(await detectOnce());
  const medians = results.map((r) => median(r.late));
  const p95s = results.map((r) => percentile(r.late, 0.95));
  const rates = results.map((r) => Number(r.requestsPerJobMinute.toFixed(1)));
  const polled = await detectOnce(false);
  return {
    jobs: JOBS,
    medianMs: median(medians),
    medians,
    p95Ms: median(p95s),
    p95s,
    requestsPerJobMinute: median(rates),
    rates,
    pollMedianMs: median(polled.late),
    pollP95Ms: percentile(polled.late, 0.95),
    pollRequestsPerJobMinute: Number(polled.requestsPerJobMinute.toFixed(1)),
  };
}
