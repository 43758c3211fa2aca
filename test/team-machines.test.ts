import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { bootIdentity } from '../main/engine/bootIdentity.ts';
import { openRuntime } from '../main/runtime.ts';
import { openPostgresStore } from '../main/store/postgres/store.ts';
import { machineId } from '../main/config/machineId.ts';
import { createSupervisor, openStudio } from '../main/studio.ts';
import { FAL_MODEL, falQueue, realMedia, type Ledger } from './fakes/providers.ts';
import { startFake } from './fakes/server.ts';
import { freshDatabase, postgresAvailable, postgresBin } from './helpers/postgres.ts';
import { writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

/** The pid of a process that has certainly ended. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

describe.skipIf(!postgresAvailable)('machines of one team database', () => {
  it("recovers at once the rows of this machine's dead processes, and leaves another computer's of the same name to its lease", async () => {
    const url = await freshDatabase();
    const store = await openPostgresStore(url);
    onTestFinished(() => store.close());
    const project = await store.projects.ensure('Film', Date.now());
    const enqueue = (prompt: string) =>
      store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt } }, Date.now());
    const [mine, theirs] = [await enqueue('mine'), await enqueue('theirs')];
    // Two computers go by one name, and their processes ended with the same pid: only the machines' ids, kept in
    // their data folders, tell them apart.
    const dataDir = tempDir();
    const pid = deadPid();
    const here = { id: `studio-a:${pid}:aaaaaaaa`, hostname: 'studio-a', machine: machineId(dataDir), boot: bootIdentity(), pid };
    const there = { id: `studio-a:${pid}:bbbbbbbb`, hostname: 'studio-a', machine: machineId(tempDir()), boot: 'another computer', pid };
    for (const owner of [here, there]) await store.owners.register(owner, Date.now());
    const tenMinutes = 600_000;
    expect((await store.tasks.claim('image', 1, tenMinutes, { owner: here.id, now: Date.now() })).map((t) => t.id)).toEqual([mine.id]);
    expect((await store.tasks.claim('image', 2, tenMinutes, { owner: there.id, now: Date.now() })).map((t) => t.id)).toEqual([theirs.id]);

    // Nothing is claimed here, so what the start recovers stays as it left it.
    writeSettings(dataDir, { team: { databaseUrl: url, machineName: 'studio-a' }, engine: { concurrency: { image: 0, clip: 0, speech: 0, render: 0 } } });
    const studio = await openStudio(dataDir);
    onTestFinished(() => studio.close());
    expect(studio.machine).toBe('studio-a');
    const logs: string[] = [];
    const supervisor = createSupervisor(studio, () => undefined, { log: (m) => logs.push(m) });
    expect(supervisor.owner.hostname).toBe('studio-a');
    expect(supervisor.owner.machine).toBe(here.machine);
    expect(supervisor.owner.id).toMatch(new RegExp(`^studio-a:${process.pid}:[0-9a-f]{8}$`));
    await supervisor.start();
    await supervisor.stop();

    expect(logs).toContain('recovering 1 task(s) left by 1 stopped process(es)');
    expect(await store.tasks.get(mine.id)).toMatchObject({ status: 'PENDING', leaseOwner: null });
    // Another computer's process may be alive, whatever this machine's pids say: it waits for its lease to run out.
    const kept = (await store.tasks.get(theirs.id))!;
    expect(kept).toMatchObject({ status: 'RUNNING', leaseOwner: there.id });
    expect(kept.leaseExpiresAt! - Date.now()).toBeGreaterThan(tenMinutes - 60_000);
    expect(await store.owners.onMachine(there.machine, there.boot)).toEqual([{ id: there.id, pid }]);
    expect(await store.owners.onMachine(here.machine, here.boot!)).toEqual([]);
  });

  it('keeps provider keys on this machine: a key saved and used by a studio on the team database is in no table of it', async () => {
    const url = await freshDatabase();
    const ledger: Ledger = { charged: [] };
    const fake = await startFake(falQueue(ledger, (await realMedia()).png));
    const dataDir = tempDir();
    writeSettings(dataDir, {
      team: { databaseUrl: url, machineName: 'studio-a' },
      engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } },
      providers: { fal: { baseUrl: fake.url } },
    });
    const runtime = await openRuntime(dataDir, { mediaUrl: (id) => `/media/${id}` });
    onTestFinished(() => runtime.stop());
    expect(runtime.studio.store.kind).toBe('postgres');
    const key = 'fal-key-7d1c0e5a9b3f4a2e8c6d';
    await runtime.service.saveSettings({ key: { provider: 'fal', value: key } });
    expect((await runtime.service.getSettings()).keys.fal).toBe('settings');

    const project = await runtime.studio.projects.ensure('Film', Date.now());
    const task = await runtime.studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: FAL_MODEL, input: { prompt: 'a fox' } }, Date.now());
    await runtime.supervisor.runUntilIdle();
    expect(await runtime.studio.tasks.get(task.id)).toMatchObject({ status: 'SUCCEEDED' });
    expect(ledger.charged).toHaveLength(1);
    expect(fake.seen.some((r) => r.headers.authorization === `Key ${key}`)).toBe(true);

    const everything = execFileSync(join(postgresBin(), 'pg_dump'), ['--data-only', '--dbname', url], { encoding: 'utf8' });
    expect(everything).toContain('a fox');
    expect(everything).not.toContain(key);
    expect(readFileSync(join(dataDir, 'settings.json'), 'utf8')).toContain(key);
  });
});
