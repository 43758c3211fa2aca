import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCall, IpcRefused } from '../app/ipcValidation.ts';
import { diagnosticsText, LOG_LINES, type DiagnosticsFacts } from '../main/api/diagnosticsCalls.ts';
import { logsDir, openLog } from '../main/logging/logger.ts';
import { openRuntime } from '../main/runtime.ts';
import { FAL_MODEL } from './fakes/providers.ts';
import { enqueueIn } from './helpers/paidStudio.ts';
import { writeSettings } from './helpers/processes.ts';
import { hostForTest } from './helpers/running.ts';
import { sqlOf } from './helpers/sql.ts';
import { apiCaller } from './helpers/studioApi.ts';
import { tempDir } from './helpers/tmp.ts';

const VERSION = (JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
const FAL_KEY = 'a1b2c3d4-e5f6-4789-a012-b3c4d5e6f789:0123456789abcdef0123456789abcdef';
const LATE_KEY = 'zq-late-replicate-key-31337';

/** The lines of the text's section `title`, up to the next one. */
function section(text: string, title: string): string[] {
  const lines = text.split('\n');
  const from = lines.findIndex((l) => l.startsWith(`========= ${title}`));
  const to = lines.findIndex((l, i) => i > from && l.startsWith('========= '));
  return lines.slice(from + 1, to < 0 ? undefined : to).filter(Boolean);
}

/** A data folder with a fal key in settings, two steps waiting (the engine may run none) and one whose outcome is unknown. */
async function folderWithWork() {
  const dir = tempDir();
  // fal's address is a closed port: the unknown outcome's lookups reach nothing, so it stays unknown.
  writeSettings(dir, { engine: { tickMs: 100, concurrency: { image: 0 } }, providers: { fal: { key: FAL_KEY, baseUrl: 'http://127.0.0.1:9' } } });
  const fal = { kind: 'image' as const, provider: 'fal', model: FAL_MODEL, input: { prompt: 'a fox' } };
  const ids = [await enqueueIn(dir, fal, 'Fox'), await enqueueIn(dir, fal, 'Fox'), await enqueueIn(dir, fal, 'Fox')];
  sqlOf(dir).prepare(`UPDATE tasks SET status = 'OUTCOME_UNKNOWN', charged = 'maybe', submit_started_at = 1, finished_at = 1 WHERE id = ?`).run(ids[2]);
  return dir;
}

describe('Copy diagnostics', () => {
  it('over the API: versions, folders, the engine and its tasks, the last 200 log lines, with no key in it', async () => {
    const dir = await folderWithWork();
    const logger = openLog({ dir: logsDir(dir), name: 'serve' });
    const host = await hostForTest(dir, { logger });
    const call = apiCaller(() => host);
    // Logged before the studio holds it (pasted somewhere, say): only the copy can cut it.
    logger.warn(`the person pasted ${LATE_KEY} into a prompt`);
    expect((await call('saveSettings', { key: { provider: 'replicate', value: LATE_KEY } })).status).toBe(200);
    for (let i = 0; i < 250; i++) logger.info(`entry ${i} sent with Key ${FAL_KEY} and {"prompt":"a secret fox"}`);

    const { status, result: text } = await call<string>('diagnostics');
    expect(status).toBe(200);
    expect(text).toMatch(/^Take Studio diagnostics, \d{4}-\d\d-\d\dT[\d:.]+Z\nKeys are cut out of this text, and prompts out of the log lines\. Read it before you send it\.\n/);
    expect(section(text, 'Versions')).toEqual([`Take Studio: ${VERSION}`, `Node: ${process.versions.node}`, `V8: ${process.versions.v8}`, expect.stringMatching(/^OS: Linux \S+ \(linux, \w+\)$/)]);
    expect(section(text, 'Folders')).toEqual([`Data folder: ${dir}`, `Logs: ${join(dir, 'logs')}`, `Media: ${dir}`, `Database: ${join(dir, 'studio.db')}`]);
    expect(section(text, 'Engine')).toEqual([
      'Running: running',
      'Paused: no',
      'Paid requests in flight in this process: no',
      'Tasks: PENDING 2, OUTCOME_UNKNOWN 1',
      'Needing your decision: 1',
      'Prompts written to the logs: no',
    ]);
    const lines = section(text, `The last ${LOG_LINES} log lines`);
    expect(lines).toHaveLength(200);
    expect(lines.at(-1)).toMatch(/INFO  serve\[\d+\] entry 249 sent with Key \[key\] and \{"prompt":"\[prompt\]"\}$/);
    const numbered = lines.map((l) => /entry (\d+) /.exec(l)?.[1]).filter(Boolean).map(Number);
    expect(numbered).toEqual(numbered.map((_, i) => 250 - numbered.length + i));
    for (const secret of [FAL_KEY, ...FAL_KEY.split(':'), LATE_KEY]) expect(text).not.toContain(secret);
    expect(text).not.toContain('secret fox');
    // The file keeps what was written before the key was held; the copy is what a person sends.
    expect(readFileSync(join(dir, 'logs', 'serve.log'), 'utf8')).toContain(LATE_KEY);

    await host.stop();
    expect(() => checkCall('diagnostics', [], { url: 'app://studio/index.html', isMainFrame: true })).not.toThrow();
    expect(() => checkCall('diagnostics', ['more'], { url: 'app://studio/index.html', isMainFrame: true })).toThrow(IpcRefused);
  });

  it('from a process that keeps no log and has not started its engine, says so', async () => {
    const dir = await folderWithWork();
    const runtime = await openRuntime(dir, { mediaUrl: (id) => `/media/${id}` });
    try {
      const text = await runtime.service.diagnostics();
      expect(section(text, 'Folders')).toContain('Logs: none kept by this process');
      expect(section(text, 'Engine')[0]).toBe('Running: not started');
      expect(section(text, `The last ${LOG_LINES} log lines`)).toEqual(['(this process keeps no log file)']);
      for (const secret of FAL_KEY.split(':')) expect(text).not.toContain(secret);
    } finally {
      await runtime.stop();
    }
  });

  it('names Electron and Chrome, the crash dumps, a pause and a log that cannot be written, where there are', () => {
    const facts: DiagnosticsFacts = {
      at: Date.parse('2025-05-01T10:00:00Z'),
      app: { name: 'Take Studio', version: '1.2.3' },
      versions: { electron: '45.5.0', chrome: '142.0.7444.0', node: '22.20.0', v8: '14.2' },
      os: 'Darwin 24.1.0 (darwin, arm64)',
      folders: [
        ['Data folder', '/Users/ann/Library/Application Support/take-studio'],
        ['Logs', '/Users/ann/Library/Logs/Take Studio'],
        ['Crash dumps', '/Users/ann/Library/Application Support/take-studio/Crashpad'],
      ],
      database: 'the team database at postgres://ann@db:5432/studio',
      engine: { state: 'running', paused: { reason: 'the disk is full', since: Date.parse('2025-05-01T09:59:00Z') }, paidWorkInFlight: true },
      tasks: { PENDING: 0, RUNNING: 1, SUBMITTED: 2, SUCCEEDED: 40, FAILED: 0, OUTCOME_UNKNOWN: 0, CANCELLED: 3 },
      promptsLogged: true,
      logNote: 'the log file /x/desktop.log could not be written (EACCES)',
      logLines: ['2025-05-01T09:59:59.000Z WARN  desktop[7] a line'],
    };
    expect(diagnosticsText(facts)).toBe(
      [
        'Take Studio diagnostics, 2025-05-01T10:00:00.000Z',
        'Keys are cut out of this text. Read it before you send it.',
        '',
        '========= Versions =========',
        'Take Studio: 1.2.3',
        'Electron: 45.5.0',
        'Chrome: 142.0.7444.0',
        'Node: 22.20.0',
        'V8: 14.2',
        'OS: Darwin 24.1.0 (darwin, arm64)',
        '',
        '========= Folders =========',
        'Data folder: /Users/ann/Library/Application Support/take-studio',
        'Logs: /Users/ann/Library/Logs/Take Studio',
        'Crash dumps: /Users/ann/Library/Application Support/take-studio/Crashpad',
        'Database: the team database at postgres://ann@db:5432/studio',
        '',
        '========= Engine =========',
        'Running: running',
        'Paused: yes, since 2025-05-01T09:59:00.000Z: the disk is full',
        'Paid requests in flight in this process: yes',
        'Tasks: RUNNING 1, SUBMITTED 2, SUCCEEDED 40, CANCELLED 3',
        'Needing your decision: 0',
        'Prompts written to the logs: yes (asked for in settings or STUDIO_LOG_PROMPTS)',
        '',
        '========= The last 200 log lines =========',
        '(the log file /x/desktop.log could not be written (EACCES))',
        '2025-05-01T09:59:59.000Z WARN  desktop[7] a line',
        '',
      ].join('\n'),
    );
  });
});
