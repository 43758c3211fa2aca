import { mkdirSync } from 'node:fs';
import { systemClock } from './adapters/systemClock.ts';
import { databasePath } from './config/paths.ts';
import { loadSettings, type Settings } from './config/settings.ts';
import { openDatabase, type Db } from './db/database.ts';
import type { Clock } from './ports.ts';
import { ProjectRepository } from './projects/repository.ts';
import { TaskRepository } from './tasks/repository.ts';

/** The engine's storage and settings for one data folder: what every host (CLI, desktop, loopback) opens. */
export interface Studio {
  dataDir: string;
  db: Db;
  tasks: TaskRepository;
  projects: ProjectRepository;
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
    projects: new ProjectRepository(db),
    settings,
    clock,
    close: () => db.close(),
  };
}
