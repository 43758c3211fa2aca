import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator } from '../../main/simulator/server.ts';
import { buildBundle, layOutCheckout, startBundle } from '../helpers/desktopBundle.ts';

const SCENES = 33;
const JOB_MS = 300;

/** 33 scenes of an image, a clip made from it and a narration, and the render of them: a Generate of 100 steps. */
function storyboard() {
  return {
    width: 320,
    height: 180,
    fps: 12,
    steps: {
      image: { provider: 'simulator', model: 'sim-image-1' },
      clip: { provider: 'simulator', model: 'sim-clip-1' },
      speech: { provider: 'simulator', model: 'sim-speech-1' },
    },
    scenes: Array.from({ length: SCENES }, (_, i) => ({
      id: `shot${i}`,
      imagePrompt: `a red fox in the snow, shot ${i}`,
      motionPrompt: 'slow push in',
      narration: `Line ${i}.`,
      duration: 1,
    })),
  };
}

/**
 * The page's part, run in the window's process by the Electron stand-in (STANDIN_DRIVE): it makes the project,
 * saves the storyboard and presses Generate, asks for the task list on every change as the page does, and records
 * the process's event-loop delay (perf_hooks.monitorEventLoopDelay) from Generate until every step has ended.
 */
const PAGE = (board: unknown) => `
import { monitorEventLoopDelay } from 'node:perf_hooks';
const ENDED = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'OUTCOME_UNKNOWN'];
export default async function ({ invoke, page, report }) {
  const call = async (method, ...args) => {
    const answer = await invoke('studio', method, args);
    if ('error' in answer) throw new Error(method + ': ' + answer.error);
    return answer.result;
  };
  await call('createProject', 'Bench');
  await call('saveStoryboard', 'Bench', ${JSON.stringify(board)});
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  page.on('studio:changed', async () => {
    const { tasks } = await call('listTasks', 'Bench', 0, 200);
    if (tasks.length >= 100 && tasks.every((t) => ENDED.includes(t.status))) done(tasks);
  });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const start = performance.now();
  await call('generate', 'Bench');
  const tasks = await finished;
  delay.disable();
  report('mainLoop', {
    p99Ms: delay.percentile(99) / 1e6,
    maxMs: delay.max / 1e6,
    meanMs: delay.mean / 1e6,
    steps: tasks.length,
    failed: tasks.filter((t) => t.status !== 'SUCCEEDED').length,
    wallMs: Math.round(performance.now() - start),
  });
  process.kill(process.pid, 'SIGTERM');
}
`;

/**
 * ui.mainLoopP99Ms: the 99th percentile of the window's process's event-loop delay during a 100-step Generate on the
 * simulator, in the built desktop bundle under the Electron stand-in (Node in place of Electron), the engine in its
 * utility process. Goal < 20 ms.
 */
export async function benchMainLoop(root = mkdtempSync(join(tmpdir(), 'studio-bench-mainloop-'))) {
  buildBundle();
  layOutCheckout(root);
  const sim = await startSimulator({ jobMs: JOB_MS });
  const page = join(root, 'page.mjs');
  writeFileSync(page, PAGE(storyboard()));
  const app = startBundle(root, { STANDIN_DRIVE: page, STUDIO_SIMULATOR_BASE_URL: sim.url });
  try {
    const measured = await app.waitFor('mainLoop', undefined, 300_000);
    const code = await app.exited;
    if (code !== 0) throw new Error(`the desktop bundle exited ${code}:\n${app.stderr()}`);
    const figures = measured.detail as { p99Ms: number; maxMs: number; meanMs: number; steps: number; failed: number; wallMs: number };
    if (figures.failed > 0) throw new Error(`${figures.failed} of the benchmark's ${figures.steps} steps did not succeed:\n${app.stderr()}`);
    const round = (ms: number) => Number(ms.toFixed(1));
    return { mainLoopP99Ms: round(figures.p99Ms), mainLoopMaxMs: round(figures.maxMs), mainLoopSteps: figures.steps, mainLoopWallMs: figures.wallMs };
  } finally {
    // A run that failed leaves no app behind (its engine process ends with it).
    if (app.child.exitCode === null && app.child.signalCode === null) app.child.kill('SIGKILL');
    await sim.close();
    rmSync(root, { recursive: true, force: true });
  }
}
