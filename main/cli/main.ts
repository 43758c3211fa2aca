import { defaultDataDir } from '../config/paths.ts';
import { SettingsError } from '../config/settings.ts';
import { DatabaseRefused } from '../db/refused.ts';
import { LogSettingRefused } from '../logging/logLine.ts';
import type { Logger } from '../logging/logger.ts';
import { DecisionRefused } from '../engine/decisions.ts';
import { ProjectRefused } from '../domain/project.ts';
import { TeamDatabaseRefused } from '../store/postgres/errors.ts';
import { DataFolderRefused, NoStudioHere } from '../studio.ts';
import { COMMANDS, HELP } from './commands/index.ts';
import { cliLog } from './cliLog.ts';
import type { CliContext } from './context.ts';
import { UsageError } from './errors.ts';
import { lineWriter } from './output.ts';

/** Takes the global `--data DIR`, `--db URL` and `--media DIR` from anywhere in the line, so they work before or after the command. */
function takeGlobals(argv: string[]): { dataDir: string; database?: string; media?: string; rest: string[] } {
  const rest: string[] = [];
  let dataDir: string | undefined;
  let database: string | undefined;
  let media: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--data') {
      dataDir = argv[++i];
      if (!dataDir) throw new UsageError('--data needs a folder, for example --data ~/studio-data');
    } else if (a.startsWith('--data=')) dataDir = a.slice('--data='.length);
    else if (a === '--db' || a.startsWith('--db=')) {
      database = a === '--db' ? argv[++i] : a.slice('--db='.length);
      if (!database) throw new UsageError('--db needs the team database\'s address, for example --db postgres://user:password@host:5432/studio');
    } else if (a === '--media' || a.startsWith('--media=')) {
      media = a === '--media' ? argv[++i] : a.slice('--media='.length);
      if (!media) throw new UsageError('--media needs the media folder the team shares, for example --media /mnt/studio-media');
    } else rest.push(a);
  }
  return { dataDir: dataDir || defaultDataDir(), database, media, rest };
}

export async function main(argv: string[], io: Pick<CliContext, 'out' | 'err'> = { out: lineWriter(process.stdout), err: lineWriter(process.stderr) }): Promise<number> {
  let log: Logger | null = null;
  try {
    const { dataDir, database, media, rest } = takeGlobals(argv);
    const [name, ...args] = rest;
    if (!name || name === 'help' || name === '--help' || name === '-h') {
      io.out(HELP);
      return name ? 0 : 2;
    }
    const command = COMMANDS[name];
    if (!command) throw new UsageError(`unknown command "${name}"; run "studio help" for the list`);
    log = cliLog(dataDir, name, database);
    // The command alone: its arguments may hold a prompt or an address with a password.
    log.info(`studio ${name}`);
    return (await command(args, { dataDir, database, media, log, ...io })) ?? 0;
  } catch (err) {
    // A refusal of what was asked (a task that does not exist, a decision that does not fit, a team database
    // that is not one, or cannot be reached) is bad input: nothing was changed.
    if (
      err instanceof UsageError ||
      err instanceof DecisionRefused ||
      err instanceof NoStudioHere ||
      err instanceof ProjectRefused ||
      err instanceof TeamDatabaseRefused ||
      err instanceof LogSettingRefused
    ) {
      log?.info(`refused: ${err.message}`);
      io.err(`studio: ${err.message}`);
      return 2;
    }
    if (err instanceof DatabaseRefused || err instanceof SettingsError || err instanceof DataFolderRefused) {
      log?.warn(`refused: ${err.message}`);
      io.err(`studio: ${err.message}`);
      return 1;
    }
    log?.error(`failed: ${(err as Error).stack ?? String(err)}`);
    throw err;
  }
}
