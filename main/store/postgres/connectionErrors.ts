import type { TeamAddress } from './address.ts';
import { TeamDatabaseUnreachable } from './errors.ts';

const NETWORK = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EPIPE', 'ENOENT']);

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/**
 * Why a connection to the team database failed, in words that say what to check, or null when `err` is not
 * about connecting (a statement's own error).
 */
export function explainConnectionError(err: unknown, at: TeamAddress): string | null {
  const code = codeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  const server = `PostgreSQL at ${at.host}:${at.port}`;
  const user = at.user === null ? 'the default user' : `user "${at.user}"`;
  switch (code) {
    case 'ECONNREFUSED':
    case 'ENOENT':
      return `${server} refused the connection: check that PostgreSQL is running there, that it listens on port ${at.port} (listen_addresses, port) and that the host and port in the address are right.`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host "${at.host}" of the team database address cannot be found; check the host name.`;
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${server} cannot be reached (${code}); check the host and port, and any firewall between this machine and it.`;
    case 'ECONNRESET':
    case 'EPIPE':
      return `${server} closed the connection at once (${code}); check that the port is PostgreSQL's, and the server's log.`;
    case '28P01':
      return `${server} refused ${user}: the password is wrong. Check the user and password in the address.`;
    case '28000':
      return `${server} refused the connection: ${message}. Check the user in the address, and that the server lets it connect from this machine (pg_hba.conf).`;
    case '3D000':
      return `${server} has no database "${at.database ?? at.user ?? ''}": create it (createdb) or fix the database name in the address.`;
    case '57P03':
      return `${server} is starting up or shutting down; try again in a moment.`;
    case '53300':
      return `${server} has too many connections open; close some, or raise its max_connections.`;
  }
  if (/password must be a string|no password was provided|password authentication/i.test(message)) {
    return `${server} asks ${user} for a password; put it in the address (postgres://user:password@host:port/database).`;
  }
  if (/does not support SSL/i.test(message)) {
    return `${server} does not accept SSL; remove sslmode from the address or turn SSL on at the server.`;
  }
  if (/timeout|terminated unexpectedly|Connection terminated/i.test(message)) {
    return `${server} did not answer; check the host and port, and any firewall between this machine and it.`;
  }
  if (NETWORK.has(code) || code.startsWith('08')) return `${server} could not be reached (${code}: ${message}); check the address and that the server is running.`;
  return null;
}

/** What the driver throws, with no code, when the connection under a statement is gone. */
const CONNECTION_LOST = /Connection terminated|encountered a connection error/i;

/**
 * A statement's failure because its connection was lost (reset, cut, the server gone), as TeamDatabaseUnreachable
 * in words; null for anything else, a statement's own error among them (those carry a SQLSTATE).
 */
export function lostConnection(err: unknown, at: TeamAddress): TeamDatabaseUnreachable | null {
  const code = codeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  if (!NETWORK.has(code) && !(code === '' && CONNECTION_LOST.test(message))) return null;
  return new TeamDatabaseUnreachable(`the connection to PostgreSQL at ${at.host}:${at.port} was lost (${code ? `${code}: ` : ''}${message})`, code || 'ECONNLOST');
}
