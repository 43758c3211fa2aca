import { readFileSync } from 'node:fs';
import { settingsPath } from '../config/paths.ts';
import { parseSettings, type Settings } from '../config/settings.ts';
import { logsDir, openLog, type Logger } from '../logging/logger.ts';
import { taskLines } from '../logging/promptGuard.ts';
import { secretsIn } from '../logging/redact.ts';
import type { Studio } from '../studio.ts';
import type { CliContext } from './context.ts';

/** The long-running commands keep a log file of their own; every other command writes cli.log. */
const OWN_LOG = new Set(['serve', 'worker']);

/**
 * The settings as they are now, parsed again only when the file's text changed: a small read per line, where a
 * file's times and size can stay the same across a save (a key swapped for one as long, within a coarse clock's tick).
 */
function currentSettings(dataDir: string): () => Settings {
  let seen: string | null = null;
  let settings: Settings | undefined;
  return () => {
    const text = readSettingsText(dataDir);
    if (settings === undefined || text !== seen) {
      settings = parseSettings(text === '' ? {} : JSON.parse(text));
      seen = text;
    }
    return settings;
  };
}

/** The settings file's text; none yet is no settings. */
function readSettingsText(dataDir: string): string {
  try {
    return readFileSync(settingsPath(dataDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
}

/**
 * A command's log, in `<data>/logs/`, made only inside a data folder that exists. Settings are looked at again for
 * each line, so a key saved meanwhile by another process is cut too.
 */
export function cliLog(dataDir: string, command: string, database: string | undefined): Logger {
  const log = openLog({ dir: logsDir(dataDir), name: OWN_LOG.has(command) ? command : 'cli' });
  const settings = currentSettings(dataDir);
  log.redaction.hold(() => [...secretsIn(settings()), ...secretsIn(database)]);
  log.redaction.logPromptsWhen(() => settings().logging.prompts);
  return log;
}

/**
 * The engine's lines in a command that runs it, shown at the terminal as `prefix` + line as before: warnings in the
 * log, each "task N: …" line cut of task N's prompts; `settled` waits for those, before the studio closes.
 */
export function engineLog(ctx: CliContext, studio: Studio, prefix: string) {
  const log = ctx.log.echoing(ctx.err, 'info', prefix);
  const lines = taskLines((m) => log.warn(m), async (id) => (await studio.tasks.get(id))?.input, () => log.redaction.promptsAllowed);
  return { log, lines };
}
