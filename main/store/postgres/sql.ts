/**
 * How the PostgreSQL stores reach the database: one query at a time, or several as one transaction. Over the
 * pool, `tx` takes a connection and runs BEGIN ... COMMIT on it; inside a transaction it runs on that same
 * connection, so a store method called within `Store.transaction` joins it.
 */
export interface Sql {
  /**
   * Rows of one statement, with $1, $2 ... parameters. BIGINT columns arrive as numbers. A text of several
   * statements, without parameters, goes in one round trip and runs as one transaction (or within the one under
   * way), each statement reading what committed before it began; the rows are the last statement's.
   */
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
  tx<T>(fn: (sql: Sql) => Promise<T>): Promise<T>;
}
