import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Plain Node, no vitest: the benchmarks run the bundle this way too.
const ROOT = join(import.meta.dirname, '..', '..');
const NODE_BUILD = join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');

export interface StandInEvent {
  event: string;
  detail: Record<string, unknown>;
}

export interface RunningBundle {
  child: ChildProcess;
  root: string;
  /** Every "electron-standin:" line so far, in order. */
  events: StandInEvent[];
  stderr(): string;
  /** The first event named `event` that `match` takes, from the `after`th on; rejects after `timeoutMs` or at exit. */
  waitFor(event: string, match?: (detail: Record<string, unknown>) => boolean, timeoutMs?: number, after?: number): Promise<StandInEvent>;
  exited: Promise<number | null>;
}

/**
 * The events from the first quit on, less a page load: a loaded machine may load the page after the quit, and what a
 * quit test asserts is that nothing (a window shown, a box) comes between the held quit and the exit.
 */
export function sinceQuit(events: StandInEvent[]): string[] {
  const names = events.map((e) => e.event);
  return names.slice(names.indexOf('quit')).filter((e) => e !== 'loaded');
}

/** Builds the desktop bundle (scripts/build-app.mjs) from the source tree. */
export function buildBundle(): void {
  execFileSync(process.execPath, ['scripts/build-app.mjs'], { cwd: ROOT });
}

/**
 * Lays out `root` as a checkout with the built bundle, and the Node build of the database driver where the
 * Electron one would be (under Node, the ABI the bundle checks is Node's).
 */
export function layOutCheckout(root: string): void {
  mkdirSync(join(root, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'dist', 'app'), join(root, 'dist', 'app'), { recursive: true });
  // Under Node the driver's JavaScript is node_modules' own (12); a real `npm start` may have staged Electron's
  // (13), which Node 20 cannot load.
  const driver = join(root, 'dist', 'app', 'better-sqlite3');
  rmSync(driver, { recursive: true, force: true });
  cpSync(join(ROOT, 'node_modules', 'better-sqlite3', 'lib'), join(driver, 'lib'), { recursive: true });
  copyFileSync(join(ROOT, 'node_modules', 'better-sqlite3', 'package.json'), join(driver, 'package.json'));
  for (const shared of ['node_modules', 'migrations', 'resources']) symlinkSync(join(ROOT, shared), join(root, shared));
  symlinkSync(join(ROOT, 'dist', 'renderer'), join(root, 'dist', 'renderer'));
  const native = join(root, 'dist', 'native', `electron-${process.platform}-${process.arch}`);
  mkdirSync(native, { recursive: true });
  copyFileSync(NODE_BUILD, join(native, 'better_sqlite3.node'));
  writeFileSync(join(native, 'abi'), `${process.versions.modules}\n`);
}

/** Runs the bundle laid out in `root` under Node with the stand-in `electron`, its data folder `root/data`. */
export function startBundle(root: string, env: Record<string, string> = {}): RunningBundle {
  const child = spawn(process.execPath, ['--import', join(ROOT, 'test', 'fakes', 'electron', 'loader.mjs'), 'dist/app/main.mjs'], {
    cwd: root,
    env: { ...process.env, STUDIO_DATA_DIR: 'data', STUDIO_SIMULATOR_BASE_URL: 'http://127.0.0.1:9', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  let partial = '';
  const events: StandInEvent[] = [];
  const waiters = new Set<() => void>();
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk;
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const m = /^electron-standin: (\w+) (.*)$/.exec(line);
      if (m) events.push({ event: m[1]!, detail: JSON.parse(m[2]!) as Record<string, unknown> });
    }
    for (const wake of waiters) wake();
  });
  let ended = false;
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      ended = true;
      for (const wake of waiters) wake();
      resolve(code);
    }),
  );
  const waitFor = (event: string, match: (detail: Record<string, unknown>) => boolean = () => true, timeoutMs = 30_000, after = 0) =>
    new Promise<StandInEvent>((resolve, reject) => {
      const look = () => {
        const found = events.slice(after).find((e) => e.event === event && match(e.detail));
        if (!found && !ended) return;
        waiters.delete(look);
        clearTimeout(timer);
        if (found) resolve(found);
        else reject(new Error(`the app exited with no "${event}" event:\n${stderr}`));
      };
      const timer = setTimeout(() => {
        waiters.delete(look);
        reject(new Error(`no "${event}" event within ${timeoutMs} ms:\n${stderr}`));
      }, timeoutMs);
      waiters.add(look);
      look();
    });
  return { child, root, events, stderr: () => stderr, waitFor, exited };
}
