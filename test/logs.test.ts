import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliLog } from '../main/cli/cliLog.ts';
import { parseSettings, SettingsError, updateSettings } from '../main/config/settings.ts';
import { LINE_START, LogSettingRefused, MAX_ENTRY } from '../main/logging/logLine.ts';
import { openLog } from '../main/logging/logger.ts';
import { cutPrompts, promptsIn, taskLines } from '../main/logging/promptGuard.ts';
import { cutKeyShapes, cutPromptFields, Redaction } from '../main/logging/redact.ts';
import { secretForms } from '../main/logging/secretForms.ts';
import { falQueue, realMedia } from './fakes/providers.ts';
import { send } from './fakes/server.ts';
import { cli } from './helpers/cli.ts';
import { enqueueIn, falImage, paidStudio, readTask } from './helpers/paidStudio.ts';
import { runStudio, startStudio } from './helpers/processes.ts';
import { storeKinds } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

const ROOT = join(import.meta.dirname, '..');
const run = promisify(execFile);

/** The lines of a log file, or of every file of a log (oldest file first). */
const linesOf = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);

describe('a log file', () => {
  it('rotates at its size: the newest lines in the current file, a few full files beside it, the oldest dropped', () => {
    const dir = tempDir();
    const log = openLog({ dir, name: 'serve', limits: { maxBytes: 1_000, keep: 2 } });
    for (let i = 0; i < 100; i++) log.info(`line ${i}`);
    expect(readdirSync(dir).sort()).toEqual(['serve.log', 'serve.log.1', 'serve.log.2']);
    for (const name of readdirSync(dir)) expect(statSync(join(dir, name)).size).toBeLessThanOrEqual(1_000);
    const kept = ['serve.log.2', 'serve.log.1', 'serve.log'].flatMap((n) => linesOf(join(dir, n)));
    const numbers = kept.map((l) => Number(/line (\d+)$/.exec(l)![1]));
    // What is kept is the newest lines, whole and in order, up to the last one written.
    expect(numbers.at(-1)).toBe(99);
    expect(numbers).toEqual(numbers.map((_, i) => numbers[0]! + i));
    expect(numbers[0]).toBeGreaterThan(0);
    for (const line of kept) expect(line).toMatch(new RegExp(`${LINE_START.source}INFO  serve\\[${process.pid}\\] line \\d+$`));
  });

  it('is written and rotated by several processes at once without losing a line, the current file included', async () => {
    const dir = tempDir();
    const writers = ['a', 'b', 'c', 'd'];
    // Small files and room for all of them: every line written must be found, once.
    await Promise.all(
      writers.map((tag) => run(process.execPath, ['--import', 'tsx', join(ROOT, 'test/helpers/logWriter.ts'), dir, 'worker', '300', tag, '4000', '400'], { cwd: ROOT })),
    );
    const files = readdirSync(dir);
    // A writer that finds another rotating goes on into the current file, so files may pass the cap a little.
    expect(files.length).toBeGreaterThan(10);
    expect(files.filter((f) => f.endsWith('.lock'))).toEqual([]);
    const all = files.flatMap((f) => linesOf(join(dir, f)));
    for (const line of all) expect(line).toMatch(new RegExp(`${LINE_START.source}INFO  worker\\[\\d+\\] [a-d] line \\d+ x{40}$`));
    expect(all).toHaveLength(1_200);
    for (const tag of writers) {
      const mine = all.filter((l) => l.includes(`] ${tag} line `)).map((l) => Number(/line (\d+)/.exec(l)![1]));
      expect(new Set(mine).size).toBe(300);
    }
  });

  it('makes no data folder that is not there, says why, and writes what it held once the folder is made', () => {
    const missing = join(tempDir(), 'gone');
    const log = openLog({ dir: join(missing, 'logs'), name: 'cli' });
    log.warn('before the folder');
    expect(existsSync(missing)).toBe(false);
    expect(log.problem).toMatch(new RegExp(`^the log file ${join(missing, 'logs', 'cli.log')} could not be written \\(ENOENT`));
    mkdirSync(missing);
    log.warn('after it');
    expect(log.problem).toBeNull();
    expect(linesOf(join(missing, 'logs', 'cli.log')).map((l) => l.split('] ')[1])).toEqual(['before the folder', 'after it']);
  });

  it('keeps the levels at or above its threshold, info unless STUDIO_LOG_LEVEL says otherwise; a level that is none is refused', () => {
    const dir = tempDir();
    const write = (env: NodeJS.ProcessEnv, name: string) => {
      const log = openLog({ dir, name, env });
      log.error('an error');
      log.warn('a warning');
      log.info('news');
      log.debug('detail');
      return linesOf(join(dir, `${name}.log`)).map((l) => l.replace(LINE_START, '').split(' ')[0]);
    };
    expect(write({}, 'plain')).toEqual(['ERROR', 'WARN', 'INFO']);
    expect(write({ STUDIO_LOG_LEVEL: 'debug' }, 'debug')).toEqual(['ERROR', 'WARN', 'INFO', 'DEBUG']);
    expect(write({ STUDIO_LOG_LEVEL: 'WARN' }, 'quiet')).toEqual(['ERROR', 'WARN']);
    expect(() => openLog({ dir, name: 'x', env: { STUDIO_LOG_LEVEL: 'verbose' } })).toThrow(LogSettingRefused);
    expect(() => openLog({ dir, name: 'x', env: { STUDIO_LOG_LEVEL: 'verbose' } })).toThrow('STUDIO_LOG_LEVEL must be one of error, warn, info, debug, not "verbose"; or leave it unset for info');
  });

  it('shows at the terminal only from the level asked, as the terminal showed it before; the file has them all, one line each', () => {
    const dir = tempDir();
    const shown: string[] = [];
    const log = openLog({ dir, name: 'serve' }).echoing((l) => shown.push(l), 'warn', 'studio: ');
    log.info('serving on port 1');
    log.warn('port 2, used last time, is not free');
    log.error(new Error('it broke').stack!);
    expect(shown[0]).toBe('studio: port 2, used last time, is not free');
    // The terminal shows a stack on its lines, as before; the file keeps an entry to one line.
    expect(shown[1]).toMatch(/^studio: Error: it broke\n {4}at /);
    expect(shown).toHaveLength(2);
    const lines = linesOf(join(dir, 'serve.log'));
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatch(/ERROR serve\[\d+\] Error: it broke\\n {4}at .*\\n {4}at /);
  });

  it('starts a line on its own after a write a full disk cut short, and keeps only the start of a very long entry', () => {
    const dir = tempDir();
    // What another process left of its line when the disk filled.
    writeFileSync(join(dir, 'worker.log'), '2026-12-02T13:01:51.899Z INFO  worker[4199] ta');
    const log = openLog({ dir, name: 'worker' });
    log.info('next');
    log.info('x'.repeat(MAX_ENTRY + 500));
    const lines = linesOf(join(dir, 'worker.log'));
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/ INFO  worker\[\d+\] next$/);
    expect(lines[2]).toMatch(new RegExp(`x{${MAX_ENTRY}}… \\(500 more characters left out\\)$`));
  });

  it('cuts a line of a million characters in time that grows with its length, not its square', () => {
    const redaction = new Redaction({});
    // Unbounded, the address pattern took 0.7 s over 32,000 characters of "a.a.a…" and minutes over a million.
    for (const text of ['a.'.repeat(500_000), 'http://'.repeat(150_000), `Key ${'a1'.repeat(500_000)}`, `"prompt": "${'b'.repeat(1_000_000)}`]) {
      const started = performance.now();
      redaction.cut(text);
      expect(performance.now() - started).toBeLessThan(3_000);
    }
  });

  it('gives the last lines of every process writing the folder, in time order, rotated files included', () => {
    const dir = tempDir();
    let now = Date.parse('2025-05-01T10:00:00Z');
    const clock = () => (now += 1_000);
    const a = openLog({ dir, name: 'desktop', clock, limits: { maxBytes: 400, keep: 3 } });
    const b = openLog({ dir, name: 'engine', clock, limits: { maxBytes: 400, keep: 3 } });
    for (let i = 0; i < 30; i++) (i % 3 === 0 ? b : a).info(`entry ${i}`);
    expect(existsSync(join(dir, 'desktop.log.1'))).toBe(true);
    expect(a.tail(12).map((l) => /entry (\d+)$/.exec(l)![1])).toEqual(['18', '19', '20', '21', '22', '23', '24', '25', '26', '27', '28', '29']);
    expect(b.tail(500)).toHaveLength(a.tail(500).length);
  });
});

describe('what is cut from every line', () => {
  const FAL = 'a1b2c3d4-e5f6-4789-a012-b3c4d5e6f789:0123456789abcdef0123456789abcdef';
  const ODD = 'el"key/with+odd=chars1234';
  const PASSWORD = 'hunter2-s3cret';

  it('every key the studio holds, as it is, URL-encoded, JSON-escaped, in base64 headers, and its parts', () => {
    const redaction = new Redaction({ REPLICATE_API_TOKEN: 'r8tokenWithoutItsShape99', HOME: '/home/ann' });
    redaction.hold(() => [FAL, ODD, PASSWORD]);
    const [id, secret] = FAL.split(':') as [string, string];
    const basic = Buffer.from(`ann:${PASSWORD}`).toString('base64');
    const lines = [
      `Authorization: Key ${FAL}`,
      `fal answered: invalid key ${secret}`,
      `key id ${id} refused`,
      `https://fal.run/x?fal_key=${encodeURIComponent(FAL)}`,
      `https://fal.run/x?k=${encodeURIComponent(FAL).replace(/%3A/g, '%3a')}`,
      JSON.stringify({ header: `Key ${FAL}`, other: ODD }),
      `Authorization: Basic ${basic}`,
      `echo ${Buffer.from(`Key ${FAL}`).toString('base64url')}`,
      `x${Buffer.from(`zz${FAL}`).toString('base64')}`,
      `the token r8tokenWithoutItsShape99 of the environment`,
      `postgres://ann:${PASSWORD}@db:5432/studio`,
    ];
    for (const line of lines) {
      const out = redaction.cut(line);
      expect(out, line).toContain('[key]');
      for (const form of [...secretForms(FAL), ...secretForms(ODD), ...secretForms(PASSWORD), 'r8tokenWithoutItsShape99']) expect(out, line).not.toContain(form);
      expect(out).not.toContain(secret.slice(0, 12));
    }
    // The home folder is no key: a path stays as it is.
    expect(redaction.cut('the data folder /home/ann/.config/take-studio')).toBe('the data folder /home/ann/.config/take-studio');
  });

  it('a key saved while the studio runs is cut from the next line', () => {
    const held: string[] = [];
    const redaction = new Redaction({});
    redaction.hold(() => held);
    expect(redaction.cut('saved zq-personal-9981')).toBe('saved zq-personal-9981');
    held.push('zq-personal-9981');
    expect(redaction.cut('saved zq-personal-9981')).toBe('saved [key]');
  });

  it("a key another process saves in settings.json is cut from a command's next line, one as long too, and a prompt kept once asked for", () => {
    const dir = tempDir();
    const log = cliLog(dir, 'serve', undefined);
    log.info('sent with zq-personal-9981 for a red fox');
    updateSettings(dir, (raw) => {
      raw.providers = { fal: { key: 'zq-personal-9981' } };
    });
    log.info('sent with zq-personal-9981');
    // A file of the same size, written within the same moment as the last.
    updateSettings(dir, (raw) => {
      raw.providers = { fal: { key: 'zq-personal-5517' } };
    });
    log.info('sent with zq-personal-5517 {"prompt":"a red fox"}');
    updateSettings(dir, (raw) => {
      raw.logging = { prompts: true };
    });
    log.info('sent with zq-personal-5517 {"prompt":"a red fox"}');
    expect(linesOf(join(dir, 'logs', 'serve.log')).map((l) => l.slice(l.indexOf('] ') + 2))).toEqual([
      'sent with zq-personal-9981 for a red fox',
      'sent with [key]',
      'sent with [key] {"prompt":"[prompt]"}',
      'sent with [key] {"prompt":"a red fox"}',
    ]);
  });

  it('keys it does not hold, by their shape, and leaves ordinary words alone', () => {
    const cut: [string, string][] = [
      ['sk-proj-AbCdEfGhIjKlMnOpQrStUv123 refused', '[key] refused'],
      ['key sk_0123456789abcdef0123456789abcdef0123456789abcdef', 'key [key]'],
      ['REPLICATE_API_TOKEN=r8_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789a', 'REPLICATE_API_TOKEN=[key]'],
      ['3f2b0c1d-1111-4222-8333-944455566677:abcdef0123456789abcdef0123456789 is fal', '[key] is fal'],
      ['Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc123', 'Authorization: Bearer [key]'],
      ['Authorization: Token 0a1b2c3d4e5f6a7b8c9d', 'Authorization: Token [key]'],
      ['x-api-key: abc123def456 xi-api-key=zz9', 'x-api-key: [key] xi-api-key=[key]'],
      ['{"api_key":"abc","password":"pw1"}', '{"api_key":"[key]","password":"[key]"}'],
      ['open http://127.0.0.1:4100/#token=abcdef123456', 'open http://127.0.0.1:4100/#token=[key]'],
      ['https://bucket.example/f.png?X-Amz-Signature=abc123&X-Amz-Credential=AKIA/x', 'https://bucket.example/f.png?X-Amz-Signature=[key]&X-Amz-Credential=[key]'],
      ['postgres://ann:pw@db:5432/studio', 'postgres://ann:[key]@db:5432/studio'],
    ];
    for (const [line, expected] of cut) expect(cutKeyShapes(line)).toBe(expected);
    for (const plain of [
      'fix the fal key in Settings, or in FAL_KEY',
      'task 12: requeued (nothing had been sent)',
      'Bearer authentication failed',
      'serving http://127.0.0.1:8080/ on the data folder /tmp/x',
      'Key frames: 24',
    ]) {
      expect(cutKeyShapes(plain)).toBe(plain);
    }
  });

  it('prompts, in a JSON body, escaped JSON and a query, unless STUDIO_LOG_PROMPTS=1 or settings ask for them', () => {
    const line = `fal answered {"detail":[{"loc":["body","prompt"],"input":"a red fox"}],"prompt":"a red fox","seed":4} and "{\\"text\\":\\"At dawn\\"}" ?prompt=a+red+fox&seed=4`;
    const cut = `fal answered {"detail":[{"loc":["body","prompt"],"input":"[prompt]"}],"prompt":"[prompt]","seed":4} and "{\\"text\\":\\"[prompt]\\"}" ?prompt=[prompt]&seed=4`;
    expect(cutPromptFields(line)).toBe(cut);
    expect(new Redaction({}).cut(line)).toBe(cut);
    expect(new Redaction({ STUDIO_LOG_PROMPTS: '1' }).cut(line)).toBe(line);
    let asked = false;
    const redaction = new Redaction({});
    redaction.logPromptsWhen(() => asked);
    expect(redaction.cut(line)).toBe(cut);
    asked = true;
    expect(redaction.cut(line)).toBe(line);
    expect(parseSettings({}).logging).toEqual({ prompts: false });
    expect(parseSettings({ logging: { prompts: true } }).logging).toEqual({ prompts: true });
    expect(() => parseSettings({ logging: { prompts: 'yes' } })).toThrow(new SettingsError('settings: logging.prompts must be true or false, not "yes"'));
    expect(() => parseSettings({ logging: { level: 'debug' } })).toThrow(new SettingsError('settings: logging has no field "level"; it takes only prompts'));
  });

  it("a task's own prompts, whole, escaped or quoted in part, from a line about that task", async () => {
    const prompt = 'a red fox asleep in fresh snow at dawn, soft golden light';
    const input = { prompt, seed: 3, image_url: 'https://x/y.png', nested: { text: 'At dawn, the fox wakes.' }, idea: 'ok' };
    expect(promptsIn(input)).toEqual([prompt, 'At dawn, the fox wakes.']);
    expect(cutPrompts(`refused "${prompt}"`, [prompt])).toBe('refused "[prompt]"');
    expect(cutPrompts(`refused: prompt 'a red fox asleep in fresh snow at d…' is banned`, [prompt])).toBe(`refused: prompt '[prompt]…' is banned`);
    expect(cutPrompts(`said ${JSON.stringify({ p: 'say "hi" to the fox at the gate' }).slice(1, -1)}`, ['say "hi" to the fox at the gate'])).toBe('said "p":"[prompt]"');
    // Ordinary words the prompt shares with the line stay.
    expect(cutPrompts('task 4: the fox image is ready at dawn', [prompt])).toBe('task 4: the fox image is ready at dawn');

    const written: string[] = [];
    let reads = 0;
    const lines = taskLines(
      (m) => written.push(m),
      async (id) => {
        reads++;
        if (id === 9) throw new Error('the database is locked');
        return { prompt };
      },
      () => false,
    );
    lines.log(`task 4: fal answered "${prompt}" with 500`);
    lines.log('engine paused: the database is locked; retrying');
    lines.log('task 9: status stream broke');
    await lines.settled();
    expect(written).toEqual([
      'task 4: fal answered "[prompt]" with 500',
      'engine paused: the database is locked; retrying',
      'task 9: (a line of this task is left out: its prompt could not be read to cut it out: the database is locked)',
    ]);
    expect(reads).toBe(2);
    const allowed = taskLines((m) => written.push(m), async () => ({ prompt }), () => true);
    allowed.log(`task 4: "${prompt}"`);
    await allowed.settled();
    expect(written.at(-1)).toBe(`task 4: "${prompt}"`);
  });
});

describe('where the CLI and serve write', () => {
  it('every command into <data>/logs/cli.log, its name but not its arguments, and why it was refused; a data folder that is not there stays so', async () => {
    const dir = tempDir();
    const board = join(dir, 'fox.json');
    writeFileSync(board, JSON.stringify({ scenes: [{ id: 'dawn', imagePrompt: 'a secret plan about a fox' }] }));
    expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', board)).code).toBe(0);
    expect((await cli(dir, 'pick', 'Fox', 'dawn', 'one')).code).toBe(2);
    const lines = linesOf(join(dir, 'logs', 'cli.log'));
    expect(lines.map((l) => l.replace(LINE_START, ''))).toEqual([
      `INFO  cli[${process.pid}] studio storyboard`,
      `INFO  cli[${process.pid}] studio pick`,
      expect.stringMatching(new RegExp(`^INFO  cli\\[${process.pid}\\] refused: TAKE must be a whole number`)),
    ]);
    expect(lines.join('\n')).not.toContain('secret plan');
    const missing = join(dir, 'nothing-here');
    expect((await cli(missing, 'tasks')).err).toMatch(/^studio: there is no studio data in /);
    expect(existsSync(missing)).toBe(false);
  });

  it('serve into <data>/logs/serve.log, showing only its warnings at the terminal, as before', async () => {
    const dir = tempDir();
    const first = startStudio(dir, ['serve', '--no-open']);
    await until(() => /Open (\S+)/.test(first.stdout()), 20_000);
    const port = Number(/:(\d+)\//.exec(first.stdout())![1]);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    // The port it had is taken meanwhile: the next start says so at the terminal, and takes another.
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(port, '127.0.0.1', () => r()));
    try {
      const second = startStudio(dir, ['serve', '--no-open']);
      await until(() => /Open (\S+)/.test(second.stdout()), 20_000);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      expect(first.stderr()).toBe('');
      expect(second.stderr()).toMatch(new RegExp(`^studio: port ${port}, used last time, is not free \\(.*\\); taking another, so a tab left open needs the new address\\n$`));
    } finally {
      squatter.close();
    }
    const lines = linesOf(join(dir, 'logs', 'serve.log')).map((l) => l.replace(LINE_START, ''));
    expect(lines.filter((l) => l.startsWith('INFO ') && l.includes('] serving http://127.0.0.1:'))).toHaveLength(2);
    expect(lines.some((l) => /^WARN  serve\[\d+\] port \d+, used last time, is not free/.test(l))).toBe(true);
    expect(lines.join('\n')).not.toMatch(/#token=[^[]/);
  });
});

describe('a prompt that a provider quotes back', () => {
  const PROMPT = 'a red fox asleep in fresh snow at dawn, soft golden light';
  let media: Awaited<ReturnType<typeof realMedia>>;
  beforeAll(async () => {
    media = await realMedia();
  }, 60_000);

  /**
   * fal's status stream fails with a detail quoting the input, which the engine logs ("task N: status stream: …; polling
   * instead", main/engine/poller.ts) before it polls and collects the result as usual.
   */
  async function workerLog(env: Record<string, string>) {
    const [sqlite] = storeKinds();
    const { dataDir, env: keys } = await paidStudio(
      (ledger) => {
        const fal = falQueue(ledger, media.png);
        return (req, res) =>
          req.path.includes('/status/stream') ? send(res, 500, { detail: `the runner failed on '${PROMPT}': out of memory` }) : fal(req, res);
      },
      sqlite!,
    );
    const id = await enqueueIn(dataDir, falImage({ prompt: PROMPT }), 'Logs');
    const worker = await runStudio(dataDir, ['worker', '--until-idle'], { ...keys, ...env });
    expect(worker.code, worker.stderr).toBe(0);
    expect((await readTask(dataDir, id)).task.status).toBe('SUCCEEDED');
    return { file: readFileSync(join(dataDir, 'logs', 'worker.log'), 'utf8'), stderr: worker.stderr, id, key: keys.FAL_KEY };
  }

  it('is cut from the log and the terminal by default, and kept when asked for', async () => {
    const { file, stderr, id, key } = await workerLog({});
    const line = new RegExp(`WARN  worker\\[\\d+\\] task ${id}: status stream: fal had a problem on its side \\(HTTP 500: the runner failed on '\\[prompt\\]': out of memory\\); polling instead`);
    expect(file).toMatch(line);
    expect(file).toMatch(/INFO  worker\[\d+\] started as /);
    expect(stderr).toContain(`worker: task ${id}: status stream: fal had a problem on its side (HTTP 500: the runner failed on '[prompt]': out of memory); polling instead`);
    for (const text of [file, stderr]) {
      expect(text).not.toContain('red fox asleep');
      expect(text).not.toContain(key);
    }
    const asked = await workerLog({ STUDIO_LOG_PROMPTS: '1' });
    expect(asked.file).toContain(`task ${asked.id}: status stream: fal had a problem on its side (HTTP 500: the runner failed on '${PROMPT}': out of memory)`);
  });
});
