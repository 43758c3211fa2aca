import { defaultDataDir } from '../config/paths.ts';
import { SettingsError } from '../config/settings.ts';
import { DatabaseRefused } from '../db/database.ts';
import { DecisionRefused } from '../engine/decisions.ts';
import { ProjectRefused } from '../projects/project.ts';
import { DataFolderRefused, NoStudioHere } from '../studio.ts';
import { COMMANDS, HELP } from './commands/index.ts';
import { UsageError } from './errors.ts';

export interface CliContext {
  dataDir: string;
  out: (line: string) => void;
  err: (line: string) => void;
}

/** Takes `--data DIR` from anywhere in the line, so it works before or after the command. */
function takeDataDir(argv: string[]): { dataDir: string; rest: string[] } {
  const rest: string[] = [];
  let dataDir: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--data') {
      dataDir = argv[++i];
      if (!dataDir) throw new UsageError('--data needs a folder, for example --data ~/studio-data');
    } else if (a.startsWith('--data=')) dataDir = a.slice('--data='.length);
    else rest.push(a);
  }
  return { dataDir: dataDir || defaultDataDir(), rest };
}

export async function main(argv: string[], io: Pick<CliContext, 'out' | 'err'> = {
  out: (l) => process.stdout.write(`${l}\n`),
  err: (l) => process.stderr.write(`${l}\n`),
}): Promise<number> {
  try {
    const { dataDir, rest } = takeDataDir(argv);
    const [name, ...args] = rest;
    if (!name || name === 'help' || name === '--help' || name === '-h') {
      io.out(HELP);
      return name ? 0 : 2;
    }
    const command = COMMANDS[name];
    if (!command) throw new UsageError(`unknown command "${name}"; run "studio help" for the list`);
    return (await command(args, { dataDir, ...io })) ?? 0;
  } catch (err) {
    // A refusal of what was asked (a task that does not exist, a decision that does not fit) is bad input.
    if (err instanceof UsageError || err instanceof DecisionRefused || err instanceof NoStudioHere || err instanceof ProjectRefused) {
      io.err(`studio: ${err.message}`);
      return 2;
    }
    if (err instanceof DatabaseRefused || err instanceof SettingsError || err instanceof DataFolderRefused) {
      io.err(`studio: ${err.message}`);
      return 1;
    }
    throw err;
  }
}
