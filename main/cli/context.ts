import type { Logger } from '../logging/logger.ts';

/** What every command is given: the folders and database it works on, and where it writes. */
export interface CliContext {
  dataDir: string;
  /** The team database given with --db, which wins over STUDIO_DATABASE_URL and settings. */
  database?: string;
  /** The media folder given with --media, which wins over STUDIO_MEDIA_DIR and settings. */
  media?: string;
  out: (line: string) => void;
  err: (line: string) => void;
  /** The command's log file in `<data>/logs/` (cliLog.ts); it shows nothing at the terminal unless echoing is asked. */
  log: Logger;
}

/** One command: its arguments after the command's name; the exit code, or none for 0. */
export type Command = (args: string[], ctx: CliContext) => Promise<number | void>;
