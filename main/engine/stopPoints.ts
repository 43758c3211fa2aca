/**
 * Fault injection for the crash tests: with STUDIO_STOP_AT=<point>[:n][,...] a worker announces the point on
 * stderr and stops itself with SIGSTOP the n-th time (default the first) it reaches it, so a test can
 * SIGKILL it (a crash) or SIGCONT it (a sleep) at that exact boundary. Unset, it does nothing.
 */
export type StopPoint = 'before-mark' | 'after-mark' | 'after-send' | 'after-record' | 'mid-poll' | 'mid-save' | 'after-save' | 'after-team-commit';

const wanted = new Map(
  (process.env.STUDIO_STOP_AT ?? '')
    .split(',')
    .filter(Boolean)
    .map((p) => {
      const [point, n] = p.split(':');
      return [point!, Number(n ?? 1)] as const;
    }),
);
const reached = new Map<string, number>();

export function stopPoint(point: StopPoint, id: number, what: 'task' | 'project' = 'task'): void {
  const at = wanted.get(point);
  if (at === undefined) return;
  const count = (reached.get(point) ?? 0) + 1;
  reached.set(point, count);
  if (count !== at) return;
  process.stderr.write(`studio: stopped at ${point} for ${what} ${id}\n`);
  process.kill(process.pid, 'SIGSTOP');
}
