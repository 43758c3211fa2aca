import { describe, expect, it } from 'vitest';
import { ElevenLabsAdapter } from '../../main/providers/elevenlabs.ts';
import { FalAdapter } from '../../main/providers/fal.ts';
import { OpenAiAdapter } from '../../main/providers/openai.ts';
import { SubmitError, type ProviderAdapter } from '../../main/providers/port.ts';
import { ReplicateAdapter } from '../../main/providers/replicate.ts';
import { SimulatorAdapter } from '../../main/providers/simulatorAdapter.ts';
import { startSimulator } from '../../main/simulator/server.ts';
import { send, startFake } from '../fakes/server.ts';

/**
 * What each provider's error answers and failed requests mean, against stand-ins on 127.0.0.1 that answer
 * in the documented shapes: which failures the person must act on (failed at once, never retried, nothing
 * charged), which are waited out, and which failed requests the provider bills.
 */

const KEYS = { openai: 'sk-proj-0123456789abcdefghijkl', elevenlabs: 'el-key-0123456789abcdef', fal: 'fal-key-0123456789abcdef', replicate: 'r8_0123456789abcdefghij' };

/** One answer to every POST; the submit's SubmitError. */
async function refusal(adapter: (url: string) => ProviderAdapter, task: Parameters<ProviderAdapter['prepare']>[0], status: number, body: unknown, headers: Record<string, string> = {}) {
  const fake = await startFake((req, res) => (req.method === 'POST' ? send(res, status, body, headers) : undefined));
  const provider = adapter(fake.url);
  const err = await provider.submit(provider.prepare(task), { idempotencyKey: 'k', onRequestId: () => expect.unreachable('a refusal names no accepted request') }).catch((e) => e);
  expect(err).toBeInstanceOf(SubmitError);
  expect(fake.count('POST', /./)).toBe(1);
  for (const key of Object.values(KEYS)) expect(err.message).not.toContain(key);
  return err as SubmitError;
}

describe('OpenAI errors', () => {
  const openai = (url: string) => new OpenAiAdapter({ key: KEYS.openai, baseUrl: url });
  const image = { kind: 'image' as const, model: 'gpt-image-1', input: { prompt: 'a fox' } };

  // The body as reported by users ([3p]: github.com/mattvr/ShellGPT/issues/23); its message is the one in
  // OpenAI's error-code guide: "429 - You exceeded your current quota, please check your plan and billing
  // details" (developers.openai.com/docs/guides/error-codes).
  const quota = { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } };

  it('reads a 429 insufficient_quota as out of credit: refused, not a rate limit, so failed at once and never retried', async () => {
    const err = await refusal(openai, image, 429, quota, { 'retry-after': '20', 'x-request-id': 'req_quota' });
    expect(err.failure.kind).toBe('rejected');
    expect(err.failure.retryAfterMs).toBeUndefined();
    expect(err.message).toMatch(/^OpenAI is out of credit for this account/);
    expect(err.message).toContain('add credit or raise the limit');
    expect(err.message).not.toMatch(/rate limit/);
  });

  it('reads each billing error.code of help.openai.com article 6614457, and the older body with code null, the same way', async () => {
    // "Check error.code in the API response. A billing-related error may still use the broader error.type value
    // insufficient_quota" (help.openai.com/en/articles/6614457-troubleshooting-api-usage-and-spend-limits).
    const codes = ['credit_balance_exhausted', 'organization_spend_limit_exceeded', 'project_spend_limit_exceeded', 'organization_usage_limit_exceeded', null];
    for (const code of codes) {
      const err = await refusal(openai, image, 429, { error: { ...quota.error, code } });
      expect(err.failure.kind).toBe('rejected');
      expect(err.message).toContain(`out of credit for this account`);
      expect(err.message).toContain(`HTTP 429 ${code ?? 'insufficient_quota'}`);
    }
  });

  it('keeps an ordinary 429 a rate limit, waited out as its Retry-After says', async () => {
    // "429 - Rate limit reached for requests" (developers.openai.com/docs/guides/error-codes); the body's
    // code for it is named only by third parties (rate_limit_exceeded, learn.microsoft.com dev-proxy docs).
    const err = await refusal(openai, image, 429, { error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' } }, { 'retry-after': '7' });
    expect(err.failure).toMatchObject({ kind: 'rate_limited', retryAfterMs: 7_000 });
    expect(err.message).toContain('rate limiting');
  });

  it('says which key was refused and where to fix it', async () => {
    // "401 - Incorrect API key provided" (developers.openai.com/docs/guides/error-codes); the body's shape is
    // known from compatible servers only [3p].
    const err = await refusal(openai, image, 401, { error: { message: 'Incorrect API key provided: sk-proj-****', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
    expect(err.failure.kind).toBe('rejected');
    expect(err.message).toMatch(/^OpenAI refused the API key \(HTTP 401: Incorrect API key provided/);
    expect(err.message).toContain('fix the OpenAI key in Settings, or in OPENAI_API_KEY');
  });

  it('says a synchronous result it could not collect was billed: OpenAI had answered it whole', async () => {
    expect(await openai('http://127.0.0.1:9').poll()).toMatchObject({ state: 'failed', charged: 'yes' });
  });
});

describe('ElevenLabs errors', () => {
  const elevenlabs = (url: string) => new ElevenLabsAdapter({ key: KEYS.elevenlabs, baseUrl: url });
  const speech = { kind: 'speech' as const, model: 'eleven_multilingual_v2', input: { text: 'hello there', voice_id: 'voice-1' } };

  it('reads quota_exceeded, on a 401 or a 400, as out of characters and never as a refused key', async () => {
    // "quota_exceeded: You have insufficient quota to complete the request" under "Error Code 400 or 401"
    // (help.elevenlabs.io/hc/en-us/articles/19572237925521); the 401 body as users received it
    // ([3p]: github.com/home-assistant/core/issues/160414).
    const body = { detail: { status: 'quota_exceeded', message: 'This request exceeds your quota of 10000. You have 0 credits remaining, while 91 credits are required for this request.' } };
    for (const status of [401, 400]) {
      const err = await refusal(elevenlabs, speech, status, body);
      expect(err.failure.kind).toBe('rejected');
      expect(err.message).toMatch(/^ElevenLabs is out of characters for this account/);
      expect(err.message).toContain('You have 0 credits remaining');
      expect(err.message).not.toMatch(/refused the API key/);
    }
  });

  it('reads the same code in detail.code, the field the errors page names in place of the legacy status', async () => {
    // elevenlabs.io/docs/eleven-api/resources/errors: `status` "is a legacy field ... instead use the `code` property".
    const err = await refusal(elevenlabs, speech, 401, { detail: { type: 'authentication_error', code: 'quota_exceeded', message: 'You have insufficient quota to complete the request.' } });
    expect(err.message).toMatch(/^ElevenLabs is out of characters/);
  });

  it('says a refused key is the ElevenLabs key, and where to fix it', async () => {
    // Example 401 detail: {"status": "invalid_api_key", "message": "Invalid API key"} (help.elevenlabs.io article above).
    const err = await refusal(elevenlabs, speech, 401, { detail: { status: 'invalid_api_key', message: 'Invalid API key' } });
    expect(err.failure.kind).toBe('rejected');
    expect(err.message).toMatch(/^ElevenLabs refused the API key \(HTTP 401: Invalid API key\); fix the ElevenLabs key in Settings, or in ELEVENLABS_API_KEY/);
  });

  it('waits out too_many_concurrent_requests as a rate limit', async () => {
    // 429 too_many_concurrent_requests / system_busy (elevenlabs-docs developer-guides/error-messages.mdx).
    const err = await refusal(elevenlabs, speech, 429, { detail: { status: 'too_many_concurrent_requests', message: 'Too many concurrent requests.' } }, { 'retry-after': '2' });
    expect(err.failure).toMatchObject({ kind: 'rate_limited', retryAfterMs: 2_000 });
  });
});

describe('fal errors and failed requests', () => {
  const MODEL = 'fal-ai/flux/dev';
  const fal = (url: string) => new FalAdapter({ key: KEYS.fal, baseUrl: url });
  const image = { kind: 'image' as const, model: MODEL, input: { prompt: 'a fox' } };

  it('says a locked account is locked, and where to top up, on the answer third parties report', async () => {
    // fal documents only that a locked account's "API requests will be rejected" (fal.ai/docs/model-apis/faq);
    // the 403 and its detail are third-party reports ([3p]: wavespeed.ai/blog/ai-guides/fal-ai-user-is-locked-admin-lock-fix/).
    const exhausted = await refusal(fal, image, 403, { detail: 'User is locked. Reason: Exhausted balance. Top up your balance at fal.ai/dashboard/billing.' });
    expect(exhausted.failure.kind).toBe('rejected');
    expect(exhausted.message).toMatch(/^fal has locked this account/);
    expect(exhausted.message).toContain('add credit at fal.ai/dashboard/billing');
    expect(exhausted.message).not.toMatch(/refused the API key/);

    const admin = await refusal(fal, image, 403, { detail: 'User is locked. Reason: Admin lock. Please contact support@fal.ai.' });
    expect(admin.message).toMatch(/^fal has locked this account.*Admin lock.*contact fal/);
  });

  it('says which key was refused and where to fix it', async () => {
    const err = await refusal(fal, image, 401, { detail: 'Unauthorized' });
    expect(err.failure.kind).toBe('rejected');
    expect(err.message).toBe('fal refused the API key (HTTP 401: Unauthorized); fix the fal key in Settings, or in FAL_KEY where the key comes from the environment');
  });

  it('counts a request that failed on a server error as not charged, and any other failure as possibly charged, once answered twice', async () => {
    // A finished request is COMPLETED with logs and metrics only (fal-js CompletedQueueStatus); its result URL answers
    // with the error. Request errors, their types and typical statuses: fal.ai/docs/documentation/model-apis/request-errors;
    // model errors, a `detail` array: fal.ai/docs/documentation/model-apis/errors. "Server errors (HTTP 500+) are never
    // charged ... Client-side errors like invalid inputs (HTTP 422) may still be charged if a runner spent GPU time"
    // (fal.ai/docs/model-apis/faq).
    const modelError = { detail: [{ loc: ['body', 'prompt'], msg: 'flagged by a content checker', type: 'content_policy_violation' }] };
    const cases: [number, string | undefined, unknown, 'no' | 'maybe'][] = [
      [504, 'request_timeout', undefined, 'no'],
      [504, 'startup_timeout', undefined, 'no'],
      [503, 'runner_scheduling_failure', undefined, 'no'],
      [503, 'runner_disconnected', undefined, 'no'],
      [502, 'runner_incomplete_response', undefined, 'no'],
      [500, 'runner_server_error', undefined, 'no'],
      [500, 'internal_error', undefined, 'no'],
      [499, 'client_cancelled', undefined, 'maybe'],
      [400, 'bad_request', undefined, 'maybe'],
      [422, undefined, modelError, 'maybe'],
    ];
    for (const [status, errorType, body, charged] of cases) {
      const fake = await startFake((req, res) => {
        if (req.path.endsWith('/status')) return send(res, 200, { status: 'COMPLETED', request_id: 'req-1', logs: [], metrics: {} });
        if (req.path.endsWith('/requests/req-1')) return send(res, status, body ?? { detail: 'the request failed', error_type: errorType }, errorType ? { 'x-fal-error-type': errorType } : {});
      });
      // One answer is asked again (falErrors.ts falRecheckMs); the same failure answered twice ends the request.
      const adapter = fal(fake.url);
      await expect(adapter.poll({ requestId: 'req-1', model: MODEL, handle: null }), `${status} ${errorType}`).rejects.toThrow(/asking once more/);
      const failed = await adapter.poll({ requestId: 'req-1', model: MODEL, handle: null });
      expect(failed, `${status} ${errorType}`).toMatchObject({ state: 'failed', charged, costActual: null });
    }
  });
});

describe('Replicate failed predictions', () => {
  const replicate = (url: string) => new ReplicateAdapter({ key: KEYS.replicate, baseUrl: url });

  it('charges a canceled prediction, not an aborted one, and calls a failed one possibly charged', async () => {
    // "Replicate sets the prediction's status to aborted if the deadline is reached before it starts running,
    // and canceled if the deadline is reached while it's running. For public models, you're only charged for
    // predictions with a canceled status, not for aborted ones." (replicate.com/changelog/2025-10-16-prediction-deadlines)
    // Whether a failed prediction is billed: not found in Replicate's documentation.
    const cases = [
      ['canceled', 'yes'],
      ['aborted', 'no'],
      ['failed', 'maybe'],
    ] as const;
    for (const [status, charged] of cases) {
      const fake = await startFake((req, res) =>
        req.path === '/v1/predictions/p-1'
          ? send(res, 200, { id: 'p-1', model: 'black-forest-labs/flux-schnell', status, error: status === 'failed' ? 'CUDA out of memory' : null, output: null, created_at: '2026-11-29T10:00:00Z' })
          : undefined,
      );
      expect(await replicate(fake.url).poll({ requestId: 'p-1', model: 'black-forest-labs/flux-schnell', handle: null }), status).toMatchObject({ state: 'failed', charged });
    }
  });
});

describe('the simulator’s failed and cancelled jobs', () => {
  it('stay charged, as its ledger keeps them, and the adapter says so', async () => {
    const sim = await startSimulator({ jobMs: 0, faults: { job: ['fail'] } });
    try {
      const adapter = new SimulatorAdapter(sim.url);
      const request = adapter.prepare({ kind: 'image', model: 'sim-image-1', input: { prompt: 'a fox' } });
      const failed = await adapter.submit(request, { idempotencyKey: 'k1' });
      expect(await adapter.poll({ requestId: failed.requestId, model: 'sim-image-1', handle: null })).toMatchObject({ state: 'failed', charged: 'yes' });

      sim.setFaults({ job: ['never-finish'] });
      const cancelled = await adapter.submit(request, { idempotencyKey: 'k2' });
      await adapter.cancel!({ requestId: cancelled.requestId, model: 'sim-image-1', handle: null });
      expect(await adapter.poll({ requestId: cancelled.requestId, model: 'sim-image-1', handle: null })).toMatchObject({ state: 'failed', charged: 'yes' });

      expect(sim.charges.map((c) => c.requestId)).toEqual([failed.requestId, cancelled.requestId]);
    } finally {
      await sim.close();
    }
  });
});
