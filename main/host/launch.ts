import { openRuntime } from '../runtime.ts';
import { startHost, type RunningHost } from './server.ts';

/** The port asked for is taken: nothing was started and nothing was sent. */
export class PortInUse extends Error {}

export interface LaunchedHost extends RunningHost {
  stop(): Promise<void>;
}

/**
 * The engine and the loopback host in this process, on one data folder: `studio serve`. The port is bound
 * before the engine starts, so a port that is taken sends nothing.
 */
export async function launchHost(dataDir: string, options: { port?: number; log?: (m: string) => void } = {}): Promise<LaunchedHost> {
  const runtime = await openRuntime(dataDir, { mediaUrl: (id) => `/media/${id}`, log: options.log });
  let host: RunningHost;
  try {
    host = await startHost(runtime.service, dataDir, {
      port: options.port,
      log: options.log,
      outputPath: (id) => (Number.isInteger(id) ? (runtime.studio.tasks.get(id)?.outputPath ?? null) : null),
    });
  } catch (err) {
    await runtime.stop();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new PortInUse(`port ${options.port} is in use; pick another with --port`);
    throw err;
  }
  runtime.supervisor.start();
  return {
    ...host,
    stop: async () => {
      await host.close();
      await runtime.stop();
    },
  };
}
