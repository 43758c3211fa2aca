import { describe, expect, it } from 'vitest';
import { ElevenLabsAdapter } from '../../main/providers/elevenlabs.ts';
import { PollError, SubmitError } from '../../main/providers/port.ts';
import { cutAfterHeaders, failingOnce, send, startFake, type Route } from '../fakes/server.ts';

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
  if (req.path.startsWith('/v1/history')) return send(res, 200, { history: [item, { ...item, history_item_id: 'hist-2', request_id: 'req-other', text: 'Other' }], has_more: false });
};

const task = { kind: 'speech' as const, model: MODEL, input: { text: 'Hello fox', voice_id: VOICE } };

describe('ElevenLabs adapter', () => {
  it('bills the credits of the character-cost header at the default price per credit, or the plan\'s own', async () => {
    const fake = await startFake(elevenlabs);
    const el = new ElevenLabsAdapter({ key: KEY, baseUrl: fake.url });
    const sent = await el.submit(el.prepare(task), { idempotencyKey: 'k' });
    expect(sent.requestId).toBe('req-xyz');
    // 9 credits at the Creator plan's price when no plan is set (resources/prices.json creditPlans).
    expect(sent.result!.costActual).toMatchObject({ amount: 2_700, currency: 'USD', source: expect.stringMatching(/^billed 9 credits at the Creator plan's 0.0003 USD a credit \(the character-cost header\); no plan set in settings/) });
    expect(fake.seen[0]!.headers['xi-api-key']).toBe(KEY);
    expect(JSON.parse(fake.seen[0]!.body)).toEqual({ text: 'Hello fox', model_id: MODEL });

    const own = new ElevenLabsAdapter({ key: KEY, baseUrl: fake.url, creditPrice: 0.00012 });
    const mine = await own.submit(own.prepare(task), { idempotencyKey: 'k' });
    expect(mine.result!.costActual).toMatchObject({ amount: 1_080, source: expect.stringContaining('at your own 0.00012 USD a credit') });
    // The history item's change in the account's count is the same figure, for a request collected later.
    const later = await own.poll({ requestId: 'hist-1', model: MODEL, handle: null });
    expect(later).toMatchObject({ state: 'succeeded', result: { costActual: { amount: 1_080 } } });
  });

  it('takes as much text as each model does in one request', () => {
    const el = new ElevenLabsAdapter({ key: KEY, baseUrl: null });
    // elevenlabs-docs fern/docs/pages/models.mdx: eleven_v3 3,000 characters, Flash v2.5 40,000.
    expect(() => el.prepare({ ...task, model: 'eleven_v3', input: { text: 'a'.repeat(3_001), voice_id: VOICE } })).toThrow('"text" is too long (at most 3000 characters)');
    expect(() => el.prepare({ ...task, model: 'eleven_flash_v2_5', input: { text: 'a'.repeat(40_000), voice_id: VOICE } })).not.toThrow();
  });

  it('finds a request again in the history, by its request id or by an adopted history item id', async () => {
    const el = new ElevenLabsAdapter({ key: KEY, baseUrl: (await startFake(elevenlabs)).url });
    const byRequest = await el.poll({ requestId: 'req-xyz', model: MODEL, handle: null });
    expect(byRequest).toMatchObject({ state: 'succeeded', result: { outputs: [{ url: expect.stringMatching(/history\/hist-1\/audio$/) }] } });
    expect(await el.poll({ requestId: 'hist-1', model: MODEL, handle: null })).toMatchObject({ state: 'succeeded' });
  });

  it('keeps asking for a request not in the history yet, and collects it once it appears', async () => {
    let listed = false;
    const fake = await startFake((req, res) => {
      if (req.path.startsWith('/v1/history?')) {
        const shown = listed;
        listed = true;
        return send(res, 200, { history: shown ? [item] : [], has_more: false });
      }
      return elevenlabs(req, res);
    });
    const el = new ElevenLabsAdapter({ key: KEY, baseUrl: fake.url });
    const remote = { requestId: 'req-xyz', model: MODEL, handle: null };
    await expect(el.poll(remote)).rejects.toThrow(PollError);
    expect(await el.poll(remote)).toMatchObject({ state: 'succeeded' });
  });

  it('asks again after a 401 on the history or a 403 on the audio, then collects the result', async () => {
    const el = new ElevenLabsAdapter({ key: KEY, baseUrl: (await startFake(failingOnce(/^\/v1\/history\?/, 401, failingOnce(/\/audio$/, 403, elevenlabs)))).url });
    const remote = { requestId: 'req-xyz', model: MODEL, handle: null };
    await expect(el.poll(remote)).rejects.toThrow(PollError);
    const done = await el.poll(remote);
    if (done.state !== 'succeeded') throw new Error(`expected success, got ${done.state}`);
    await expect(el.download(done.result.outputs[0]!)).rejects.toThrow(PollError);
    const chunks: Uint8Array[] = [];
    for await (const c of await el.download(done.result.outputs[0]!)) chunks.push(c);
    expect(Buffer.concat(chunks).toString()).toBe('mp3');
  });

  it('hands over the request-id header before the audio, so an answer cut mid-body is found in the history by it', async () => {
    const fake = await startFake((req, res) => {
      if (req.method === 'POST') return cutAfterHeaders(res, 200, { 'content-type': 'audio/mpeg', 'request-id': 'req-xyz', 'character-cost': '9' }, 'ID3');
      return elevenlabs(req, res);
    });
    const el = new ElevenLabsAdapter({ key: KEY, baseUrl: fake.url });
    let settled = false;
    const named: { id: string; settled: boolean }[] = [];
    const err = await el
      .submit(el.prepare(task), { idempotencyKey: 'k', onRequestId: (id) => named.push({ id, settled }) })
      .catch((e) => e)
      .finally(() => (settled = true));
    expect(named).toEqual([{ id: 'req-xyz', settled: false }]);
    expect(err).toBeInstanceOf(SubmitError);
    expect(err.failure.kind).toBe('maybe_applied');
    expect(el.capabilities.pollById).toBe(true);
    expect(await el.poll({ requestId: named[0]!.id, model: MODEL, handle: null })).toMatchObject({
      state: 'succeeded',
      result: { outputs: [{ url: expect.stringMatching(/history\/hist-1\/audio$/) }], costActual: { amount: 2_700 } },
    });
    expect(fake.count('POST', /./)).toBe(1);
  });

  it('calls a 5xx or a 408 answer maybe applied, handing over its request id', async () => {
    for (const status of [500, 503, 408]) {
      const fake = await startFake((_req, res) => send(res, status, { detail: { status: 'system_busy', message: 'busy' } }, { 'request-id': `req-${status}` }));
      const el = new ElevenLabsAdapter({ key: KEY, baseUrl: fake.url });
      const named: string[] = [];
      const err = await el.submit(el.prepare(task), { idempotencyKey: 'k', onRequestId: (id) => named.push(id) }).catch((e) => e);
      expect(err.failure.kind).toBe('maybe_applied');
      expect(named).toEqual([`req-${status}`]);
    }
  });

  it('completes a whole answer that came without request-id, named by the attempt', async () => {
    const fake = await startFake((_req, res) => send(res, 200, Buffer.from('mp3'), { 'content-type': 'audio/mpeg' }));
    const el = new ElevenLabsAdapter({ key: KEY, baseUrl: fake.url });
    const sent = await el.submit(el.prepare(task), { idempotencyKey: 'studio-task-9-attempt-2' });
    expect(sent.requestId).toBe('local:studio-task-9-attempt-2');
    expect(Buffer.from(sent.result!.outputs[0]!.bytes!).toString()).toBe('mp3');
  });

  it('offers history items with the same text, voice and model for reconciliation, named by their request id as a task stores it', async () => {
    const el = new ElevenLabsAdapter({ key: KEY, baseUrl: (await startFake(elevenlabs)).url });
    const found = await el.lookup({ from: 0, to: Date.now() }, el.prepare(task));
    expect(found.map((c) => [c.requestId, c.inputMatches])).toEqual([
      ['req-xyz', true],
      ['req-other', false],
    ]);
  });
});
