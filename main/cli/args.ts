import { parseArgs, type ParseArgsConfig } from 'node:util';
import { MAX_BUDGET } from '../domain/project.ts';
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

/** A whole number written plainly (no sign, exponent, hex or decimal point), within [min, max]. */
export function wholeNumber(value: string | undefined, what: string, min: number, max: number): number {
  if (value === undefined || !/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`${what} must be a whole number from ${min} to ${max}, written plainly; not "${value ?? ''}"`);
  }
  return Number(value);
}

export function taskId(value: string | undefined): number {
  if (!value || !/^[1-9]\d*$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`give a task id (a whole number, like 12), not "${value ?? ''}"`);
  }
  return Number(value);
}

/** An amount of money written plainly, like 12.50: no sign, exponent or more than six decimals. */
export function amount(value: string, what: string): number {
  if (/^-/.test(value)) throw new UsageError(`${what} is at least 0; not "${value}"`);
  if (!/^\d+(\.\d{1,6})?$/.test(value) || Number(value) > MAX_BUDGET) {
    throw new UsageError(`${what} must be an amount like 12.50, at most ${MAX_BUDGET}; not "${value}"`);
  }
  return Number(value);
}
