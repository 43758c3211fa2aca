import { loadSettings } from '../config/settings.ts';
import { logsDir, openLog, type Logger } from '../logging/logger.ts';
import { taskLines } from '../logging/promptGuard.ts';
import { secretsIn } from '../logging/redact.ts';
import type { Studio } from '../studio.ts';
import type { CliContext } from './context.ts';

/** The long-running commands keep a log file of their own; every other command writes cli.log. */
const OWN_LOG = new Set(['serve', 'worker']);

/**
 * A command's log, in `<data>/logs/`, made only inside a data folder that exists. Settings are read again for each
 * line, so a key saved meanwhile by another process (the desktop, a browser tab) is cut too.
 */
export function cliLog(dataDir: string, command: string, database: string | undefined): Logger {
  const log = openLog({ dir: logsDir(dataDir), name: OWN_LOG.has(command) ? command : 'cli' });
  log.redaction.hold(() => [...secretsIn(loadSettings(dataDir)), ...secretsIn(database)]);
  log.redaction.logPromptsWhen(() => loadSettings(dataDir).logging.prompts);
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
