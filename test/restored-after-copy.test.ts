import { copyFileSync, cpSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { databasePath } from '../main/config/paths.ts';
import { kinOf } from '../main/store/sqlite/lineage.ts';
import { openSqliteStore } from '../main/store/sqlite/store.ts';
import { falQueue, realMedia, type Ledger } from './fakes/providers.ts';
import { startFake } from './fakes/server.ts';
import { runStudio } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

const ENQUEUE = ['enqueue', '--project', 'Fox', '--kind', 'image', '--provider', 'fal', '--model', 'fal-ai/flux/dev', '--input', '{"prompt":"a fox"}'];

async function falStudio() {
  const ledger: Ledger = { charged: [] };
  const fake = await startFake(falQueue(ledger, (await realMedia()).png));
  return { ledger, env: { STUDIO_FAL_BASE_URL: fake.url, FAL_KEY: 'fal-key-0123456789', STUDIO_MEDIA_DIR: tempDir() } };
}

/** Puts the backup `from` in place of the data folder's database, as a sync tool does: a new file, renamed over it. */
function restore(from: string, dataDir: string): void {
  for (const f of ['studio.db-wal', 'studio.db-shm']) rmSync(join(dataDir, f), { force: true });
  copyFileSync(from, join(dataDir, 'studio.db.restoring'));
  renameSync(join(dataDir, 'studio.db.restoring'), databasePath(dataDir));
}

async function statusOf(dataDir: string, id: number) {
  const store = openSqliteStore(databasePath(dataDir));
  try {
    return (await store.tasks.get(id))?.status;
  } finally {
    await store.close();
  }
}

describe('one line of copies', () => {
  it('links ids through any chain of copies, and their spaces with them', () => {
    const own = { ids: ['c2', 'a0'], spaces: ['s2', 's0'] };
    const lines = [
      { ids: ['c1', 'a0'], spaces: ['s1', 's0'] },
      { ids: ['c3', 'c1', 'a0'], spaces: ['s3', 's1', 's0'] },
      { ids: ['t9'], spaces: ['s9'] },
    ];
    expect(kinOf(own, lines)).toEqual({ ids: ['c2', 'a0', 'c1', 'c3'], spaces: ['s2', 's0', 's1', 's3'] });
    expect(kinOf({ ids: ['t0'], spaces: [] }, lines)).toEqual({ ids: ['t0'], spaces: [] });
  });
});

describe('a backup restored after a copy drew its id (real processes, fal stand-in)', () => {
  it('restored in place twice: the request its task sent is taken, never sent again', async () => {
    const { ledger, env } = await falStudio();
    const a = tempDir();
    expect((await runStudio(a, ENQUEUE, env)).code).toBe(0);
    const backup = join(tempDir(), 'studio.db');
    copyFileSync(databasePath(a), backup);
    const charges: number[] = [];
    for (let run = 0; run < 3; run++) {
      if (run > 0) restore(backup, a);
      expect((await runStudio(a, ['worker', '--until-idle'], env)).code).toBe(0);
      charges.push(ledger.charged.length);
    }
    expect(charges).toEqual([1, 1, 1]);
    expect(await statusOf(a, 1)).toBe('SUCCEEDED');
  }, 90_000);

  it('a copy that sent its task, then given back a backup taken before the copy: nothing is sent again', async () => {
    const { ledger, env } = await falStudio();
    const a = tempDir();
    expect((await runStudio(a, ENQUEUE, env)).code).toBe(0);
    const b = tempDir();
    cpSync(a, b, { recursive: true });
    const backup = join(tempDir(), 'studio.db');
    copyFileSync(databasePath(a), backup);
    expect((await runStudio(b, ['worker', '--until-idle'], env)).code).toBe(0);
    expect(ledger.charged).toHaveLength(1);
    restore(backup, b);
    expect((await runStudio(b, ['worker', '--until-idle'], env)).code).toBe(0);
    expect(ledger.charged).toHaveLength(1);
    expect(await statusOf(b, 1)).toBe('SUCCEEDED');
  }, 90_000);
});
