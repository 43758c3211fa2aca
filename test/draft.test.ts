import { describe, expect, it } from 'vitest';
import { runStudio, startStudio, whenStopped, writeSettings } from './helpers/processes.ts';
import { rowsOf } from './helpers/sql.ts';
import { tempDir } from './helpers/tmp.ts';
import { startResponsesStandIn, USAGE, type DraftAnswer } from './fakes/openaiResponses.ts';
import { KILL_POINTS } from './helpers/killPoints.ts';

const IDEA = 'A fox wakes at dawn in a snowy forest. It hunts a mouse under the snow. It misses and tumbles. At dusk it curls up, content.';

const drafts = (dataDir: string) => rowsOf(dataDir, `SELECT * FROM tasks WHERE kind = 'draft' ORDER BY id`);
const revision = (dataDir: string) => rowsOf(dataDir, `SELECT coalesce(max(revision), 0) AS r FROM storyboards`)[0]!.r as number;

async function withOpenAi(answer: DraftAnswer = 'good') {
  const dataDir = tempDir();
  const fake = await startResponsesStandIn(answer);
  writeSettings(dataDir, { providers: { openai: { key: 'sk-test', baseUrl: fake.url } } });
  return { dataDir, fake };
}

describe('a storyboard drafted from an idea', () => {
  it('with the simulator: priced first, drafted once, put on the storyboard, and never paid for again', async () => {
    const dataDir = tempDir();
    const priced = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '3', '--estimate']);
    expect(priced.code).toBe(0);
    expect(priced.stdout).toMatch(/Draft of 3 scene\(s\) with simulator sim-draft-1: about .* \(simulated, never charged\); catalogue: an estimate from the idea's length/);
    expect(drafts(dataDir)).toEqual([]);

    const made = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '3']);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/Fox: storyboard drafted from task 1 with 3 scene\(s\), revision 1/);
    const shown = JSON.parse((await runStudio(dataDir, ['storyboard', 'show', 'Fox', '--json'])).stdout);
    expect(shown.scenes.map((s: { narration: string }) => s.narration)).toEqual(['A fox wakes at dawn in a snowy forest.', 'It hunts a mouse under the snow.', 'It misses and tumbles. At dusk it curls up, content.']);

    // A storyboard is there now: a draft over it must say so.
    const again = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '3']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already has a storyboard \(revision 1\).*--replace/);

    const replaced = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '3', '--replace']);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.stdout).toMatch(/nothing: reused: task 1 drafted this idea already/);
    expect(replaced.stdout).toMatch(/revision 2/);
    expect(drafts(dataDir)).toHaveLength(1);
  }, 60_000);

  it('with OpenAI: a background response with a strict JSON schema, polled by its id, billed from its usage', async () => {
    const { dataDir, fake } = await withOpenAi();
    const made = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '4', '--with', 'openai']);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/with openai-responses gpt-4\.1-mini: about .*USD; catalogue: an estimate from the idea's length: about \d+ input tokens .* at most 1400 output tokens/);
    expect(fake.charged).toHaveLength(1);
    const sent = JSON.parse(fake.seen.find((s) => s.method === 'POST')!.body);
    expect(sent).toMatchObject({ model: 'gpt-4.1-mini', input: IDEA, background: true, store: true, max_output_tokens: 1400 });
    expect(sent.text.format).toMatchObject({ type: 'json_schema', name: 'storyboard', strict: true });
    expect(sent.text.format.schema.properties.scenes.items.required).toEqual(['imagePrompt', 'motionPrompt', 'narration', 'duration']);
    const [task] = drafts(dataDir);
    expect(task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', remote_request_id: fake.charged[0], cost_actual: Math.round(((USAGE.input_tokens * 0.4 + USAGE.output_tokens * 1.6) / 1e6) * 1e6) });
    expect(revision(dataDir)).toBe(1);

    const replaced = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--scenes', '4', '--with', 'openai', '--replace']);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(fake.charged).toHaveLength(1);
  }, 60_000);

  it.each<[DraftAnswer, RegExp]>([
    ['bad', /OpenAI answered with a storyboard the studio cannot use \(scene 1 \("scene-1"\) imagePrompt: is required\); it was paid for and nothing was put on the storyboard/],
    ['refusal', /OpenAI's model refused to draft this idea \("I can't help with that\."\); it was paid for/],
    ['incomplete', /OpenAI stopped the draft at its length cap before it was whole; it was paid for .* Ask for fewer scenes/],
  ])('an answer that is no usable storyboard (%s) fails the task as paid, and the storyboard is left as it was', async (answer, said) => {
    const { dataDir, fake } = await withOpenAi(answer);
    const made = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--with', 'openai']);
    expect(made.code).toBe(1);
    expect(made.stderr).toMatch(said);
    expect(drafts(dataDir)[0]).toMatchObject({ status: 'FAILED', charged: 'yes' });
    expect(drafts(dataDir)[0]!.cost_actual).toBeGreaterThan(0);
    expect(revision(dataDir)).toBe(0);
    expect(fake.charged).toHaveLength(1);
  }, 60_000);

  it.each(KILL_POINTS.filter(([, ends]) => ends === 'SUCCEEDED'))('killed at %s: the next run finishes the same draft (%s), paid %i time(s) in all', async (point, _ends, charges) => {
    const { dataDir, fake } = await withOpenAi();
    const first = startStudio(dataDir, ['draft', 'Fox', IDEA, '--with', 'openai'], { STUDIO_STOP_AT: point });
    await first.waitFor(new RegExp(`stopped at ${point}`));
    await whenStopped(first.child);
    first.child.kill('SIGKILL');
    await first.exited;
    // Once the response id is in hand (its answer's body: a background response names itself there), it is polled.
    if (point !== 'before-mark') expect(fake.charged).toHaveLength(1);

    const again = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--with', 'openai']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/storyboard drafted from task 1/);
    expect(fake.charged).toHaveLength(charges);
    expect(drafts(dataDir)[0]).toMatchObject({ remote_request_id: fake.charged[0] });
    expect(drafts(dataDir)).toHaveLength(1);
  }, 60_000);

  it('killed between the mark and the send: the outcome is unknown, nothing is sent again, and a new run says to decide it', async () => {
    const { dataDir, fake } = await withOpenAi();
    const first = startStudio(dataDir, ['draft', 'Fox', IDEA, '--with', 'openai'], { STUDIO_STOP_AT: 'after-mark' });
    await first.waitFor(/stopped at after-mark/);
    await whenStopped(first.child);
    first.child.kill('SIGKILL');
    await first.exited;

    const again = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--with', 'openai']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/draft task 1 did not finish: its outcome is unknown .*studio resolve 1/);
    const third = await runStudio(dataDir, ['draft', 'Fox', IDEA, '--with', 'openai']);
    expect(third.code).toBe(2);
    expect(third.stderr).toMatch(/task 1 drafted this idea and its outcome is unknown .* decide it first with "studio resolve 1"/);
    expect(fake.charged).toHaveLength(0);
    expect(revision(dataDir)).toBe(0);
  }, 60_000);
});
