import type { Db } from '../../db/database.ts';

/** This database's own folder in a media folder it may share (migration 009). */
export function mediaSpaceOf(db: Db): string {
  return db.prepare(`SELECT name FROM media_space`).pluck().get() as string;
}
