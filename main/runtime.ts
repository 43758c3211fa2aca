import { heldSecrets } from './api/heldSecrets.ts';
import { settingsKeyStore } from './api/settingsKeyStore.ts';
import { StudioService, type KeyStore } from './api/studioService.ts';
import type { Supervisor } from './engine/supervisor.ts';
import type { Logger } from './logging/logger.ts';
import { taskLines } from './logging/promptGuard.ts';
import { Redaction } from './logging/redact.ts';
import { openProviders, type Providers } from './providers/registry.ts';
import { createSupervisor, openStudio, type Studio } from './studio.ts';

export interface Runtime {
  studio: Studio;
  providers: Providers;
  supervisor: Supervisor;
  service: StudioService;
  /** Starts the engine; diagnostics report it running from here until stop. */
  startEngine(): Promise<void>;
  stop(): Promise<void>;
}

type RuntimeOptions = {
  keyStore?: (studio: Studio) => KeyStore & { get?(provider: string): string | undefined };
  mediaUrl: (taskId: number) => string;
  /** Where the engine's lines go; the logger's warnings when not given (what a terminal shows of `studio serve`). */
  log?: (message: string) => void;
  /** This process's log: told every key the studio holds, to cut them, and read by "Copy diagnostics". */
  logger?: Logger;
  /** Folders of the host's own that diagnostics names besides the data and logs folders (the desktop's crash dumps). */
  folders?: Record<string, string>;
  /** The team database given on the command line (--db), which wins over STUDIO_DATABASE_URL and settings. */
  database?: string;
  /** The media folder given on the command line (--media), which wins over STUDIO_MEDIA_DIR and settings. */
  media?: string;
};

/** Everything a host runs on one data folder, with the engine started. */
export async function startRuntime(dataDir: string, options: RuntimeOptions): Promise<Runtime> {
  const runtime = await openRuntime(dataDir, options);
  await runtime.startEngine();
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
  const redaction = options.logger?.redaction ?? new Redaction();
  redaction.hold(() => heldSecrets(studio, keys, options.database));
  redaction.logPromptsWhen(() => studio.settings.logging.prompts);
  const providers = await openProviders(studio.settings, dataDir, process.env, keys.get);
  const write = options.log ?? ((m: string) => options.logger?.warn(m));
  // A provider's refusal may quote the task's prompt: its lines are cut of it before they are written.
  const engineLines = taskLines(write, async (id) => (await studio.tasks.get(id))?.input, () => redaction.promptsAllowed);
  const supervisor = createSupervisor(studio, providers.get, { log: engineLines.log });
  let engine: 'not started' | 'running' | 'stopped' = 'not started';
  const service = new StudioService({
    studio,
    providers,
    keys,
    mediaUrl: options.mediaUrl,
    paused: () => supervisor.health.paused,
    diagnostics: {
      logger: options.logger,
      redaction,
      folders: options.folders,
      engine: () => ({ state: engine, paidWorkInFlight: supervisor.paidWorkInFlight() }),
    },
  });
  return {
    studio,
    providers,
    supervisor,
    service,
    startEngine: async () => {
      engine = 'running';
      await supervisor.start();
    },
    stop: async () => {
      await supervisor.stop();
      engine = 'stopped';
      await engineLines.settled();
      await providers.close();
      await studio.close();
    },
  };
}
