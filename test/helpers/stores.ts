import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { Store } from '../../main/store/port.ts';
import { openPostgresStore } from '../../main/store/postgres/store.ts';
import { openSqliteStore } from '../../main/store/sqlite/store.ts';
import { freshDatabase, postgresAvailable } from './postgres.ts';

/**
 * One of the two stores, for running the same cases against both:
 *
 *   describe.each(storeKinds())('$kind store', (s) => {
 *     it.skipIf(!s.available)('...', async () => { const store = await s.open(); ... });
 *   });
 */
export interface StoreKind {
  kind: 'sqlite' | 'postgres';
  /** False when this store cannot run here (PostgreSQL did not start); its cases are skipped. */
  available: boolean;
  /** Where a new, empty studio store is: a database file, or a team database's address (for worker processes). */
  fresh(): Promise<string>;
  /** The store at `where` (from fresh()), or a new one; closed at the end of the test file. */
  open(where?: string): Promise<Store>;
}

const opened: Store[] = [];
const folders: string[] = [];

afterAll(async () => {
  for (const store of opened.splice(0)) await store.close();
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function kept(store: Store): Store {
  opened.push(store);
  return store;
}

const sqlite: StoreKind = {
  kind: 'sqlite',
  available: true,
  fresh: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'studio-store-'));
    folders.push(dir);
    return join(dir, 'studio.db');
  },
  open: async (where) => kept(openSqliteStore(where ?? (await sqlite.fresh()))),
};

const postgres: StoreKind = {
  kind: 'postgres',
  available: postgresAvailable,
  fresh: () => freshDatabase(),
  open: async (where) => kept(await openPostgresStore(where ?? (await freshDatabase()))),
};

export function storeKinds(): StoreKind[] {
  return [sqlite, postgres];
}
