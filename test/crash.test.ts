import { existsSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { StopPoint } from '../main/engine/stopPoints.ts';
import type { Faults } from '../main/simulator/faults.ts';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { openStudio } from '../main/studio.ts';
import type { Status } from '../main/tasks/model.ts';
import { runStudio, startStudio, writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * Real worker processes, killed with SIGKILL at each boundary of the executor, against the simulator
 * over real HTTP, which counts what it charged. The lease is a minute long, so a test that finishes in
 * seconds also proves a dead owner's rows were recovered at once, not when its lease ran out.
 */

let sim: RunningSimulator;
afterEach(async () => sim?.close());

async function setup(engine: Record<string, unknown> = {}, faults: Faults = {}) {
  sim = await startSimulator({ jobMs: 800, faults });
  const dataDir = tempDir();
  writeSettings(dataDir, { engine: { leaseMs: 60_000, tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200 }, ...engine } });
  const env = { STUDIO_SIMULATOR_BASE_URL: sim.url };
  return { dataDir, env };
}

async function enqueue(dataDir: string, count = 1): Promise<number[]> {
  const studio = await openStudio(dataDir);
  try {
    const project = await studio.projects.ensure('Crash', Date.now());
    const ids: number[] = [];
    for (let i = 0; i < count; i++) {
      const task = await studio.tasks.enqueue(
        { projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: `fox ${i}` } },
        Date.now(),
      );
      ids.push(task.id);
    }
    return ids;
  } finally {
    await studio.close();
  }
}

async function readTask(dataDir: string, id: number) {
  const studio = await openStudio(dataDir);
  try {
    return { task: (await studio.tasks.get(id))!, events: await studio.tasks.events(id) };
  } finally {
    await studio.close();
  }
}

const chargesFor = (id: number) => sim.charges.filter((c) => c.idempotencyKey?.startsWith(`studio-task-${id}-`));

const BOUNDARIES: [StopPoint, Status, number][] = [
  ['before-mark', 'SUCCEEDED', 1],
  ['after-mark', 'OUTCOME_UNKNOWN', 0],
  // The provider named the request in its headers before the kill: the journaled id is recorded and polled.
  ['after-send', 'SUCCEEDED', 1],
  ['after-record', 'SUCCEEDED', 1],
  ['mid-poll', 'SUCCEEDED', 1],
];

describe('a worker killed with SIGKILL', () => {
  it.each(BOUNDARIES)('at %s ends %s with %i charge(s), never two', async (point, status, charged) => {
    const { dataDir, env } = await setup();
    const [id] = (await enqueue(dataDir)) as [number];

    const doomed = startStudio(dataDir, ['worker', '--until-idle'], { ...env, STUDIO_STOP_AT: point });
    await doomed.waitFor(new RegExp(`stopped at ${point} for task ${id}`));
    doomed.child.kill('SIGKILL');
    await doomed.exited;

    const started = Date.now();
    const restarted = await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect(restarted.code, restarted.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(20_000);

    const { task } = await readTask(dataDir, id);
    expect(task.status).toBe(status);
    expect(chargesFor(id)).toHaveLength(charged);
    if (status === 'SUCCEEDED') {
      expect(createHash('sha256').update(readFileSync(task.outputPath!)).digest('hex')).toBe(task.outputSha256);
      expect(task.costActual).toBeGreaterThan(0);
    } else {
      expect(task.unknownReason).toMatch(/may have accepted/);
      expect(task.charged).toBe('maybe');
    }
  });

  it('after an answer lost once the provider accepted: a person adopts the request it has, and the paid result is collected, not bought again', async () => {
    const { dataDir, env } = await setup({}, { submit: ['drop-after-accept'] });
    const [id] = (await enqueue(dataDir)) as [number];
    await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect((await readTask(dataDir, id)).task.status).toBe('OUTCOME_UNKNOWN');

    const [charge] = chargesFor(id);
    const resolved = await runStudio(dataDir, ['resolve', String(id), '--adopt', charge!.requestId]);
    expect(resolved.stdout).toContain('adopted');
    await runStudio(dataDir, ['worker', '--until-idle'], env);

    const { task, events } = await readTask(dataDir, id);
    expect(task).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: charge!.requestId });
    expect(existsSync(task.outputPath!)).toBe(true);
    expect(chargesFor(id)).toHaveLength(1);
    expect(events.filter((e) => e.actor === 'person').map((e) => e.reason)).toContain('adopted a request id found at the provider');
  });
});

describe('two worker processes on one database', () => {
  it('never hold the same row: every task is charged exactly once', async () => {
    const { dataDir, env } = await setup({ concurrency: { image: 6 } });
    const ids = await enqueue(dataDir, 30);
    const [a, b] = [startStudio(dataDir, ['worker', '--until-idle'], env), startStudio(dataDir, ['worker', '--until-idle'], env)];
    expect(await a.exited, a.stderr()).toBe(0);
    expect(await b.exited, b.stderr()).toBe(0);

    expect(sim.charges).toHaveLength(30);
    const read: Awaited<ReturnType<typeof readTask>>[] = [];
    for (const id of ids) {
      const { task, events } = await readTask(dataDir, id);
      read.push({ task, events });
      expect(task.status).toBe('SUCCEEDED');
      expect(chargesFor(id)).toHaveLength(1);
      expect(events.filter((e) => e.reason === 'submit started')).toHaveLength(1);
    }
    const owners = new Set(read.flatMap(({ events }) => events.map((e) => (e.detail as { owner?: string })?.owner)));
    expect(owners.size).toBeGreaterThanOrEqual(2);
  });
});

describe('a worker stopped past its lease (SIGSTOP, as in a sleep) while another takes over', () => {
  it('has its next write refused when continued, and sends nothing', async () => {
    const { dataDir, env } = await setup({ leaseMs: 1_500 });
    const [id] = (await enqueue(dataDir)) as [number];
    const sleeper = startStudio(dataDir, ['worker', '--until-idle'], { ...env, STUDIO_STOP_AT: 'before-mark' });
    await sleeper.waitFor(/stopped at before-mark/);

    const other = await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect(other.code, other.stderr).toBe(0);
    expect((await readTask(dataDir, id)).task.status).toBe('SUCCEEDED');

    sleeper.child.kill('SIGCONT');
    expect(await sleeper.exited).toBe(0);
    expect(sleeper.stderr()).toContain(`task ${id}: lease lost before the boundary mark`);
    expect(chargesFor(id)).toHaveLength(1);
    expect((await readTask(dataDir, id)).task.status).toBe('SUCCEEDED');
  });
});
