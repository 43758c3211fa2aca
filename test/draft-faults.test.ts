import { describe, expect, it } from 'vitest';
import { runStudio, startStudio, untilIdle, writeSettings } from './helpers/processes.ts';
import { rowsOf, sqlOf } from './helpers/sql.ts';
import { tempDir } from './helpers/tmp.ts';
import { startResponsesStandIn, type DraftAnswer } from './fakes/openaiResponses.ts';

/** A draft that goes wrong at OpenAI: stopped by a signal, still queued at the deadline, cancelled, refused, over-long. */

const IDEA = 'A fox wakes at dawn in a snowy forest. It hunts a mouse under the snow. It misses and tumbles. At dusk it curls up, content.';
const ENGINE = { poll: { intervalMs: 100, maxIntervalMs: 200, deadlineMs: 2_000 } };

/** A request past its poll deadline is looked at once a minute (SLOW_POLL_MS); the test brings the next look forward. */
const lookNow = (dataDir: string) => sqlOf(dataDir).prepare(`UPDATE tasks SET next_attempt_at = 0 WHERE kind = 'draft'`).run();
const drafts = (dataDir: string) => rowsOf(dataDir, `SELECT * FROM tasks WHERE kind = 'draft' ORDER BY id`);
const scenes = (dataDir: string) => rowsOf(dataDir, `SELECT json FROM storyboards`).map((r) => JSON.parse(r.json).scenes as { imagePrompt: string }[]);

async function withOpenAi(answer: DraftAnswer, deadlineMs = ENGINE.poll.deadlineMs) {
  const dataDir = tempDir();
  const fake = await startResponsesStandIn(answer);
  writeSettings(dataDir, { providers: { openai: { key: 'sk-test', baseUrl: fake.url } }, engine: { poll: { ...ENGINE.poll, deadlineMs } } });
  return { dataDir, fake };
}

describe('a draft that does not simply finish', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('%s while OpenAI has it queued: the CLI exits at once, and a later run collects it at no charge', async (signal) => {
    const { dataDir, fake } = await withOpenAi('queued', 60_000);
    const first = startStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '3', '--with', 'openai']);
    // Asked about twice: sent, and OpenAI still has it queued.
    while (fake.polls() < 2) await new Promise((r) => setTimeout(r, 50));
    const sent = Date.now();
    first.child.kill(signal);
    expect(await first.exited).toBe(3);
    expect(Date.now() - sent).toBeLessThan(3_000);
    expect(first.stderr()).toMatch(/stopped by .*task 1 goes on at openai-responses; "studio draft" again collects it at no charge, and "studio cancel 1" stops it/);

    fake.answer('good');
    const again = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '3', '--with', 'openai']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/storyboard drafted from task 1 with 3 scene\(s\), revision 1/);
    expect(fake.charged).toHaveLength(1);
  }, 60_000);

  it('still queued past the poll deadline: the CLI says so and exits 3; "studio cancel" asks OpenAI to cancel it, and the same draft is not bought again unasked', async () => {
    const { dataDir, fake } = await withOpenAi('queued');
    const waited = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '3', '--with', 'openai']);
    expect(waited.code).toBe(3);
    expect(waited.stderr).toMatch(/had not finished the draft within the poll deadline \(2 s\): task 1 goes on at openai-responses/);

    const cancelled = await runStudio(dataDir, ['cancel', '1']);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(fake.cancelled).toEqual([fake.charged[0]]);
    // A cancelled response may still complete, and may be billed: it is followed to its end, never dropped.
    lookNow(dataDir);
    expect(await untilIdle(dataDir, {}, 30_000)).toBe(true);
    expect(drafts(dataDir)[0]).toMatchObject({ status: 'FAILED', charged: 'maybe' });
    const again = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '3', '--with', 'openai']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/task 1 drafted this very idea and failed after it was possibly paid for .* \(--again\)/);
    expect(fake.charged).toHaveLength(1);
  }, 60_000);

  it('a draft OpenAI answers "cancelled" and then completes anyway is collected, and put on the storyboard at no charge', async () => {
    const { dataDir, fake } = await withOpenAi('queued');
    expect((await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '3', '--with', 'openai'])).code).toBe(3);
    expect((await runStudio(dataDir, ['cancel', '1'])).code).toBe(0);
    fake.finishAnyway();
    fake.answer('good');
    lookNow(dataDir);
    expect(await untilIdle(dataDir, {}, 30_000)).toBe(true);
    expect(drafts(dataDir)[0]).toMatchObject({ status: 'SUCCEEDED' });
    const collected = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '3', '--with', 'openai']);
    expect(collected.code, collected.stderr).toBe(0);
    expect(fake.charged).toHaveLength(1);
  }, 60_000);

  it('a refusal is paid: its answer is kept and shown, the same draft again is refused, and --again buys it knowingly', async () => {
    const { dataDir, fake } = await withOpenAi('refusal');
    const made = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '3', '--with', 'openai']);
    expect(made.code).toBe(1);
    expect(made.stderr).toMatch(/what the model answered is kept: "studio draft Fox --show-answer 1"/);
    const shown = await runStudio(dataDir, ['draft', 'Fox', '--show-answer', '1']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/I can't help with that\./);
    expect(shown.stderr).toMatch(/not a storyboard the studio can use: the answer is not JSON/);

    const again = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '3', '--with', 'openai']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/task 1 drafted this very idea and failed after it was paid for .* \(--again\)/);
    expect(fake.charged).toHaveLength(1);

    fake.answer('good');
    const bought = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '3', '--with', 'openai', '--again']);
    expect(bought.code, bought.stderr).toBe(0);
    expect(fake.charged).toHaveLength(2);
  }, 60_000);

  it('an answer the storyboard reader refuses is kept with the reader\'s words, to mend and save by hand', async () => {
    const { dataDir } = await withOpenAi('bad');
    expect((await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '2', '--with', 'openai'])).code).toBe(1);
    const shown = await runStudio(dataDir, ['draft', 'Fox', '--show-answer', '1']);
    expect(JSON.parse(shown.stdout).scenes).toHaveLength(2);
    expect(shown.stderr).toMatch(/imagePrompt: is required.*studio storyboard create/);
  }, 60_000);

  it('an account out of credit (429 insufficient_quota) is said as such and not retried', async () => {
    const { dataDir, fake } = await withOpenAi('quota');
    const made = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '3', '--with', 'openai']);
    expect(made.code).toBe(1);
    expect(made.stderr).toMatch(/OpenAI is out of credit for this account.*insufficient_quota.*not retried/);
    expect(drafts(dataDir)[0]).toMatchObject({ status: 'FAILED', charged: 'no', attempts: 1 });
    expect(fake.seen.filter((s) => s.method === 'POST')).toHaveLength(1);
  }, 60_000);

  it('more scenes than asked: the first ones asked for are kept, and the person is told', async () => {
    const { dataDir } = await withOpenAi('many');
    const made = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '3', '--with', 'openai']);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/with 3 scene\(s\), revision 1\. The model wrote 150 scenes where 3 were asked for: the first 3 are kept/);
    expect(scenes(dataDir)[0]!.map((s) => s.imagePrompt)).toEqual(['a fox in scene 1', 'a fox in scene 2', 'a fox in scene 3']);
  }, 60_000);

  it('a prompt longer than any clip model takes is refused with the field named, and kept', async () => {
    const { dataDir } = await withOpenAi('long');
    const made = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '2', '--with', 'openai']);
    expect(made.code).toBe(1);
    expect(made.stderr).toMatch(/scene 1 imagePrompt: is 10000 characters; a scene's text is at most 2500/);
    expect(scenes(dataDir)).toEqual([]);
  }, 60_000);
});
