import { describe, expect, it } from 'vitest';
import { FalAdapter } from '../../main/providers/fal.ts';
import { PollError, SubmitError } from '../../main/providers/port.ts';
import { failingOnce, send, startFake, type Route } from '../fakes/server.ts';

const KEY = 'fal-key-0123456789abcdef';
const MODEL = 'fal-ai/flux/dev';

/**
 * fal's queue API as its docs describe it: submit answers with request_id and the status, response and
 * cancel URLs to follow; status is 202 while queued or running and 200 when COMPLETED, with logs and metrics
 * only; a failed request's result URL answers with its error (`failWith`: the status, body and headers).
 */
function falQueue(
  opts: {
    polls?: number;
    failWith?: [number, unknown, Record<string, string>?];
    cancelWith?: [number, unknown];
    submitStatus?: number;
    submitBody?: unknown;
    submitHeaders?: Record<string, string>;
    images?: number;
  } = {},
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
      return send(res, 200, { status: 'COMPLETED', request_id: 'req-1', logs: [], metrics: { inference_time: 1.2 } });
    }
    if (req.path === '/fal-ai/flux/requests/req-1') {
      if (opts.failWith) return send(res, opts.failWith[0], opts.failWith[1], opts.failWith[2]);
      const images = Array.from({ length: opts.images ?? 1 }, (_, i) => ({ url: `http://${req.headers.host}/files/out-${i}.png`, content_type: 'image/png', width: 1024, height: 1024 }));
      return send(res, 200, { images, seed: 7 });
    }
    if (req.path === '/fal-ai/flux/requests/req-1/cancel') return send(res, ...(opts.cancelWith ?? [202, { status: 'CANCELLATION_REQUESTED' }]));
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
  it('submits once without x-fal-no-retry, keeps the URLs fal returned, follows them to the result', async () => {
    const { fake, fal } = await adapterFor(falQueue({ polls: 2 }));
    const sent = await fal.submit(fal.prepare(task), { idempotencyKey: 'k' });
    expect(sent.requestId).toBe('req-1');
    expect(sent.handle?.status_url).toMatch(/requests\/req-1\/status$/);
    const post = fake.seen.find((r) => r.method === 'POST')!;
    // fal retries a request that failed on its side, under the same id and never billed; the header would stop it
    // (docs.fal.ai/model-apis/model-endpoints/reliability).
    expect(post.headers).not.toHaveProperty('x-fal-no-retry');
    expect(post.headers.authorization).toBe(`Key ${KEY}`);
    expect(JSON.parse(post.body)).toEqual({ prompt: 'a fox' });

    const remote = { requestId: sent.requestId, model: MODEL, handle: sent.handle };
    expect(await fal.poll(remote)).toEqual({ state: 'pending', progress: null });
    expect(await fal.poll(remote)).toEqual({ state: 'pending', progress: null });
    const done = await fal.poll(remote);
    expect(done).toMatchObject({ state: 'succeeded', result: { outputs: [{ contentType: 'image/png' }] } });
    expect(fake.count('POST', /./)).toBe(1);
  });

  it('reads a failure from the result answer of a COMPLETED request, answered twice: a request error is not charged, a model error may be', async () => {
    // fal.ai/docs/documentation/model-apis/request-errors and .../model-apis/errors; charges: fal.ai/docs/model-apis/faq.
    const requestError = await adapterFor(falQueue({ polls: 0, failWith: [503, { detail: 'Runner disconnected', error_type: 'runner_disconnected' }, { 'x-fal-error-type': 'runner_disconnected' }] }));
    const remote = { requestId: 'req-1', model: MODEL, handle: null };
    // The first answer is asked again after fal-js's whole retry window for a 503 (1 s + 2 s + 4 s: libs/client/src/retry.ts).
    expect(await requestError.fal.poll(remote).catch((e) => e)).toMatchObject({ constructor: PollError, retryAfterMs: 7_000 });
    expect(await requestError.fal.poll(remote)).toEqual({ state: 'failed', error: 'fal: Runner disconnected (runner_disconnected, HTTP 503)', charged: 'no', costActual: null });

    const detail = [{ loc: ['body', 'image_size', 'width'], msg: 'Input should be less than or equal to 14142', type: 'less_than_equal', url: 'https://docs.fal.ai/errors#less_than_equal' }];
    const modelError = await adapterFor(falQueue({ polls: 0, failWith: [422, { detail }] }));
    expect(await modelError.fal.poll(remote).catch((e) => e)).toMatchObject({ constructor: PollError, retryAfterMs: 1_000 });
    expect(await modelError.fal.poll(remote)).toEqual({
      state: 'failed',
      error: 'fal: the model refused the request: image_size.width: Input should be less than or equal to 14142 (HTTP 422)',
      charged: 'maybe',
      costActual: null,
    });

    // Only the header: a body that is not JSON still carries fal's marker.
    const headerOnly = await adapterFor(falQueue({ polls: 0, failWith: [504, 'upstream request timeout', { 'x-fal-error-type': 'startup_timeout' }] }));
    await expect(headerOnly.fal.poll(remote)).rejects.toThrow(PollError);
    expect(await headerOnly.fal.poll(remote)).toMatchObject({ state: 'failed', charged: 'no', error: expect.stringContaining('startup_timeout') });
  });

  it('never ends a request on a rate limit, a key or route answer, or a gateway page, whatever markers it carries', async () => {
    // A 429 is fal-js's to retry (libs/client/src/retry.ts DEFAULT_RETRYABLE_STATUS_CODES); a 401, 403 or 404 is a key
    // or route problem; a model error is a 422 (fal-js response.ts ValidationError) with `{loc, msg, type}` entries.
    for (const [status, body, headers] of [
      [429, { detail: 'Too many requests', error_type: 'rate_limited' }],
      [401, { detail: 'Unauthorized' }, { 'x-fal-error-type': 'unauthorized' }],
      [403, { detail: 'Forbidden', error_type: 'forbidden' }],
      [404, { detail: 'Request not found', error_type: 'not_found' }],
      [502, { detail: [{ msg: 'upstream connect error' }] }],
      [500, { detail: [{ loc: ['body', 'prompt'], msg: 'flagged', type: 'content_policy_violation' }] }],
      [422, { detail: [{ msg: 'no location, no type' }] }],
    ] as const) {
      const { fal } = await adapterFor(falQueue({ polls: 0, failWith: [status, body, headers] }));
      for (let ask = 1; ask <= 3; ask++) await expect(fal.poll({ requestId: 'req-1', model: MODEL, handle: null }), `${status} ask ${ask}`).rejects.toThrow(PollError);
    }
  });

  it('collects the result after one answer carrying fal\'s markers, and ends only on the same failure answered again', async () => {
    const remote = { requestId: 'req-1', model: MODEL, handle: null };
    const { fal } = await adapterFor(failingOnce(/requests\/req-1$/, 500, falQueue({ polls: 0 }), { 'x-fal-error-type': 'internal_error' }));
    await expect(fal.poll(remote)).rejects.toThrow(/internal_error, HTTP 500\); asking once more/);
    expect(await fal.poll(remote)).toMatchObject({ state: 'succeeded' });

    // Two different failures in a row are not the same answer twice.
    let asked = 0;
    const changing = await adapterFor((req, res) => {
      if (req.path.endsWith('/status')) return send(res, 200, { status: 'COMPLETED', request_id: 'req-1', logs: [] });
      const type = ++asked === 1 ? 'runner_disconnected' : 'runner_server_error';
      return send(res, asked === 1 ? 503 : 500, { detail: 'failed', error_type: type }, { 'x-fal-error-type': type });
    });
    await expect(changing.fal.poll(remote)).rejects.toThrow(PollError);
    await expect(changing.fal.poll(remote)).rejects.toThrow(PollError);
    expect(await changing.fal.poll(remote)).toMatchObject({ state: 'failed', charged: 'no', error: expect.stringContaining('runner_server_error') });
  });

  it('takes a 5xx or a flat detail without fal\'s markers as a passing failure, asked again later', async () => {
    for (const [status, body] of [
      [502, '<html>502 Bad Gateway</html>'],
      [500, { detail: 'Internal Server Error' }],
      [404, { detail: 'Request not found' }],
    ] as const) {
      const { fal } = await adapterFor(falQueue({ polls: 0, failWith: [status, body] }));
      await expect(fal.poll({ requestId: 'req-1', model: MODEL, handle: null }), String(status)).rejects.toThrow(PollError);
    }
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
    expect(await fal.quote(fal.prepare({ ...task, input: { prompt: 'x', image_size: { width: 1000, height: 1000 } } }))).toMatchObject({ amount: 25_000, currency: 'USD' });
    // 1024x1024 is one of fal's megapixels (1024×1024 pixels: main/pricing/falQuote.ts), 2048x1024 two.
    expect(await fal.quote(fal.prepare({ ...task, input: { prompt: 'x', image_size: 'square_hd', num_images: 2 } }))).toMatchObject({ amount: 50_000, currency: 'USD' });
    expect(await fal.quote(fal.prepare({ ...task, input: { prompt: 'x', image_size: { width: 2048, height: 1024 } } }))).toMatchObject({ amount: 50_000, currency: 'USD' });
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

  it('reaches an adopted request under its whole endpoint id, the form of fal\'s per-endpoint OpenAPI, when owner/app answers 404', async () => {
    const inner = falQueue({ polls: 0 });
    const wholeIdOnly: Route = (req, res) =>
      req.path.startsWith('/fal-ai/flux/requests/') ? send(res, 404, { detail: 'Not Found' }) : inner({ ...req, path: req.path.replace('/fal-ai/flux/dev/requests/', '/fal-ai/flux/requests/') }, res);
    const { fake, fal } = await adapterFor(wholeIdOnly);
    const remote = { requestId: 'req-1', model: MODEL, handle: null };
    expect(await fal.poll(remote)).toMatchObject({ state: 'succeeded' });
    expect(await fal.cancel(remote)).toBe('requested');
    expect(fake.seen.map((s) => `${s.method} ${s.path}`).filter((s) => !s.includes('/files/'))).toEqual([
      'GET /fal-ai/flux/requests/req-1/status',
      'GET /fal-ai/flux/dev/requests/req-1/status',
      'GET /fal-ai/flux/dev/requests/req-1',
      'PUT /fal-ai/flux/requests/req-1/cancel',
      'PUT /fal-ai/flux/dev/requests/req-1/cancel',
    ]);
  });

  it('reads the cancel answers fal documents', async () => {
    const remote = { requestId: 'req-1', model: MODEL, handle: null };
    const outcome = async (answer: [number, unknown]) => (await adapterFor(falQueue({ cancelWith: answer }))).fal.cancel(remote).catch((e: Error) => e);
    // {"success": boolean}: the per-endpoint OpenAPI documents (fal.ai/api/openapi/queue/openapi.json?endpoint_id=...);
    // it does not say whether the request was removed or only signalled, so it is still followed.
    expect(await outcome([200, { success: true }])).toBe('requested');
    // OK, CANCELLATION_REQUESTED, ALREADY_COMPLETED, NOT_FOUND: fal.ai/docs/inference-api/queue/cancel.
    expect(await outcome([200, { status: 'OK' }])).toBe('cancelled');
    expect(await outcome([202, { status: 'CANCELLATION_REQUESTED' }])).toBe('requested');
    expect(await outcome([400, { status: 'ALREADY_COMPLETED' }])).toBe('finished');
    const refused = await outcome([200, { success: false }]);
    expect(refused).toBeInstanceOf(PollError);
    expect((refused as Error).message).toBe('fal did not cancel request req-1 (it answered success: false); it may have ended already');
    expect(await outcome([404, { status: 'NOT_FOUND' }])).toBeInstanceOf(PollError);
  });

  it('follows no URL of a submit answer that is off fal\'s queue host and the configured base: the request is reached by its id', async () => {
    const elsewhere = await startFake(() => undefined);
    const { fake, fal } = await adapterFor(falQueue({ polls: 0 }));
    const on = (origin: string) => `${origin}/fal-ai/flux/requests/req-1`;
    const handle = { status_url: `${on(elsewhere.url)}/status`, response_url: on(elsewhere.url), cancel_url: `${on(elsewhere.url)}/cancel` };
    expect(await fal.poll({ requestId: 'req-1', model: MODEL, handle })).toMatchObject({ state: 'succeeded' });
    await fal.cancel({ requestId: 'req-1', model: MODEL, handle });
    expect(elsewhere.seen).toEqual([]);
    expect(fake.count('GET', /^\/fal-ai\/flux\/requests\/req-1\/status/)).toBe(1);
    expect(fake.count('PUT', /^\/fal-ai\/flux\/requests\/req-1\/cancel$/)).toBe(1);
  });

  it('refuses bad input and a missing key before anything is sent', () => {
    const fal = new FalAdapter({ key: KEY, baseUrl: 'http://127.0.0.1:9' });
    expect(() => fal.prepare({ ...task, input: { prompt: '' } })).toThrow(/"prompt" is required|"prompt" must be text/);
    expect(() => fal.prepare({ ...task, model: 'fal-ai/flux/pro' })).toThrow('fal has no image model "fal-ai/flux/pro"; did you mean "fal-ai/flux/dev"? The image models are fal-ai/flux/dev, fal-ai/flux/schnell');
    expect(() => new FalAdapter({ key: null, baseUrl: null }).prepare(task)).toThrow(/FAL_KEY/);
  });
});
