import { describe, expect, it } from 'vitest';
import { FalAdapter } from '../../main/providers/fal.ts';
import { PollError, SubmitError } from '../../main/providers/port.ts';
import { failingOnce, send, startFake, type Route } from '../fakes/server.ts';

const KEY = 'fal-key-0123456789abcdef';
const MODEL = 'fal-ai/flux/dev';

/**
 * fal's queue API as its docs describe it: submit answers with request_id and the status, response and
 * cancel URLs to follow; status is 202 while queued or running and 200 when COMPLETED; a failure is
 * COMPLETED with an error; results expire.
 */
function falQueue(
  opts: { polls?: number; failWith?: string; submitStatus?: number; submitBody?: unknown; submitHeaders?: Record<string, string>; images?: number } = {},
): Route {
  let polls = 0;
  return (req, res) => {
    const base = `http://${req.headers.host}/fal-ai/flux/requests/req-1`;
    if (req.method === 'POST' && req.path === `/${MODEL}`) {
      if (opts.submitStatus) return send(res, opts.submitStatus, opts.submitBody ?? { detail: 'no' }, opts.submitHeaders);
      return send(
        res,
        200,
        { request_id: 'req-1', status: 'IN_QUEUE', queue_position: 0, status_url: `${base}/status`, response_url: base, cancel_url: `${base}/cancel` },
        { 'x-fal-request-id': 'req-1' },
      );
    }
    if (req.path === '/fal-ai/flux/requests/req-1/status') {
      if (polls++ < (opts.polls ?? 1)) return send(res, 202, { status: 'IN_QUEUE', queue_position: 2, request_id: 'req-1' });
      return send(res, 200, { status: 'COMPLETED', request_id: 'req-1', logs: [], metrics: { inference_time: 1.2 }, ...(opts.failWith ? { error: opts.failWith, error_type: 'runtime_error' } : {}) });
    }
    if (req.path === '/fal-ai/flux/requests/req-1') {
      const images = Array.from({ length: opts.images ?? 1 }, (_, i) => ({ url: `http://${req.headers.host}/files/out-${i}.png`, content_type: 'image/png', width: 1024, height: 1024 }));
      return send(res, 200, { images, seed: 7 });
    }
    if (req.path === '/fal-ai/flux/requests/req-1/cancel') return send(res, 202, { status: 'CANCELLATION_REQUESTED' });
    if (req.path.startsWith('/files/out-')) return send(res, 200, Buffer.from(`png ${req.path}`), { 'content-type': 'image/png' });
    if (req.path.startsWith('/v1/models/pricing')) return send(res, 200, { prices: [{ endpoint_id: MODEL, unit_price: 0.025, unit: 'megapixels', currency: 'USD' }] });
    if (req.path.startsWith('/v1/models/requests/by-endpoint')) {
      return send(res, 200, {
        items: [
          { request_id: 'req-1', endpoint_id: MODEL, sent_at: '2026-11-29T10:00:01Z', status_code: 200, json_input: { prompt: 'a fox' } },
          { request_id: 'req-2', endpoint_id: MODEL, sent_at: '2026-11-29T10:00:02Z', status_code: 200, json_input: { prompt: 'a cat' } },
        ],
        has_more: false,
        next_cursor: null,
      });
    }
  };
}

const task = { kind: 'image' as const, model: MODEL, input: { prompt: 'a fox' } };

async function text(body: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const c of body) chunks.push(c);
  return Buffer.concat(chunks).toString();
}

async function adapterFor(route: Route) {
  const fake = await startFake(route);
  return { fake, fal: new FalAdapter({ key: KEY, baseUrl: fake.url }) };
}

describe('fal adapter', () => {
  it('submits once with x-fal-no-retry, keeps the URLs fal returned, follows them to the result', async () => {
    const { fake, fal } = await adapterFor(falQueue({ polls: 2 }));
    const sent = await fal.submit(fal.prepare(task), { idempotencyKey: 'k' });
    expect(sent.requestId).toBe('req-1');
    expect(sent.handle?.status_url).toMatch(/requests\/req-1\/status$/);
    const post = fake.seen.find((r) => r.method === 'POST')!;
    expect(post.headers['x-fal-no-retry']).toBe('1');
    expect(post.headers.authorization).toBe(`Key ${KEY}`);
    expect(JSON.parse(post.body)).toEqual({ prompt: 'a fox' });

    const remote = { requestId: sent.requestId, model: MODEL, handle: sent.handle };
    expect(await fal.poll(remote)).toEqual({ state: 'pending', progress: null });
    expect(await fal.poll(remote)).toEqual({ state: 'pending', progress: null });
    const done = await fal.poll(remote);
    expect(done).toMatchObject({ state: 'succeeded', result: { outputs: [{ contentType: 'image/png' }] } });
    expect(fake.count('POST', /./)).toBe(1);
  });

  it('reports a COMPLETED request with an error as failed', async () => {
    const { fal } = await adapterFor(falQueue({ polls: 0, failWith: 'NSFW content detected' }));
    const sent = await fal.submit(fal.prepare(task), { idempotencyKey: 'k' });
    expect(await fal.poll({ requestId: sent.requestId, model: MODEL, handle: sent.handle })).toMatchObject({
      state: 'failed',
      error: expect.stringContaining('NSFW content detected'),
    });
  });

  it('asks again after a 404 on status, a 401 on the result and a 403 on the file, then collects the paid result', async () => {
    const route = failingOnce(/\/status$/, 404, failingOnce(/requests\/req-1$/, 401, failingOnce(/^\/files\//, 403, falQueue({ polls: 0 }))));
    const { fal } = await adapterFor(route);
    const remote = { requestId: 'req-1', model: MODEL, handle: null };
    await expect(fal.poll(remote)).rejects.toThrow(PollError);
    const refused = await fal.poll(remote).catch((e) => e);
    expect(refused).toBeInstanceOf(PollError);
    expect(refused.message).toContain('refused the API key');
    const done = await fal.poll(remote);
    if (done.state !== 'succeeded') throw new Error(`expected success, got ${done.state}`);
    const [output] = done.result.outputs;
    await expect(fal.download(output!)).rejects.toThrow(PollError);
    expect(await text(await fal.download(output!))).toBe('png /files/out-0.png');
  });

  it('hands over x-fal-request-id with a 500 or 504 answer to the submit and calls it maybe applied, so the queued request is polled', async () => {
    for (const status of [500, 504]) {
      const { fake, fal } = await adapterFor(falQueue({ polls: 0, submitStatus: status, submitHeaders: { 'x-fal-request-id': 'req-1' } }));
      const named: string[] = [];
      const err = await fal.submit(fal.prepare(task), { idempotencyKey: 'k', onRequestId: (id) => named.push(id) }).catch((e) => e);
      expect(err).toBeInstanceOf(SubmitError);
      expect(err.failure.kind).toBe('maybe_applied');
      expect(err.failure.neverBilled).toBeFalsy();
      expect(named).toEqual(['req-1']);
      expect(await fal.poll({ requestId: named[0]!, model: MODEL, handle: null })).toMatchObject({ state: 'succeeded' });
      expect(fake.count('POST', /./)).toBe(1);
    }
  });

  it('calls a 5xx or a 408 without a request id maybe applied, never "never billed"', async () => {
    for (const status of [502, 503, 408]) {
      const { fal } = await adapterFor(falQueue({ submitStatus: status }));
      const named: string[] = [];
      const err = await fal.submit(fal.prepare(task), { idempotencyKey: 'k', onRequestId: (id) => named.push(id) }).catch((e) => e);
      expect(err.failure.kind).toBe('maybe_applied');
      expect(err.failure.neverBilled).toBeFalsy();
      expect(named).toEqual([]);
    }
    expect(new FalAdapter({ key: KEY, baseUrl: null }).capabilities.neverBilled).toBeNull();
  });

  it('names the request from its header before the answer is read', async () => {
    const { fal } = await adapterFor(falQueue());
    const named: string[] = [];
    await fal.submit(fal.prepare(task), { idempotencyKey: 'k', onRequestId: (id) => named.push(id) });
    expect(named).toEqual(['req-1']);
  });

  it('returns every image of a result made with num_images above 1', async () => {
    const { fal } = await adapterFor(falQueue({ polls: 0, images: 3 }));
    const done = await fal.poll({ requestId: 'req-1', model: MODEL, handle: null });
    if (done.state !== 'succeeded') throw new Error(`expected success, got ${done.state}`);
    expect(done.result.outputs.map((o) => o.url?.replace(/^.*\/files\//, ''))).toEqual(['out-0.png', 'out-1.png', 'out-2.png']);
  });

  it('classifies a 401 on submit as a refused key without the key in it', async () => {
    const { fal: bad } = await adapterFor(falQueue({ submitStatus: 401, submitBody: { detail: `Invalid key ${KEY}` } }));
    const refused = await bad.submit(bad.prepare(task), { idempotencyKey: 'k' }).catch((e) => e);
    expect(refused.failure.kind).toBe('rejected');
    expect(refused.message).toContain('refused the API key');
    expect(refused.message).not.toContain(KEY);
  });

  it('quotes from fal pricing, per megapixel of the asked size rounded up per image, times num_images', async () => {
    const { fal } = await adapterFor(falQueue());
    expect(await fal.quote(fal.prepare({ ...task, input: { prompt: 'x', image_size: { width: 1000, height: 1000 } } }))).toEqual({ amount: 25_000, currency: 'USD' });
    // 1024x1024 is 1,048,576 pixels: 2 megapixels of 10^6 rounded up, as fal's megapixel is not defined and 10^6 never bills low.
    expect(await fal.quote(fal.prepare({ ...task, input: { prompt: 'x', image_size: 'square_hd', num_images: 2 } }))).toEqual({ amount: 100_000, currency: 'USD' });
  });

  it('takes image_size as one of fal\'s named sizes or a width and height, and refuses anything else before sending', () => {
    const fal = new FalAdapter({ key: KEY, baseUrl: null });
    expect(fal.prepare({ ...task, input: { prompt: 'x', image_size: 'portrait_16_9', output_format: 'png' } }).input).toMatchObject({ image_size: 'portrait_16_9' });
    expect(() => fal.prepare({ ...task, input: { prompt: 'x', image_size: 'huge' } })).toThrow(/"image_size" must be one of square_hd, .*, or an object with width, height/);
    expect(() => fal.prepare({ ...task, input: { prompt: 'x', image_size: { width: 20_000, height: 512 } } })).toThrow('"image_size.width" must be a whole number from 1 to 14142');
    expect(() => fal.prepare({ ...task, input: { prompt: 'x', num_images: 5 } })).toThrow('"num_images" must be a whole number from 1 to 4');
  });

  it('sends Kling the shortest of its durations, "5" or "10", that covers the seconds asked, and no seed', () => {
    const fal = new FalAdapter({ key: KEY, baseUrl: null });
    const clip = (duration: unknown) =>
      fal.prepare({ kind: 'clip', model: 'fal-ai/kling-video/v2.1/standard/image-to-video', input: { prompt: 'x', image_url: 'https://x/a.png', duration, seed: 3 } });
    expect([3, 5, 5.5, 10, 14, '10'].map((d) => clip(d).input.duration)).toEqual(['5', '5', '10', '10', '10', '10']);
    expect(JSON.parse(clip(7).body as string)).toEqual({ prompt: 'x', image_url: 'https://x/a.png', duration: '10' });
    expect(() => clip('7')).toThrow('"duration" must be a number from 0.1 to 3600, or one of 5, 10');
  });

  it('finds past requests with the same input for reconciliation', async () => {
    const { fal } = await adapterFor(falQueue());
    const found = await fal.lookup({ from: 0, to: Date.now() }, fal.prepare(task));
    expect(found.map((c) => [c.requestId, c.inputMatches])).toEqual([
      ['req-1', true],
      ['req-2', false],
    ]);
  });

  it('reaches an adopted request through the URLs fal documents, and cancels it', async () => {
    const { fake, fal } = await adapterFor(falQueue({ polls: 0 }));
    expect(await fal.poll({ requestId: 'req-1', model: MODEL, handle: null })).toMatchObject({ state: 'succeeded' });
    await fal.cancel({ requestId: 'req-1', model: MODEL, handle: null });
    expect(fake.count('PUT', /req-1\/cancel$/)).toBe(1);
  });

  it('refuses bad input and a missing key before anything is sent', () => {
    const fal = new FalAdapter({ key: KEY, baseUrl: 'http://127.0.0.1:9' });
    expect(() => fal.prepare({ ...task, input: { prompt: '' } })).toThrow(/"prompt" is required|"prompt" must be text/);
    expect(() => fal.prepare({ ...task, model: 'fal-ai/flux/pro' })).toThrow('fal has no image model "fal-ai/flux/pro"; did you mean "fal-ai/flux/dev"? The image models are fal-ai/flux/dev, fal-ai/flux/schnell');
    expect(() => new FalAdapter({ key: null, baseUrl: null }).prepare(task)).toThrow(/FAL_KEY/);
  });
});
