/** The team database cannot be used as asked; it was left as it was. The message says what to do. */
export class TeamDatabaseRefused extends Error {
  override readonly name: string = 'TeamDatabaseRefused';
}

/** The team database could not be reached or refused the connection; `code` is the driver's or the server's. */
export class TeamDatabaseUnreachable extends TeamDatabaseRefused {
  override readonly name: string = 'TeamDatabaseUnreachable';
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}
