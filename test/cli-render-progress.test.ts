import { describe, expect, it } from 'vitest';
import { simulatedFolder } from './helpers/browser.ts';
import { cli } from './helpers/cli.ts';
import { startStudio } from './helpers/processes.ts';
import { until } from './helpers/wait.ts';

/** Big frames and long scenes, so the render runs for seconds while `studio tasks` looks at it. */
const BOARD = {
  width: 1920,
  height: 1080,
  fps: 30,
  scenes: [
    { id: 'dawn', imagePrompt: 'a lighthouse at dawn', motionPrompt: 'slow push in', narration: 'At dawn, the keeper climbs the stairs.', duration: 6 },
    { id: 'sea', imagePrompt: 'a rowing boat on a calm sea', motionPrompt: 'track', duration: 6 },
    { id: 'home', imagePrompt: 'a harbour at dusk', motionPrompt: 'pan left', duration: 6 },
  ],
};

interface Row {
  id: number;
  kind: string;
  status: string;
  progress: number | null;
}

describe('studio tasks, while a render runs', () => {
  it("shows the render's percent and its time left on its line", async () => {
    const { dataDir } = await simulatedFolder(50, { name: 'Keeper', storyboard: BOARD });
    expect((await cli(dataDir, 'generate', 'Keeper')).code).toBe(0);
    const worker = startStudio(dataDir, ['worker']);
    const render = async () => (JSON.parse((await cli(dataDir, 'tasks', '--json')).out) as Row[]).find((t) => t.kind === 'render')!;
    await until(async () => (await render()).status === 'RUNNING', 60_000);
    // Under way for over a second, with enough of it made to judge its pace (renderEta.ts).
    const claimed = Date.now();
    await until(async () => {
      const r = await render();
      return r.status === 'RUNNING' && (r.progress ?? 0) >= 0.05 && Date.now() - claimed > 1_200;
    }, 30_000);
    const { code, out } = await cli(dataDir, 'tasks');
    expect(code).toBe(0);
    expect(out.split('\n').find((l) => /^\d+\s+Keeper\s+render\s/.test(l))).toMatch(/\s+RUNNING\s+local\s+ffmpeg\s.*\s\d{1,3}% · about \d+ (s|min) left$/);
    worker.child.kill('SIGTERM');
    await worker.exited;
  }, 120_000);
});
