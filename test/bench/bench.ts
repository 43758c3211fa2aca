import { benchDetect } from './detect.ts';
import { benchEngine } from './engine.ts';
import { benchMainLoop } from './mainLoop.ts';
import { benchPipeline } from './pipeline.ts';
import { benchRecovery } from './recovery.ts';
import { benchRender } from './render.ts';
import { benchStart } from './start.ts';
import { benchTeam } from './team.ts';
import { benchUi } from './ui.ts';

/** `npm run bench` prints a table; `npm run bench -- --json` prints one JSON object. */
const json = process.argv.includes('--json');

const engine = await benchEngine(500, 10);
const recovery = await benchRecovery(100_000, 1_000);
const team = await benchTeam();
const render = await benchRender();
const pipeline = await benchPipeline();
const detect = await benchDetect();
const ui = await benchUi();
const start = 'skipped' in ui ? null : await benchStart();
const mainLoop = await benchMainLoop();
const results = { engine, recovery, team, render, pipeline, detect, ui: { ...ui, ...start, ...mainLoop } };

if (json) {
  console.log(JSON.stringify(results));
} else {
  const rows: [string, string, string][] = [
    ['engine.cyclesPerSec', String(engine.cyclesPerSec), 'task cycles/s through the SQLite store (WAL, synchronous=FULL)'],
    ['engine.bareCyclesPerSec', String(engine.bareCyclesPerSec), 'the same writes as bare better-sqlite3 statements'],
    ['engine.ratio', String(engine.ratio), 'goal >= 0.8'],
    ['engine.writesPerCycle', String(engine.writesPerCycle), 'commits per task cycle'],
    ['engine.rowsWrittenPerCycle', String(engine.rowsWrittenPerCycle), 'rows changed per cycle (tasks + events)'],
    ['recovery.ms', String(recovery.ms), `start-up with ${recovery.finished} finished and ${recovery.inFlight} in flight; goal < 200`],
    ['recovery.outcome', `${recovery.requeued}/${recovery.parked}/${recovery.toPoll}`, 'requeued / parked unknown / left to poll'],
    ...('skipped' in team
      ? [['team', 'skipped', team.skipped] as [string, string, string]]
      : ([
          ['team.cyclesPerSec', String(team.cyclesPerSec), `enqueue, claim, complete/s on PostgreSQL, ${team.workers} machines, claims of ${team.ourBatch} on average; median of ${team.cyclesRuns.join(', ')}`],
          ['team.bossCyclesPerSec', String(team.bossCyclesPerSec), `pg-boss on the same server: send, fetch ${team.bossBatch} on average, complete; median of ${team.bossRuns.join(', ')}`],
          ['team.ratio', String(team.ratio), `ours / pg-boss, the same work, run by run: ${team.ratios.join(', ')}; goal >= 1.0`],
          ['team.paidCyclesPerSec', String(team.paidCyclesPerSec), `our whole paid cycle/s (the boundary write and the request id besides), claims of ${team.paidBatch}; median of ${team.paidRuns.join(', ')}`],
          ['team.paidRatio', String(team.paidRatio), `our paid cycle / pg-boss's send, fetch, complete, run by run: ${team.paidRatios.join(', ')}`],
          ['team.recoveryMs', String(team.recoveryMs), `recovery sweep with ${team.finished} finished and ${team.inFlight} in flight of a machine gone; median of ${team.recoveryRuns.join(', ')}; goal < 200`],
          ['team.outcome', `${team.requeued}/${team.parked}/${team.toPoll}`, 'requeued / parked unknown / left to poll'],
        ] as [string, string, string][])),
    ['render.engineMs', String(render.engineMs), `the studio's full render of examples/fox-film.storyboard.json (${render.seconds} s of scenes at 720x1280, crossfades, burned subtitles; median of 5)`],
    ['render.directMs', String(render.directMs), 'the same ffmpeg commands run directly'],
    ['render.ratio', String(render.ratio), 'goal <= 1.1'],
    ['render.incrementalMs', String(render.incrementalMs), 'the render again after one scene took another clip (median of 5)'],
    ['render.incrementalRatio', String(render.incrementalRatio), 'over the full render; goal <= 0.35'],
    ['pipeline.ratio', String(pipeline.ratio), `example storyboard, ${pipeline.jobMs / 1000} s jobs: Generate to rendered file / critical path; median of ${pipeline.ratios.join(', ')}; goal <= 1.15`],
    ['pipeline.wallMs', String(pipeline.wallMs), `against a critical path of ${pipeline.criticalMs} ms (image, clip, then the render timed alone)`],
    ['detect.medianMs', String(detect.medianMs), `a job's end at the provider to its output saved, ${detect.jobs} jobs of mixed times; median of ${detect.medians.join(', ')}; goal <= 300`],
    ['detect.p95Ms', String(detect.p95Ms), `the same, 95th percentile; median of ${detect.p95s.join(', ')}`],
    ['detect.requestsPerJobMinute', String(detect.requestsPerJobMinute), `status requests per job per minute; median of ${detect.rates.join(', ')}; goal < 120 (fal's client)`],
    ['detect.poll', `${detect.pollMedianMs}/${detect.pollP95Ms}/${detect.pollRequestsPerJobMinute}`, 'with no status stream, polling on the learned schedule: median / p95 ms / requests per job-minute'],
    ...('skipped' in ui
      ? [['ui', 'skipped', ui.skipped] as [string, string, string]]
      : ([
          ['ui.taskBoardMs', String(ui.taskBoardMs), `page opened to a task board of ${ui.tasksShown} tasks, in Chromium; median of ${ui.taskBoardRuns.join(', ')}; goal < 1000`],
          ['ui.libraryMs', String(ui.libraryMs), `page opened to the library of ${ui.tasksShown} saved results, in Chromium; median of ${ui.libraryRuns.join(', ')}; goal < 1000`],
          ['ui.hostRssMb', String(ui.hostRssMb), `the loopback host's resident memory with ${ui.hostTasks} tasks; goal < 250`],
          ['ui.startMs', String(start?.startMs), `npm start (UI built) to a usable page, median of 3; goal < 2000${start?.rebuilt ? '; the UI was built again: a bug' : ''}`],
        ] as [string, string, string][])),
    [
      'ui.mainLoopP99Ms',
      String(mainLoop.mainLoopP99Ms),
      `the window's process's event-loop delay, 99th percentile, during a ${mainLoop.mainLoopSteps}-step Generate on the simulator (the built desktop bundle under the Electron stand-in, the engine in its utility process; max ${mainLoop.mainLoopMaxMs} ms, ${mainLoop.mainLoopWallMs} ms in all); goal < 20`,
    ],
  ];
  const w = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) console.log(`${r[0].padEnd(w[0]!)}  ${r[1].padStart(w[1]!)}  ${r[2]}`);
}
