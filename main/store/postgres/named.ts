/**
 * Statements are written with @name parameters, as the SQLite stores' are; PostgreSQL takes $1, $2 ... .
 * Each name becomes one numbered parameter however often it appears, so a value used twice is sent once.
 */
export interface Numbered {
  text: string;
  values: unknown[];
}

const parsed = new Map<string, { text: string; names: string[] }>();

function parse(text: string): { text: string; names: string[] } {
  let done = parsed.get(text);
  if (!done) {
    const names: string[] = [];
    const numbered = text.replace(/@([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
      let n = names.indexOf(name);
      if (n < 0) n = names.push(name) - 1;
      return `$${n + 1}`;
    });
    done = { text: numbered, names };
    parsed.set(text, done);
  }
  return done;
}

export function named(text: string, params: Readonly<Record<string, unknown>>): Numbered {
  const { text: numbered, names } = parse(text);
  const values = names.map((name) => {
    const value = params[name];
    if (value === undefined) throw new Error(`the statement needs a value for @${name}`);
    return value;
  });
  return { text: numbered, values };
}
