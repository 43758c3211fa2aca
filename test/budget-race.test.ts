import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect } from '../main/store/postgres/connection.ts';
import { taskOfKey } from './helpers/charges.ts';
import { postgresAvailable } from './helpers/postgres.ts';
import { runStudio, startStudio } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import { storeKinds } from './helpers/stores.ts';
import { teamOn, type Machine } from './helpers/team.ts';

/**
 * Two machines on one team database Generate at once, in a project whose budget fits one more take of a scene
 * and not two: each asks for a new take of a different scene, so neither can reuse the other's steps. The two
 * `studio generate` processes are held at the project's row (the test's own transaction has it) until both wait
 * there, then let go together. One is accepted; the other is refused, naming the budget, before anything of it
 * is enqueued, so the simulator never sees it.
 */

const ROUNDS = 4;
const SETTINGS = { engine: { leaseMs: 10_000, tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200 } } };
const BOARD = {
  width: 320,
  height: 180,
  fps: 24,
  steps: { image: { provider: 'simulator', model: 'sim-image-1' }, clip: { provider: 'simulator', model: 'sim-clip-1' } },
  scenes: [
    { id: 'dawn', imagePrompt: 'a fox asleep in snow', motionPrompt: 'push in', duration: 1 },
    { id: 'dusk', imagePrompt: 'the fox going home', motionPrompt: 'track', duration: 1 },
  ],
};
const postgres = storeKinds().find((k) => k.kind === 'postgres')!;

async function estimate(m: Machine, scene: string): Promise<{ total: number; spent: number }> {
  const run = await runStudio(m.dataDir, ['estimate', 'Fox', '--new-take', scene, '--json'], m.env);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as { total: number; spent: number };
}

describe.skipIf(!postgresAvailable)('two machines Generate at once with a budget that fits one more take', () => {
  it('one is accepted and the other refused, naming the budget, before anything is sent; round after round', async () => {
    const sim = await simulatorForTest({ jobMs: 200 });
    const team = await teamOn(postgres, { STUDIO_SIMULATOR_BASE_URL: sim.url });
    const [a, b] = [team.machine('machine-a', SETTINGS), team.machine('machine-b', SETTINGS)];
    const file = join(a.dataDir, 'board.json');
    writeFileSync(file, JSON.stringify(BOARD));
    expect((await runStudio(a.dataDir, ['storyboard', 'create', 'Fox', '--file', file], a.env)).code).toBe(0);
    expect((await runStudio(a.dataDir, ['generate', 'Fox'], a.env)).code).toBe(0);
    const work = async () => {
      for (const run of await Promise.all([a, b].map((m) => runStudio(m.dataDir, ['worker', '--until-idle'], m.env)))) expect(run.code, run.stderr).toBe(0);
    };
    await work();
    const project = (await team.store.projects.byName('Fox'))!;
    const [watcher, holder] = [connect(team.where, { max: 1 }), connect(team.where, { max: 1 })];

    const rounds: { accepted: string; bothHeld: boolean; refusal: string }[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const scenes = round % 2 === 0 ? ['dawn', 'dusk'] : ['dusk', 'dawn'];
        const [forA, forB] = await Promise.all([estimate(a, scenes[0]!), estimate(b, scenes[1]!)]);
        expect(forA).toMatchObject({ spent: forB.spent, total: forB.total });
        expect(forA.total).toBeGreaterThan(0);
        // One more take fits; a second would pass the budget by half a take.
        await team.store.projects.setBudget(project.id, forA.spent + forA.total + Math.floor(forA.total / 2));
        const before = await team.store.tasks.list({ projectId: project.id });

        const held = await holder.sql.tx(async (tx) => {
          await tx.query(`SELECT 1 FROM projects WHERE id = $1 FOR UPDATE`, [project.id]);
          const generates = [startStudio(a.dataDir, ['generate', 'Fox', '--new-take', scenes[0]!], a.env), startStudio(b.dataDir, ['generate', 'Fox', '--new-take', scenes[1]!], b.env)];
          // Let go once both wait for the project (a Generate holds it first), or soon after the first does: a lock is waited for 5 s at most.
          let firstWaiting: number | null = null;
          for (;;) {
            const [{ n }] = (await watcher.sql.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM projects WHERE id = $1 FOR NO KEY UPDATE'`,
            )) as [{ n: number }];
            if (n >= 2) return { generates, both: true };
            if (n === 1) firstWaiting ??= Date.now();
            if (firstWaiting !== null && Date.now() - firstWaiting > 3_000) return { generates, both: false };
            await new Promise((r) => setTimeout(r, 20));
          }
        });
        const codes = await Promise.all(held.generates.map((g) => g.exited));
        const accepted = codes.indexOf(0);
        expect(codes.slice().sort(), held.generates.map((g) => g.stderr()).join('\n')).toEqual([0, 2]);
        const refused = held.generates[1 - accepted]!;
        expect(refused.stderr()).toMatch(/over the budget of \d+\.\d+ USD.*nothing was enqueued/);
        expect(held.generates[accepted]!.stdout()).toContain('Enqueued 3 step(s)');
        rounds.push({ accepted: accepted === 0 ? 'machine-a' : 'machine-b', bothHeld: held.both, refusal: refused.stderr().trim() });

        // The accepted take's image, clip and render; nothing of the refused one.
        const after = await team.store.tasks.list({ projectId: project.id });
        const added = after.filter((t) => !before.some((o) => o.id === t.id));
        expect(added.map((t) => t.kind).sort()).toEqual(['clip', 'image', 'render']);
        const scene = BOARD.scenes.find((s) => s.id === scenes[accepted])!;
        expect(added.find((t) => t.kind === 'image')!.input).toMatchObject({ prompt: scene.imagePrompt });
        await work();
        for (const t of added) expect((await team.store.tasks.get(t.id))!.status).toBe('SUCCEEDED');
      }
    } finally {
      await watcher.end();
      await holder.end();
    }

    // Every paid step was charged once, and no step was charged that a refused Generate asked for.
    const tasks = await team.store.tasks.list({ projectId: project.id });
    const paid = tasks.filter((t) => t.kind !== 'render');
    const charged = sim.charges.map((c) => taskOfKey(c.idempotencyKey));
    expect(charged.slice().sort((x, y) => x - y)).toEqual(paid.map((t) => t.id).sort((x, y) => x - y));
    const figures = { rounds: rounds.length, bothHeldAtTheProject: rounds.filter((r) => r.bothHeld).length, charges: sim.charges.length, paidSteps: paid.length };
    console.log('budget race figures', figures, rounds.map((r) => `${r.accepted} accepted; the other: ${r.refusal}`));
    expect(figures.bothHeldAtTheProject).toBeGreaterThan(0);
  }, 180_000);
});
