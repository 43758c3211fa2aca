import { describe, expect, it } from 'vitest';
import { ElevenLabsAdapter } from '../../main/providers/elevenlabs.ts';
import { send, startFake } from '../fakes/server.ts';

const KEY = 'sk_0123456789abcdef0123';
const VOICE = '21m00Tcm4TlvDq8ikWAM';
const MODEL = 'eleven_multilingual_v2';
const task = { kind: 'speech' as const, model: MODEL, input: { text: 'Hello fox', voice_id: VOICE } };

/**
 * `character-cost` is "the number of characters used for billing" (elevenlabs-docs fern/apis/api/openapi.json):
 * a count. A header that is empty, blank or not a whole number says nothing about the bill, so the estimate
 * stands rather than a bill of 0 (Number('') is 0).
 */
describe('ElevenLabs: a billed figure only from a count it reported', () => {
  it.each(['', ' ', '9 credits', '0x10', '-3', '1e3'])('character-cost %j is no bill', async (cost) => {
    const fake = await startFake((req, res) => {
      if (req.method === 'POST') return send(res, 200, Buffer.from('mp3'), { 'content-type': 'audio/mpeg', 'request-id': 'req-xyz', 'character-cost': cost });
    });
    const el = new ElevenLabsAdapter({ key: KEY, baseUrl: fake.url });
    const sent = await el.submit(el.prepare(task), { idempotencyKey: 'k' });
    expect(sent.result!.costActual).toBeNull();
  });

  it('a history item without its character counts is no bill of 0', async () => {
    const item = { history_item_id: 'hist-1', request_id: 'req-xyz', voice_id: VOICE, model_id: MODEL, text: 'Hello fox', date_unix: 1_790_000_000, state: 'created' };
    const fake = await startFake((req, res) => {
      if (req.path === '/v1/history/hist-1') return send(res, 200, { ...item, character_count_change_from: null, character_count_change_to: null });
      if (req.path === '/v1/history/hist-2') return send(res, 200, { ...item, history_item_id: 'hist-2', character_count_change_from: '', character_count_change_to: 9 });
      if (req.path === '/v1/history/hist-3') return send(res, 200, { ...item, history_item_id: 'hist-3', character_count_change_from: 1000, character_count_change_to: 1009 });
    });
    const el = new ElevenLabsAdapter({ key: KEY, baseUrl: fake.url });
    for (const id of ['hist-1', 'hist-2']) {
      const polled = await el.poll({ requestId: id, model: MODEL, handle: null });
      expect(polled.state === 'succeeded' && polled.result.costActual).toBeNull();
    }
    const counted = await el.poll({ requestId: 'hist-3', model: MODEL, handle: null });
    expect(counted.state === 'succeeded' && counted.result.costActual).toMatchObject({ amount: 2_700 });
  });
});
