import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';

const CLI = fileURLToPath(new URL('../../bin/studio.mjs', import.meta.url));

export interface StudioProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves when stderr has a line matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

const running = new Set<ChildProcess>();

// In a test, whatever it left running is killed after it; the benchmarks use these helpers outside vitest.
if (process.env.VITEST) {
  afterEach(() => {
    for (const child of running) child.kill('SIGKILL');
    running.clear();
  });
}

/** Starts the real CLI (`studio --data DIR ...`) as its own process. */
export function startStudio(dataDir: string, args: string[], env: Record<string, string> = {}): StudioProcess {
  const child = spawn(process.execPath, [CLI, '--data', dataDir, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let out = '';
  let err = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => {
    err += d;
    for (const w of [...waiters]) {
      if (w.pattern.test(err)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, timeoutMs = 20_000) {
      if (pattern.test(err)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms; stderr:\n${err}`)), timeoutMs);
        waiters.push({ pattern, resolve: () => (clearTimeout(timer), resolve()) });
        void exited.then(() => reject(new Error(`exited before ${pattern}; stderr:\n${err}`)));
      });
    },
  };
}

/** Runs the CLI to completion. */
export async function runStudio(dataDir: string, args: string[], env: Record<string, string> = {}) {
  const p = startStudio(dataDir, args, env);
  const code = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

export function writeSettings(dataDir: string, settings: unknown): void {
  writeFileSync(join(dataDir, 'settings.json'), JSON.stringify(settings));
}

/** Resolves once the process is really stopped (SIGSTOP taken), so a SIGCONT sent next is not lost. */
export async function whenStopped(child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'T') {
    if (Date.now() > end) throw new Error(`process ${child.pid} did not stop within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** `worker --until-idle` run to its end, or killed after `ms`: whether it ended by itself. */
export async function untilIdle(dataDir: string, env: Record<string, string>, ms: number): Promise<boolean> {
  const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
  const ended = await Promise.race([worker.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
  if (!ended) {
    worker.child.kill('SIGKILL');
    await worker.exited;
  }
  return ended;
}
