import { join } from 'node:path';
import { atLeast, capped, formatLine, levelFrom, type Level } from './logLine.ts';
import { Redaction } from './redact.ts';
import { DEFAULT_LIMITS, RotatingFile, type RotationLimits } from './rotatingFile.ts';
import { lastLines } from './tail.ts';

/**
 * The studio's log: entries at four levels, each one line with its time and level, cut of keys and prompts
 * (redact.ts), appended to a rotating file (rotatingFile.ts) that a person can open or send. Like VS Code's log
 * service (microsoft/vscode src/vs/platform/log/common/log.ts: error, warn, info, debug, trace, one threshold), with
 * the terminal as a second place a process may show its entries, from a level of its own.
 */
export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
  /**
   * The same log, each entry at `from` or above also shown by `write` as `prefix` + message: what a terminal showed
   * before the log existed ("studio: …", "worker: …").
   */
  echoing(write: (line: string) => void, from: Level, prefix: string): Logger;
  /** The folder the file is in, null where this process keeps none. */
  readonly dir: string | null;
  readonly redaction: Redaction;
  /** Why the last entry could not be written to the file, or null. */
  readonly problem: string | null;
  /** The last `n` lines of every log in the folder, oldest first, cut again with the keys held now. */
  tail(n: number): string[];
}

/** The logs folder of the CLI and `studio serve`: inside the data folder. */
export const logsDir = (dataDir: string): string => join(dataDir, 'logs');

export interface LogOptions {
  /** The folder; null for a log that only echoes (no folder to write in). */
  dir: string | null;
  /** The file's name there, one per kind of process (desktop, serve, worker, cli), each rotating by itself. */
  name: string;
  /**
   * Whether the folder's parents may be made (Electron's logs path); else only the folder, inside a data folder that
   * must exist, so a command refused for a data folder that is not there makes none.
   */
  makeParents?: boolean;
  /** STUDIO_LOG_LEVEL (the file's threshold, info unless set) and STUDIO_LOG_PROMPTS. */
  env?: NodeJS.ProcessEnv;
  limits?: RotationLimits;
  clock?: () => number;
}

interface Echo {
  write: (line: string) => void;
  from: Level;
  prefix: string;
}

class StudioLogger implements Logger {
  constructor(
    private readonly file: RotatingFile | null,
    private readonly level: Level,
    readonly redaction: Redaction,
    private readonly source: string,
    private readonly clock: () => number,
    private readonly echo: Echo | null,
  ) {}

  get dir(): string | null {
    return this.file?.dir ?? null;
  }

  get problem(): string | null {
    return this.file?.problem ?? null;
  }

  error(message: string): void {
    this.entry('error', message);
  }
  warn(message: string): void {
    this.entry('warn', message);
  }
  info(message: string): void {
    this.entry('info', message);
  }
  debug(message: string): void {
    this.entry('debug', message);
  }

  echoing(write: (line: string) => void, from: Level, prefix: string): Logger {
    return new StudioLogger(this.file, this.level, this.redaction, this.source, this.clock, { write, from, prefix });
  }

  tail(n: number): string[] {
    return this.dir ? lastLines(this.dir, n).map((line) => this.redaction.cut(line)) : [];
  }

  private entry(level: Level, message: string): void {
    const toFile = this.file !== null && atLeast(level, this.level);
    const toEcho = this.echo !== null && atLeast(level, this.echo.from);
    if (!toFile && !toEcho) return;
    // Cut first, then shortened, so no key is left half in the line.
    const text = capped(this.redaction.cut(message));
    if (toFile) this.file!.append(formatLine(this.clock(), level, this.source, process.pid, text));
    if (toEcho) this.echo!.write(`${this.echo!.prefix}${text}`);
  }
}

/** A log writing to `<dir>/<name>.log`; the folder is made at the first entry, not before. */
export function openLog(options: LogOptions): Logger {
  const env = options.env ?? process.env;
  const file = options.dir === null ? null : new RotatingFile(options.dir, options.name, options.limits ?? DEFAULT_LIMITS, options.makeParents ?? false);
  return new StudioLogger(file, levelFrom(env), new Redaction(env), options.name, options.clock ?? Date.now, null);
}
