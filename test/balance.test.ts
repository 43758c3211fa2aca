import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { send, startFake } from './fakes/server.ts';
import { cli } from './helpers/cli.ts';
import { writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * ElevenLabs' subscription as GET /v1/user/subscription answers it (elevenlabs-docs fern/apis/api/openapi.json,
 * SubscriptionResponseModel: character_count, character_limit, next_character_count_reset_unix).
 */
async function elevenLabsAccount(used: number, limit: number) {
  return startFake((req, res) => {
    if (req.method === 'GET' && req.path === '/v1/user/subscription') {
      return send(res, 200, { tier: 'creator', character_count: used, character_limit: limit, next_character_count_reset_unix: 1_767_225_600, status: 'active' });
    }
  });
}

/** The example storyboard with its narration spoken by ElevenLabs Flash (half a credit a character). */
async function project(dir: string, url: string) {
  const board = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'examples', 'fox.storyboard.json'), 'utf8'));
  board.steps.speech = { provider: 'elevenlabs', model: 'eleven_flash_v2_5', options: { voice_id: 'JBFqnCBsd6RMkjVDRZzb' } };
  writeFileSync(join(dir, 'board.json'), JSON.stringify(board));
  writeSettings(dir, { providers: { elevenlabs: { key: 'el-test-not-sent', baseUrl: url } } });
  expect((await cli(dir, 'storyboard', 'create', 'Film', '--file', join(dir, 'board.json'))).code).toBe(0);
  // "At dawn, the fox wakes." and "It listens for what it cannot see." at half a credit a character.
  return Math.ceil((23 + 34) * 0.5);
}

describe('the balance beside the estimate', () => {
  it('shows what ElevenLabs says the account has used and may use, and what the speech steps need', async () => {
    const account = await elevenLabsAccount(1_200, 10_000);
    const dir = tempDir();
    const needed = await project(dir, account.url);
    const estimate = await cli(dir, 'estimate', 'Film');
    expect(estimate.out).toContain(`elevenlabs: 1200 of 10000 credits used this period, counted afresh on 2026-01-01; these steps need about ${needed}.`);
    expect(estimate.out).not.toContain('Warning');
    expect(account.count('POST', /./)).toBe(0);
  });

  it('warns when the Generate would pass the limit', async () => {
    const account = await elevenLabsAccount(9_990, 10_000);
    const dir = tempDir();
    const needed = await project(dir, account.url);
    const estimate = await cli(dir, 'estimate', 'Film');
    expect(estimate.out).toContain(`Warning: elevenlabs: 9990 of 10000 credits used this period, counted afresh on 2026-01-01; these steps need about ${needed}, ${9_990 + needed - 10_000} more than is left.`);
  });

  it('says where a provider tells an API key nothing of its balance', async () => {
    const dir = tempDir();
    const board = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'examples', 'fox.storyboard.json'), 'utf8'));
    board.steps.image = { provider: 'replicate', model: 'black-forest-labs/flux-schnell' };
    writeFileSync(join(dir, 'board.json'), JSON.stringify(board));
    writeSettings(dir, { providers: { replicate: { key: 'r8-test-not-sent', baseUrl: 'http://127.0.0.1:9' } } });
    expect((await cli(dir, 'storyboard', 'create', 'Film', '--file', join(dir, 'board.json'))).code).toBe(0);
    expect((await cli(dir, 'estimate', 'Film')).out).toContain('replicate: Replicate tells an API key nothing of its balance; check it on its own site.');
  });
});
