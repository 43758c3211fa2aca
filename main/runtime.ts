import { settingsKeyStore } from './api/settingsKeyStore.ts';
import { StudioService, type KeyStore } from './api/studioService.ts';
import type { Supervisor } from './engine/supervisor.ts';
import { openProviders, type Providers } from './providers/registry.ts';
import { createSupervisor, openStudio, type Studio } from './studio.ts';

export interface Runtime {
  studio: Studio;
  providers: Providers;
  supervisor: Supervisor;
  service: StudioService;
  stop(): Promise<void>;
}

type RuntimeOptions = {
  keyStore?: (studio: Studio) => KeyStore & { get?(provider: string): string | undefined };
  mediaUrl: (taskId: number) => string;
  log?: (message: string) => void;
  /** The team database given on the command line (--db), which wins over STUDIO_DATABASE_URL and settings. */
  database?: string;
  /** The media folder given on the command line (--media), which wins over STUDIO_MEDIA_DIR and settings. */
  media?: string;
};

/** Everything a host runs on one data folder, with the engine started. */
export async function startRuntime(dataDir: string, options: RuntimeOptions): Promise<Runtime> {
  const runtime = await openRuntime(dataDir, options);
  await runtime.supervisor.start();
  return runtime;
}

/**
 * Everything a host runs on one data folder: the database, the providers, the engine (not started yet, so
 * a host can take its port first and refuse before anything is sent), and the StudioApi over them. The
 * loopback host and the desktop app differ only in where keys live and media URLs.
 */
export async function openRuntime(
  dataDir: string,
  options: RuntimeOptions,
): Promise<Runtime> {
  const studio = await openStudio(dataDir, undefined, { database: options.database, media: options.media });
  const keys: KeyStore & { get?(provider: string): string | undefined } = options.keyStore?.(studio) ?? settingsKeyStore(studio);
  const providers = await openProviders(studio.settings, dataDir, process.env, keys.get);
  const supervisor = createSupervisor(studio, providers.get, { log: options.log });
  const service = new StudioService({ studio, providers, keys, mediaUrl: options.mediaUrl, paused: () => supervisor.health.paused });
  return {
    studio,
    providers,
    supervisor,
    service,
    stop: async () => {
      await supervisor.stop();
      await providers.close();
      await studio.close();
    },
  };
}
