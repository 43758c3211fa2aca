import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chargesOf } from './helpers/charges.ts';
import { startCluster, type Cluster } from './helpers/pgCluster.ts';
import { postgresAvailable, queryRows } from './helpers/postgres.ts';
import { runStudio, startStudio } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import type { StoreKind } from './helpers/stores.ts';
import { teamOn } from './helpers/team.ts';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

/**
 * A team database server that could lose a committed write: a cluster of this file's own (the run's shared one
 * serves other files at the same time), set to synchronous_commit=off as a common tuning, with a WAL writer that
 * waits long, so a commit only the WAL writer would flush is lost to an immediate stop (what a crash of the server
 * does). Real worker processes against the simulator, which counts what it charged.
 */

const SETTINGS = { engine: { leaseMs: 2_000, tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200 }, lookup: { intervalMs: 100, tries: 1 } } };

let cluster: Cluster | undefined;
let counter = 0;

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: cluster!.url() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A new empty database in this file's cluster. */
async function database(): Promise<string> {
  const name = `durable_${++counter}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  return cluster!.url(name);
}

/** Changes server settings as a person would (ALTER SYSTEM, then a reload), and waits until new sessions see them. */
async function serverSettings(settings: Record<string, 'on' | 'off'> | 'reset'): Promise<void> {
  await admin(async (c) => {
    if (settings === 'reset') await c.query('ALTER SYSTEM RESET ALL');
    else for (const [name, value] of Object.entries(settings)) await c.query(`ALTER SYSTEM SET ${name} = ${value}`);
    await c.query('SELECT pg_reload_conf()');
  });
  const wanted = settings === 'reset' ? { fsync: 'on', full_page_writes: 'on' } : settings;
  await until(async () => {
    const [row] = await queryRows<Record<string, string>>(cluster!.url(), `SELECT current_setting('fsync') AS fsync, current_setting('full_page_writes') AS full_page_writes`);
    return Object.entries(wanted).every(([k, v]) => k === 'synchronous_commit' || row![k] === v);
  });
}

describe.skipIf(!postgresAvailable)('a team database server that could lose a committed write', () => {
  beforeAll(async () => {
    cluster = await startCluster(['synchronous_commit = off', 'wal_writer_delay = 10s']);
  }, 60_000);
  afterAll(() => cluster?.stop());

  it('a boundary write, then an immediate restart of a server set to synchronous_commit=off: the write survives, the row is not requeued as never sent, nothing is bought again', async () => {
    const url = await database();
    const init = await runStudio(tempDir(), ['team', 'init', '--db', url]);
    expect(init.code, init.stderr).toBe(0);
    const sim = await simulatorForTest({ jobMs: 200 });
    const postgres = { kind: 'postgres', available: true, fresh: async () => url } as StoreKind;
    const { store, machine } = await teamOn(postgres, { STUDIO_SIMULATOR_BASE_URL: sim.url });
    const m = machine('machine-a', SETTINGS);
    const project = await store.projects.ensure('Durable', Date.now());
    const { id } = await store.tasks.enqueue(
      { projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'a boat' }, maxAttempts: 3 },
      Date.now(),
    );

    const doomed = startStudio(m.dataDir, ['worker'], { ...m.env, STUDIO_STOP_AT: 'after-mark' });
    await doomed.waitFor(new RegExp(`stopped at after-mark for task ${id}`));
    // The server crashes just after the boundary write's commit was reported; the worker dies with it.
    await cluster!.crashServer();
    await cluster!.startServer();
    doomed.child.kill('SIGKILL');
    await doomed.exited;

    const [row] = await queryRows<{ status: string; submit_started_at: number | null; attempts: number }>(
      url,
      'SELECT status, submit_started_at, attempts FROM tasks WHERE id = $1',
      [id],
    );

    // The machine's next worker recovers the row of its dead process at once: the send may have left, so it is
    // an unknown outcome, never a requeue that would buy it again.
    const next = startStudio(m.dataDir, ['worker', '--until-idle'], m.env);
    expect(await next.exited, next.stderr()).toBe(0);
    expect(chargesOf(sim, id)).toHaveLength(0);
    expect(row).toMatchObject({ status: 'RUNNING', attempts: 1 });
    expect(row!.submit_started_at).not.toBeNull();
    const task = (await store.tasks.get(id))!;
    expect(task.status).toBe('OUTCOME_UNKNOWN');
    expect(task.attempts).toBe(1);
    expect((await store.tasks.events(id)).slice(1).map((e) => e.toStatus)).not.toContain('PENDING');
  }, 90_000);

  it('team init, team status and a studio joining refuse a server with fsync or full_page_writes off, or a session left at synchronous_commit=off, saying which, why and how to fix it', async () => {
    const url = await database();
    expect((await runStudio(tempDir(), ['team', 'init', '--db', url])).code).toBe(0);
    // The server commits without waiting (synchronous_commit=off), but the studio's sessions wait: that is accepted.
    const status = await runStudio(tempDir(), ['team', 'status', '--db', url]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/durability: fsync on, full_page_writes on, synchronous_commit on \(for the studio's sessions\)/);
    // The session's own value is what is checked: an address whose options turn it off again is refused.
    const overridden = await runStudio(tempDir(), ['team', 'status', '--db', `${url}?options=${encodeURIComponent('-c synchronous_commit=off')}`]);
    expect(overridden.code).not.toBe(0);
    expect(overridden.stderr).toMatch(/kept synchronous_commit = off for the studio's session although the studio set it on.*Remove what overrides it/);
    try {
      await serverSettings({ fsync: 'off' });
      const empty = await database();
      const refused = await runStudio(tempDir(), ['team', 'init', '--db', empty]);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr.trim()).toMatch(
        /^studio: The team database server at \S+ runs with fsync = off: it does not make sure its writes reach the disk, so after a crash or power loss of that server the studio could lose its record that a paid request was sent, and send it again\. Turn it on as a superuser: ALTER SYSTEM SET fsync = on; SELECT pg_reload_conf\(\); \(or set fsync = on in postgresql\.conf and reload the server\)\.$/,
      );
      // Refused before anything was written: the database is still empty.
      expect(await queryRows(empty, `SELECT 1 FROM pg_tables WHERE schemaname = 'public'`)).toEqual([]);
      const statusRefused = await runStudio(tempDir(), ['team', 'status', '--db', url]);
      expect(statusRefused.code).not.toBe(0);
      expect(statusRefused.stderr).toMatch(/runs with fsync = off/);
      const joining = await runStudio(tempDir(), ['worker', '--until-idle', '--db', url]);
      expect(joining.code).not.toBe(0);
      expect(joining.stderr).toMatch(/runs with fsync = off/);
      expect(joining.stderr).not.toMatch(/\n\s+at /);

      await serverSettings({ fsync: 'on', full_page_writes: 'off' });
      const torn = await runStudio(tempDir(), ['team', 'init', '--db', empty]);
      expect(torn.code).not.toBe(0);
      expect(torn.stderr).toMatch(/runs with full_page_writes = off: a crash of that server in the middle of a write can leave pages it cannot repair.*ALTER SYSTEM SET full_page_writes = on; SELECT pg_reload_conf\(\);/);
    } finally {
      await serverSettings('reset');
    }
  }, 90_000);
});
