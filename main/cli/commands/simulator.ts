import { startSimulator } from '../../simulator/server.ts';
import { parse } from '../args.ts';
import { UsageError } from '../errors.ts';
import type { CliContext } from '../context.ts';

export async function simulator(argv: string[], ctx: CliContext) {
  const { values } = parse(argv, { port: { type: 'string' }, 'job-ms': { type: 'string' } });
  const port = Number(values.port ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be a port number (0 picks a free one)');
  const jobMs = values['job-ms'] === undefined ? undefined : Number(values['job-ms']);
  if (jobMs !== undefined && !(Number.isFinite(jobMs) && jobMs >= 0)) throw new UsageError('--job-ms must be milliseconds');
  const sim = await startSimulator({ port, jobMs });
  ctx.out(sim.url);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await sim.close();
}
