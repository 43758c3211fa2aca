import { settingsKeyStore } from '../api/settingsKeyStore.ts';
import { StudioService } from '../api/studioService.ts';
import { openProviders } from '../providers/registry.ts';
import { createSupervisor, openStudio } from '../studio.ts';
import { startHost, type RunningHost } from './server.ts';

export interface LaunchedHost extends RunningHost {
  stop(): Promise<void>;
}

/** The engine and the loopback host in this process, on one data folder: `studio serve`. */
export async function launchHost(dataDir: string, options: { port?: number; log?: (m: string) => void } = {}): Promise<LaunchedHost> {
  const studio = openStudio(dataDir);
  const providers = await openProviders(studio.settings, dataDir);
  const supervisor = createSupervisor(studio, providers.get, { log: options.log });
  const service = new StudioService({ studio, providers, keys: settingsKeyStore(studio), mediaUrl: (id) => `/media/${id}` });
  supervisor.start();
  const host = await startHost(service, dataDir, {
    port: options.port,
    log: options.log,
    outputPath: (id) => (Number.isInteger(id) ? (studio.tasks.get(id)?.outputPath ?? null) : null),
  });
  return {
    ...host,
    stop: async () => {
      await host.close();
      await supervisor.stop();
      await providers.close();
      studio.close();
    },
  };
}
