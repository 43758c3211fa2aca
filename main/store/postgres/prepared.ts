import { createHash } from 'node:crypto';
import pg from 'pg';

/**
 * Parameterised statements outside a transaction run as named prepared statements: a connection parses a
 * statement's text once (named by a hash of it) and afterwards only binds and runs it. The task store's
 * statements are long (a write and its event in one), so parsing them again each time was a large part of their cost.
 *
 * A prepared statement reading `*` keeps the columns its table had when it was prepared: after another machine's
 * studio adds a column, PostgreSQL refuses to run it ("cached plan must not change result type", 0A000), before it
 * does anything, and every connection that prepared statements before the change is closed when it is next taken.
 * A statement on its own is then run once more on a new connection. In a transaction the refusal rolls back all
 * the transaction did, which only its caller can make again: it is said as TablesChanged.
 */
export class PreparedStatements {
  private generation = 0;
  private readonly born = new WeakMap<pg.ClientBase, number>();
  private readonly names = new Map<string, string>();

  /** A new connection: it has prepared nothing yet. */
  connected(client: pg.ClientBase): void {
    this.born.set(client, this.generation);
  }

  /** The connection prepared its statements before the tables last changed under one of them. */
  stale(client: pg.ClientBase): boolean {
    return (this.born.get(client) ?? this.generation) < this.generation;
  }

  /** A statement prepared on `client` met a changed table; one change is counted once, however many meet it. */
  changedUnder(client: pg.ClientBase): void {
    if (!this.stale(client)) this.generation += 1;
  }

  statement(text: string, values: readonly unknown[]): pg.QueryConfig {
    let name = this.names.get(text);
    if (name === undefined) {
      name = `studio_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
      this.names.set(text, name);
    }
    return { name, text, values: values as unknown[] };
  }
}

/** PostgreSQL refused a prepared statement because a table it reads changed its columns since it was prepared. */
export function stalePlan(err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.code === '0A000' && /cached plan must not change result type/i.test(err.message);
}

/** A transaction met a table changed under one of its prepared statements (see stalePlan): it is rolled back whole. */
export class TablesChanged extends Error {
  override readonly name = 'TablesChanged';
  readonly code = '0A000';

  constructor(cause: unknown) {
    super(
      "the team database's tables changed under this transaction (another machine's studio changed their columns): it was rolled back and nothing of it was written; this machine's connections are renewed, so it can be made again",
      { cause },
    );
  }
}
