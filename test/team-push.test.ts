import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../main/db/database.ts';
import { resolveUnknown } from '../main/engine/decisions.ts';
import { sha256File } from '../main/media/checksum.ts';
import { ProjectMoved } from '../main/domain/projectMoved.ts';
import { redactUrl } from '../main/store/postgres/address.ts';
import { connect } from '../main/store/postgres/connection.ts';
import type { Store } from '../main/store/port.ts';
import { openPostgresStore } from '../main/store/postgres/store.ts';
import { beginMove } from '../main/store/sqlite/projectMoves.ts';
import { openSqliteStore } from '../main/store/sqlite/store.ts';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import type { Task } from '../main/domain/tasks/model.ts';
import { cli } from './helpers/cli.ts';
import { freshDatabase, postgresAvailable } from './helpers/postgres.ts';
import { runStudio, startStudio, whenStopped, writeSettings, type StudioProcess } from './helpers/processes.ts';
import { TWO_SCENES } from './helpers/boards.ts';
import { tempDir } from './helpers/tmp.ts';

let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const BOARD = TWO_SCENES;

const IMAGE = ['enqueue', '--project', 'Fox', '--kind', 'image', '--provider', 'simulator', '--model', 'sim-image-1', '--input'];

/** A data folder of its own database, the simulator as its provider. */
async function localStudio() {
  sim = await startSimulator({ jobMs: 50 });
  const dir = tempDir();
  writeSettings(dir, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } }, team: { machineName: 'studio-a' } });
  return dir;
}

async function ok(dir: string, ...args: string[]) {
  const done = await cli(dir, ...args);
  expect(done.code, done.err).toBe(0);
  return done.out;
}

const work = (dir: string) => ok(dir, 'worker', '--until-idle');

async function teamStore(url: string): Promise<Store> {
  const store = await openPostgresStore(url);
  onTestFinished(() => store.close());
  return store;
}

function localStore(dir: string): Store {
  const store = openSqliteStore(join(dir, 'studio.db'));
  onTestFinished(() => store.close());
  return store;
}

function moves(dir: string): { moved_at: number | null; team: string }[] {
  const db = new Database(join(dir, 'studio.db'), { readonly: true });
  try {
    return db.prepare(`SELECT moved_at, team FROM project_moves`).all() as { moved_at: number | null; team: string }[];
  } finally {
    db.close();
  }
}

/** What a task is, apart from its ids and where its file is: the same on both sides. */
const essence = (t: Task) => {
  const { id: _id, projectId: _p, input: _i, inputHash: _h, outputPath: _o, ...rest } = t;
  return rest;
};

const push = (dir: string, url: string, media: string, env: Record<string, string> = {}) => runStudio(dir, ['team', 'push', 'Fox', '--db', url, '--media', media], env);

describe('a project moving out of the embedded database', () => {
  it('takes no person\'s decision, no new task and no deletion of its files while it moves', async () => {
    const dir = tempDir();
    const store = localStore(dir);
    const project = await store.projects.ensure('Fox', 0);
    const lease = { owner: 'w', now: 1 };
    const { id } = await store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fake', model: 'fake-image', input: { prompt: 'a fox' } }, 1);
    await store.tasks.claim('image', 1, 60_000, lease);
    await store.tasks.markSubmitStarted(id, 'k', 60_000, lease);
    await store.tasks.parkUnknown(id, 'the answer was lost', lease);
    const db = openDatabase(join(dir, 'studio.db'));
    beginMove(db, { projectId: project.id, pushId: 'p1', team: 'postgres://studio@db/team', startedAt: Date.UTC(2025, 2, 4, 10, 22) });
    db.close();
    const words = 'this project is being moved to the team database postgres://studio@db/team (since 2025-03-04 10:22 UTC); run "studio team push" for it again to finish the move';
    for (const decision of [{ resubmit: true as const }, { giveUp: true as const }, { adopt: 'req-1' }]) {
      await expect(resolveUnknown(store.tasks, id, decision, 2)).rejects.toThrow(new ProjectMoved(words));
    }
    await expect(store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fake', model: 'fake-image', input: { prompt: 'more' } }, 2)).rejects.toThrow(ProjectMoved);
    await expect(store.tasks.forgetOutputs(id, 'deleted', [], 2)).rejects.toThrow(ProjectMoved);
    expect(await store.tasks.get(id)).toMatchObject({ status: 'OUTCOME_UNKNOWN' });
    expect((await store.projects.byName('Fox'))!.moved).toMatchObject({ pushId: 'p1', movedAt: null });
  });
});

describe.skipIf(!postgresAvailable)('studio team push', () => {
  it('moves a project, refusing while a step is in flight or unknown; the team database then shows the same spend and library, and here it buys nothing more', async () => {
    const dir = await localStudio();
    const url = await freshDatabase();
    const media = tempDir();
    writeFileSync(join(dir, 'board.json'), JSON.stringify(BOARD));
    await ok(dir, 'storyboard', 'create', 'Fox', '--file', join(dir, 'board.json'));
    await ok(dir, 'generate', 'Fox');
    await work(dir);
    await ok(dir, 'generate', 'Fox', '--new-take', 'dawn');
    await work(dir);
    await ok(dir, 'budget', 'Fox', '5');
    sim!.setFaults({ job: ['fail'] });
    await ok(dir, ...IMAGE, '{"prompt":"a fox the provider fails"}');
    await work(dir);
    sim!.setFaults({ submit: ['reject'] });
    await ok(dir, ...IMAGE, '{"prompt":"a fox the provider refuses"}');
    await work(dir);
    const cancelled = (await ok(dir, ...IMAGE, '{"prompt":"a fox not wanted"}')).trim();
    await ok(dir, 'cancel', cancelled);
    // A worker killed after its boundary write leaves an outcome no lookup can settle: a person decides it.
    const unknown = (await ok(dir, ...IMAGE, '{"prompt":"a fox whose worker died"}')).trim();
    const crashed = startStudio(dir, ['worker', '--until-idle'], { STUDIO_STOP_AT: 'after-mark' });
    await crashed.waitFor(/stopped at after-mark/);
    crashed.child.kill('SIGKILL');
    await crashed.exited;
    await work(dir);

    const local = localStore(dir);
    const team = await teamStore(url);
    const project = (await local.projects.byName('Fox'))!;
    expect(new Set((await local.tasks.list({ projectId: project.id })).map((t) => t.status))).toEqual(new Set(['SUCCEEDED', 'FAILED', 'CANCELLED', 'OUTCOME_UNKNOWN']));

    // An unknown outcome is decided here first; a step enqueued would run on both sides. Nothing changes either side.
    const refusedUnknown = await push(dir, url, media);
    expect(refusedUnknown.code).toBe(2);
    expect(refusedUnknown.stderr).toMatch(new RegExp(`^studio: project "Fox" has 1 step\\(s\\) whose outcome is unknown \\(task ${unknown}\\); decide them here first .*Nothing was changed\\n$`));
    await ok(dir, 'resolve', unknown, '--give-up');
    const pending = (await ok(dir, ...IMAGE, '{"prompt":"a fox still to make"}')).trim();
    const refusedPending = await push(dir, url, media);
    expect(refusedPending.code).toBe(2);
    expect(refusedPending.stderr).toBe(
      `studio: project "Fox" has 1 step(s) in flight (task ${pending} PENDING); moved now, they would run on both sides and be paid twice. ` +
        'Nothing was changed. Wait until they finish (studio worker --until-idle), or cancel them (studio cancel ID), then push again\n',
    );
    expect(await team.projects.list()).toEqual([]);
    expect(moves(dir)).toEqual([]);
    await ok(dir, 'cancel', pending);

    const pushed = await push(dir, url, media);
    expect(pushed.code, pushed.stderr).toBe(0);
    const moved = (await team.projects.byName('Fox'))!;
    expect(pushed.stdout).toMatch(new RegExp(`^"Fox" moved: project ${moved.id} in ${redactUrl(url).replace(/[.?]/g, '\\$&')}, with \\d+ task\\(s\\) and \\d+ event\\(s\\); files: \\d+ copied into the team's media folder`));

    // The same spend, budget included, and the same per-model figures.
    const [spendHere] = await local.tasks.spend(project.id);
    const [spendThere] = await team.tasks.spend(moved.id);
    expect({ ...spendThere, projectId: project.id }).toEqual(spendHere);
    expect(await team.tasks.spendByModel(moved.id)).toEqual(await local.tasks.spendByModel(project.id));

    // The same tasks, each with the same history, numbered anew; dependencies and takes follow the new numbers.
    const here = await local.tasks.list({ projectId: project.id });
    const there = await team.tasks.list({ projectId: moved.id });
    expect(there.map(essence)).toEqual(here.map(essence));
    const ids = new Map(here.map((t, i) => [t.id, there[i]!.id]));
    for (const [i, t] of here.entries()) {
      const strip = (e: { id: number; taskId: number }) => ({ ...e, id: 0, taskId: 0 });
      expect((await team.tasks.events(there[i]!.id)).map(strip)).toEqual((await local.tasks.events(t.id)).map(strip));
      expect((await team.tasks.related(there[i]!.id)).dependsOn.map((d) => d.id)).toEqual((await local.tasks.related(t.id)).dependsOn.map((d) => ids.get(d.id)));
    }
    const takesHere = await local.takes.list(project.id);
    expect(takesHere.length).toBeGreaterThanOrEqual(3);
    expect(await team.takes.list(moved.id)).toEqual(
      takesHere.map((t) => ({ ...t, projectId: moved.id, imageTaskId: ids.get(t.imageTaskId), clipTaskId: ids.get(t.clipTaskId), speechTaskId: t.speechTaskId && ids.get(t.speechTaskId) })),
    );
    expect(await team.takes.picks(moved.id)).toEqual(await local.takes.picks(project.id));

    // The same library, every file copied into the team's media folder and whole there, kept relative to it.
    const libraryHere = await local.tasks.library({ projectId: project.id }, 0, 100);
    const libraryThere = await team.tasks.library({ projectId: moved.id }, 0, 100);
    expect(libraryThere.total).toBe(libraryHere.total);
    expect(libraryThere.items.map((i) => [ids.get(i.task.id) === undefined, i.files])).toEqual(libraryHere.items.map((i) => [false, i.files]));
    for (const item of libraryThere.items) {
      for (const output of await team.tasks.outputs(item.task.id)) {
        expect(output.path).toMatch(/^local-[0-9a-f]{12}\/projects\/\d+\/(media|renders)\//);
        expect(output.machine).toBe('studio-a');
        expect(await sha256File(join(media, output.path))).toBe(output.sha256);
      }
    }

    // A studio on the team carries on: everything the storyboard needs is there, nothing to buy again.
    const elsewhere = tempDir();
    writeSettings(elsewhere, { providers: { simulator: { baseUrl: sim!.url } }, team: { machineName: 'studio-b' } });
    const plan = JSON.parse(await ok(elsewhere, '--db', url, '--media', media, 'estimate', 'Fox', '--json')) as { steps: { action: string }[]; total: number };
    expect(plan.steps.map((s) => s.action)).toEqual(plan.steps.map(() => 'reuse'));
    expect(plan.total).toBe(0);

    // Here the project takes no more work, and says where it went.
    const [mark] = moves(dir);
    expect(mark).toMatchObject({ team: redactUrl(url) });
    const when = `${new Date(mark!.moved_at!).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
    const words = `studio: this project moved to the team database ${redactUrl(url)} on ${when}; work on it there (--db or STUDIO_DATABASE_URL)`;
    expect(await cli(dir, 'generate', 'Fox')).toMatchObject({ code: 2, err: words });
    expect(await cli(dir, ...IMAGE, '{"prompt":"one more fox"}')).toMatchObject({ code: 2, err: words });
    expect(await cli(dir, 'pick', 'Fox', 'dawn', '1')).toMatchObject({ code: 2, err: words });
    expect(await cli(dir, 'budget', 'Fox', '9')).toMatchObject({ code: 2, err: words });
    expect((await local.tasks.list({ projectId: project.id })).length).toBe(here.length);

    const again = await push(dir, url, media);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(again.stdout).toMatch(/^"Fox" moved to the team database .* \(project \d+ there\); nothing to do\.\n$/);
    expect((await team.tasks.list({ projectId: moved.id })).length).toBe(here.length);
  }, 180_000);

  it('a push killed between the team database\'s commit and the mark here, run again, finishes without copying twice', async () => {
    const dir = await localStudio();
    const url = await freshDatabase();
    const media = tempDir();
    await ok(dir, ...IMAGE, '{"prompt":"a fox"}');
    await ok(dir, ...IMAGE, '{"prompt":"a second fox"}');
    await work(dir);

    const doomed = startStudio(dir, ['team', 'push', 'Fox', '--db', url, '--media', media], { STUDIO_STOP_AT: 'after-team-commit' });
    await doomed.waitFor(/stopped at after-team-commit for project \d+/);
    doomed.child.kill('SIGKILL');
    await doomed.exited;

    const team = await teamStore(url);
    const moved = (await team.projects.byName('Fox'))!;
    expect(await team.tasks.list({ projectId: moved.id })).toHaveLength(2);
    expect(moves(dir)).toEqual([{ moved_at: null, team: redactUrl(url) }]);
    // Meanwhile, nothing more is bought here.
    const meanwhile = await cli(dir, ...IMAGE, '{"prompt":"a third fox"}');
    expect(meanwhile.code).toBe(2);
    expect(meanwhile.err).toMatch(/^studio: this project is being moved to the team database .* \(since .* UTC\); run "studio team push" for it again to finish the move$/);

    const again = await push(dir, url, media);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^"Fox" was already in the team database from a push cut short; the move is now finished: project ${moved.id} in `));
    expect((await team.projects.list()).map((p) => p.name)).toEqual(['Fox']);
    expect(await team.tasks.list({ projectId: moved.id })).toHaveLength(2);
    expect(moves(dir)[0]!.moved_at).not.toBeNull();
    expect((await cli(dir, 'generate', 'Fox')).err).toMatch(/^studio: this project moved to the team database /);
  }, 120_000);

  it('a push that stops before the team database has the project holds it here, and finishes when run again', async () => {
    const dir = await localStudio();
    const url = await freshDatabase();
    await ok(dir, ...IMAGE, '{"prompt":"a fox"}');
    await work(dir);
    const notAFolder = join(tempDir(), 'media');
    writeFileSync(notAFolder, 'a file where the media folder should be');

    const stopped = await push(dir, url, notAFolder);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(/^studio: the move of "Fox" stopped before it finished \(.*ENOTDIR.*\); the project is held here meanwhile\. Once that is mended, run "studio team push Fox" again to finish it\n$/);
    const team = await teamStore(url);
    expect(await team.projects.list()).toEqual([]);
    expect(moves(dir)).toEqual([{ moved_at: null, team: redactUrl(url) }]);

    const media = tempDir();
    const again = await push(dir, url, media);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^"Fox" moved: project \d+ in .*; files: 1 copied into the team's media folder/);
    const [output] = await team.tasks.outputs((await team.tasks.list())[0]!.id);
    expect(await sha256File(join(media, output!.path))).toBe(output!.sha256);
  }, 120_000);

  it('two pushes of one project at once both finish the one move: neither refuses it, and here it stays moved', async () => {
    const dir = await localStudio();
    const url = await freshDatabase();
    const media = tempDir();
    await ok(dir, ...IMAGE, '{"prompt":"a fox"}');
    await work(dir);
    const [holder, watcher] = [connect(url, { max: 1 }), connect(url, { max: 1 })];
    onTestFinished(async () => {
      await holder.end();
      await watcher.end();
    });

    // Both pushes reach the team database's insert, held there by this lock, so both look for the move before either
    // has committed; each stops after its commit, so the one that lost the insert answers before the winner marks here.
    const pushes = await holder.sql.tx(async (tx) => {
      await tx.query('LOCK TABLE projects IN SHARE MODE');
      const started = [0, 1].map(() => startStudio(dir, ['team', 'push', 'Fox', '--db', url, '--media', media], { STUDIO_STOP_AT: 'after-team-commit' }));
      for (;;) {
        const [{ n }] = (await watcher.sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO projects%'`,
        )) as [{ n: number }];
        if (n === 2) return started;
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    const settled = async (p: StudioProcess) => {
      await Promise.race([p.waitFor(/stopped at after-team-commit/), p.exited]);
      if (p.child.exitCode === null) await whenStopped(p.child);
    };
    await Promise.all(pushes.map(settled));
    for (const p of pushes) p.child.kill('SIGCONT');
    const codes = await Promise.all(pushes.map((p) => p.exited));
    expect(codes, pushes.map((p) => p.stderr()).join('\n')).toEqual([0, 0]);
    expect(pushes.map((p) => p.stdout()).join('')).toMatch(/the move is now finished/);

    const team = await teamStore(url);
    expect((await team.projects.list()).map((p) => p.name)).toEqual(['Fox']);
    expect(moves(dir)[0]!.moved_at).not.toBeNull();
    expect((await cli(dir, ...IMAGE, '{"prompt":"a second fox"}')).err).toMatch(/^studio: this project moved to the team database /);
  }, 120_000);

  it('refuses a name the team database already has for a different project, changing nothing on either side', async () => {
    const dir = await localStudio();
    const url = await freshDatabase();
    await ok(dir, ...IMAGE, '{"prompt":"a fox"}');
    await work(dir);
    const team = await teamStore(url);
    await team.projects.ensure('Fox', Date.now());

    const refused = await push(dir, url, tempDir());
    expect(refused).toMatchObject({
      code: 2,
      stderr: `studio: the team database ${redactUrl(url)} already has a different project called "Fox"; nothing was changed on either side\n`,
    });
    expect(moves(dir)).toEqual([]);
    expect(await team.tasks.list()).toEqual([]);
    await ok(dir, ...IMAGE, '{"prompt":"still this database\'s"}');
  }, 120_000);
});
