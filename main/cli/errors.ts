/** A mistake in how the command was called: the message says what to fix; nothing was written. */
export class UsageError extends Error {}
