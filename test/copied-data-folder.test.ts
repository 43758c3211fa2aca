import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalOutputStore } from '../main/adapters/outputStore.ts';
import { ReceiptJournal } from '../main/adapters/receiptJournal.ts';
import { databasePath } from '../main/config/paths.ts';
import { mediaFolderAt } from '../main/media/mediaFolder.ts';
import { alternatePath, placeWithoutReplacing } from '../main/media/placement.ts';
import { homeChange, settleHome } from '../main/store/sqlite/databaseHome.ts';
import { lineagesIn } from '../main/store/sqlite/lineage.ts';
import { openSqliteStore } from '../main/store/sqlite/store.ts';
import { openAiImages, realMedia, type Ledger } from './fakes/providers.ts';
import { startFake } from './fakes/server.ts';
import { runStudio, startStudio, writeSettings } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import { tempDir } from './helpers/tmp.ts';

const sha = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const SETTINGS = { engine: { tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200 }, lookup: { intervalMs: 100, tries: 1 } } };

async function spaceOf(dataDir: string): Promise<string> {
  const store = openSqliteStore(databasePath(dataDir));
  try {
    return store.mediaSpace;
  } finally {
    await store.close();
  }
}

async function enqueue(dataDir: string, prompt: string): Promise<number> {
  const store = openSqliteStore(databasePath(dataDir));
  try {
    const project = await store.projects.ensure('Fox', Date.now());
    return (await store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt } }, Date.now())).id;
  } finally {
    await store.close();
  }
}

async function savedFiles(dataDir: string, media: string, id: number) {
  const store = openSqliteStore(databasePath(dataDir));
  try {
    const task = await store.tasks.get(id);
    const outputs = await store.tasks.outputs(id);
    return { status: task?.status, files: outputs.map((o) => ({ path: join(media, o.path), sha256: o.sha256 })) };
  } finally {
    await store.close();
  }
}

describe('where a database file is', () => {
  const home = { path: '/data/a/studio.db', dev: '64', ino: '1001', born: '1764633600000000000' };
  it('tells a copy (another path, another file) from a move (another path, the same file)', () => {
    expect(homeChange(undefined, home)).toBe('first');
    expect(homeChange(home, home)).toBe('same');
    // A drive plugged in again may give its device another number.
    expect(homeChange(home, { ...home, dev: '65' })).toBe('same');
    // A backup put in place of the folder, which may only have been moved aside: made later.
    expect(homeChange(home, { ...home, ino: '2002', born: '1764720000000000000' })).toBe('copied');
    expect(homeChange(home, { ...home, path: '/data/b/studio.db' })).toBe('moved');
    expect(homeChange(home, { ...home, path: '/data/b/studio.db', ino: '2002' })).toBe('copied');
    // An exFAT drive mounted again numbers its files anew; the file is the one made then.
    expect(homeChange(home, { ...home, dev: '66', ino: '7' })).toBe('same');
    expect(homeChange({ ...home, born: null }, { ...home, ino: '7', born: null })).toBe('copied');
  });

  it('gives a copied data folder a media space of its own, and keeps it through a move (real files)', async () => {
    const a = tempDir();
    const spaceA = await spaceOf(a);
    const b = join(tempDir(), 'copy');
    cpSync(a, b, { recursive: true });
    const spaceB = await spaceOf(b);
    expect(spaceB).toMatch(/^local-[0-9a-f]{12}$/);
    expect(spaceB).not.toBe(spaceA);
    expect(await spaceOf(a)).toBe(spaceA);
    expect(await spaceOf(b)).toBe(spaceB);
    const moved = join(tempDir(), 'moved');
    renameSync(b, moved);
    expect(await spaceOf(moved)).toBe(spaceB);
    // A backup put in place of a folder moved aside: the two are apart again.
    const backup = join(tempDir(), 'backup');
    cpSync(moved, backup, { recursive: true });
    const aside = join(tempDir(), 'aside');
    renameSync(moved, aside);
    renameSync(backup, moved);
    expect(await spaceOf(aside)).toBe(spaceB);
    expect(await spaceOf(moved)).not.toBe(spaceB);
  });

  it('opens without waiting on another program that holds the database for writing, once its home is recorded', async () => {
    const a = tempDir();
    await spaceOf(a);
    const writer = new Database(databasePath(a));
    writer.exec('BEGIN IMMEDIATE');
    try {
      const asked = Date.now();
      await spaceOf(a);
      expect(Date.now() - asked).toBeLessThan(1_000);
    } finally {
      writer.exec('ROLLBACK');
      writer.close();
    }
  });

  it('leaves a copy it cannot write as it is, and reads it', async () => {
    const a = tempDir();
    const spaceA = await spaceOf(a);
    const b = tempDir();
    cpSync(a, b, { recursive: true });
    const readOnly = new Database(databasePath(b), { readonly: true });
    try {
      expect(settleHome(readOnly, databasePath(b))).toBe('same');
      expect(readOnly.prepare('SELECT name FROM media_space').pluck().get()).toBe(spaceA);
      // No lineage is left for an id it could not take, for a later opening to take as its own.
      expect(lineagesIn(b)).toEqual([]);
    } finally {
      readOnly.close();
    }
  });

  it('keeps the receipts of the id a copy had before as its own', async () => {
    const a = tempDir();
    const store = openSqliteStore(databasePath(a));
    const before = store.databaseId;
    await store.close();
    const receipt = { database: before, taskId: 1, task: { inputHash: 'h', createdAt: 1 }, idempotencyKey: `studio-${before}-task-1-attempt-1`, requestId: 'req-1', handle: null, at: 1 };
    new ReceiptJournal(a, before).append(receipt);
    const b = tempDir();
    cpSync(a, b, { recursive: true });
    const copy = openSqliteStore(databasePath(b));
    expect(copy.databaseId).not.toBe(before);
    expect(copy.earlier.databaseIds).toEqual([before]);
    await copy.close();
    expect(new ReceiptJournal(b, copy.databaseId, copy.earlier.databaseIds).all()).toEqual([receipt]);
    expect(new ReceiptJournal(b, copy.databaseId).all()).toEqual([]);
  });
});

describe('putting a paid file in place', () => {
  it('never replaces another file: the new one takes a name from its checksum, and the same file is found again', async () => {
    const dir = tempDir();
    const path = join(dir, 'task-2-a1.png');
    writeFileSync(path, 'the fox another studio paid for');
    writeFileSync(join(dir, 'one.part'), 'a lighthouse');
    const placed = await placeWithoutReplacing(join(dir, 'one.part'), path, sha('a lighthouse'));
    expect(placed).toBe(alternatePath(path, sha('a lighthouse')));
    expect(placed).toBe(join(dir, `task-2-a1-${sha('a lighthouse').slice(0, 12)}.png`));
    expect(readFileSync(path, 'utf8')).toBe('the fox another studio paid for');
    expect(readFileSync(placed, 'utf8')).toBe('a lighthouse');
    // Placed again after a crash: the file already there is this one, and the synced temporary file goes.
    writeFileSync(join(dir, 'two.part'), 'a lighthouse');
    expect(await placeWithoutReplacing(join(dir, 'two.part'), path, sha('a lighthouse'))).toBe(placed);
    expect(existsSync(join(dir, 'two.part'))).toBe(false);
  });

  it('finds a result whose record names the first name at the name it took', async () => {
    const media = tempDir();
    const outputs = new LocalOutputStore(mediaFolderAt(media, 'local-aaaaaaaaaaaa', 'here', true));
    const task = { id: 2, projectId: 1, idempotencyKey: 'studio-x-task-2-attempt-1' };
    const target = { taskId: 2, projectId: 1, idempotencyKey: task.idempotencyKey, index: 0, kind: 'image' as const, contentType: 'image/png' };
    const png = Buffer.from((await realMedia()).png.bytes);
    const planned = outputs.plan(target, png);
    await outputs.record(task, { idempotencyKey: task.idempotencyKey, requestId: 'r', costActual: null, costSource: null, outputs: [planned] });
    writeFileSync(join(media, planned.path), 'the fox another studio paid for');
    const kept = await outputs.keep(target, png);
    expect(kept.path).not.toBe(planned.path);
    expect(readFileSync(join(media, planned.path), 'utf8')).toBe('the fox another studio paid for');
    expect((await outputs.find(task))?.outputs.map((o) => o.path)).toEqual([kept.path]);
  });
});

describe('a data folder copied, both copies saving into one media folder (real processes)', () => {
  it('keeps every paid file: the copy saves into a space of its own, and each row names its own file', async () => {
    const sim = await simulatorForTest({ jobMs: 200 });
    const media = tempDir();
    const a = tempDir();
    writeSettings(a, SETTINGS);
    const env = { STUDIO_SIMULATOR_BASE_URL: sim.url, STUDIO_MEDIA_DIR: media };
    await enqueue(a, 'a fox at dawn');
    expect((await runStudio(a, ['worker', '--until-idle'], env)).code).toBe(0);
    const b = tempDir();
    cpSync(a, b, { recursive: true });
    const inA = await enqueue(a, 'a red fox in snow');
    const inB = await enqueue(b, 'a lighthouse at dusk');
    expect(inB).toBe(inA);
    expect((await runStudio(a, ['worker', '--until-idle'], env)).code).toBe(0);
    expect((await runStudio(b, ['worker', '--until-idle'], env)).code).toBe(0);
    const [savedA, savedB] = [await savedFiles(a, media, inA), await savedFiles(b, media, inB)];
    for (const saved of [savedA, savedB]) {
      expect(saved.status).toBe('SUCCEEDED');
      for (const file of saved.files) expect(sha(readFileSync(file.path))).toBe(file.sha256);
    }
    expect(savedA.files[0]!.path).not.toBe(savedB.files[0]!.path);
    expect(savedA.files[0]!.sha256).not.toBe(savedB.files[0]!.sha256);
    expect(sim.charges).toHaveLength(3);
  }, 60_000);

  it('finds a paid result saved by the original before the copy, where the copy had its space then', async () => {
    const ledger: Ledger = { charged: [] };
    const fake = await startFake(openAiImages(ledger, (await realMedia()).png, { n: 1 }));
    const media = tempDir();
    const a = tempDir();
    writeSettings(a, { engine: { ...SETTINGS.engine, leaseMs: 1_500 } });
    const env = { STUDIO_MEDIA_DIR: media, STUDIO_OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test-0123456789' };
    const store = openSqliteStore(databasePath(a));
    const project = await store.projects.ensure('Fox', Date.now());
    const id = (await store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'openai', model: 'gpt-image-1', input: { prompt: 'a fox', n: 1 } }, Date.now())).id;
    await store.close();
    const worker = startStudio(a, ['worker', '--until-idle'], { ...env, STUDIO_STOP_AT: 'mid-save' });
    await worker.waitFor(new RegExp(`stopped at mid-save for task ${id}`));
    const b = tempDir();
    cpSync(a, b, { recursive: true });
    worker.child.kill('SIGKILL');
    await worker.exited;
    expect((await runStudio(b, ['worker', '--until-idle'], env)).code).toBe(0);
    const saved = await savedFiles(b, media, id);
    expect(saved.status).toBe('SUCCEEDED');
    expect(ledger.charged).toHaveLength(1);
    // The copy keeps a name of its own for the file, in its own space: the original deleting its name loses nothing.
    const [spaceA, spaceB] = [await spaceOf(a), await spaceOf(b)];
    expect(saved.files[0]!.path.startsWith(join(media, spaceB))).toBe(true);
    for (const name of readdirSync(join(media, spaceA, 'projects', '1', 'media'))) rmSync(join(media, spaceA, 'projects', '1', 'media', name));
    expect(sha(readFileSync(saved.files[0]!.path))).toBe(saved.files[0]!.sha256);
  }, 60_000);
});
