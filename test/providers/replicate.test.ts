import { describe, expect, it } from 'vitest';
import { SubmitError } from '../../main/providers/port.ts';
import { ReplicateAdapter } from '../../main/providers/replicate.ts';
import { send, startFake, type Route } from '../fakes/server.ts';

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
    expect(r.prepare({ ...task, model: `someone/model:${v}` }).body).toEqual({ path: '/v1/predictions', json: JSON.stringify({ version: v, input: { prompt: 'a fox' } }) });
  });

  it('says plainly that a result Replicate already deleted is gone, and that it was paid for', async () => {
    const fake = await startFake(replicate({ final: { data_removed: true, output: null } }));
    const r = new ReplicateAdapter({ key: KEY, baseUrl: fake.url });
    const remote = { requestId: 'gm3qorzdhgbfurvjtvhg6dckhu', model: MODEL, handle: null };
    await r.poll(remote);
    expect(await r.poll(remote)).toMatchObject({ state: 'failed', error: expect.stringContaining('paid for') });
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
