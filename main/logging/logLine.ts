/** The levels, most serious first; an entry is kept where its level is at or above the threshold. */
export const LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type Level = (typeof LEVELS)[number];

/** The threshold a log file is kept at unless STUDIO_LOG_LEVEL says otherwise. */
export const DEFAULT_LEVEL: Level = 'info';

export class LogSettingRefused extends Error {}

export function atLeast(level: Level, threshold: Level): boolean {
  return LEVELS.indexOf(level) <= LEVELS.indexOf(threshold);
}

/** The file threshold from STUDIO_LOG_LEVEL; a word that is no level is refused, naming the levels. */
export function levelFrom(env: NodeJS.ProcessEnv): Level {
  const asked = env.STUDIO_LOG_LEVEL?.trim().toLowerCase();
  if (!asked) return DEFAULT_LEVEL;
  if (!(LEVELS as readonly string[]).includes(asked)) {
    throw new LogSettingRefused(`STUDIO_LOG_LEVEL must be one of ${LEVELS.join(', ')}, not "${env.STUDIO_LOG_LEVEL}"; or leave it unset for ${DEFAULT_LEVEL}`);
  }
  return asked as Level;
}

/**
 * One entry as one line, time first so the lines of every file in a folder sort into one history: "time LEVEL
 * source[pid] message", the pattern VS Code gives spdlog ('%Y-%m-%d %H:%M:%S.%e [%l] %v', microsoft/vscode
 * src/vs/platform/log/node/spdlogLog.ts) with the process added, since several processes share one folder here. A
 * message of several lines (a stack) keeps its breaks as "\n", so the last N lines are the last N entries.
 */
export function formatLine(at: number, level: Level, source: string, pid: number, message: string): string {
  const oneLine = message.replace(/\r?\n/g, '\\n');
  return `${new Date(at).toISOString()} ${level.toUpperCase().padEnd(5)} ${source}[${pid}] ${oneLine}`;
}

/** A line as formatLine writes it: its time sorts it among the lines of other files. */
export const LINE_START = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z /;

/** The most of one entry a log keeps: a line built from a person's input (a refused storyboard's scene id) can be any length. */
export const MAX_ENTRY = 16_384;

export function capped(message: string): string {
  return message.length <= MAX_ENTRY ? message : `${message.slice(0, MAX_ENTRY)}… (${message.length - MAX_ENTRY} more characters left out)`;
}
