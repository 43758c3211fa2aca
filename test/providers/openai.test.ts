import { describe, expect, it } from 'vitest';
import { OpenAiAdapter } from '../../main/providers/openai.ts';
import { SubmitError } from '../../main/providers/port.ts';
import { cutAfterHeaders, send, startFake } from '../fakes/server.ts';

const KEY = 'sk-proj-0123456789abcdefghijkl';

describe('OpenAI adapter (synchronous)', () => {
  it('answers an image request with the image itself and the x-request-id as its name', async () => {
    const fake = await startFake((req, res) => {
      if (req.path === '/v1/images/generations') {
        return send(res, 200, { created: 1, data: [{ b64_json: Buffer.from('image-bytes').toString('base64') }] }, { 'x-request-id': 'req_abc' });
      }
    });
    const openai = new OpenAiAdapter({ key: KEY, baseUrl: fake.url });
    const sent = await openai.submit(openai.prepare({ kind: 'image', model: 'dall-e-3', input: { prompt: 'a fox' } }), { idempotencyKey: 'k' });
    expect(sent.requestId).toBe('req_abc');
    expect(Buffer.from(sent.result!.outputs[0]!.bytes!).toString()).toBe('image-bytes');
    expect(JSON.parse(fake.seen[0]!.body)).toMatchObject({ model: 'dall-e-3', prompt: 'a fox', response_format: 'b64_json' });
  });

  it('answers a speech request with the audio', async () => {
    const fake = await startFake((req, res) => {
      if (req.path === '/v1/audio/speech') return send(res, 200, Buffer.from('mp3-bytes'), { 'content-type': 'audio/mpeg', 'x-request-id': 'req_tts' });
    });
    const openai = new OpenAiAdapter({ key: KEY, baseUrl: fake.url });
    const sent = await openai.submit(openai.prepare({ kind: 'speech', model: 'tts-1', input: { text: 'Hello', voice: 'nova' } }), { idempotencyKey: 'k' });
    expect(sent).toMatchObject({ requestId: 'req_tts', result: { outputs: [{ contentType: 'audio/mpeg' }] } });
    expect(JSON.parse(fake.seen[0]!.body)).toEqual({ model: 'tts-1', input: 'Hello', voice: 'nova', response_format: 'mp3' });
  });

  it('turns a cut connection after sending into an unknown outcome and says a result cannot be fetched again', async () => {
    const fake = await startFake((_req, res) => void res.socket?.destroy());
    const openai = new OpenAiAdapter({ key: KEY, baseUrl: fake.url });
    const err = await openai.submit(openai.prepare({ kind: 'image', model: 'gpt-image-1', input: { prompt: 'x' } }), { idempotencyKey: 'k' }).catch((e) => e);
    expect(err).toBeInstanceOf(SubmitError);
    expect(err.failure.kind).toBe('maybe_applied');
    expect(await openai.poll()).toMatchObject({ state: 'failed', error: expect.stringContaining('cannot be fetched again') });
    expect(openai.capabilities.lookup).toBe(false);
  });

  it('hands over x-request-id before the body, so an image or speech answer cut mid-body still names the request', async () => {
    const fake = await startFake((req, res) =>
      cutAfterHeaders(res, 200, { 'content-type': req.path.includes('speech') ? 'audio/mpeg' : 'application/json', 'x-request-id': `req_${req.path.split('/').at(-1)}` }, '{"created":1,"data":[{"b64_json":"aW1h'),
    );
    const openai = new OpenAiAdapter({ key: KEY, baseUrl: fake.url });
    const cases = [
      [openai.prepare({ kind: 'image', model: 'gpt-image-1', input: { prompt: 'x' } }), 'req_generations'],
      [openai.prepare({ kind: 'speech', model: 'tts-1', input: { text: 'Hello' } }), 'req_speech'],
    ] as const;
    for (const [request, id] of cases) {
      let settled = false;
      const named: { id: string; settled: boolean }[] = [];
      const sent = openai.submit(request, { idempotencyKey: 'k', onRequestId: (got) => named.push({ id: got, settled }) });
      const err = await sent.catch((e) => e).finally(() => (settled = true));
      expect(named).toEqual([{ id, settled: false }]);
      expect(err).toBeInstanceOf(SubmitError);
      expect(err.failure.kind).toBe('maybe_applied');
      expect(err.message).toContain(id);
    }
  });

  it('hands over the id of a 500 answer and calls it maybe applied', async () => {
    const fake = await startFake((_req, res) => send(res, 500, { error: { message: 'The server had an error' } }, { 'x-request-id': 'req_500' }));
    const openai = new OpenAiAdapter({ key: KEY, baseUrl: fake.url });
    const named: string[] = [];
    const err = await openai.submit(openai.prepare({ kind: 'image', model: 'dall-e-3', input: { prompt: 'x' } }), { idempotencyKey: 'k', onRequestId: (id) => named.push(id) }).catch((e) => e);
    expect(named).toEqual(['req_500']);
    expect(err.failure.kind).toBe('maybe_applied');
    expect(err.message).toContain('req_500');
  });

  it('completes a whole answer that came without x-request-id, named by the attempt rather than an invented id', async () => {
    const fake = await startFake((_req, res) => send(res, 200, Buffer.from('mp3'), { 'content-type': 'audio/mpeg' }));
    const openai = new OpenAiAdapter({ key: KEY, baseUrl: fake.url });
    const named: string[] = [];
    const sent = await openai.submit(openai.prepare({ kind: 'speech', model: 'tts-1', input: { text: 'Hello' } }), { idempotencyKey: 'studio-task-4-attempt-1', onRequestId: (id) => named.push(id) });
    expect(sent.requestId).toBe('local:studio-task-4-attempt-1');
    expect(sent.result!.outputs).toHaveLength(1);
    expect(named).toEqual([]);
  });

  it('returns every image of an answer made with n above 1', async () => {
    const fake = await startFake((_req, res) =>
      send(res, 200, { created: 1, data: ['one', 'two'].map((b) => ({ b64_json: Buffer.from(b).toString('base64') })) }, { 'x-request-id': 'req_n2' }),
    );
    const openai = new OpenAiAdapter({ key: KEY, baseUrl: fake.url });
    const sent = await openai.submit(openai.prepare({ kind: 'image', model: 'gpt-image-1', input: { prompt: 'x', n: 2 } }), { idempotencyKey: 'k' });
    expect(sent.result!.outputs.map((o) => Buffer.from(o.bytes!).toString())).toEqual(['one', 'two']);
  });

  it('keeps the key out of the error even when OpenAI echoes it', async () => {
    const fake = await startFake((_req, res) => send(res, 401, { error: { message: `Incorrect API key provided: ${KEY}.`, type: 'invalid_request_error' } }));
    const openai = new OpenAiAdapter({ key: KEY, baseUrl: fake.url });
    const err = await openai.submit(openai.prepare({ kind: 'image', model: 'dall-e-3', input: { prompt: 'x' } }), { idempotencyKey: 'k' }).catch((e) => e);
    expect(err.message).toContain('refused the API key');
    expect(err.message).not.toContain(KEY);
    expect(err.message).toContain('[key]');
  });

  it('works out a GPT image\'s cost from the usage tokens of its answer; dall-e-3 reports none', async () => {
    // ImagesResponse.usage (openai-node src/resources/images.ts); token prices from the gpt-image-1 model page.
    const usage = { input_tokens: 50, input_tokens_details: { text_tokens: 40, image_tokens: 10 }, output_tokens: 4160, total_tokens: 4210 };
    const fake = await startFake((_req, res) => send(res, 200, { created: 1, data: [{ b64_json: 'aW1n' }], usage }, { 'x-request-id': 'req_u' }));
    const openai = new OpenAiAdapter({ key: KEY, baseUrl: fake.url });
    const sent = await openai.submit(openai.prepare({ kind: 'image', model: 'gpt-image-1', input: { prompt: 'x', quality: 'high' } }), { idempotencyKey: 'k' });
    // 40 x $5 + 10 x $10 + 4160 x $40, per million tokens = $0.1667
    expect(sent.result!.costActual).toMatchObject({ amount: 166_700, currency: 'USD', source: expect.stringContaining('4160 output tokens at 40 USD per million') });
    const mini = await openai.submit(openai.prepare({ kind: 'image', model: 'gpt-image-1-mini', input: { prompt: 'x' } }), { idempotencyKey: 'k' });
    // 40 x $2 + 10 x $2.50 + 4160 x $8, per million tokens
    expect(mini.result!.costActual?.amount).toBe(33_385);
    const dalle = await openai.submit(openai.prepare({ kind: 'image', model: 'dall-e-3', input: { prompt: 'x' } }), { idempotencyKey: 'k' });
    expect(dalle.result!.costActual).toBeNull();
  });

  it('takes each image model\'s own inputs: dall-e-3 one image and 4,000 characters, GPT image models 32,000', () => {
    const openai = new OpenAiAdapter({ key: KEY, baseUrl: null });
    const image = (model: string, input: Record<string, unknown>) => openai.prepare({ kind: 'image', model, input });
    expect(() => image('dall-e-3', { prompt: 'x', n: 2 })).toThrow('"n" must be 1');
    expect(() => image('dall-e-3', { prompt: 'a'.repeat(4001) })).toThrow('"prompt" is too long (at most 4000 characters)');
    expect(() => image('gpt-image-1', { prompt: 'a'.repeat(32_000), n: 10 })).not.toThrow();
    expect(() => image('gpt-image-1', { prompt: 'a'.repeat(32_001) })).toThrow('at most 32000 characters');
    expect(() => image('dall-e-3', { prompt: 'x', quality: 'high' })).toThrow('"quality" must be one of standard, hd');
    expect(() => image('gpt-image-1', { prompt: 'x', background: 'transparent', output_format: 'jpeg' })).toThrow(/png or webp/);
    const sent = JSON.parse((image('gpt-image-1-mini', { prompt: 'x', background: 'transparent', output_format: 'webp', seed: 4 }).body as { json: string }).json);
    expect(sent).toEqual({ model: 'gpt-image-1-mini', prompt: 'x', n: 1, quality: 'medium', size: '1024x1024', background: 'transparent', output_format: 'webp' });
    expect(JSON.parse((image('dall-e-3', { prompt: 'x', style: 'natural' }).body as { json: string }).json)).toEqual({ model: 'dall-e-3', prompt: 'x', n: 1, quality: 'standard', size: '1024x1024', style: 'natural', response_format: 'b64_json' });
  });

  it('takes every voice OpenAI lists, and instructions only for gpt-4o-mini-tts', () => {
    const openai = new OpenAiAdapter({ key: KEY, baseUrl: null });
    const speech = (model: string, input: Record<string, unknown>) => openai.prepare({ kind: 'speech', model, input: { text: 'hi', ...input } });
    for (const voice of ['ballad', 'verse', 'marin', 'cedar', 'fable', 'onyx']) expect(() => speech('tts-1', { voice })).not.toThrow();
    expect(JSON.parse((speech('gpt-4o-mini-tts', { voice: 'marin', instructions: 'calmly', speed: 1.5 }).body as { json: string }).json)).toEqual({
      model: 'gpt-4o-mini-tts', input: 'hi', voice: 'marin', speed: 1.5, instructions: 'calmly', response_format: 'mp3',
    });
    expect(() => speech('tts-1', { instructions: 'calmly' })).toThrow('"instructions" works only with gpt-4o-mini-tts, not tts-1');
  });

  it('refuses an unknown voice before sending', () => {
    const openai = new OpenAiAdapter({ key: KEY, baseUrl: null });
    expect(() => openai.prepare({ kind: 'speech', model: 'tts-1', input: { text: 'hi', voice: 'gandalf' } })).toThrow(/"voice" must be one of/);
  });
});
