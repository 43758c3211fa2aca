import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MACHINE_ID_FILE } from '../main/config/machineId.ts';
import { savedBy } from '../main/media/savedBy.ts';
import type { RunningSimulator } from '../main/simulator/server.ts';
import { openStudio } from '../main/studio.ts';
import { cli } from './helpers/cli.ts';
import { freshDatabase, postgresAvailable } from './helpers/postgres.ts';
import { writeSettings } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import { tempDir } from './helpers/tmp.ts';

let sim: RunningSimulator | undefined;

/** A data folder whose machine goes by `name`, with the simulator as its provider and, if given, its own media folder. */
function machine(name: string, media: string | null = null) {
  const dir = tempDir();
  writeSettings(dir, {
    engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } },
    providers: { simulator: { baseUrl: sim!.url } },
    team: { machineName: name, ...(media ? { mediaDir: media } : {}) },
  });
  return dir;
}

const BOARD = { aspect: '1:1', resolution: 480, scenes: [{ id: 'a', imagePrompt: 'a red fox', duration: 2 }] };

async function made(dir: string, ...db: string[]) {
  writeFileSync(join(dir, 'board.json'), JSON.stringify(BOARD));
  for (const args of [['storyboard', 'create', 'P', '--file', join(dir, 'board.json')], ['generate', 'P'], ['worker', '--until-idle']]) {
    const run = await cli(dir, ...db, ...args);
    expect(run.code, run.err).toBe(0);
  }
}

const idOf = (dir: string) => readFileSync(join(dir, MACHINE_ID_FILE), 'utf8').trim();

describe('the files a machine saves', () => {
  it('on the embedded store, are recorded with its id beside its name', async () => {
    sim = await simulatorForTest({ jobMs: 50 });
    const dir = machine('vm');
    await made(dir);
    const studio = await openStudio(dir);
    try {
      const outputs = await Promise.all((await studio.tasks.list({ status: 'SUCCEEDED' })).map(async (t) => (await studio.tasks.outputs(t.id))[0]!));
      // The still, the clip and the render: each with the machine's id, so the check below is not of nothing.
      expect(outputs).toHaveLength(3);
      expect(outputs.map((o) => [o.machine, o.machineId])).toEqual(outputs.map(() => ['vm', idOf(dir)]));
    } finally {
      await studio.close();
    }
  });

  it('saved before ids were recorded, are judged by name as before: this machine\'s name is this machine', () => {
    const here = { machine: 'vm', machineId: 'a'.repeat(32) };
    expect(savedBy({ path: 'x.png', machine: 'vm', machineId: null }, here)).toEqual({ by: 'this' });
    expect(savedBy({ path: 'x.png', machine: 'other', machineId: null }, here)).toEqual({ by: 'other', sameName: false });
    expect(savedBy({ path: 'x.png', machine: 'vm', machineId: 'b'.repeat(32) }, here)).toEqual({ by: 'other', sameName: true });
    expect(savedBy({ path: 'x.png', machine: 'vm', machineId: 'a'.repeat(32) }, here)).toEqual({ by: 'this' });
  });
});

describe.skipIf(!postgresAvailable)('on a team database, two computers of one name', () => {
  it('are two machines: a file the other saved is said to be on it, never lost, and nothing is bought', async () => {
    sim = await simulatorForTest({ jobMs: 50 });
    const url = await freshDatabase();
    const [mediaA, mediaB] = [tempDir(), tempDir()];
    const [dirA, dirB] = [machine('vm', mediaA), machine('vm', mediaB)];
    await made(dirB, '--db', url);
    const charged = sim.charges.length;

    const estimate = await cli(dirA, '--db', url, 'estimate', 'P', '--json');
    expect(estimate.code, estimate.err).toBe(0);
    const steps = (JSON.parse(estimate.out) as { steps: { key: string; action: string; lost: { savedOn?: string; why: string } | null }[] }).steps;
    const rebuys = steps.filter((s) => s.action === 'rebuy');
    expect(rebuys.map((s) => s.key)).toEqual(['a:image', 'a:clip']);
    for (const s of rebuys) {
      expect(s.lost!.savedOn).toBe('vm');
      expect(s.lost!.why).toMatch(/^its result was saved on machine 'vm' \(another computer of that name\) at .*; it is not in this machine's media folder /);
    }
    const refused = await cli(dirA, '--db', url, 'generate', 'P');
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('result not on this machine');
    expect(refused.err).not.toMatch(/result lost|file is gone/);
    expect(sim.charges).toHaveLength(charged);

    // The machine that saved them finds them its own, and reuses every one.
    const there = await cli(dirB, '--db', url, 'estimate', 'P', '--json');
    expect((JSON.parse(there.out) as { steps: { action: string }[] }).steps.map((s) => s.action)).toEqual(['reuse', 'reuse', 'reuse']);
    const b = await openStudio(dirB, undefined, { database: url });
    try {
      const [task] = await b.tasks.list({ status: 'SUCCEEDED' });
      expect((await b.tasks.outputs(task!.id))[0]).toMatchObject({ machine: 'vm', machineId: idOf(dirB) });
    } finally {
      await b.close();
    }
  });
});
