import { mkdirSync } from 'node:fs';
import { LocalOutputStore } from './adapters/outputStore.ts';
import { ReceiptJournal } from './adapters/receiptJournal.ts';
import { ffmpegPath, ffprobePath } from './media/binaries.ts';
import { systemClock } from './adapters/systemClock.ts';
import { databasePath } from './config/paths.ts';
import { loadSettings, type Settings } from './config/settings.ts';
import { openDatabase, type Db } from './db/database.ts';
import { OwnerRegistry } from './engine/owners.ts';
import { Supervisor, type SupervisorDeps } from './engine/supervisor.ts';
import type { Clock } from './ports.ts';
import type { ProviderAdapter } from './providers/port.ts';
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
  settings: Settings;
  clock: Clock;
  close(): void;
}

export function openStudio(dataDir: string, clock: Clock = systemClock): Studio {
  const settings = loadSettings(dataDir);
  mkdirSync(dataDir, { recursive: true });
  const db = openDatabase(databasePath(dataDir));
  return {
    dataDir,
    db,
    tasks: new TaskRepository(db),
    owners: new OwnerRegistry(db),
    projects: new ProjectRepository(db),
    storyboards: new StoryboardRepository(db),
    settings,
    clock,
    close: () => db.close(),
  };
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
      receipts: new ReceiptJournal(studio.dataDir),
      dataDir: studio.dataDir,
      media: { ffmpegPath: ffmpegPath(studio.settings.media.ffmpegPath), ffprobePath: ffprobePath(studio.settings.media.ffprobePath) },
      ...extra,
    },
    studio.settings.engine,
  );
}
