import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { initTeamDatabase, POSTGRES_MIGRATIONS_DIR } from '../main/store/postgres/migrator.ts';
import { openPostgresStore } from '../main/store/postgres/store.ts';
import { freshDatabase, postgresAvailable, queryRows } from './helpers/postgres.ts';

async function spaceOf(url: string): Promise<string> {
  const store = await openPostgresStore(url);
  try {
    return store.mediaSpace;
  } finally {
    await store.close();
  }
}

describe.skipIf(!postgresAvailable)('a team database in a media folder another team database shares', () => {
  it('saves into a folder of its own, so two databases never give two paid files one name', async () => {
    const [a, b] = await Promise.all([freshDatabase(), freshDatabase()]);
    const [spaceA, spaceB] = [await spaceOf(a), await spaceOf(b)];
    expect(spaceA).toMatch(/^team-[0-9a-f]{12}$/);
    expect(spaceB).toMatch(/^team-[0-9a-f]{12}$/);
    expect(spaceA).not.toBe(spaceB);
    // Drawn once: the folder stays the database's own from one opening to the next.
    expect(await spaceOf(a)).toBe(spaceA);
  });

  it('keeps the folder "team" its machines already save into when it has tasks at the upgrade', async () => {
    // The team schema as it was before each database had a folder of its own (migrations 1 to 6), with a task.
    const before = mkdtempSync(join(tmpdir(), 'team-migrations-'));
    onTestFinished(() => rmSync(before, { recursive: true, force: true }));
    for (const name of ['001_schema.sql', '002_project_push.sql', '003_clock_offset.sql', '004_machine_id_and_lookups.sql', '005_owner_boot.sql', '006_database_id.sql']) {
      cpSync(join(POSTGRES_MIGRATIONS_DIR, name), join(before, name));
    }
    const url = await freshDatabase({ empty: true });
    await initTeamDatabase(url, before);
    await queryRows(url, `INSERT INTO projects (name, created_at) VALUES ('Fox', 0)`);
    await queryRows(url, `INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, next_attempt_at, created_at, updated_at)
                          SELECT id, 'image', 'simulator', 'sim-image-1', '{}', 'h', 0, 0, 0 FROM projects`);
    expect(await spaceOf(url)).toBe('team');
  });
});
