import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimateCost } from '../main/engine/estimator.ts';
import { estimateFromCatalogue } from '../main/pricing/catalogue.ts';
import { OpenAiAdapter } from '../main/providers/openai.ts';
import { cli } from './helpers/cli.ts';
import { writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

// gpt-4o-mini-tts is billed by audio output tokens, which nothing documented lets the studio count before the
// request (developers.openai.com/api/docs/models/gpt-4o-mini-tts gives only the per-token prices): its price is
// unknown before a request, which is what these tests need. Nothing is sent: Generate only enqueues.
const UNPRICED = { provider: 'openai', model: 'gpt-4o-mini-tts' };

function setUp(): { dir: string; digest: () => string; unpricedTasks: () => { cost_estimated: number | null }[] } {
  const dir = tempDir();
  const board = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'examples', 'fox.storyboard.json'), 'utf8'));
  board.steps.speech = UNPRICED;
  writeFileSync(join(dir, 'board.json'), JSON.stringify(board));
  writeSettings(dir, { providers: { openai: { key: 'sk-test-not-sent', baseUrl: 'http://127.0.0.1:9' } } });
  const db = join(dir, 'studio.db');
  return {
    dir,
    digest: () => createHash('sha256').update(readFileSync(db)).digest('hex'),
    unpricedTasks: () => {
      const read = new Database(db, { readonly: true });
      try {
        return read.prepare(`SELECT cost_estimated FROM tasks WHERE model = ?`).all(UNPRICED.model) as { cost_estimated: number | null }[];
      } finally {
        read.close();
      }
    },
  };
}

describe('a step whose price is unknown', () => {
  it('has no catalogue price, so the test below means what it says', () => {
    expect(estimateFromCatalogue(UNPRICED.provider, UNPRICED.model, 'speech', { text: 'At dawn, the fox wakes.' })).toBeNull();
  });

  it('is shown as "price unknown", never counted as 0, and a budgeted Generate refuses it, writing nothing', async () => {
    const { dir, digest, unpricedTasks } = setUp();
    expect((await cli(dir, 'storyboard', 'create', 'Film', '--file', join(dir, 'board.json'))).code).toBe(0);
    expect((await cli(dir, 'budget', 'Film', '5')).code).toBe(0);

    const estimate = await cli(dir, 'estimate', 'Film');
    expect(estimate.code).toBe(0);
    expect(estimate.out).toMatch(/speech\S*\s+new\s+openai\s+gpt-4o-mini-tts\s+price unknown/);
    expect(estimate.out).toMatch(/New steps: about \d+\.\d{2,6} USD, plus 2 step\(s\) of unknown price, not counted\./);
    expect(estimate.out).toContain('need "--confirm-unpriced"');

    const before = digest();
    const refused = await cli(dir, 'generate', 'Film');
    expect(refused.code).toBe(2);
    expect(refused.err).toBe(
      'studio: 2 steps have no known price (openai gpt-4o-mini-tts), so this project\'s budget cannot be checked for them; nothing was enqueued. ' +
        'Set a price in settings ("prices"), or run "studio generate Film --confirm-unpriced".',
    );
    expect(digest()).toBe(before);

    const confirmed = await cli(dir, 'generate', 'Film', '--confirm-unpriced');
    expect(confirmed.code).toBe(0);
    expect(unpricedTasks()).toEqual([{ cost_estimated: null }, { cost_estimated: null }]);
    // The next estimate says that what the project has spent leaves those two out.
    expect((await cli(dir, 'estimate', 'Film')).out).toMatch(/Already spent or possibly charged: \d+\.\d{2,6} USD \(and 2 earlier step\(s\) of unknown price, not in that figure\)(, and \d+\.\d{2,6} USD simulated \(never charged\))?\./);
  });

  it('takes the price the person sets for the model, and says so', async () => {
    const { dir } = setUp();
    writeSettings(dir, { providers: { openai: { key: 'sk-test-not-sent', baseUrl: 'http://127.0.0.1:9' } }, prices: { 'openai gpt-4o-mini-tts': 0.02 } });
    expect((await cli(dir, 'storyboard', 'create', 'Film', '--file', join(dir, 'board.json'))).code).toBe(0);
    expect((await cli(dir, 'budget', 'Film', '5')).code).toBe(0);
    const estimate = await cli(dir, 'estimate', 'Film');
    expect(estimate.out).toContain('your price for openai gpt-4o-mini-tts: 0.02 USD per request (settings)');
    expect(estimate.out).not.toContain('unknown price');
    expect((await cli(dir, 'generate', 'Film')).code).toBe(0);
  });

  it('is priced by the engine too, at the price the person set, when the task reaches the boundary', async () => {
    const openai = new OpenAiAdapter({ key: 'sk-test-not-sent', baseUrl: 'http://127.0.0.1:9' });
    const request = openai.prepare({ kind: 'speech', model: UNPRICED.model, input: { text: 'At dawn.' } });
    expect(await estimateCost(openai, request)).toBeNull();
    expect(await estimateCost(openai, request, { 'openai gpt-4o-mini-tts': 0.02 })).toEqual({
      cost: 20_000,
      currency: 'USD',
      source: 'your price for openai gpt-4o-mini-tts: 0.02 USD per request (settings)',
    });
  });

  it('refuses a price that is not an amount, naming it', async () => {
    const { dir } = setUp();
    writeSettings(dir, { prices: { 'openai gpt-4o-mini-tts': 'cheap' } });
    const result = await cli(dir, 'storyboard', 'create', 'Film', '--file', join(dir, 'board.json'));
    expect(result.err).toBe('studio: settings: prices["openai gpt-4o-mini-tts"] must be an amount in USD per request from 0 to 1000, not "cheap"');
  });
});
