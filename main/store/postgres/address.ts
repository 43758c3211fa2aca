import { TeamDatabaseRefused } from './errors.ts';

/** A team database address, checked and taken apart for messages. */

export interface TeamAddress {
  host: string;
  port: number;
  user: string | null;
  database: string | null;
}

/** The address as it may be shown or logged: the password (in the user part or a parameter) removed. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1@').replace(/([?&](?:ssl)?password=)[^&]*/gi, '$1');
  }
  parsed.password = '';
  for (const key of [...parsed.searchParams.keys()]) {
    if (/^(ssl)?password$/i.test(key)) parsed.searchParams.delete(key);
  }
  return parsed.toString();
}

/** Refuses anything that is not a postgres:// (or postgresql://) address, saying how one is written. */
export function checkTeamUrl(url: string): TeamAddress {
  const example = 'write it like postgres://user:password@host:5432/studio';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TeamDatabaseRefused(`"${redactUrl(url)}" is not a database address; ${example}`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new TeamDatabaseRefused(`"${redactUrl(url)}" is not a PostgreSQL address; ${example}`);
  }
  const port = parsed.port === '' ? 5432 : Number(parsed.port);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  return {
    host: parsed.hostname || parsed.searchParams.get('host') || 'localhost',
    port,
    user: parsed.username ? decodeURIComponent(parsed.username) : null,
    database: database || null,
  };
}
