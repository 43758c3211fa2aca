import { benchEngine } from './engine.ts';
import { benchRecovery } from './recovery.ts';
import { benchRender } from './render.ts';
import { benchUi } from './ui.ts';

/** `npm run bench` prints a table; `npm run bench -- --json` prints one JSON object. */
const json = process.argv.includes('--json');

const engine = benchEngine(500, 10);
const recovery = await benchRecovery(100_000, 1_000);
const render = await benchRender();
const ui = await benchUi();
const results = { engine, recovery, render, ui };

if (json) {
  console.log(JSON.stringify(results));
} else {
  const rows: [string, string, string][] = [
    ['engine.cyclesPerSec', String(engine.cyclesPerSec), 'task cycles/s through the repository (WAL, synchronous=FULL)'],
    ['engine.bareCyclesPerSec', String(engine.bareCyclesPerSec), 'the same writes as bare better-sqlite3 statements'],
    ['engine.ratio', String(engine.ratio), 'goal >= 0.8'],
    ['engine.writesPerCycle', String(engine.writesPerCycle), 'commits per task cycle'],
    ['engine.rowsWrittenPerCycle', String(engine.rowsWrittenPerCycle), 'rows changed per cycle (tasks + events)'],
    ['recovery.ms', String(recovery.ms), `start-up with ${recovery.finished} finished and ${recovery.inFlight} in flight; goal < 200`],
    ['recovery.outcome', `${recovery.requeued}/${recovery.parked}/${recovery.toPoll}`, 'requeued / parked unknown / left to poll'],
    ['render.engineMs', String(render.engineMs), `the studio's render of ${render.seconds} s at 1280x720 (median of 5)`],
    ['render.directMs', String(render.directMs), 'the same ffmpeg command line run directly'],
    ['render.ratio', String(render.ratio), 'goal <= 1.1'],
    ...('skipped' in ui
      ? [['ui', 'skipped', ui.skipped] as [string, string, string]]
      : ([
          ['ui.taskBoardMs', String(ui.taskBoardMs), `page opened to a task board of ${ui.tasksShown} tasks, in Chromium; goal < 1000`],
          ['ui.hostRssMb', String(ui.hostRssMb), `the loopback host's resident memory with ${ui.hostTasks} tasks; goal < 250`],
        ] as [string, string, string][])),
  ];
  const w = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) console.log(`${r[0].padEnd(w[0]!)}  ${r[1].padStart(w[1]!)}  ${r[2]}`);
}
