import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, ENQUEUE } from './helpers/cli.ts';

/**
 * Bad arguments, table-driven: each is refused with one line that says what to fix, exit status 2, and
 * leaves the database byte for byte as it was.
 */


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
  ['--input nested 40 levels deep', [...ENQUEUE, '--input', `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`], /--input is nested more than 32 levels deep/],
  ['--input larger than 1 MiB', [...ENQUEUE, '--input', JSON.stringify({ prompt: 'x'.repeat(1 << 20) })], /--input is larger than 1048576 bytes/],
  ['--input that is not JSON', [...ENQUEUE, '--input', '{prompt: fox}'], /--input is not JSON/],
  ['--provider __proto__', ['enqueue', '--project', 'Film', '--kind', 'image', '--provider', '__proto__', '--model', 'sim-image-1', '--input', '{"prompt":"x"}'], /unknown provider "__proto__"/],
  ['a model the provider does not make', ['enqueue', '--project', 'Film', '--kind', 'image', '--provider', 'openai', '--model', 'dall-e-4', '--input', '{"prompt":"x"}'], /OpenAI has no image model "dall-e-4"; did you mean "dall-e-3"\? The image models are gpt-image-1, dall-e-3/],
  ['a simulator model of another kind', [...ENQUEUE.map((a) => (a === 'sim-image-1' ? 'sim-clip-1' : a)), '--input', '{"prompt":"x"}'], /The simulator has no image model "sim-clip-1"; did you mean "sim-image-1"\?/],
  ['--provider toString', ['enqueue', '--project', 'Film', '--kind', 'image', '--provider', 'toString', '--model', 'sim-image-1', '--input', '{"prompt":"x"}'], /unknown provider "toString"/],
];

/** A storyboard file in the table's folder, from the example with one change. */
function board(dir: string, name: string, change: (b: Record<string, any>) => void): string {
  const b = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'examples', 'fox.storyboard.json'), 'utf8'));
  change(b);
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(b));
  return file;
}

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

  const STORYBOARDS: [string, (b: Record<string, any>) => void, RegExp][] = [
    ['a misspelt scene field', (b) => (b.scenes[0].narattion = b.scenes[0].narration), /scene 1 \("dawn"\): has no field "narattion"; did you mean "narration"\?/],
    ['a misspelt top-level field', (b) => (b.scens = []), /the storyboard: has no field "scens"; did you mean "scenes"\?/],
    ['a scene fit that is neither', (b) => (b.scenes[0].fit = 'stretch'), /scene 1 \("dawn"\) fit: must be "narration" \(the scene lasts as long as its narration\) or "scene"/],
    ['a misspelt provider', (b) => (b.steps = { image: { provider: 'simulater', model: 'sim-image-1' } }), /"simulater" is no provider; did you mean "simulator"\?/],
    ['a misspelt model', (b) => (b.steps.clip.model = 'sim-clip-2'), /steps\.clip\.model: The simulator has no clip model "sim-clip-2"; did you mean "sim-clip-1"\?/],
    ['a model of another kind', (b) => (b.scenes[1].steps = { speech: { provider: 'elevenlabs', model: 'eleven_flash_v2_5' }, image: { provider: 'elevenlabs', model: 'eleven_flash_v2_5' } }), /ElevenLabs makes speech here, not images/],
    ['a prompt of only spaces', (b) => (b.scenes[0].imagePrompt = '   '), /imagePrompt: is required, and only spaces are no text/],
    ['too many scenes', (b) => (b.scenes = Array.from({ length: 201 }, (_, i) => ({ id: `s${i}`, imagePrompt: 'a fox' }))), /at most 200 scenes; this one has 201/],
  ];
  it.each(STORYBOARDS)('a storyboard with %s: one line, exit 2, nothing written', async (name, change, message) => {
    const file = board(dir, name.replace(/\W+/g, '-'), change);
    const before = digest();
    const result = await cli(dir, 'storyboard', 'create', 'Film', '--file', file);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
    expect(result.err.split('\n')).toHaveLength(1);
    expect(digest()).toBe(before);
  });

  it('a new take of a scene that does not exist: one line naming the scenes, exit 2, nothing written', async () => {
    expect((await cli(dir, 'storyboard', 'create', 'Takes', '--file', board(dir, 'takes', () => undefined))).code).toBe(0);
    const before = digest();
    const result = await cli(dir, 'generate', 'Takes', '--new-take', 'dusk');
    expect(result).toMatchObject({ code: 2, err: 'studio: there is no scene "dusk"; the scenes are dawn, hunt, home' });
    expect(digest()).toBe(before);
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

describe('engine settings out of range', () => {
  // Each passed the old check (a whole number past its minimum); one past 2^53 then failed every claim with a stack.
  const SETTINGS: [string, Record<string, unknown>, string][] = [
    ['a lease of 1e16 ms', { leaseMs: 1e16 }, 'engine.leaseMs (how long a claim on a task holds without renewal, in ms) must be a whole number from 300 to 3600000, not 10000000000000000; set one in that range, or remove it for the default (30000)'],
    ['a lease of two hours', { leaseMs: 7_200_000 }, 'engine.leaseMs (how long a claim on a task holds without renewal, in ms) must be a whole number from 300 to 3600000, not 7200000'],
    ['an image concurrency of 1e16', { concurrency: { image: 1e16 } }, 'engine.concurrency.image (how many image tasks this machine runs at once) must be a whole number from 0 to 32, not 10000000000000000; set one in that range, or remove it for the default (4)'],
    ['a tick of an hour', { tickMs: 3_600_000 }, 'engine.tickMs (how often the engine looks for work, in ms) must be a whole number from 10 to 60000'],
    ['a poll deadline of 1e16 ms', { poll: { deadlineMs: 1e16 } }, 'engine.poll.deadlineMs (how long a result is waited for, in ms) must be a whole number from 100 to 604800000'],
    ['a lookup interval of 1e16 ms', { lookup: { intervalMs: 1e16 } }, 'engine.lookup.intervalMs (the wait between lookups of an unknown outcome, in ms) must be a whole number from 100 to 86400000'],
    ['1e16 lookups', { lookup: { tries: 1e16 } }, 'engine.lookup.tries (how many lookups an unknown outcome gets) must be a whole number from 1 to 1000'],
  ];
  it.each(SETTINGS)('%s: the worker refuses in one line naming the field and its range; nothing is written', async (_, engine, words) => {
    const dir = mkdtempSync(join(tmpdir(), 'studio-test-'));
    try {
      expect((await cli(dir, ...ENQUEUE, '--input', '{"prompt":"a fox"}')).code).toBe(0);
      const settings = join(dir, 'settings.json');
      writeFileSync(settings, JSON.stringify({ engine }));
      const db = join(dir, 'studio.db');
      const before = [readFileSync(settings, 'utf8'), createHash('sha256').update(readFileSync(db)).digest('hex')];
      const result = await cli(dir, 'worker', '--until-idle');
      expect(result.code).toBe(1);
      expect(result.err).toContain(`studio: settings: ${words}`);
      expect(result.err.split('\n')).toHaveLength(1);
      expect([readFileSync(settings, 'utf8'), createHash('sha256').update(readFileSync(db)).digest('hex')]).toEqual(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a stored storyboard that no longer passes the checks', () => {
  it('can always be shown as stored and replaced', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'studio-test-'));
    try {
      const good = board(dir, 'good', () => undefined);
      expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', good)).code).toBe(0);
      // Stored by an older version that let a blank prompt through.
      const db = new Database(join(dir, 'studio.db'));
      db.prepare(`UPDATE storyboards SET json = json_set(json, '$.scenes[0].imagePrompt', '   ')`).run();
      db.close();
      const shown = await cli(dir, 'storyboard', 'show', 'Fox');
      expect(shown.code).toBe(0);
      expect(shown.err).toMatch(/no longer passes the checks .*imagePrompt: is required.*studio storyboard edit Fox --file F/);
      expect(JSON.parse(shown.out).scenes[0].imagePrompt).toBe('   ');
      expect((await cli(dir, 'storyboard', 'edit', 'Fox', '--file', good, '--revision', '1')).code).toBe(0);
      expect((await cli(dir, 'storyboard', 'show', 'Fox')).err).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a data folder with no studio in it', () => {
  it.each([['tasks'], ['spend'], ['unknown'], ['events', '1'], ['cancel', '1'], ['resolve', '1', '--give-up'], ['reconcile', '1'], ['estimate', 'Fox'], ['budget', 'Fox', '5'], ['storyboard', 'show', 'Fox']])(
    '%s says so, exits 2 and creates nothing',
    async (...args) => {
      const parent = mkdtempSync(join(tmpdir(), 'studio-test-'));
      try {
        const missing = join(parent, 'not-here');
        const result = await cli(missing, ...args);
        expect(result.code).toBe(2);
        expect(result.err).toBe(`studio: there is no studio data in ${missing}; point --data (or STUDIO_DATA_DIR) at the studio's data folder`);
        expect(existsSync(missing)).toBe(false);
      } finally {
        rmSync(parent, { recursive: true, force: true });
      }
    },
  );
});
