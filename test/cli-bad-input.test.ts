import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../main/cli/main.ts';

/**
 * Bad arguments, table-driven: each is refused with one line that says what to fix, exit status 2, and
 * leaves the database byte for byte as it was.
 */
async function cli(dataDir: string, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['--data', dataDir, ...args], { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const ENQUEUE = ['enqueue', '--project', 'Film', '--kind', 'image', '--provider', 'simulator', '--model', 'sim-image-1'];

const CASES: [string, string[], RegExp][] = [
  ['a task id in hex', ['cancel', '0x1'], /give a task id \(a whole number, like 12\), not "0x1"/],
  ['a task id with an exponent', ['cancel', '1e0'], /not "1e0"/],
  ['a task id with a decimal point', ['cancel', '1.0'], /not "1.0"/],
  ['a task id of 0', ['events', '0'], /not "0"/],
  ['a task that does not exist', ['cancel', '99'], /there is no task 99/],
  ['a decision on a task that does not exist', ['resolve', '99', '--give-up'], /there is no task 99/],
  ['an empty budget', ['budget', 'Film', ''], /a budget must be an amount like 12\.50, at most 1000000; not ""/],
  ['a budget of 1e308', ['budget', 'Film', '1e308'], /not "1e308"/],
  ['a budget past the maximum', ['budget', 'Film', '2000000'], /at most 1000000/],
  ['a negative budget', ['budget', 'Film', '-5'], /a budget is at least 0; not "-5"/],
  ['a budget for a project that does not exist', ['budget', 'Nope', '5'], /there is no project "Nope"/],
  ['--max-attempts 1e20', [...ENQUEUE, '--input', '{"prompt":"x"}', '--max-attempts', '1e20'], /--max-attempts must be a whole number from 1 to 100/],
  ['--max-attempts 0', [...ENQUEUE, '--input', '{"prompt":"x"}', '--max-attempts', '0'], /--max-attempts must be a whole number from 1 to 100/],
  ['--provider __proto__', ['enqueue', '--project', 'Film', '--kind', 'image', '--provider', '__proto__', '--model', 'm', '--input', '{"prompt":"x"}'], /unknown provider "__proto__"/],
  ['--provider toString', ['enqueue', '--project', 'Film', '--kind', 'image', '--provider', 'toString', '--model', 'm', '--input', '{"prompt":"x"}'], /unknown provider "toString"/],
];

describe('bad arguments', () => {
  // One data folder for the whole table, so each case is checked against the same saved state.
  const dir = mkdtempSync(join(tmpdir(), 'studio-test-'));
  const db = join(dir, 'studio.db');
  const digest = () => createHash('sha256').update(readFileSync(db)).digest('hex');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  beforeAll(async () => {
    expect((await cli(dir, ...ENQUEUE, '--input', '{"prompt":"a fox"}')).code).toBe(0);
    expect((await cli(dir, 'budget', 'Film', '5')).code).toBe(0);
  });

  it.each(CASES)('%s: one line, exit 2, nothing written', async (_, args, message) => {
    const before = digest();
    const result = await cli(dir, ...args);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
    expect(result.err.split('\n')).toHaveLength(1);
    expect(digest()).toBe(before);
  });
});
