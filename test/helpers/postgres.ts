import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, inject } from 'vitest';
import { initTeamDatabase } from '../../main/store/postgres/migrator.ts';

/**
 * The run's PostgreSQL cluster (started once by postgresSetup.ts). Where it could not start, `postgresAvailable`
 * is false: PostgreSQL tests use `describe.skipIf(!postgresAvailable)`, and the run says why they were skipped.
 */
const cluster = inject('postgres') ?? { unavailable: 'no cluster was started for this run (see globalSetup in vitest.config.ts)' };

export const postgresAvailable = 'adminUrl' in cluster;

/** Why PostgreSQL tests are skipped, or null. */
export const postgresUnavailable: string | null = 'unavailable' in cluster ? cluster.unavailable : null;

function admin(): { adminUrl: string; bin: string } {
  if (!('adminUrl' in cluster)) throw new Error(`PostgreSQL could not start (${cluster.unavailable})`);
  return cluster;
}

/** The folder of the cluster's programs (pg_dump, psql). */
export function postgresBin(): string {
  return admin().bin;
}

const created: string[] = [];
let counter = 0;

async function asAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: admin().adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * A new database of its own in the run's cluster, with the studio's schema (or empty, with `{ empty: true }`);
 * returns its address. Dropped at the end of the test file, connections and all.
 */
export async function freshDatabase(options: { empty?: boolean } = {}): Promise<string> {
  const name = `studio_${process.pid}_${++counter}_${randomBytes(3).toString('hex')}`;
  await asAdmin((client) => client.query(`CREATE DATABASE ${name}`));
  created.push(name);
  const url = new URL(admin().adminUrl);
  url.pathname = `/${name}`;
  if (!options.empty) await initTeamDatabase(url.toString());
  return url.toString();
}

if (postgresAvailable) {
  afterAll(async () => {
    const names = created.splice(0);
    if (names.length) await asAdmin(async (client) => {
      for (const name of names) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    });
  });
}
