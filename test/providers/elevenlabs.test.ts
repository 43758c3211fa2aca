import { describe, expect, it } from 'vitest';
import { ElevenLabsAdapter } from '../../main/providers/elevenlabs.ts';
import { send, startFake, type Route } from '../fakes/server.ts';

const KEY = 'sk_0123456789abcdef0123';
const VOICE = '21m00Tcm4TlvDq8ikWAM';
const MODEL = 'eleven_multilingual_v2';

const item = {
  history_item_id: 'hist-1',
  request_id: 'req-xyz',
  voice_id: VOICE,
  model_id: MODEL,
  text: 'Hello fox',
  date_unix: 1_790_000_000,
  character_count_change_from: 1000,
  character_count_change_to: 1009,
  state: 'created',
};

/** ElevenLabs TTS returns audio with `request-id` and `character-cost` headers; history lists generations. */
const elevenlabs: Route = (req, res) => {
  if (req.method === 'POST' && req.path.startsWith(`/v1/text-to-speech/${VOICE}`)) {
    return send(res, 200, Buffer.from('mp3'), { 'content-type': 'audio/mpeg', 'request-id': 'req-xyz', 'character-cost': '9' });
  }
  if (req.path === '/v1/history/hist-1') return send(res, 200, item);
  if (req.path === '/v1/history/hist-1/audio') return send(res, 200, Buffer.from('mp3'), { 'content-type': 'audio/mpeg' });
  if (req.path.startsWith('/v1/history/')) return send(res, 404, { detail: { status: 'history_item_not_found', message: 'not found' } });
  if (req.path.startsWith('/v1/history')) return send(res, 200, { history: [item, { ...item, history_item_id: 'hist-2', text: 'Other' }], has_more: false });
};

const task = { kind: 'speech' as const, model: MODEL, input: { text: 'Hello fox', voice_id: VOICE } };

describe('ElevenLabs adapter', () => {
  it('bills the character-cost header at the catalogue price per character', async () => {
    const fake = await startFake(elevenlabs);
    const el = new ElevenLabsAdapter({ key: KEY, baseUrl: fake.url });
    const sent = await el.submit(el.prepare(task), { idempotencyKey: 'k' });
    expect(sent.requestId).toBe('req-xyz');
    expect(sent.result!.costActual).toEqual({ amount: 2_700, currency: 'USD' });
    expect(fake.seen[0]!.headers['xi-api-key']).toBe(KEY);
    expect(JSON.parse(fake.seen[0]!.body)).toEqual({ text: 'Hello fox', model_id: MODEL });
  });

  it('finds a request again in the history, by its request id or by an adopted history item id', async () => {
    const el = new ElevenLabsAdapter({ key: KEY, baseUrl: (await startFake(elevenlabs)).url });
    const byRequest = await el.poll({ requestId: 'req-xyz', model: MODEL, handle: null });
    expect(byRequest).toMatchObject({ state: 'succeeded', result: { outputs: [{ url: expect.stringMatching(/history\/hist-1\/audio$/) }] } });
    expect(await el.poll({ requestId: 'hist-1', model: MODEL, handle: null })).toMatchObject({ state: 'succeeded' });
    expect(await el.poll({ requestId: 'nothing', model: MODEL, handle: null })).toMatchObject({ state: 'failed' });
  });

  it('offers history items with the same text, voice and model for reconciliation', async () => {
    const el = new ElevenLabsAdapter({ key: KEY, baseUrl: (await startFake(elevenlabs)).url });
    const found = await el.lookup({ from: 0, to: Date.now() }, el.prepare(task));
    expect(found.map((c) => [c.requestId, c.inputMatches])).toEqual([
      ['hist-1', true],
      ['hist-2', false],
    ]);
  });
});
