import { describe, expect, it } from 'vitest';
import { PollError, ResultGone, SubmitError } from '../../main/providers/port.ts';
import { ReplicateAdapter } from '../../main/providers/replicate.ts';
import { failingOnce, send, startFake, type Route } from '../fakes/server.ts';

const KEY = 'r8_0123456789abcdefghij';
const MODEL = 'black-forest-labs/flux-schnell';

function prediction(host: string, status: string, extra: Record<string, unknown> = {}) {
  return {
    id: 'gm3qorzdhgbfurvjtvhg6dckhu',
    model: MODEL,
    version: 'hidden',
    input: { prompt: 'a fox' },
    logs: '',
    output: null,
    error: null,
    status,
    created_at: '2026-11-29T10:00:00.000Z',
    data_removed: false,
    urls: { get: `http://${host}/v1/predictions/gm3qorzdhgbfurvjtvhg6dckhu`, cancel: `http://${host}/v1/predictions/gm3qorzdhgbfurvjtvhg6dckhu/cancel` },
    ...extra,
  };
}

/** Replicate's predictions API: 201 on create, starting → processing → succeeded with output URLs. */
function replicate(opts: { final?: Record<string, unknown>; createStatus?: number; createBody?: unknown; retryAfter?: string } = {}): Route {
  let polls = 0;
  return (req, res) => {
    const host = req.headers.host!;
    if (req.method === 'POST' && req.path === `/v1/models/${MODEL}/predictions`) {
      if (opts.createStatus) return send(res, opts.createStatus, opts.createBody ?? {}, opts.retryAfter ? { 'retry-after': opts.retryAfter } : {});
      return send(res, 201, prediction(host, 'starting'));
    }
    if (req.method === 'GET' && req.path === '/v1/predictions/gm3qorzdhgbfurvjtvhg6dckhu') {
      polls++;
      if (polls === 1) return send(res, 200, prediction(host, 'processing'));
      return send(res, 200, prediction(host, 'succeeded', { output: [`http://${host}/delivery/out-0.webp`], metrics: { predict_time: 0.8 }, ...opts.final }));
    }
    if (req.method === 'GET' && req.path.startsWith('/delivery/')) return send(res, 200, Buffer.from(`webp ${req.path}`), { 'content-type': 'image/webp' });
    if (req.path.startsWith('/v1/predictions?')) {
      return send(res, 200, { next: null, previous: null, results: [prediction(host, 'succeeded'), { ...prediction(host, 'succeeded'), id: 'other', input: { prompt: 'a cat' } }] });
    }
    if (req.method === 'POST' && req.path.endsWith('/cancel')) return send(res, 200, prediction(host, 'canceled'));
  };
}

const task = { kind: 'image' as const, model: MODEL, input: { prompt: 'a fox' } };

describe('Replicate adapter', () => {
  it('creates a prediction without Prefer: wait, polls it, finds its output', async () => {
    const fake = await startFake(replicate());
    const r = new ReplicateAdapter({ key: KEY, baseUrl: fake.url });
    const sent = await r.submit(r.prepare(task), { idempotencyKey: 'k' });
    expect(sent.requestId).toBe('gm3qorzdhgbfurvjtvhg6dckhu');
    const post = fake.seen.find((s) => s.method === 'POST')!;
    expect(post.headers.prefer).toBeUndefined();
    expect(post.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(JSON.parse(post.body)).toEqual({ input: { prompt: 'a fox' } });
    const remote = { requestId: sent.requestId, model: MODEL, handle: null };
    expect(await r.poll(remote)).toMatchObject({ state: 'pending' });
    expect(await r.poll(remote)).toMatchObject({ state: 'succeeded', result: { outputs: [{ contentType: 'image/webp' }] } });
  });

  it('uses /v1/predictions with the version for a versioned model', () => {
    const r = new ReplicateAdapter({ key: KEY, baseUrl: 'http://127.0.0.1:9' });
    const v = 'a'.repeat(64);
    expect(r.prepare({ ...task, model: `black-forest-labs/flux-dev:${v}` }).body).toEqual({ path: '/v1/predictions', json: JSON.stringify({ version: v, input: { prompt: 'a fox' } }) });
    expect(() => r.prepare({ ...task, model: 'black-forest-labs/flux-dev:v1' })).toThrow(/names no Replicate version; write black-forest-labs\/flux-dev or black-forest-labs\/flux-dev:<the 64-character version id>/);
    expect(() => r.prepare({ ...task, model: 'someone/model' })).toThrow(/Replicate has no image model "someone\/model"/);
  });

  it('ends a result Replicate documents as removed (data_removed) as gone, and says it was paid for', async () => {
    const fake = await startFake(replicate({ final: { data_removed: true, output: null } }));
    const r = new ReplicateAdapter({ key: KEY, baseUrl: fake.url });
    const remote = { requestId: 'gm3qorzdhgbfurvjtvhg6dckhu', model: MODEL, handle: null };
    await r.poll(remote);
    const gone = await r.poll(remote).catch((e) => e);
    expect(gone).toBeInstanceOf(ResultGone);
    expect(gone.message).toContain('paid for');
  });

  it('asks again after a 404 or 403 on the prediction and a 404 on the file, then collects the result', async () => {
    const route = failingOnce(/^\/delivery\//, 404, replicate());
    const fake = await startFake((req, res) => {
      const poll = req.method === 'GET' && req.path === '/v1/predictions/gm3qorzdhgbfurvjtvhg6dckhu';
      const n = fake.count('GET', /^\/v1\/predictions\/gm3q/);
      if (poll && n === 1) return send(res, 404, { detail: 'Not found.' });
      if (poll && n === 2) return send(res, 403, { detail: 'You do not have permission' }, { 'retry-after': '7' });
      return route(req, res);
    });
    const r = new ReplicateAdapter({ key: KEY, baseUrl: fake.url });
    const remote = { requestId: 'gm3qorzdhgbfurvjtvhg6dckhu', model: MODEL, handle: null };
    await expect(r.poll(remote)).rejects.toThrow(PollError);
    const refused = await r.poll(remote).catch((e) => e);
    expect(refused).toBeInstanceOf(PollError);
    expect(refused.retryAfterMs).toBe(7_000);
    expect(await r.poll(remote)).toMatchObject({ state: 'pending' });
    const done = await r.poll(remote);
    if (done.state !== 'succeeded') throw new Error(`expected success, got ${done.state}`);
    await expect(r.download(done.result.outputs[0]!)).rejects.toThrow(PollError);
    const chunks: Uint8Array[] = [];
    for await (const c of await r.download(done.result.outputs[0]!)) chunks.push(c);
    expect(Buffer.concat(chunks).toString()).toBe('webp /delivery/out-0.webp');
  });

  it('returns every file of a prediction made with num_outputs above 1', async () => {
    const fake = await startFake((req, res) => {
      const host = req.headers.host!;
      const output = [0, 1].map((i) => `http://${host}/delivery/out-${i}.webp`);
      if (req.path.startsWith('/v1/predictions/')) return send(res, 200, prediction(host, 'succeeded', { output, input: { prompt: 'a fox', num_outputs: 2 } }));
    });
    const r = new ReplicateAdapter({ key: KEY, baseUrl: fake.url });
    const done = await r.poll({ requestId: 'gm3qorzdhgbfurvjtvhg6dckhu', model: MODEL, handle: null });
    if (done.state !== 'succeeded') throw new Error(`expected success, got ${done.state}`);
    expect(done.result.outputs.map((o) => o.url?.replace(/^.*\/delivery\//, ''))).toEqual(['out-0.webp', 'out-1.webp']);
    // An official model is "charged by output" (replicate.com/changelog/2025-01-29-official-models): 2 images at $0.003.
    expect(done.result.costActual).toMatchObject({ amount: 6_000, currency: 'USD', source: expect.stringMatching(/^2 output images returned, at 0.003 USD each/) });
  });

  it('calls a 5xx or a 408 answer to the create maybe applied, since it may follow the prediction being made', async () => {
    for (const status of [500, 502, 503, 504, 408]) {
      const r = new ReplicateAdapter({ key: KEY, baseUrl: (await startFake(replicate({ createStatus: status, createBody: { detail: 'upstream' } }))).url });
      const err = (await r.submit(r.prepare(task), { idempotencyKey: 'k' }).catch((e: SubmitError) => e)) as SubmitError;
      expect(err.failure.kind).toBe('maybe_applied');
      expect(err.failure.neverBilled).toBeFalsy();
    }
  });

  it('reads 429 with its Retry-After and 402 as no credit', async () => {
    const limited = new ReplicateAdapter({ key: KEY, baseUrl: (await startFake(replicate({ createStatus: 429, createBody: { detail: 'Request was throttled.' }, retryAfter: '30' }))).url });
    const err = await limited.submit(limited.prepare(task), { idempotencyKey: 'k' }).catch((e: SubmitError) => e) as SubmitError;
    expect(err.failure).toMatchObject({ kind: 'rate_limited', retryAfterMs: 30_000 });
    const broke = new ReplicateAdapter({ key: KEY, baseUrl: (await startFake(replicate({ createStatus: 402, createBody: { title: 'Insufficient credit' } }))).url });
    const poor = await broke.submit(broke.prepare(task), { idempotencyKey: 'k' }).catch((e: SubmitError) => e) as SubmitError;
    expect(poor.failure.kind).toBe('rejected');
    expect(poor.message).toMatch(/no credit left/);
  });

  it('lists predictions in a window for reconciliation, matching model and input', async () => {
    const r = new ReplicateAdapter({ key: KEY, baseUrl: (await startFake(replicate())).url });
    const found = await r.lookup({ from: 0, to: Date.now() }, r.prepare(task));
    expect(found.map((c) => [c.requestId, c.inputMatches])).toEqual([
      ['gm3qorzdhgbfurvjtvhg6dckhu', true],
      ['other', false],
    ]);
  });
});
