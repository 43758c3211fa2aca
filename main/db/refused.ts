/** A database the studio will not open, with what to do about it. */
export class DatabaseRefused extends Error {}
