import { mkdirSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';
import { seededRandom } from '../../main/simulator/faults.ts';
import { openStudio, type Studio } from '../../main/studio.ts';
import type { TaskEvent } from '../../main/domain/tasks/model.ts';
import { FAL_MODEL, falQueue, realMedia, type Ledger } from '../fakes/providers.ts';
import { startFake, type FakeServer } from '../fakes/server.ts';
import { startStudio, writeSettings } from './processes.ts';
import { tempDir } from './tmp.ts';

/** Share of submits whose answer the stand-in drops after queueing (and charging) the request. */
const DROP = 0.15;

/**
 * The set-up of a chaos run against fal: a queue stand-in that drops a share of the submits' answers after the
 * request was queued, and a data folder with `tasks` FLUX images enqueued, each with its own prompt.
 */
export async function chaosFal(opts: { seed: number; tasks: number; lookup?: Record<string, number> }) {
  const random = seededRandom(opts.seed);
  const ledger: Ledger = { charged: [] };
  const drops = { count: 0 };
  const fake = await startFake(
    falQueue(ledger, (await realMedia()).png, {
      // Longer than a quick first lookup's delay: a request still queued is not listed yet, and is looked for again.
      jobMs: 2_500,
      // The answer takes a while: kills land inside the send window, after the request was queued.
      submitDelayMs: 150,
      dropAnswer: () => random() < DROP && ++drops.count > 0,
    }),
  );
  const dataDir = tempDir();
  writeSettings(dataDir, {
    engine: {
      leaseMs: 3_000,
      tickMs: 50,
      concurrency: { image: 6, clip: 0, speech: 0, render: 0 },
      poll: { intervalMs: 100, maxIntervalMs: 300, deadlineMs: 20_000 },
      ...(opts.lookup && { lookup: opts.lookup }),
    },
  });
  const env = { STUDIO_FAL_BASE_URL: fake.url, FAL_KEY: 'fal-key-0123456789' };

  const studio = await openStudio(dataDir);
  const project = await studio.projects.ensure('Chaos fal', Date.now());
  for (let i = 0; i < opts.tasks; i++) {
    await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: FAL_MODEL, input: { prompt: `fox number ${i}` }, maxAttempts: 8 }, Date.now());
  }
  return { random, ledger, drops, fake, dataDir, env, studio };
}

export type ChaosFal = Awaited<ReturnType<typeof chaosFal>>;

/** A worker process SIGKILLed at a random moment of its first seconds, some inside the send window. */
export async function killWorkerAtRandom(c: ChaosFal): Promise<void> {
  const worker = startStudio(c.dataDir, ['worker'], c.env);
  await worker.waitFor(/started as/);
  await new Promise((r) => setTimeout(r, 300 + c.random() * 2_500));
  worker.child.kill('SIGKILL');
  await worker.exited;
}

/** Every task with its history once the run is over (the studio is closed), set against what the stand-in charged. */
export async function chaosOutcome(studio: Studio, fake: FakeServer, ledger: Ledger) {
  const tasks = await studio.tasks.list();
  const events = new Map<number, TaskEvent[]>();
  for (const t of tasks) events.set(t.id, await studio.tasks.events(t.id));
  await studio.close();

  // The stand-in numbers requests in the order the submits arrive: the n-th POST is fal-req-n.
  const promptOf = new Map(fake.seen.filter((s) => s.method === 'POST').map((s, i) => [`fal-req-${i + 1}`, (JSON.parse(s.body) as { prompt: string }).prompt]));
  const chargesPerPrompt = new Map<string, number>();
  for (const id of ledger.charged) chargesPerPrompt.set(promptOf.get(id)!, (chargesPerPrompt.get(promptOf.get(id)!) ?? 0) + 1);
  const everUnknown = tasks.filter((t) => events.get(t.id)!.some((e) => e.toStatus === 'OUTCOME_UNKNOWN'));
  const adopted = tasks.filter((t) => events.get(t.id)!.some((e) => e.actor === 'engine' && e.reason.startsWith('adopted by the studio after a lookup')));
  const needPerson = tasks.filter((t) => t.status === 'OUTCOME_UNKNOWN');
  const wrongAdoptions = adopted.filter((t) => promptOf.get(t.remoteRequestId!) !== (t.input as { prompt: string }).prompt);
  // A worker killed after marking the send and before its request reached fal leaves an unknown outcome that no
  // listing will ever show: what a lookup can settle is only the ones fal received.
  const received = new Set(promptOf.values());
  const neverReceived = everUnknown.filter((t) => !received.has((t.input as { prompt: string }).prompt));
  return { tasks, events, chargesPerPrompt, everUnknown, adopted, needPerson, wrongAdoptions, neverReceived };
}

/** The run met unknown outcomes, adopted no request sent for another prompt, and paid for no prompt twice. */
export function expectPaidOnce(outcome: Awaited<ReturnType<typeof chaosOutcome>>): void {
  expect(outcome.everUnknown.length).toBeGreaterThan(0);
  expect(outcome.wrongAdoptions.map((t) => [t.id, t.remoteRequestId])).toEqual([]);
  expect([...outcome.chargesPerPrompt.values()].filter((n) => n > 1)).toEqual([]);
}

/** The run's figures, kept under test-results/ and printed. */
export function keepFigures(file: string, title: string, figures: Record<string, unknown>): void {
  mkdirSync('test-results', { recursive: true });
  writeFileSync(`test-results/${file}`, JSON.stringify(figures, null, 2));
  console.log(title, figures);
}
