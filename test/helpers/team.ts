import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { onTestFinished } from 'vitest';
import { databasePath } from '../../main/config/paths.ts';
import type { Store } from '../../main/store/port.ts';
import { openPostgresStore } from '../../main/store/postgres/store.ts';
import { openSqliteStore } from '../../main/store/sqlite/store.ts';
import { writeSettings } from './processes.ts';
import type { StoreKind } from './stores.ts';
import { tempDir } from './tmp.ts';

/** One machine of a team: the data folder its studio processes run with, and what they need in their environment. */
export interface Machine {
  name: string;
  dataDir: string;
  env: Record<string, string>;
}

/**
 * Studios sharing one store, for tests that run worker and CLI processes. On PostgreSQL each machine has a data
 * folder of its own (settings, receipt journals) and its own name, and all point at one team database and save
 * into one media folder, as a team is set up. On SQLite the store is a data folder's file, so there is one
 * machine: every call gives that folder.
 */
export interface Team {
  kind: StoreKind['kind'];
  /** The store's address: the database file, or the team database's URL. */
  where: string;
  /** The team's store, opened in the test's process; closed after the test. */
  store: Store;
  /** The machine called `name`, set up with `settings` the first time it is asked for. */
  machine(name: string, settings?: object): Machine;
  /** Whether the file a row names is whole: its checksum is the row's. A path kept relative is in the media folder. */
  whole(path: string, sha256: string): boolean;
}

export async function teamOn(kind: StoreKind, env: Record<string, string> = {}): Promise<Team> {
  const machines = new Map<string, Machine>();
  let where: string;
  let store: Store;
  let place: (name: string) => Machine;
  let media: string | null = null;
  if (kind.kind === 'sqlite') {
    const dataDir = tempDir();
    where = databasePath(dataDir);
    media = dataDir;
    store = openSqliteStore(where);
    place = (name) => ({ name, dataDir, env });
  } else {
    const url = await kind.fresh();
    const shared = tempDir();
    where = url;
    media = shared;
    store = await openPostgresStore(url);
    place = (name) => ({ name, dataDir: tempDir(), env: { ...env, STUDIO_DATABASE_URL: url, STUDIO_MACHINE_NAME: name, STUDIO_MEDIA_DIR: shared } });
  }
  onTestFinished(() => store.close());
  return {
    kind: kind.kind,
    where,
    store,
    machine(name, settings) {
      const known = machines.get(name);
      if (known) return known;
      const made = place(name);
      if (settings) writeSettings(made.dataDir, settings);
      machines.set(name, made);
      return made;
    },
    whole(path, sha256) {
      const file = isAbsolute(path) || media === null ? path : join(media, path);
      return existsSync(file) && createHash('sha256').update(readFileSync(file)).digest('hex') === sha256;
    },
  };
}
