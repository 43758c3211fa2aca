import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocalOutputStore } from '../main/adapters/outputStore.ts';
import { studioMedia } from '../main/config/media.ts';
import { openDatabase } from '../main/db/database.ts';
import { layoutTail, movedRelative, placesOf } from '../main/domain/storedPaths.ts';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { SqliteTaskStore } from '../main/store/sqlite/taskStore.ts';
import { openStudio } from '../main/studio.ts';
import { openAiImages, realMedia, type Ledger } from './fakes/providers.ts';
import { startFake } from './fakes/server.ts';
import { runStudio, startStudio, whenStopped, writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * A data folder moved with `mv` (a new disk, another user name on a new Mac, a restored backup) keeps every result
 * it paid for: its rows name files relative to it, rows kept absolute before are rewritten when it opens, and a
 * file truly gone is said with each place it was looked for. A folder moved while a worker has work in flight loses
 * nothing and pays nothing twice; a database carried alone, or a media folder unset, calls no file lost. Real worker
 * processes, a real SQLite file, the simulator or an OpenAI stand-in as the provider, counting their charges.
 */

let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const BOARD = {
  width: 320,
  height: 180,
  scenes: [
    { id: 'dawn', imagePrompt: 'a fox asleep', motionPrompt: 'push in', narration: 'The fox wakes.', duration: 1 },
    { id: 'hunt', imagePrompt: 'the fox listens', motionPrompt: 'hold', narration: 'It listens.', duration: 1 },
  ],
};

interface TaskJson {
  id: number;
  kind: string;
  status: string;
  outputPath: string | null;
}

async function studio(dir: string, ...args: string[]) {
  return runStudio(dir, args);
}

const tasksOf = async (dir: string) => JSON.parse((await studio(dir, 'tasks', '--json')).stdout) as TaskJson[];

/** A data folder under another user's home whose own name holds "projects", with the project made: 6 charges. */
async function madeProject() {
  sim = await startSimulator({ jobMs: 50 });
  const root = tempDir();
  const data = join(root, 'home', 'ana', 'projects', 'take-studio');
  mkdirSync(data, { recursive: true });
  writeSettings(data, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } } });
  writeFileSync(join(data, 'board.json'), JSON.stringify(BOARD));
  expect((await studio(data, 'storyboard', 'create', 'Fox', '--file', join(data, 'board.json'))).code).toBe(0);
  expect((await studio(data, 'generate', 'Fox')).code).toBe(0);
  expect((await studio(data, 'worker', '--until-idle')).code).toBe(0);
  const made = await tasksOf(data);
  expect(made.map((t) => t.status)).toEqual(Array(7).fill('SUCCEEDED'));
  expect(sim.charges).toHaveLength(6);
  return { root, data, made, moved: join(root, 'home', 'bea', 'projects', 'take-studio') };
}

/** A path as the studio keeps it now: relative to the data folder, with forward slashes. */
const KEPT = /^projects\/1\/(media\/task-\d+-a\d+|renders\/render-\d+)\.\w+$/;

/** `mv` of the user's folder, as a person moving to another account would. */
const moveHome = (root: string) => execFileSync('mv', [join(root, 'home', 'ana'), join(root, 'home', 'bea')]);

/** Every path the database names, in its tasks and its outputs. */
function pathsIn(data: string): string[] {
  const db = new Database(join(data, 'studio.db'), { readonly: true });
  try {
    return [...db.prepare(`SELECT output_path FROM tasks WHERE output_path IS NOT NULL`).pluck().all(), ...db.prepare(`SELECT path FROM task_outputs`).pluck().all()] as string[];
  } finally {
    db.close();
  }
}

/** Every finished step's file is found whole (by checksum) in the data folder; a Generate buys nothing. */
async function everythingFound(data: string, made: readonly TaskJson[]) {
  const opened = await openStudio(data);
  try {
    for (const t of made) expect((await opened.files.file(t.id, 0, `task ${t.id}'s result`))?.state).toBe('here');
  } finally {
    await opened.close();
  }
  const estimate = await studio(data, 'estimate', 'Fox');
  expect(estimate.stdout).not.toMatch(/result lost|rebuy/);
  const generated = await studio(data, 'generate', 'Fox');
  expect(generated.code).toBe(0);
  expect(generated.stdout).toContain('Nothing new to make');
}

/** A render afterwards: made from the moved files, and nothing is bought. */
async function renderBuysNothing(data: string) {
  expect((await studio(data, 'render', 'Fox')).code).toBe(0);
  expect((await studio(data, 'worker', '--until-idle')).code).toBe(0);
  const after = await tasksOf(data);
  expect(after).toHaveLength(8);
  expect(after.at(-1)).toMatchObject({ kind: 'render', status: 'SUCCEEDED' });
  expect(sim!.charges).toHaveLength(6);
}

describe('a data folder moved with mv', () => {
  it('finds every finished step under its new place; a render afterwards buys nothing, and generate offers no rebuy', async () => {
    const { root, data, made, moved } = await madeProject();
    moveHome(root);
    expect(existsSync(data)).toBe(false);
    await everythingFound(moved, made);
    await renderBuysNothing(moved);
    for (const path of pathsIn(moved)) expect(path).toMatch(KEPT);
  }, 60_000);

  it('from before paths were relative (rows absolute, one of them saved on Windows): rewritten at open, nothing lost', async () => {
    const { root, data, made, moved } = await madeProject();
    const image = made.find((t) => t.kind === 'image')!;
    const db = new Database(join(data, 'studio.db'));
    const old = (rel: string, id: number) => (id === image.id ? `C:\\Users\\ana\\AppData\\Roaming\\take-studio\\${rel.split('/').join('\\')}` : join(data, rel));
    for (const t of made) db.prepare(`UPDATE tasks SET output_path = ? WHERE id = ?`).run(old(t.outputPath!, t.id), t.id);
    for (const o of db.prepare(`SELECT task_id, idx, path FROM task_outputs`).all() as { task_id: number; idx: number; path: string }[]) {
      db.prepare(`UPDATE task_outputs SET path = ? WHERE task_id = ? AND idx = ?`).run(old(o.path, o.task_id), o.task_id, o.idx);
    }
    db.close();
    expect(pathsIn(data).every((p) => p.startsWith(data) || p.startsWith('C:\\'))).toBe(true);

    moveHome(root);
    await everythingFound(moved, made);
    const rewritten = pathsIn(moved);
    expect(rewritten).toHaveLength(14);
    for (const path of rewritten) expect(path).toMatch(KEPT);
    await renderBuysNothing(moved);
    // Opened again and again, nothing more changes.
    expect(pathsIn(moved)).toEqual(expect.arrayContaining(rewritten));
  }, 60_000);

  it('a file truly deleted is reported with the place it was looked for, before buying it again is offered', async () => {
    const { root, data, made, moved } = await madeProject();
    moveHome(root);
    // Where each file is now, however its row names it.
    const now = (t: TaskJson) => join(moved, ...t.outputPath!.replace(`${data}/`, '').split('/'));
    const clip = made.find((t) => t.kind === 'clip')!;
    rmSync(now(clip));
    rmSync(now(made.find((t) => t.kind === 'render')!));
    const where = now(clip);

    const estimate = await studio(moved, 'estimate', 'Fox');
    expect(estimate.stdout).toContain(`paid, result lost: task ${clip.id} cost`);
    expect(estimate.stdout).toContain(`(its output file is gone), looked for at ${where}`);
    const refused = await studio(moved, 'generate', 'Fox');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`result lost: dawn:clip (task ${clip.id}, `);
    expect(refused.stderr).toContain(`), looked for at ${where}; nothing was enqueued`);
    expect(sim!.charges).toHaveLength(6);
  }, 60_000);
});

/** Every file under `dir`, with its path. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}
/** A result's file; not a piece of a film, kept beside the renders (segments/) to be joined again. */
const MEDIA_FILE = /^(?!.*[\\/]segments[\\/]).*\.(png|mp4|wav)$/;

/** The studio's storyboard in `data`, with the simulator as its provider; nothing generated yet. */
async function boardOnly(data: string) {
  sim = await startSimulator({ jobMs: 50 });
  mkdirSync(data, { recursive: true });
  writeSettings(data, { engine: { tickMs: 50, leaseMs: 1500, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } } });
  writeFileSync(join(data, 'board.json'), JSON.stringify(BOARD));
  expect((await studio(data, 'storyboard', 'create', 'Fox', '--file', join(data, 'board.json'))).code).toBe(0);
}

describe('a data folder moved with mv while a worker has work in flight', () => {
  let media: Awaited<ReturnType<typeof realMedia>>;
  beforeAll(async () => {
    media = await realMedia();
  }, 60_000);

  // OpenAI answers images synchronously, the bytes in the body (platform.openai.com/docs/api-reference/images): they
  // exist nowhere else, so they are written at the old place and named by that path, found by the studio moved.
  it.each(['after-mark', 'mid-save'])('two OpenAI images in hand (stopped at %s): both found whole from the new place, one charge', async (point) => {
    const ledger: Ledger = { charged: [] };
    const fake = await startFake(openAiImages(ledger, media.png, { n: 2 }));
    const root = tempDir();
    const [data, moved] = [join(root, 'ana'), join(root, 'bea')];
    mkdirSync(data);
    writeSettings(data, { engine: { leaseMs: 1_500, tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200, deadlineMs: 60_000 } } });
    const before = await openStudio(data);
    const project = await before.projects.ensure('Fox', Date.now());
    const { id } = await before.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'openai', model: 'gpt-image-1', input: { prompt: 'a fox', n: 2 } }, Date.now());
    await before.close();
    const worker = startStudio(data, ['worker', '--until-idle'], { STUDIO_OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test-0123456789', STUDIO_STOP_AT: point });
    await worker.waitFor(new RegExp(`stopped at ${point} for task ${id}`));
    await whenStopped(worker.child);
    execFileSync('mv', [data, moved]);
    worker.child.kill('SIGCONT');
    expect(await worker.exited, worker.stderr()).toBe(0);
    expect(worker.stderr()).toMatch(/the data folder was moved or deleted while this paid result was saved; its files were written at /);

    const after = await openStudio(moved);
    expect(await after.tasks.get(id)).toMatchObject({ status: 'SUCCEEDED', charged: 'yes' });
    const outputs = await after.tasks.outputs(id);
    expect(outputs).toHaveLength(2);
    for (const o of outputs) expect((await after.files.file(id, o.index, `task ${id}`))?.state).toBe('here');
    expect((await after.tasks.events(id)).at(-1)!.reason).toMatch(/^the data folder was moved or deleted while this paid result was saved/);
    await after.close();
    expect(ledger.charged).toEqual(['req_1']);
  }, 60_000);

  it('a download: left at the provider, nothing made at the old place, nothing more claimed there; collected from the new place', async () => {
    const root = tempDir();
    const [data, moved] = [join(root, 'ana', 'studio'), join(root, 'bea', 'studio')];
    await boardOnly(data);
    expect((await studio(data, 'generate', 'Fox')).code).toBe(0);
    const worker = startStudio(data, ['worker', '--until-idle'], { STUDIO_STOP_AT: 'after-send' });
    await worker.waitFor(/stopped at after-send/);
    await whenStopped(worker.child);
    const sent = sim!.charges.length;
    mkdirSync(join(root, 'bea'));
    execFileSync('mv', [data, moved]);
    worker.child.kill('SIGCONT');
    expect(await worker.exited, worker.stderr()).toBe(0);
    expect(worker.stderr()).toMatch(/was moved or deleted while the studio runs; the result is left at simulator and collected when the studio starts from the folder's new place/);
    expect(worker.stderr()).not.toContain('engine resumed');
    expect(filesUnder(data).filter((p) => MEDIA_FILE.test(p))).toEqual([]);
    expect(sim!.charges).toHaveLength(sent);

    expect((await studio(moved, 'worker', '--until-idle')).code).toBe(0);
    expect((await tasksOf(moved)).map((t) => t.status)).toEqual(Array(7).fill('SUCCEEDED'));
    expect((await studio(moved, 'estimate', 'Fox')).stdout).not.toMatch(/result lost|rebuy/);
    expect(sim!.charges).toHaveLength(6);
  }, 90_000);
});

describe('only the database carried to a new data folder, its files left where its rows name them', () => {
  it('the rows keep naming them: nothing is called lost, and generate buys nothing', async () => {
    const { data, made, root } = await madeProject();
    const db = new Database(join(data, 'studio.db'));
    db.prepare(`UPDATE tasks SET output_path = ? || '/' || output_path WHERE output_path IS NOT NULL`).run(data);
    db.prepare(`UPDATE task_outputs SET path = ? || '/' || path`).run(data);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const fresh = join(root, 'new', 'studio');
    mkdirSync(fresh, { recursive: true });
    copyFileSync(join(data, 'studio.db'), join(fresh, 'studio.db'));
    copyFileSync(join(data, 'settings.json'), join(fresh, 'settings.json'));
    await everythingFound(fresh, made);
    for (const path of pathsIn(fresh)) expect(path.startsWith(`${data}/`)).toBe(true);
    expect(sim!.charges).toHaveLength(6);
  }, 60_000);
});

describe('a media folder set, then unset', () => {
  it('the files saved in it are still found, by checksum: nothing is called lost', async () => {
    const root = tempDir();
    const [data, folder] = [join(root, 'data'), join(root, 'media')];
    mkdirSync(folder);
    await boardOnly(data);
    const withMedia = { STUDIO_MEDIA_DIR: folder };
    expect((await runStudio(data, ['generate', 'Fox'], withMedia)).code).toBe(0);
    expect((await runStudio(data, ['worker', '--until-idle'], withMedia)).code).toBe(0);
    expect(filesUnder(folder).filter((p) => MEDIA_FILE.test(p))).toHaveLength(7);

    const made = await tasksOf(data);
    await everythingFound(data, made);
    expect(sim!.charges).toHaveLength(6);
  }, 60_000);
});

describe('the list of media folders this studio saved into', () => {
  /** An OpenAI image saved in media folder m1 by a real worker; then m2 is the media folder. One charge. */
  async function savedInFirst() {
    const ledger: Ledger = { charged: [] };
    const fake = await startFake(openAiImages(ledger, (await realMedia()).png, { n: 1 }));
    const root = tempDir();
    const [data, m1, m2] = [join(root, 'data'), join(root, 'm1'), join(root, 'm2')];
    for (const dir of [data, m1, m2]) mkdirSync(dir);
    writeSettings(data, { engine: { leaseMs: 1_500, tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200 } } });
    const first = await openStudio(data, undefined, { media: m1 });
    const project = await first.projects.ensure('Fox', Date.now());
    const { id } = await first.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'openai', model: 'gpt-image-1', input: { prompt: 'a fox', n: 1 } }, Date.now());
    await first.close();
    const env = { STUDIO_OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test-0123456789' };
    expect((await runStudio(data, ['worker', '--until-idle'], { ...env, STUDIO_MEDIA_DIR: m1 })).code).toBe(0);
    return { ledger, data, m2, id, list: join(data, 'media-folders.json') };
  }

  it.each([
    ['emptied', ''],
    ['cut short', '["/Users/ana/media'],
  ])('%s, is never written over, and a file saved in the folder it named is still found when another is set', async (_, spoilt) => {
    const { ledger, data, m2, id, list } = await savedInFirst();
    writeFileSync(list, spoilt);
    const later = await openStudio(data, undefined, { media: m2 });
    expect((await later.files.file(id, 0, `task ${id}`))?.state).toBe('here');
    await later.close();
    expect(readFileSync(list, 'utf8')).toBe(spoilt);
    expect(ledger.charged).toEqual(['req_1']);
  }, 60_000);

  it('that cannot be written (a full disk) is said, and the studio opens all the same', async () => {
    const { ledger, data, m2, id } = await savedInFirst();
    // Each copy's temporary file taken by a folder: the write fails as a full disk's does, on any machine.
    for (const name of ['media-folders.json.part', 'media-folders.copy.json.part']) mkdirSync(join(data, name));
    const worker = await runStudio(data, ['worker', '--until-idle'], { STUDIO_MEDIA_DIR: m2 });
    expect(worker.code, worker.stderr).toBe(0);
    expect(worker.stderr).toMatch(new RegExp(`the media folder ${m2} could not be remembered in .*media-folders\\.json \\(EISDIR\\)`));
    const later = await openStudio(data, undefined, { media: m2 });
    expect((await later.files.file(id, 0, `task ${id}`))?.state).toBe('here');
    await later.close();
    expect(ledger.charged).toEqual(['req_1']);
  }, 60_000);
});

describe('a result record written with absolute paths, in a data folder moved since', () => {
  it('is found by its checksums at the files\' place in the layout, and names them relative to the data folder', async () => {
    const root = tempDir();
    const before = join(root, 'ana', 'projects', 'data');
    const task = { projectId: 2, id: 5, idempotencyKey: 'studio-task-5-attempt-1' };
    const bytes = Buffer.from('paid picture');
    const file = join(before, 'projects', '2', 'media', 'task-5-a1.png');
    mkdirSync(join(before, 'projects', '2', 'media'), { recursive: true });
    writeFileSync(file, bytes);
    const output = { path: file, sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.byteLength, contentType: 'image/png' };
    writeFileSync(join(before, 'projects', '2', 'media', 'task-5-a1.result.json'), JSON.stringify({ idempotencyKey: task.idempotencyKey, requestId: 'r-1', costActual: null, outputs: [output] }));
    const after = join(root, 'bea', 'data');
    mkdirSync(join(root, 'bea'));
    execFileSync('mv', [before, after]);

    const found = await new LocalOutputStore(after).find(task);
    expect(found).toMatchObject({ missing: 0, outputs: [{ ...output, path: 'projects/2/media/task-5-a1.png' }] });
  });

  it('is not taken for a file of another checksum at that place', async () => {
    const data = tempDir();
    const task = { projectId: 1, id: 1, idempotencyKey: 'studio-task-1-attempt-1' };
    mkdirSync(join(data, 'projects', '1', 'media'), { recursive: true });
    writeFileSync(join(data, 'projects', '1', 'media', 'task-1-a1.png'), 'another picture');
    const output = { path: '/gone/projects/1/media/task-1-a1.png', sha256: createHash('sha256').update('paid picture').digest('hex'), bytes: 12, contentType: 'image/png' };
    writeFileSync(join(data, 'projects', '1', 'media', 'task-1-a1.result.json'), JSON.stringify({ idempotencyKey: task.idempotencyKey, requestId: 'r-1', costActual: null, outputs: [output] }));
    expect(await new LocalOutputStore(data).find(task)).toBeNull();
  });
});

describe('rows of the embedded database kept absolute, rewritten at open', () => {
  it('once, relative to the data folder; a path outside the layout, or relative already, is left as it is', async () => {
    const data = tempDir();
    const studio = await openStudio(data);
    const project = await studio.projects.ensure('Fox', Date.now());
    const ids: number[] = [];
    for (const prompt of ['a', 'b', 'c']) ids.push((await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt } }, Date.now())).id);
    await studio.close();
    const rows = ['/old/projects/x/projects/1/media/task-1-a1.png', 'D:\\Studio\\rescued\\task-2-a1.png', '/elsewhere/fox.png'];
    // The files are here now, at their places in the layout: the folder moved.
    mkdirSync(join(data, 'projects', '1', 'media'), { recursive: true });
    mkdirSync(join(data, 'rescued'));
    writeFileSync(join(data, 'projects', '1', 'media', 'task-1-a1.png'), 'a');
    writeFileSync(join(data, 'rescued', 'task-2-a1.png'), 'b');
    const raw = new Database(join(data, 'studio.db'));
    for (const [i, path] of rows.entries()) {
      raw.prepare(`UPDATE tasks SET output_path = ? WHERE id = ?`).run(path, ids[i]);
      raw.prepare(`INSERT INTO task_outputs (task_id, idx, path, sha256) VALUES (?, 0, ?, 'x')`).run(ids[i], path);
    }
    raw.close();

    await (await openStudio(data)).close();
    const expected = ['projects/1/media/task-1-a1.png', 'rescued/task-2-a1.png', '/elsewhere/fox.png'];
    expect(pathsIn(data)).toEqual([...expected, ...expected]);
    const db = openDatabase(join(data, 'studio.db'));
    try {
      expect(new SqliteTaskStore(db).relativizePaths(layoutTail)).toBe(0);
    } finally {
      db.close();
    }
    expect(pathsIn(data)).toEqual([...expected, ...expected]);
  });
});

describe('a path kept in a row: its place in the layout', () => {
  it('is what follows the last marker of the layout, whatever the old folder was called', () => {
    expect(layoutTail('/home/ana/.config/take-studio/projects/3/media/task-9-a1.png')).toBe('projects/3/media/task-9-a1.png');
    expect(layoutTail('/home/ana/projects/7/media/take-studio/projects/3/media/task-9-a1.png')).toBe('projects/3/media/task-9-a1.png');
    expect(layoutTail('/Users/ana/Library/Application Support/take-studio/projects/12/renders/render-40-ab12cd34.mp4')).toBe('projects/12/renders/render-40-ab12cd34.mp4');
    expect(layoutTail('/srv/projects/1/media/data/rescued/task-2-a1.mp3')).toBe('rescued/task-2-a1.mp3');
  });

  it('reads Windows paths, with a drive or a share, and either separator', () => {
    expect(layoutTail('C:\\Users\\ana\\AppData\\Roaming\\take-studio\\projects\\3\\media\\task-9-a1.png')).toBe('projects/3/media/task-9-a1.png');
    expect(layoutTail('\\\\nas\\studio\\projects\\4\\media\\task-1-a2-1.png')).toBe('projects/4/media/task-1-a2-1.png');
    expect(layoutTail('D:/studio/rescued/task-3-a1.wav')).toBe('rescued/task-3-a1.wav');
  });

  it('is none for a relative path, or one outside the layout', () => {
    for (const path of [
      'projects/3/media/task-9-a1.png',
      'local-ab12/projects/3/media/task-9-a1.png',
      '/elsewhere/x.png',
      '/data/projects/x/media/task-1-a1.png',
      '/data/projects/1/other/task-1-a1.png',
      '/data/projects/1/media/',
      'C:\\Users\\ana\\Desktop\\fox.png',
    ]) expect(layoutTail(path)).toBeNull();
  });

  it('a POSIX name holding a backslash stays one name', () => {
    expect(layoutTail('/data/projects/1/media/odd\\name.png')).toBe('projects/1/media/odd\\name.png');
  });
});

describe('the places a stored path is looked for', () => {
  const folders = { root: '/mnt/media', base: '/mnt/media/local-ab12', home: '/Users/bea/take-studio' };

  it('a relative path: in the media folder, then in the data folder it was saved in before one was set', () => {
    expect(placesOf('projects/1/media/task-1-a1.png', folders)).toEqual(['/mnt/media/projects/1/media/task-1-a1.png', '/Users/bea/take-studio/projects/1/media/task-1-a1.png']);
    expect(placesOf('projects/1/media/task-1-a1.png', { root: '/d', base: '/d', home: '/d' })).toEqual(['/d/projects/1/media/task-1-a1.png']);
  });

  it('a relative path saved in a media folder unset since: in each media folder this studio saved into', () => {
    const unset = { root: '/d', base: '/d', home: '/d', earlier: ['/mnt/old-media'] };
    expect(placesOf('local-ab12/projects/1/media/task-1-a1.png', unset)).toEqual(['/d/local-ab12/projects/1/media/task-1-a1.png', '/mnt/old-media/local-ab12/projects/1/media/task-1-a1.png']);
  });

  it('an absolute row is made relative at open only when its file is gone from there and is at its place here', () => {
    const files = new Set(['/new/projects/1/media/task-1-a1.png']);
    const exists = (path: string) => files.has(path);
    expect(movedRelative('/old/projects/1/media/task-1-a1.png', '/new', exists)).toBe('projects/1/media/task-1-a1.png');
    expect(movedRelative('/old/projects/1/media/task-2-a1.png', '/new', exists)).toBeNull();
    files.add('/old/projects/1/media/task-1-a1.png');
    expect(movedRelative('/old/projects/1/media/task-1-a1.png', '/new', exists)).toBeNull();
  });

  it('an absolute path: where it was saved, then its place in the layout here', () => {
    expect(placesOf('C:\\Users\\ana\\take-studio\\projects\\1\\media\\task-1-a1.png', folders)).toEqual([
      'C:\\Users\\ana\\take-studio\\projects\\1\\media\\task-1-a1.png',
      '/mnt/media/local-ab12/projects/1/media/task-1-a1.png',
      '/Users/bea/take-studio/projects/1/media/task-1-a1.png',
    ]);
    expect(placesOf('/elsewhere/x.png', folders)).toEqual(['/elsewhere/x.png']);
  });

  it('a team database with no media folder: an old absolute row is looked for under its folder in the data folder', () => {
    const team = studioMedia({ dataDir: '/Users/bea/take-studio', configured: null, kind: 'postgres', space: 'team-1', machine: 'm' });
    expect(team.places('/Users/ana/take-studio/team-1/projects/2/media/task-3-a1.mp4')).toContain('/Users/bea/take-studio/team-1/projects/2/media/task-3-a1.mp4');
    expect(team.stored('/Users/bea/take-studio/team-1/projects/2/media/task-3-a1.mp4')).toBe('team-1/projects/2/media/task-3-a1.mp4');
  });
});
