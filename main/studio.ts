import { existsSync, mkdirSync, statSync } from 'node:fs';
import { LocalOutputStore } from './adapters/outputStore.ts';
import { ReceiptJournal } from './adapters/receiptJournal.ts';
import { ffmpegPath, ffprobePath } from './media/binaries.ts';
import { systemClock } from './adapters/systemClock.ts';
import { databasePath } from './config/paths.ts';
import { loadSettings, type Settings } from './config/settings.ts';
import { BUSY_TIMEOUT_MS, openDatabase, type Db } from './db/database.ts';
import { OwnerRegistry } from './engine/owners.ts';
import { replayReceipts } from './engine/receiptReplay.ts';
import { Supervisor, type SupervisorDeps } from './engine/supervisor.ts';
import type { Clock } from './ports.ts';
import type { ProviderAdapter } from './providers/port.ts';
import { pollsById } from './providers/registry.ts';
import { StoryboardRepository } from './pipeline/storyboardRepository.ts';
import { TakeRepository } from './pipeline/takeRepository.ts';
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
  /** Every take of every scene, and which one each scene renders. */
  takes: TakeRepository;
  /** This process's receipt journal of request ids, and the reader of every other's. */
  receipts: ReceiptJournal;
  /** Why `studio.db` at its path is no longer the file this process opened (deleted, replaced), or null. */
  databaseMoved(): string | null;
  settings: Settings;
  clock: Clock;
  close(): void;
}

/** A command that reads or changes what is there was pointed at a folder with no studio data: nothing is created. */
export class NoStudioHere extends Error {}

/** The data folder cannot be made or written: said with the folder's name and what to do. */
export class DataFolderRefused extends Error {}

/**
 * Opens a data folder, creating it unless `existing` says the studio must already be there (for commands that
 * only read or change what exists, so a mistyped --data creates nothing).
 */
export function openStudio(dataDir: string, clock: Clock = systemClock, options: { existing?: boolean } = {}): Studio {
  if (options.existing && !existsSync(databasePath(dataDir))) {
    throw new NoStudioHere(`there is no studio data in ${dataDir}; point --data (or STUDIO_DATA_DIR) at the studio's data folder`);
  }
  const settings = loadSettings(dataDir);
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new DataFolderRefused(`the data folder ${dataDir} cannot be created (${(err as NodeJS.ErrnoException).code}); choose another with --data or STUDIO_DATA_DIR`);
  }
  const dbPath = databasePath(dataDir);
  const db = openDatabase(dbPath);
  const opened = statSync(dbPath);
  return {
    dataDir,
    db,
    tasks: new TaskRepository(db),
    owners: new OwnerRegistry(db),
    projects: new ProjectRepository(db),
    storyboards: new StoryboardRepository(db),
    takes: new TakeRepository(db),
    receipts: new ReceiptJournal(dataDir),
    databaseMoved: () => movedSince(dbPath, opened),
    settings,
    clock,
    close: () => db.close(),
  };
}

/** The database file at `path` is not the one opened (same device and inode), said for the person. */
function movedSince(path: string, opened: { dev: number; ino: number }): string | null {
  let now;
  try {
    now = statSync(path);
  } catch {
    return `the studio database ${path} was deleted while the studio runs; nothing more is claimed. Put it back (its recent writes are in ${path}-wal), then restart the studio`;
  }
  return now.dev === opened.dev && now.ino === opened.ino
    ? null
    : `the studio database ${path} was replaced while the studio runs; restart the studio (nothing is claimed until then)`;
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
      databaseMoved: () => studio.databaseMoved(),
      waitForLocks: (ms) => studio.db.pragma(`busy_timeout = ${ms ?? BUSY_TIMEOUT_MS}`),
      dataDir: studio.dataDir,
      media: { ffmpegPath: ffmpegPath(studio.settings.media.ffmpegPath), ffprobePath: ffprobePath(studio.settings.media.ffprobePath) },
      prices: () => studio.settings.prices,
      ...extra,
    },
    studio.settings.engine,
  );
}
