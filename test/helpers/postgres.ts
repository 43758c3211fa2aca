import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
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

/** `fn` on a connection of its own to `url`, closed after it. */
async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const asAdmin = <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => withClient(admin().adminUrl, fn);

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

/** The rows of one statement, on a connection of its own, closed after it. */
export function queryRows<R = Record<string, unknown>>(url: string, text: string, params: unknown[] = []): Promise<R[]> {
  return withClient(url, async (client) => (await client.query(text, params)).rows as R[]);
}

/**
 * Everything in the database as pg_dump writes it: tables, their rows, sequences, functions, triggers. Less the
 * \restrict lines, whose key pg_dump draws afresh for every dump.
 */
export function dumpDatabase(url: string): string {
  return execFileSync(join(postgresBin(), 'pg_dump'), ['--no-owner', '--dbname', url], { encoding: 'utf8' }).replace(/^\\(un)?restrict .*$/gm, '');
}
