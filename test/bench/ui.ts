import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { openStudio } from '../../main/studio.ts';
import { CHROMIUM, CHROMIUM_ARGS, serve } from '../helpers/browser.ts';


/** A data folder with one project of `count` finished tasks, as a long-used studio would have. */
function seed(count: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'studio-bench-ui-'));
  const studio = openStudio(dir);
  const now = Date.now();
  const project = studio.projects.ensure('Big', now);
  const insert = studio.db.prepare(
    `INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, status, charged, next_attempt_at, cost_estimated,
                        cost_actual, submitted_at, created_at, updated_at, finished_at)
     VALUES (?, ?, 'simulator', 'sim', ?, ?, 'SUCCEEDED', 'yes', ?, 40000, 41000, ?, ?, ?, ?)`,
  );
  const kinds = ['image', 'clip', 'speech'];
  studio.db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const at = now - (count - i) * 60_000;
      insert.run(project.id, kinds[i % 3], JSON.stringify({ prompt: `shot ${i}` }), `h${i}`, at, at, at, at, at);
    }
  })();
  studio.close();
  return dir;
}

function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return Math.round(kb / 1024);
}

/** Time from opening the page to a task board showing 10,000 tasks; the host's memory with 100,000. */
export async function benchUi() {
  if (!existsSync(CHROMIUM)) return { skipped: `no Chromium at ${CHROMIUM}` };
  const small = seed(10_000);
  const { host, url } = await serve(small, { STUDIO_SIMULATOR_BASE_URL: 'http://127.0.0.1:9' });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const times: number[] = [];
  try {
    for (let round = 0; round < 3; round++) {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      const start = performance.now();
      await page.goto(url);
      await page.click('[data-tab=tasks]');
      await page.locator('[data-testid=task-count]', { hasText: '10000' }).waitFor();
      await page.locator('[data-status=SUCCEEDED]').first().waitFor();
      times.push(performance.now() - start);
      await page.close();
    }
  } finally {
    await browser.close();
    host.child.kill('SIGTERM');
    await host.exited;
    rmSync(small, { recursive: true, force: true });
  }

  const big = seed(100_000);
  const second = await serve(big, { STUDIO_SIMULATOR_BASE_URL: 'http://127.0.0.1:9' });
  const auth = { authorization: `Bearer ${/token=(\w+)/.exec(second.url)![1]}`, 'content-type': 'application/json' };
  const base = new URL(second.url).origin;
  for (let i = 0; i < 20; i++) {
    await fetch(`${base}/api/listProjects`, { method: 'POST', headers: auth, body: '[]' });
    await fetch(`${base}/api/listTasks`, { method: 'POST', headers: auth, body: JSON.stringify(['Big', i * 5_000, 100]) });
    await fetch(`${base}/api/spend`, { method: 'POST', headers: auth, body: JSON.stringify(['Big']) });
  }
  const rss = rssMb(second.host.child.pid!);
  second.host.child.kill('SIGTERM');
  await second.host.exited;
  rmSync(big, { recursive: true, force: true });
  return { taskBoardMs: Math.round([...times].sort((a, b) => a - b)[1]!), tasksShown: 10_000, hostRssMb: rss, hostTasks: 100_000 };
}
