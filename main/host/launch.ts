import { startRuntime } from '../runtime.ts';
import { startHost, type RunningHost } from './server.ts';

export interface LaunchedHost extends RunningHost {
  stop(): Promise<void>;
}

/** The engine and the loopback host in this process, on one data folder: `studio serve`. */
export async function launchHost(dataDir: string, options: { port?: number; log?: (m: string) => void } = {}): Promise<LaunchedHost> {
  const runtime = await startRuntime(dataDir, { mediaUrl: (id) => `/media/${id}`, log: options.log });
  const host = await startHost(runtime.service, dataDir, {
    port: options.port,
    log: options.log,
    outputPath: (id) => (Number.isInteger(id) ? (runtime.studio.tasks.get(id)?.outputPath ?? null) : null),
  });
  return {
    ...host,
    stop: async () => {
      await host.close();
      await runtime.stop();
    },
  };
}
