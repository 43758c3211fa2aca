import pg from 'pg';

/**
 * A text's @name parameters written into it as literals, for a script of several statements sent as one:
 * PostgreSQL takes parameters only for a text of a single statement. Texts, whole numbers, booleans and null only.
 */
export function inlined(text: string, params: Readonly<Record<string, unknown>>): string {
  return text.replace(/@([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => literal(name, params[name]));
}

function literal(name: string, value: unknown): string {
  if (value === null) return 'NULL';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return pg.escapeLiteral(value);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return `(${value})`;
  throw new Error(`the script needs a text, a whole number, a boolean or null for @${name}, not ${String(value)}`);
}
