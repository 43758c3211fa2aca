import { randomUUID } from 'node:crypto';
import { send, startFake, type FakeServer } from './server.ts';

/**
 * How the stand-in finishes a draft: a good storyboard, one that fails the storyboard's checks, a refusal, cut at the
 * cap, 150 scenes whatever was asked, a 10,000-character imagePrompt, or never (it stays `queued`); `quota` refuses
 * the POST as an account out of credit (HTTP 429 insufficient_quota).
 */
export type DraftAnswer = 'good' | 'bad' | 'refusal' | 'incomplete' | 'many' | 'long' | 'queued' | 'quota';

export const USAGE = { input_tokens: 500, output_tokens: 400, total_tokens: 900 };

function storyboard(scenes: number, answer: DraftAnswer): string {
  const list = Array.from({ length: answer === 'many' ? 150 : scenes }, (_, i) => ({
    imagePrompt: answer === 'bad' && i === 0 ? '' : answer === 'long' ? 'x'.repeat(10_000) : `a fox in scene ${i + 1}`,
    motionPrompt: 'slow push in',
    narration: i === 0 ? null : `The fox, part ${i + 1}.`,
    duration: answer === 'bad' ? 90 : 4,
  }));
  return JSON.stringify({ scenes: list });
}

/**
 * OpenAI's Responses API as openai-node's types describe it (src/resources/responses/responses.ts): POST /v1/responses
 * with `background: true` answers the Response while `queued`; GET /v1/responses/{id} answers it `in_progress`, then
 * ended, with `output[].content[]` (output_text or refusal), `usage` and `incomplete_details`. Every POST is a charge.
 */
export async function startResponsesStandIn(
  answer: DraftAnswer = 'good',
): Promise<FakeServer & { charged: string[]; cancelled: string[]; polls: () => number; answer: (next: DraftAnswer) => void; finishAnyway: () => void }> {
  const charged: string[] = [];
  // A response answered `cancelled` that completes all the same, as one has been seen to (OpenAI promises neither).
  let finishesAnyway = false;
  const cancelled: string[] = [];
  const asked = new Map<string, { scenes: number; polls: number }>();
  let polls = 0;
  const fake = await startFake((req, res) => {
    if (req.method === 'POST' && req.path === '/v1/responses') {
      // "429 - You exceeded your current quota" (developers.openai.com/docs/guides/error-codes).
      if (answer === 'quota') return send(res, 429, { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', code: 'insufficient_quota' } });
      const body = JSON.parse(req.body) as { instructions: string; background: boolean };
      const id = `resp_${randomUUID().replace(/-/g, '')}`;
      charged.push(id);
      asked.set(id, { scenes: Number(/exactly (\d+) scene/.exec(body.instructions)?.[1] ?? 1), polls: 0 });
      return send(res, 200, { id, object: 'response', status: body.background ? 'queued' : 'completed', output: [], usage: null }, { 'x-request-id': `req_${id}` });
    }
    // POST /v1/responses/{id}/cancel answers the Response, `cancelled` while it had not ended (openai-node responses.cancel).
    const cancel = /^\/v1\/responses\/([^/]+)\/cancel$/.exec(req.path);
    if (req.method === 'POST' && cancel) {
      cancelled.push(cancel[1]!);
      return send(res, 200, { id: cancel[1], object: 'response', status: 'cancelled', output: [], usage: null });
    }
    const get = /^\/v1\/responses\/([^/]+)$/.exec(req.path);
    if (req.method === 'GET' && get) {
      polls++;
      const job = asked.get(get[1]!);
      if (!job) return send(res, 404, { error: { message: 'No response found', type: 'invalid_request_error' } });
      if (cancelled.includes(get[1]!) && !finishesAnyway) return send(res, 200, { id: get[1], object: 'response', status: 'cancelled', output: [], usage: null });
      if (answer === 'queued') return send(res, 200, { id: get[1], object: 'response', status: 'queued', output: [] });
      if (job.polls++ === 0 && !finishesAnyway) return send(res, 200, { id: get[1], object: 'response', status: 'in_progress', output: [] });
      const content =
        answer === 'refusal' ? [{ type: 'refusal', refusal: "I can't help with that." }] : [{ type: 'output_text', text: storyboard(job.scenes, answer), annotations: [] }];
      return send(res, 200, {
        id: get[1],
        object: 'response',
        status: answer === 'incomplete' ? 'incomplete' : 'completed',
        incomplete_details: answer === 'incomplete' ? { reason: 'max_output_tokens' } : null,
        output: [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content }],
        usage: USAGE,
      });
    }
  });
  return Object.assign(fake, { charged, cancelled, polls: () => polls, answer: (next: DraftAnswer) => void (answer = next), finishAnyway: () => void (finishesAnyway = true) });
}
