/**
 * Fault injection for the crash tests: with STUDIO_STOP_AT=<point>[,<point>...] a worker announces the
 * point on stderr and stops itself with SIGSTOP, so a test can SIGKILL it (a crash) or SIGCONT it
 * (a sleep) at that exact boundary. Unset, it does nothing.
 */
export type StopPoint = 'before-mark' | 'after-mark' | 'after-send' | 'after-record' | 'mid-poll';

const points = new Set((process.env.STUDIO_STOP_AT ?? '').split(',').filter(Boolean));
const stopped = new Set<string>();

export function stopPoint(point: StopPoint, taskId: number): void {
  if (!points.has(point) || stopped.has(point)) return;
  stopped.add(point);
  process.stderr.write(`studio: stopped at ${point} for task ${taskId}\n`);
  process.kill(process.pid, 'SIGSTOP');
}
