import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkCall, IpcRefused } from '../app/ipcValidation.ts';
import type { CancelPreview, EstimateView, LibraryItem, LibraryPage, SpendOverview, TaskDetail, TaskView } from '../main/api/contract.ts';
import { launchHost, type LaunchedHost } from '../main/host/launch.ts';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { openStudio, type Studio } from '../main/studio.ts';
import { cli } from './helpers/cli.ts';
import { writeSettings } from './helpers/processes.ts';
import { sqlOf } from './helpers/sql.ts';
import { tempDir } from './helpers/tmp.ts';

let host: LaunchedHost | undefined;
let sim: RunningSimulator | undefined;
let studio: Studio | undefined;
afterEach(async () => {
  await host?.stop();
  await studio?.close();
  await sim?.close();
  host = sim = studio = undefined;
});

const board = (prompt: string, narration: string) => ({
  width: 320,
  height: 180,
  scenes: [{ id: 'dawn', imagePrompt: prompt, motionPrompt: 'push in', narration, duration: 1 }],
});

/** Two projects made and finished by the CLI's worker against the simulator, then the host on the same data folder. */
async function twoProjects(before?: (studio: Studio, dir: string) => Promise<void>) {
  sim = await startSimulator({ jobMs: 50 });
  const dir = tempDir();
  writeSettings(dir, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } } });
  for (const [name, b] of [
    ['Fox', board('a red fox asleep in snow', 'At dawn, the fox wakes.')],
    ['Owl', board('an owl on a pine branch', 'The owl watches.')],
  ] as const) {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(b));
    expect((await cli(dir, 'storyboard', 'create', name, '--file', file)).code).toBe(0);
    expect((await cli(dir, 'generate', name)).code).toBe(0);
  }
  expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
  studio = await openStudio(dir);
  // Rows a test writes itself go in before the host's engine runs, so it never sends them.
  await before?.(studio, dir);
  host = await launchHost(dir);
  return { dir, studio };
}

/** One StudioApi call over HTTP, as the page makes it. */
async function call<T>(method: string, ...args: unknown[]): Promise<T> {
  const res = await fetch(`${host!.url.replace(/\/?(#.*)?$/, '')}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${host!.token}` },
    body: JSON.stringify(args),
  });
  const body = (await res.json()) as { result: T; error?: string };
  if (res.status !== 200) throw new Error(`${res.status}: ${body.error}`);
  return body.result;
}

const media = (url: string) => fetch(`${host!.url.replace(/\/?(#.*)?$/, '')}${url}?token=${host!.token}`);

async function eventually<T>(read: () => Promise<T> | T, holds: (value: T) => boolean): Promise<T> {
  const end = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    if (Date.now() > end) throw new Error(`never held; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the library', () => {
  it('lists every saved result of every project with its prompt, provider, request id, costs and scene, filtered and searched', async () => {
    await twoProjects();
    const all = await call<LibraryPage>('library', { offset: 0, limit: 50 });
    expect(all.total).toBe(8);
    expect(new Set(all.items.map((i) => i.project))).toEqual(new Set(['Fox', 'Owl']));
    expect(all.projects).toEqual(['Fox', 'Owl']);
    expect(all.providers).toEqual(['local', 'simulator']);
    // Newest first.
    const finished = all.items.map((i) => i.finishedAt!);
    expect([...finished].sort().reverse()).toEqual(finished);

    const image = all.items.find((i) => i.project === 'Fox' && i.kind === 'image')!;
    expect(image).toMatchObject({ provider: 'simulator', model: 'sim-image-1', scene: 'dawn', summary: 'a red fox asleep in snow', charged: 'yes', deletedAt: null });
    expect(image.remoteRequestId).toBeTruthy();
    expect(image.costActual).toBeGreaterThan(0);
    expect(image.costEstimated).toBeGreaterThan(0);
    expect(image.costActualSource).toBe('the simulator\'s "cost" field');
    expect(image.costEstimateSource).toBeTruthy();
    expect((image.input as { prompt: string }).prompt).toBe('a red fox asleep in snow');
    expect(image.files).toHaveLength(1);
    const served = await media(image.files[0]!.url!);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(/^image\//);
    for (const kind of ['clip', 'speech'] as const) expect(all.items.find((i) => i.project === 'Owl' && i.kind === kind)!.scene).toBe('dawn');
    expect(all.items.find((i) => i.kind === 'render')!.scene).toBeNull();

    const count = async (q: object) => (await call<LibraryPage>('library', { offset: 0, limit: 50, ...q })).total;
    expect(await count({ project: 'Owl' })).toBe(4);
    expect(await count({ kind: 'image' })).toBe(2);
    expect(await count({ provider: 'simulator' })).toBe(6);
    expect(await count({ provider: 'simulator', project: 'Fox', kind: 'speech' })).toBe(1);
    expect(await count({ search: 'OWL' })).toBe(2);
    expect(await count({ search: 'fox wakes' })).toBe(1);
    // A % is a character to find, not a wildcard.
    expect(await count({ search: '%' })).toBe(0);
    const today = new Date();
    const day = (plus: number) => new Date(today.getFullYear(), today.getMonth(), today.getDate() + plus).toISOString();
    expect(await count({ from: day(0), to: day(1) })).toBe(8);
    expect(await count({ from: day(1) })).toBe(0);
    expect(await count({ to: day(0) })).toBe(0);
    const paged = await call<LibraryPage>('library', { offset: 6, limit: 5 });
    expect(paged).toMatchObject({ total: 8, offset: 6 });
    expect(paged.items).toHaveLength(2);
    await expect(call('library', { offset: 0, limit: 10, from: 'yesterday' })).rejects.toThrow(/400: "from" is not a date/);
    await expect(call('library', { offset: 0, limit: 10, project: 'Nope' })).rejects.toThrow(/there is no project "Nope"/);
  }, 60_000);

  it('deletes a result on request: its files go, its cost stays counted, its history says so, and a Generate sees a paid result lost', async () => {
    const { studio } = await twoProjects();
    const items = (await call<LibraryPage>('library', { project: 'Fox', offset: 0, limit: 50 })).items;
    const speech = items.find((i) => i.kind === 'speech')!;
    const render = items.find((i) => i.kind === 'render')!;
    const path = studio.media.resolve((await studio.tasks.get(speech.id))!.outputPath!);
    const spentBefore = (await call<SpendOverview>('spendOverview')).projects.find((p) => p.name === 'Fox')!;
    expect(existsSync(path)).toBe(true);

    const deleted = await call<LibraryItem>('deleteOutput', speech.id);
    expect(existsSync(path)).toBe(false);
    expect(deleted.deletedAt).not.toBeNull();
    expect(deleted.files).toEqual([expect.objectContaining({ index: 0, url: null })]);
    expect(deleted.outputUrl).toBeNull();
    expect((await media(speech.files[0]!.url!)).status).toBe(404);
    expect((await media(speech.outputUrl!)).status).toBe(404);
    // Still listed, still paid for.
    const after = (await call<LibraryPage>('library', { project: 'Fox', kind: 'speech', offset: 0, limit: 5 })).items[0]!;
    expect(after).toMatchObject({ id: speech.id, costActual: speech.costActual, charged: 'yes' });
    expect(after.deletedAt).not.toBeNull();
    expect((await call<SpendOverview>('spendOverview')).projects.find((p) => p.name === 'Fox')).toEqual(spentBefore);
    const detail = await call<TaskDetail>('taskDetail', speech.id);
    expect(detail.events.at(-1)).toMatchObject({ from: 'SUCCEEDED', to: 'SUCCEEDED', actor: 'person' });
    expect(detail.events.at(-1)!.reason).toMatch(/^deleted by the person in the library; it cost 0\.\d+ USD \(billed\), not refunded$/);
    await expect(call('deleteOutput', speech.id)).rejects.toThrow(/has no saved result to delete/);

    // The narration was paid for and is gone; the video made from it (free) is gone too, so it must be made anew.
    await call('deleteOutput', render.id);
    const estimate = await call<EstimateView>('estimate', 'Fox');
    const step = estimate.steps.find((s) => s.key === 'dawn:speech')!;
    expect(step.action).toBe('rebuy');
    expect(step.lost).toMatchObject({ taskId: speech.id, paid: 'yes', cost: speech.costActual });
    expect(estimate.steps.find((s) => s.key === 'dawn:render' || s.kind === 'render')!.action).toBe('new');
    // Nothing else of the project is bought again.
    expect(estimate.steps.filter((s) => s.kind !== 'render' && s.key !== 'dawn:speech').every((s) => s.action === 'reuse')).toBe(true);
  }, 60_000);

  it('serves each file of a result of several, and deletes them all', async () => {
    let taskId = 0;
    const files: { path: string; sha256: string; bytes: number; contentType: string }[] = [];
    await twoProjects(async (studio, dir) => {
      const project = (await studio.projects.byName('Fox'))!;
      const task = await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'two foxes', num_outputs: 2 } }, Date.now());
      taskId = task.id;
      // This test plays the worker that saved a result of two files.
      const lease = { owner: 'test-worker', now: Date.now() };
      expect((await studio.tasks.claim('image', 1, 60_000, lease)).map((t) => t.id)).toEqual([task.id]);
      const media = join(dir, 'projects', String(project.id), 'media');
      mkdirSync(media, { recursive: true });
      for (const i of [0, 1]) {
        const path = join(media, `task-${task.id}-a1${i ? `-${i}` : ''}.png`);
        writeFileSync(path, Buffer.from(`png ${i}`));
        files.push({ path, sha256: createHash('sha256').update(`png ${i}`).digest('hex'), bytes: 5, contentType: 'image/png' });
      }
      expect(await studio.tasks.complete(task.id, { outputs: files, costActual: null }, lease)).toBeTruthy();
    });
    const task = { id: taskId };
    const item = (await call<LibraryPage>('library', { search: 'two foxes', offset: 0, limit: 5 })).items[0]!;
    expect(item.files.map((f) => f.index)).toEqual([0, 1]);
    for (const [i, f] of item.files.entries()) expect(await (await mediaOf(f.url!)).text()).toBe(`png ${i}`);
    expect((await mediaOf(`/media/${task.id}/2`)).status).toBe(404);
    expect((await mediaOf(`/media/${task.id}/1/x`)).status).toBe(404);
    await call('deleteOutput', task.id);
    expect(files.map((f) => existsSync(f.path))).toEqual([false, false]);
    expect((await mediaOf(`/media/${task.id}/1`)).status).toBe(404);
  }, 60_000);

  it('pages thousands of results quickly', async () => {
    const n = 5_000;
    await twoProjects(async (studio, dir) => {
      const project = (await studio.projects.byName('Owl'))!;
      const source = (await studio.tasks.list({ projectId: project.id })).find((t) => t.kind === 'image')!;
      const path = (await studio.tasks.outputs(source.id))[0]!.path;
      const ids = await studio.store.transaction(async (tx) => {
        const made: number[] = [];
        for (let i = 0; i < n; i++) made.push((await tx.tasks.enqueue({ projectId: project.id, kind: 'speech', provider: 'simulator', model: 'sim-speech-1', input: { text: `line ${i}` } }, 1_000 + i)).id);
        return made;
      });
      // Finished rows as the executor leaves them, written directly: the executor's own path is tested elsewhere.
      const db = sqlOf(dir);
      db.transaction(() => {
        for (const [i, id] of ids.entries()) {
          db.prepare(`UPDATE tasks SET status = 'SUCCEEDED', output_path = ?, output_sha256 = 'x', finished_at = ? WHERE id = ?`).run(path, 2_000 + i, id);
          db.prepare(`INSERT INTO task_outputs (task_id, idx, path, sha256) VALUES (?, 0, ?, 'x')`).run(id, path);
        }
      })();
    });
    const started = performance.now();
    const page = await call<LibraryPage>('library', { offset: 2_400, limit: 24, search: 'line' });
    const filtered = await call<LibraryPage>('library', { offset: 0, limit: 24, project: 'Owl', kind: 'speech', search: 'line 49' });
    const ms = performance.now() - started;
    expect(page.total).toBe(n);
    expect(page.items).toHaveLength(24);
    expect(filtered.total).toBe(111); // line 49, 490-499, 4900-4999
    console.log(`library: two pages over ${n} results in ${ms.toFixed(0)} ms`);
    expect(ms).toBeLessThan(2_000);
  }, 120_000);
});

async function mediaOf(url: string) {
  return media(url);
}

describe('task detail, cancel preview and spend across projects', () => {
  it('shows a task\'s history, what was sent, request id, money and its sources, and what it was made from', async () => {
    await twoProjects();
    const clip = (await call<LibraryPage>('library', { project: 'Fox', kind: 'clip', offset: 0, limit: 5 })).items[0]!;
    const d = await call<TaskDetail>('taskDetail', clip.id);
    expect(d.events.map((e) => e.to)).toEqual(expect.arrayContaining(['PENDING', 'RUNNING', 'SUBMITTED', 'SUCCEEDED']));
    expect(d.events[0]).toMatchObject({ from: null, to: 'PENDING', actor: 'person', reason: 'enqueued' });
    expect(d.remoteRequestId).toBe(clip.remoteRequestId);
    expect(d.costEstimateSource).toBeTruthy();
    expect(d.costActualSource).toBe('the simulator\'s "cost" field');
    expect(d.dependsOn).toEqual([expect.objectContaining({ kind: 'image', status: 'SUCCEEDED', summary: 'a red fox asleep in snow' })]);
    expect(d.dependents).toEqual([expect.objectContaining({ kind: 'render' })]);
    expect(d.input).toMatchObject({ prompt: 'push in' });
    await expect(call('taskDetail', 99_999)).rejects.toThrow(/there is no task 99999/);
  }, 60_000);

  it('says before a cancel what was sent and may be charged, and which steps go with it', async () => {
    // Jobs that take a minute: the image stays at the provider while the test looks at it.
    sim = await startSimulator({ jobMs: 60_000 });
    const dir = tempDir();
    writeSettings(dir, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } } });
    host = await launchHost(dir);
    await call('createProject', 'Fox');
    await call('saveStoryboard', 'Fox', board('a red fox asleep in snow', 'At dawn, the fox wakes.'));
    await call('generate', 'Fox');
    const tasks = async () => (await call<{ tasks: TaskView[] }>('listTasks', 'Fox', 0, 50)).tasks;
    const image = (await eventually(tasks, (ts) => ts.some((t) => t.kind === 'image' && t.status === 'SUBMITTED'))).find((t) => t.kind === 'image')!;
    const all = await tasks();
    const clip = all.find((t) => t.kind === 'clip')!;
    const render = all.find((t) => t.kind === 'render')!;

    const preview = await call<CancelPreview>('cancelPreview', image.id);
    expect(preview.sent).toBe(true);
    expect(preview.message).toBe(
      `It is already sent to simulator as request ${image.remoteRequestId}; it may be charged (about ${image.costEstimated!.toFixed(2)} USD). ` +
        'The studio asks simulator to stop it; if it is already running, it may still finish and be charged, and then its result is collected.',
    );
    expect(preview.mayCost).toBe(image.costEstimated);
    // The clip waits for the image, and the render for the clip: both are cancelled with it.
    expect(preview.dependents.map((d) => d.id)).toEqual([clip.id, render.id]);

    const renderPreview = await call<CancelPreview>('cancelPreview', render.id);
    expect(renderPreview).toMatchObject({ sent: false, message: 'It is made on this machine; cancelling it costs nothing.', dependents: [] });
    const clipPreview = await call<CancelPreview>('cancelPreview', clip.id);
    expect(clipPreview).toMatchObject({ sent: false, message: 'It has not been sent to simulator; nothing is charged for it.', dependents: [expect.objectContaining({ id: render.id })] });

    await call('cancel', image.id);
    const after = await tasks();
    expect(after.filter((t) => [image.id, clip.id, render.id].includes(t.id)).map((t) => t.status)).toEqual(['CANCELLED', 'CANCELLED', 'CANCELLED']);
    expect((await call<CancelPreview>('cancelPreview', image.id)).message).toBe(`task ${image.id} is cancelled; only unfinished work can be cancelled`);
  }, 60_000);

  it('sets every project against its budget, spend per provider and per model over all of them, and a CSV of all', async () => {
    await twoProjects();
    await call('setBudget', 'Fox', 1);
    const o = await call<SpendOverview>('spendOverview');
    expect(o.projects.map((p) => p.name)).toEqual(['Fox', 'Owl']);
    const fox = o.projects[0]!;
    expect(fox.billed).toBeGreaterThan(0);
    expect(fox.budget).toBe(1);
    expect(fox.shareUsed).toBeCloseTo(fox.billed + fox.estimated + fox.possiblyCharged, 9);
    expect(o.projects[1]!).toMatchObject({ budget: null, shareUsed: null });
    expect(o.byModel.map((m) => m.model)).toEqual(['sim-clip-1', 'sim-image-1', 'sim-speech-1']);
    for (const m of o.byModel) expect(m).toMatchObject({ provider: 'simulator', currency: 'USD', tasks: 2 });
    const perProject = [...(await call<{ byModel: { billed: number }[] }>('spend', 'Fox')).byModel, ...(await call<{ byModel: { billed: number }[] }>('spend', 'Owl')).byModel];
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    expect(sum(o.byModel.map((m) => m.billed))).toBeCloseTo(sum(perProject.map((m) => m.billed)), 9);
    expect(o.byProvider).toEqual([expect.objectContaining({ provider: 'simulator', currency: 'USD' })]);
    expect(o.byProvider[0]!.billed).toBeCloseTo(fox.billed + o.projects[1]!.billed, 9);

    const csv = (await call<string>('spendCsv', null)).trim().split('\n');
    expect(csv[0]).toBe('project,day,provider,billed,counted_from_usage,estimated,possibly_charged,currency,simulated');
    // One row per project, day and provider that charged: the renders, made here, charge nothing.
    expect(csv.slice(1).map((l) => l.split(',').slice(0, 3).join(','))).toEqual(['Fox', 'Owl'].map((p) => `${p},${new Date().toISOString().slice(0, 10)},simulator`));
    expect(sum(csv.slice(1).map((l) => Number(l.split(',')[3])))).toBeCloseTo(fox.billed + o.projects[1]!.billed, 6);
    expect((await call<string>('spendCsv', 'Fox')).split('\n')[0]).toBe('day,provider,billed,counted_from_usage,estimated,possibly_charged,currency,simulated');
  }, 60_000);
});

describe('the IPC checks of these methods', () => {
  const page = { url: 'app://studio/index.html', isMainFrame: true };
  it('takes what the page sends and refuses other shapes', () => {
    expect(() => checkCall('library', [{ offset: 0, limit: 24, project: null, kind: 'image', provider: '', from: '2024-01-01T00:00:00.000Z', search: 'fox' }], page)).not.toThrow();
    expect(() => checkCall('spendCsv', [null], page)).not.toThrow();
    expect(() => checkCall('spendOverview', [], page)).not.toThrow();
    for (const m of ['deleteOutput', 'taskDetail', 'cancelPreview']) expect(() => checkCall(m, [3], page)).not.toThrow();
    for (const [m, args] of [
      ['library', [{ offset: 0, limit: 1_000 }]],
      ['library', [{ offset: 0, limit: 10, kind: 'video' }]],
      ['library', [{ offset: -1, limit: 10 }]],
      ['library', [{ offset: 0, limit: 10, search: 'x'.repeat(600) }]],
      ['deleteOutput', ['3']],
      ['taskDetail', [1.5]],
      ['spendOverview', [1]],
    ] as const) {
      expect(() => checkCall(m, [...args], page)).toThrow(IpcRefused);
    }
  });
});
