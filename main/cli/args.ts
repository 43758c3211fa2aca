import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Strict parsing: an unknown flag or a missing value is a UsageError naming it. */
export function parse<O extends Options>(argv: string[], options: O, positionals = 0) {
  try {
    const parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: positionals > 0 });
    if (parsed.positionals.length > positionals) {
      throw new UsageError(`unexpected argument "${parsed.positionals[positionals]}"`);
    }
    return parsed;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError((err as Error).message.replace(/\. To specify.*$/s, ''));
  }
}

export function required(value: string | undefined, flag: string, example: string): string {
  if (value === undefined || value === '') throw new UsageError(`${flag} is required, for example ${flag} ${example}`);
  return value;
}

export function taskId(value: string | undefined): number {
  const id = Number(value);
  if (!value || !Number.isInteger(id) || id <= 0) throw new UsageError(`give a task id (a whole number), not "${value ?? ''}"`);
  return id;
}
