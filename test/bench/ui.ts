import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { databasePath } from '../../main/config/paths.ts';
import { openDatabase } from '../../main/db/database.ts';
import { openStudio } from '../../main/studio.ts';
import { CHROMIUM, CHROMIUM_ARGS, NO_PROVIDER, serve } from '../helpers/browser.ts';

/**
 * A data folder with one project of `count` finished tasks, as Generates make them over a long use: per take
 * of three scenes an image, a clip made from it and a narration, then a render of them, each with its saved file
 * and its dependency rows.
 */
export async function seed(count: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'studio-bench-ui-'));
  const studio = await openStudio(dir);
  const now = Date.now();
  const project = await studio.projects.ensure('Big', now);
  await studio.close();
  const db = openDatabase(databasePath(dir));
  const insert = db.prepare(
    `INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, status, charged, next_attempt_at, cost_estimated,
                        cost_actual, submitted_at, created_at, updated_at, finished_at, output_path, output_sha256)
     VALUES (?, ?, ?, ?, ?, ?, 'SUCCEEDED', ?, ?, ?, ?, ?, ?, ?, ?, ?, 'x')`,
  );
  const output = db.prepare(`INSERT INTO task_outputs (task_id, idx, path, sha256, bytes, content_type) VALUES (?, 0, ?, 'x', 1000, ?)`);
  const dependency = db.prepare(`INSERT INTO task_dependencies (task_id, depends_on) VALUES (?, ?)`);
  db.transaction(() => {
    let i = 0;
    const add = (kind: string, model: string, input: unknown, type: string) => {
      const at = now - (count - i) * 60_000;
      const render = kind === 'render';
      const path = join(dir, 'outputs', `${i}`);
      const cost = render ? 0 : 40_000;
      const id = Number(
        insert.run(project.id, kind, render ? 'local' : 'simulator', model, JSON.stringify(input), `h${i}`, render ? 'no' : 'yes', at, cost, cost, render ? null : at - 3_000, at - 4_000, at, at, path).lastInsertRowid,
      );
      output.run(id, path, type);
      i++;
      return id;
    };
    while (i < count) {
      const scenes = [];
      for (let s = 0; s < 3 && i + 3 <= count; s++) {
        const image = add('image', 'sim-image-1', { prompt: `shot ${i} of a fox in the snow`, seed: i }, 'image/png');
        const clip = add('clip', 'sim-clip-1', { prompt: 'slow push in', image_url: { $output: image }, duration: 3, seed: i }, 'video/mp4');
        dependency.run(clip, image);
        const speech = add('speech', 'sim-speech-1', { text: `line ${i}, spoken at dawn` }, 'audio/mpeg');
        scenes.push({ id: `scene${s}`, duration: 3, clip: { $output: clip }, narration: { $output: speech } });
      }
      if (i >= count) break;
      const render = add('render', 'ffmpeg', { width: 1280, height: 720, fps: 24, scenes }, 'video/mp4');
      for (const s of scenes) for (const ref of [s.clip, s.narration]) dependency.run(render, ref.$output);
    }
  })();
  db.close();
  return dir;
}

function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return Math.round(kb / 1024);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A fresh tab each time, from asking for the page to `ready`, in ms. */
async function timed(browser: Browser, url: string, ready: (page: Page) => Promise<void>, runs: number): Promise<number[]> {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const start = performance.now();
    await page.goto(url);
    await ready(page);
    times.push(Math.round(performance.now() - start));
    await page.close();
  }
  return times;
}

/**
 * With 100,000 finished tasks, each with its saved file: time from opening the page to a usable task board, and
 * to a usable library (each a fresh page, median of 5 runs); then the host's memory after paging through both.
 */
export async function benchUi(count = 100_000, runs = 5) {
  if (!existsSync(CHROMIUM)) return { skipped: `no Chromium at ${CHROMIUM}` };
  const dir = await seed(count);
  const { host, url } = await serve(dir, NO_PROVIDER);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  let board: number[];
  let library: number[];
  try {
    board = await timed(browser, url, async (page) => {
      await page.click('[data-tab=tasks]');
      await page.locator('[data-testid=task-count]', { hasText: String(count) }).waitFor();
      await page.locator('[data-status=SUCCEEDED]').first().waitFor();
    }, runs);
    library = await timed(browser, url, async (page) => {
      await page.click('[data-tab=library]');
      await page.locator('[data-testid=library-count]', { hasText: `${count} results` }).waitFor();
      await page.locator('[data-testid=library-list] article').first().waitFor();
    }, runs);
  } finally {
    await browser.close();
  }
  const auth = { authorization: `Bearer ${/token=(\w+)/.exec(url)![1]}`, 'content-type': 'application/json' };
  const base = new URL(url).origin;
  for (let i = 0; i < 20; i++) {
    await fetch(`${base}/api/listProjects`, { method: 'POST', headers: auth, body: '[]' });
    await fetch(`${base}/api/listTasks`, { method: 'POST', headers: auth, body: JSON.stringify(['Big', i * (count / 20), 100]) });
    await fetch(`${base}/api/library`, { method: 'POST', headers: auth, body: JSON.stringify([{ offset: i * (count / 20), limit: 24 }]) });
    await fetch(`${base}/api/spend`, { method: 'POST', headers: auth, body: JSON.stringify(['Big']) });
  }
  const rss = rssMb(host.child.pid!);
  host.child.kill('SIGTERM');
  await host.exited;
  rmSync(dir, { recursive: true, force: true });
  const spread = (xs: number[]) => [Math.min(...xs), Math.max(...xs)];
  return {
    taskBoardMs: median(board),
    taskBoardRuns: board,
    taskBoardSpread: spread(board),
    libraryMs: median(library),
    libraryRuns: library,
    librarySpread: spread(library),
    tasksShown: count,
    hostRssMb: rss,
    hostTasks: count,
  };
}
