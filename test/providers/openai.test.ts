import { describe, expect, it } from 'vitest';
import { OpenAiAdapter } from '../../main/providers/openai.ts';
import { SubmitError } from '../../main/providers/port.ts';
import { send, startFake } from '../fakes/server.ts';

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

  it('keeps the key out of the error even when OpenAI echoes it', async () => {
    const fake = await startFake((_req, res) => send(res, 401, { error: { message: `Incorrect API key provided: ${KEY}.`, type: 'invalid_request_error' } }));
    const openai = new OpenAiAdapter({ key: KEY, baseUrl: fake.url });
    const err = await openai.submit(openai.prepare({ kind: 'image', model: 'dall-e-3', input: { prompt: 'x' } }), { idempotencyKey: 'k' }).catch((e) => e);
    expect(err.message).toContain('refused the API key');
    expect(err.message).not.toContain(KEY);
    expect(err.message).toContain('[key]');
  });

  it('refuses an unknown voice before sending', () => {
    const openai = new OpenAiAdapter({ key: KEY, baseUrl: null });
    expect(() => openai.prepare({ kind: 'speech', model: 'tts-1', input: { text: 'hi', voice: 'gandalf' } })).toThrow(/"voice" must be one of/);
  });
});
