import { describe, expect, it } from 'vitest';
import type { NewTask } from '../main/domain/tasks/model.ts';
import { send, startFake, type Route } from './fakes/server.ts';
import { simulatedStudio } from './helpers/simulatedStudio.ts';

/**
 * Refusals the person must act on, met by the engine with a real studio (SQLite in a temporary folder) and
 * the provider played by a server on 127.0.0.1: the task fails at once with the provider's reason in plain
 * words, nothing charged, one request sent, never retried and never left as an unknown outcome.
 */
async function studioWith(provider: 'openai' | 'elevenlabs', route: Route) {
  const fake = await startFake(route);
  const s = await simulatedStudio({
    jobMs: 0,
    settings: (url) => ({
      engine: { tickMs: 20, poll: { intervalMs: 20, maxIntervalMs: 50, deadlineMs: 2_000 } },
      providers: { simulator: { baseUrl: url }, [provider]: { key: 'provider-secret-key-123456', baseUrl: fake.url } },
    }),
  });
  const project = await s.studio.projects.ensure('Film', Date.now());
  const enqueue = async (task: Omit<NewTask, 'projectId'>) => (await s.studio.tasks.enqueue({ ...task, projectId: project.id }, Date.now())).id;
  return { fake, studio: s.studio, enqueue, run: s.work };
}

describe('a provider that refuses for want of credit', () => {
  it('OpenAI 429 insufficient_quota fails the task at once as out of credit, charged no, with exactly one request sent', async () => {
    // The billing 429 as users received it ([3p]: github.com/mattvr/ShellGPT/issues/23), with the message of
    // OpenAI's error-code guide (developers.openai.com/docs/guides/error-codes); "Retrying these errors won't
    // restore access" (help.openai.com/en/articles/6614457-troubleshooting-api-usage-and-spend-limits).
    const { fake, studio, enqueue, run } = await studioWith('openai', (req, res) =>
      req.method === 'POST'
        ? send(
            res,
            429,
            { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } },
            { 'retry-after': '1', 'x-request-id': 'req_quota' },
          )
        : undefined,
    );
    const id = await enqueue({ kind: 'image', provider: 'openai', model: 'gpt-image-1', input: { prompt: 'a fox' }, maxAttempts: 5 });
    await run();

    const task = (await studio.tasks.get(id))!;
    expect(task).toMatchObject({ status: 'FAILED', charged: 'no', attempts: 1, unknownReason: null, remoteRequestId: null });
    expect(task.error).toMatch(/^OpenAI is out of credit for this account: .*HTTP 429 insufficient_quota: You exceeded your current quota/);
    expect(task.error).toContain('add credit or raise the limit');
    expect(task.error).not.toMatch(/rate limit|will try again/);
    expect(fake.count('POST', /./)).toBe(1);
    expect(JSON.stringify(await studio.tasks.events(id))).not.toContain('provider-secret-key-123456');
  });

  it('ElevenLabs 401 quota_exceeded fails the task at once as out of characters, not as a bad key, charged no', async () => {
    // "quota_exceeded: You have insufficient quota to complete the request" under "Error Code 400 or 401"
    // (help.elevenlabs.io/hc/en-us/articles/19572237925521); the 401 body as users received it
    // ([3p]: github.com/home-assistant/core/issues/160414).
    const { fake, studio, enqueue, run } = await studioWith('elevenlabs', (req, res) =>
      req.method === 'POST'
        ? send(res, 401, { detail: { status: 'quota_exceeded', message: 'This request exceeds your quota of 10000. You have 0 credits remaining, while 91 credits are required for this request.' } })
        : undefined,
    );
    const id = await enqueue({ kind: 'speech', provider: 'elevenlabs', model: 'eleven_multilingual_v2', input: { text: 'hello there', voice_id: 'voice-1' }, maxAttempts: 5 });
    await run();

    const task = (await studio.tasks.get(id))!;
    expect(task).toMatchObject({ status: 'FAILED', charged: 'no', attempts: 1 });
    expect(task.error).toMatch(/^ElevenLabs is out of characters for this account/);
    expect(task.error).not.toMatch(/refused the API key/);
    expect(fake.count('POST', /./)).toBe(1);
  });
});
