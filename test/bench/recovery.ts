import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootIdentity } from '../../main/engine/bootIdentity.ts';
import { databasePath } from '../../main/config/paths.ts';
import { openDatabase } from '../../main/db/database.ts';
import { createSupervisor, openStudio } from '../../main/studio.ts';

/** A database left by a crash: `finished` done tasks and `inFlight` leased by a process that is gone. */
function seed(dataDir: string, finished: number, inFlight: number): void {
  const db = openDatabase(databasePath(dataDir));
  const now = Date.now();
  db.prepare(`INSERT INTO projects (name, created_at) VALUES ('Bench', ?)`).run(now);
  db.prepare(`INSERT INTO lease_owners (id, hostname, machine_id, boot_id, pid, started_at, seen_at) VALUES ('gone', 'bench-host', 'bench-machine', ?, 2147483646, ?, ?)`).run(bootIdentity(), now, now);
  const insert = db.prepare(
    `INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, status, charged, next_attempt_at,
                        lease_owner, lease_expires_at, submit_started_at, remote_request_id, submitted_at,
                        created_at, updated_at, finished_at)
     VALUES (1, @kind, 'simulator', 'm', '{"prompt":"p"}', 'h', @status, @charged, @now, @owner, @expires, @started,
             @request, @submitted, @now, @now, @finished)`,
  );
  const kinds = ['image', 'clip', 'speech'] as const;
  db.transaction(() => {
    for (let i = 0; i < finished; i++) {
      insert.run({ kind: kinds[i % 3], status: 'SUCCEEDED', charged: 'yes', now, owner: null, expires: null, started: now, request: `r${i}`, submitted: now, finished: now });
    }
    for (let i = 0; i < inFlight; i++) {
      // A third each: claimed only, inside the send window, and submitted with a request id.
      const phase = i % 3;
      insert.run({
        kind: kinds[i % 3],
        status: phase === 2 ? 'SUBMITTED' : 'RUNNING',
        charged: phase === 0 ? 'no' : phase === 1 ? 'maybe' : 'yes',
        now,
        owner: 'gone',
        expires: now + 3_600_000,
        started: phase === 0 ? null : now,
        request: phase === 2 ? `live${i}` : null,
        submitted: phase === 2 ? now : null,
        finished: null,
      });
    }
  })();
  db.close();
}

/** Time from opening the data folder to the first tick done: dead owner found, every in-flight row recovered. */
export async function benchRecovery(finished: number, inFlight: number) {
  const dataDir = mkdtempSync(join(tmpdir(), 'studio-bench-'));
  seed(dataDir, finished, inFlight);
  const start = performance.now();
  const studio = await openStudio(dataDir);
  studio.settings.engine.concurrency = { image: 0, clip: 0, speech: 0, render: 0, draft: 0 };
  const supervisor = createSupervisor(studio, () => undefined, { owner: { id: 'bench', hostname: 'bench-host', machine: 'bench-machine', boot: bootIdentity(), pid: process.pid } });
  await supervisor.start();
  const ms = performance.now() - start;
  const by: Record<string, number> = {};
  for (const c of await studio.tasks.counts()) by[c.status] = (by[c.status] ?? 0) + c.n;
  await supervisor.stop();
  await studio.close();
  rmSync(dataDir, { recursive: true, force: true });
  if ((by.RUNNING ?? 0) > 0) throw new Error(`recovery left ${by.RUNNING} rows RUNNING (${databasePath(dataDir)})`);
  return { finished, inFlight, ms: Number(ms.toFixed(1)), requeued: by.PENDING ?? 0, parked: by.OUTCOME_UNKNOWN ?? 0, toPoll: by.SUBMITTED ?? 0 };
}
