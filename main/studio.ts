import { mkdirSync } from 'node:fs';
import { LocalOutputStore } from './adapters/outputStore.ts';
import { ReceiptJournal } from './adapters/receiptJournal.ts';
import { ffmpegPath, ffprobePath } from './media/binaries.ts';
import { systemClock } from './adapters/systemClock.ts';
import { databasePath } from './config/paths.ts';
import { loadSettings, type Settings } from './config/settings.ts';
import { openDatabase, type Db } from './db/database.ts';
import { OwnerRegistry } from './engine/owners.ts';
import { replayReceipts } from './engine/receiptReplay.ts';
import { Supervisor, type SupervisorDeps } from './engine/supervisor.ts';
import type { Clock } from './ports.ts';
import type { ProviderAdapter } from './providers/port.ts';
import { pollsById } from './providers/registry.ts';
import { StoryboardRepository } from './pipeline/storyboardRepository.ts';
import { ProjectRepository } from './projects/repository.ts';
import { TaskRepository } from './tasks/repository.ts';

/** The engine's storage and settings for one data folder: what every host (CLI, desktop, loopback) opens. */
export interface Studio {
  dataDir: string;
  db: Db;
  tasks: TaskRepository;
  owners: OwnerRegistry;
  projects: ProjectRepository;
  storyboards: StoryboardRepository;
  /** This process's receipt journal of request ids, and the reader of every other's. */
  receipts: ReceiptJournal;
  settings: Settings;
  clock: Clock;
  close(): void;
}

export function openStudio(dataDir: string, clock: Clock = systemClock): Studio {
  const settings = loadSettings(dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = openDatabase(databasePath(dataDir));
  return {
    dataDir,
    db,
    tasks: new TaskRepository(db),
    owners: new OwnerRegistry(db),
    projects: new ProjectRepository(db),
    storyboards: new StoryboardRepository(db),
    receipts: new ReceiptJournal(dataDir),
    settings,
    clock,
    close: () => db.close(),
  };
}

/**
 * Puts request ids still only in a receipt journal into the table, before a person reconciles or decides,
 * so a request the provider named for one task is never offered to, or adopted by, another.
 */
export function recordJournaledRequests(studio: Studio): void {
  replayReceipts(studio.tasks, studio.receipts, pollsById, studio.clock.now());
}

/** The engine for a studio's data folder, as every host runs it. */
export function createSupervisor(
  studio: Studio,
  providers: (id: string) => ProviderAdapter | undefined,
  extra: Pick<SupervisorDeps, 'log' | 'owner'> = {},
): Supervisor {
  return new Supervisor(
    {
      repo: studio.tasks,
      owners: studio.owners,
      providers,
      clock: studio.clock,
      outputs: new LocalOutputStore(studio.dataDir),
      receipts: studio.receipts,
      dataDir: studio.dataDir,
      media: { ffmpegPath: ffmpegPath(studio.settings.media.ffmpegPath), ffprobePath: ffprobePath(studio.settings.media.ffprobePath) },
      ...extra,
    },
    studio.settings.engine,
  );
}
