import { existsSync, mkdirSync } from 'node:fs';
import { LocalOutputStore } from './adapters/outputStore.ts';
import { ReceiptJournal } from './adapters/receiptJournal.ts';
import { ffmpegPath, ffprobePath } from './media/binaries.ts';
import { keepInheritedFiles } from './media/inheritedFiles.ts';
import { DatabaseClock } from './adapters/databaseClock.ts';
import { systemClock } from './adapters/systemClock.ts';
import { databasePath } from './config/paths.ts';
import { loadSettings, type Settings } from './config/settings.ts';
import { chooseMediaDir, studioMedia } from './config/media.ts';
import { mediaFoldersUsed, rememberMediaFolder } from './config/mediaFolders.ts';
import { chooseDatabase, chooseMachineName, type DatabaseSource } from './config/team.ts';
import { machineId, MachineIdUnreadable } from './config/machineId.ts';
import { cancelTask } from './engine/decisions.ts';
import { cancelLateRequest } from './engine/lateCancel.ts';
import { newOwner } from './engine/owners.ts';
import { replayReceipts } from './engine/receiptReplay.ts';
import { Supervisor } from './engine/supervisor.ts';
import type { SupervisorDeps } from './engine/supervisorDeps.ts';
import type { MediaFolder } from './media/mediaFolder.ts';
import { OutputLocator } from './engine/outputLocator.ts';
import type { Clock } from './domain/ports.ts';
import type { ProviderAdapter } from './providers/port.ts';
import { pollsById } from './providers/registry.ts';
import { checkedStoryboards } from './providers/storyboards.ts';
import type { OwnerStore, ProjectStore, Store, StoryboardStore, TakeStore, TaskStore } from './store/port.ts';
import { openPostgresStore } from './store/postgres/store.ts';
import { openSqliteStore } from './store/sqlite/store.ts';

/** The engine's storage and settings for one data folder: what every host (CLI, desktop, loopback) opens. */
export interface Studio {
  dataDir: string;
  /** Where the tasks, projects, storyboards and takes are kept; the stores below are its. */
  store: Store;
  /** Where the team database's address came from (--db, STUDIO_DATABASE_URL, settings); null for the embedded store. */
  storeFrom: DatabaseSource | null;
  /** The name this machine goes by: in owner ids, and on the files it saves. A label: two computers may share it. */
  machine: string;
  /** What tells this machine from every other, whatever their names: kept in the data folder (see config/machineId.ts). */
  machineId: string;
  /** Where the files it is paid for are saved, and found again (see MediaFolder). */
  media: MediaFolder;
  /** Saved results as this machine finds them, or why it cannot. */
  files: OutputLocator;
  tasks: TaskStore;
  owners: OwnerStore;
  projects: ProjectStore;
  storyboards: StoryboardStore;
  /** Every take of every scene, and which one each scene renders. */
  takes: TakeStore;
  /** This process's receipt journal of request ids, and the reader of every other's. */
  receipts: ReceiptJournal;
  /** Why `studio.db` at its path is no longer the file this process opened (deleted, replaced), or null. */
  databaseMoved(): string | null;
  settings: Settings;
  /** On a team database, the database's clock as this machine reads it (see DatabaseClock); else this machine's. */
  clock: Clock;
  /**
   * Measures this machine's clock against the team database's, and keeps the offset on `owner`'s row when given;
   * the clock above follows it. The offset (this machine's less the database's), or null with no team database.
   */
  checkClock(owner?: string): Promise<number | null>;
  close(): Promise<void>;
}

/** A command that reads or changes what is there was pointed at a folder with no studio data: nothing is created. */
export class NoStudioHere extends Error {}

/** The data folder cannot be made or written: said with the folder's name and what to do. */
export class DataFolderRefused extends Error {}

/**
 * Opens a data folder, creating it unless `existing` says the studio must already be there (for commands that
 * only read or change what exists, so a mistyped --data creates nothing). The tasks are in the team database
 * when one is given (`database`, from --db; else STUDIO_DATABASE_URL; else settings team.databaseUrl), and in
 * the folder's own SQLite file otherwise. Settings, keys and receipt journals stay in the folder either way.
 * Saved files go to the media folder (`media`, from --media; else STUDIO_MEDIA_DIR; else settings team.mediaDir).
 */
export async function openStudio(
  dataDir: string,
  clock: Clock = systemClock,
  options: { existing?: boolean; database?: string; media?: string } = {},
): Promise<Studio> {
  const settings = loadSettings(dataDir);
  const team = chooseDatabase(options.database, process.env, settings.team);
  const machine = chooseMachineName(process.env, settings.team).name;
  if (options.existing && !team && !existsSync(databasePath(dataDir))) {
    throw new NoStudioHere(`there is no studio data in ${dataDir}; point --data (or STUDIO_DATA_DIR) at the studio's data folder`);
  }
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new DataFolderRefused(`the data folder ${dataDir} cannot be created (${(err as NodeJS.ErrnoException).code}); choose another with --data or STUDIO_DATA_DIR`);
  }
  let id: string;
  try {
    id = machineId(dataDir);
  } catch (err) {
    if (err instanceof MachineIdUnreadable) throw new DataFolderRefused(err.message);
    throw new DataFolderRefused(`the machine id in the data folder ${dataDir} cannot be kept (${(err as NodeJS.ErrnoException).code}); make the folder writable, or choose another with --data or STUDIO_DATA_DIR`);
  }
  const store = team ? await openPostgresStore(team.url, { machine, machineId: id }) : openSqliteStore(databasePath(dataDir), { machine, machineId: id });
  // Times two machines compare come from one clock: a team's are the database's, measured before anything is written.
  const teamClock = store.kind === 'postgres' ? new DatabaseClock(clock) : null;
  const checkClock = (owner?: string) => {
    const offsetOf = () => store.owners.checkClock(() => clock.now(), owner);
    return teamClock ? teamClock.measure(offsetOf) : offsetOf();
  };
  if (teamClock) {
    try {
      await checkClock();
    } catch (err) {
      await store.close();
      throw err;
    }
  }
  const configured = chooseMediaDir(options.media, process.env, settings.team);
  // Remembered before anything is saved into it, so rows that name its files are found once it is unset.
  // A list that cannot be written (a full disk) is said in the log, never a reason not to open.
  if (configured) for (const problem of rememberMediaFolder(dataDir, configured)) process.stderr.write(`studio: ${problem}\n`);
  const media = { ...studioMedia({ dataDir, configured, kind: store.kind, space: store.mediaSpace, earlierSpaces: store.earlier.spaces, machine, earlier: mediaFoldersUsed(dataDir) }), machineId: id };
  for (const problem of await keepInheritedFiles(media, store.earlier.spaces)) process.stderr.write(`studio: ${problem}\n`);
  return {
    dataDir,
    store,
    storeFrom: team?.from ?? null,
    machine,
    machineId: id,
    media,
    files: new OutputLocator(store.tasks, media),
    tasks: store.tasks,
    owners: store.owners,
    projects: store.projects,
    storyboards: checkedStoryboards(store.storyboards),
    takes: store.takes,
    receipts: new ReceiptJournal(dataDir, store.databaseId, store.earlier.databaseIds),
    databaseMoved: () => store.moved(),
    settings,
    clock: teamClock ?? clock,
    checkClock,
    close: () => store.close(),
  };
}

/**
 * Puts request ids still only in a receipt journal into the table, before a person reconciles or decides,
 * so a request the provider named for one task is never offered to, or adopted by, another.
 */
export async function recordJournaledRequests(studio: Studio) {
  return replayReceipts({ repo: studio.tasks, transaction: (fn) => studio.store.transaction(fn) }, studio.receipts, pollsById, studio.clock.now());
}

/**
 * A person's cancel (see cancelTask), once the request ids only journaled are in the table: a row whose request was
 * named is cancelled as sent with that id, never as if still being sent. A request the journal names for a task
 * cancelled earlier is treated as the engine treats one that arrives late (see cancelLateRequest).
 */
export async function cancelAsked(studio: Studio, providers: (id: string) => ProviderAdapter | undefined, id: number) {
  for (const { receipt, task } of await recordJournaledRequests(studio)) {
    if (task.status === 'CANCELLED') await cancelLateRequest(studio.tasks, providers(task.provider), task, receipt.requestId, () => studio.clock.now());
  }
  const task = await studio.tasks.get(id);
  const outputs = new LocalOutputStore(studio.media);
  return cancelTask(studio.tasks, task && providers(task.provider), id, studio.clock.now(), {
    transaction: (fn) => studio.store.transaction(fn),
    saved: (t) => outputs.find(t),
  });
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
      transaction: (fn) => studio.store.transaction(fn),
      providers,
      clock: studio.clock,
      outputs: new LocalOutputStore(studio.media),
      receipts: studio.receipts,
      databaseMoved: () => studio.databaseMoved(),
      waitForLocks: (ms) => studio.store.waitForLocks(ms),
      dataDir: studio.dataDir,
      files: studio.files,
      media: { ffmpegPath: ffmpegPath(studio.settings.media.ffmpegPath), ffprobePath: ffprobePath(studio.settings.media.ffprobePath) },
      prices: () => studio.settings.prices,
      database: studio.store.kind === 'postgres' ? `the team database at ${studio.store.where}` : `the studio database ${studio.store.where}`,
      databaseId: studio.store.databaseId,
      owner: newOwner(studio.machine, studio.machineId),
      checkClock: (owner) => studio.checkClock(owner),
      ...extra,
    },
    studio.settings.engine,
  );
}
