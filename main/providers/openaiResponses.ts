import { citation, entryFor } from '../pricing/catalogue.ts';
import { toMicros, type RemoteRef, type Task } from '../domain/tasks/model.ts';
import { DEFAULT_DRAFT_SCENES, draftInstructions, draftSchema, MAX_DRAFT_SCENES, MAX_IDEA, readDraftAnswer } from '../domain/storyboardDraft.ts';
import type { AdapterConfig } from './config.ts';
import { PollError, SubmitError, type CancelOutcome, type PollResult, type PreparedRequest, type ProviderAdapter, type ProviderCapabilities, type ProviderOutput, type ReportedCost, type SubmitOptions, type SubmitResult } from './port.ts';
import type { ProviderHttp } from './providerHttp.ts';
import { modelFor, type ModelSpec } from './models.ts';
import { checkInput, type InputSchema } from './schema.ts';
import { requireKey } from './shared.ts';
import { openAiHttp } from './openai.ts';

/** What a draft task takes: the idea and how many scenes (main/domain/storyboardDraft.ts). */
export const DRAFT_INPUTS: InputSchema = {
  idea: { type: 'string', required: true, maxLength: MAX_IDEA, hint: 'the idea, in a few sentences' },
  scenes: { type: 'integer', min: 1, max: MAX_DRAFT_SCENES },
};
const MODELS: ModelSpec[] = [{ id: 'gpt-4.1-mini', kind: 'draft', title: 'GPT-4.1 mini', inputs: DRAFT_INPUTS }];

/** A message's content is output_text ({type, text}) or a refusal ({type: 'refusal', refusal}) (ResponseOutputMessage). */
function messageContent(body: Record<string, any>): any[] {
  return (Array.isArray(body.output) ? body.output : []).flatMap((o: any) => (o?.type === 'message' && Array.isArray(o.content) ? o.content : []));
}

function outputText(body: Record<string, any>): string {
  return messageContent(body).filter((c: any) => c?.type === 'output_text' && typeof c.text === 'string').map((c: any) => c.text).join('');
}

/** What the model wrote, its text or its refusal, as the person would read it; '' when it wrote nothing. */
function answerText(body: Record<string, any>): string {
  const refusal = messageContent(body).find((c: any) => c?.type === 'refusal');
  return refusal ? String(refusal.refusal) : outputText(body);
}

/** Output tokens allowed per scene, and for the rest of the answer: a cap on what the answer can cost. */
export const TOKENS_PER_SCENE = 300;
const TOKENS_BESIDE = 200;

/**
 * Storyboard drafts through OpenAI's Responses API (POST /v1/responses; openai-node src/resources/responses/responses.ts).
 * Sent with `background: true` ("Whether to run the model response in the background") and `store: true` (background
 * responses must be stored), so the answer to the POST is the response's id while it is `queued`, and the result is
 * asked for by that id (GET /v1/responses/{id}, `responses.retrieve`) until it ends: a crash after the id is recorded
 * asks again instead of paying again. OpenAI honours no idempotency key (openai-node's client sets no
 * `idempotencyHeader`) and lists no past responses, so an answer lost before the id arrived is an unknown outcome.
 */
export class OpenAiResponsesAdapter implements ProviderAdapter {
  readonly id = 'openai-responses';
  readonly capabilities: ProviderCapabilities = {
    mode: 'async',
    idempotencyHeader: null,
    lookup: false,
    pollById: true,
    // POST /v1/responses/{id}/cancel: "Only responses created with the background parameter set to true can be
    // cancelled" (openai-node src/resources/responses/responses.ts `cancel`). Whether a cancelled response is billed
    // is not documented (a cancelled one has even been seen to complete later), so it stays "maybe" charged.
    cancel: true,
    quote: 'catalogue',
    billing: "the answer's usage (input and output tokens) at the catalogue's token prices",
    neverBilled: null,
    models: MODELS,
  };
  private readonly http: ProviderHttp;

  constructor(private readonly config: AdapterConfig) {
    this.http = openAiHttp(config, { timeouts: config.timeouts });
  }

  prepare(task: Pick<Task, 'kind' | 'model' | 'input'>): PreparedRequest {
    modelFor('OpenAI', MODELS, task.kind, task.model);
    requireKey(this.config, 'OpenAI', 'OPENAI_API_KEY');
    const input = checkInput(DRAFT_INPUTS, task.input);
    const scenes = (input.scenes as number | undefined) ?? DEFAULT_DRAFT_SCENES;
    const body = {
      model: task.model,
      instructions: draftInstructions(scenes),
      input: input.idea,
      // "An upper bound for the number of tokens that can be generated for a response" (Response.max_output_tokens).
      max_output_tokens: TOKENS_PER_SCENE * scenes + TOKENS_BESIDE,
      // Structured Outputs: "the model will always follow the exact schema defined in the `schema` field" (ResponseFormatTextJSONSchemaConfig).
      text: { format: { type: 'json_schema', name: 'storyboard', strict: true, schema: draftSchema() } },
      background: true,
      store: true,
    };
    const { model: _, background: __, store: ___, ...sent } = body;
    return { kind: task.kind, model: task.model, input: { ...sent, scenes }, body: JSON.stringify(body) };
  }

  async submit(request: PreparedRequest, options: SubmitOptions): Promise<SubmitResult> {
    const res = await this.http.submit('/v1/responses', request.body as string, { 'content-type': 'application/json' }, options);
    const body = await this.http.acceptedJson(res);
    if (typeof body.id !== 'string' || !body.id) throw new SubmitError({ kind: 'maybe_applied', message: 'OpenAI accepted the draft but its answer named no response id' });
    // Journaled at once: a crash before the row is written still leaves the id to poll (requestIdKeeper.ts).
    options.onRequestId?.(body.id);
    return { requestId: body.id, handle: null, quote: null, result: null };
  }

  async poll(remote: RemoteRef, signal?: AbortSignal): Promise<PollResult> {
    const { json } = await this.http.get(`/v1/responses/${encodeURIComponent(remote.requestId)}`, signal);
    const body = json as Record<string, any> | null;
    if (!body || typeof body !== 'object') throw new PollError('OpenAI sent no response object');
    const cost = tokenCost(remote.model, body.usage);
    // What the model wrote is kept even when unusable: it was paid for, and the person may mend it by hand.
    const said = answerText(body);
    const paid = (error: string): PollResult => ({ state: 'failed', error, costActual: cost, charged: 'yes', ...(said ? { answer: said } : {}) });
    // ResponseStatus: 'completed' | 'failed' | 'in_progress' | 'cancelled' | 'queued' | 'incomplete'.
    switch (body.status) {
      case 'queued':
      case 'in_progress':
        return { state: 'pending', progress: null };
      case 'incomplete': {
        // Response.incomplete_details.reason: 'max_output_tokens' | 'content_filter'.
        const reason = body.incomplete_details?.reason;
        return paid(
          reason === 'max_output_tokens'
            ? 'OpenAI stopped the draft at its length cap before it was whole; it was paid for and nothing was put on the storyboard. Ask for fewer scenes or a shorter idea'
            : `OpenAI left the draft unfinished (${String(reason ?? 'no reason given')}); it was paid for and nothing was put on the storyboard`,
        );
      }
      case 'failed':
        return { state: 'failed', error: `OpenAI could not make the draft: ${String(body.error?.message ?? 'no reason given')}`, costActual: cost, charged: 'maybe' };
      case 'cancelled':
        return { state: 'failed', error: 'the draft was cancelled at OpenAI', costActual: cost, charged: 'maybe' };
      case 'completed':
        return this.completed(body, cost, paid);
      default:
        throw new PollError(`OpenAI reported an unknown status ${JSON.stringify(body.status)}`);
    }
  }

  private completed(body: Record<string, any>, cost: ReportedCost | null, paid: (error: string) => PollResult): PollResult {
    const refusal = messageContent(body).find((c: any) => c?.type === 'refusal');
    if (refusal) return paid(`OpenAI's model refused to draft this idea ("${String(refusal.refusal).slice(0, 300)}"); it was paid for and nothing was put on the storyboard`);
    try {
      const board = readDraftAnswer(outputText(body));
      const kept = JSON.stringify({ scenes: board.scenes.map(draftScene) }, null, 2);
      const output: ProviderOutput = { url: null, bytes: Buffer.from(kept), contentType: 'application/json' };
      return { state: 'succeeded', result: { outputs: [output], costActual: cost, answer: kept } };
    } catch (err) {
      return paid(`OpenAI answered with a storyboard the studio cannot use (${(err as Error).message}); it was paid for and nothing was put on the storyboard`);
    }
  }

  /** The cancel answers with the Response: its status says what became of it. */
  async cancel(remote: RemoteRef, signal?: AbortSignal): Promise<CancelOutcome> {
    const { json } = await this.http.get(`/v1/responses/${encodeURIComponent(remote.requestId)}/cancel`, signal, 'POST');
    const status = (json as Record<string, unknown> | null)?.status;
    // OpenAI documents no promise that a cancelled background response stays so, or is not billed (one has been seen
    // to complete after its cancel): the studio keeps following it, as it does a cancel passed on, and collects
    // whatever it ends with.
    if (status === 'cancelled') return 'requested';
    if (status === 'completed' || status === 'failed' || status === 'incomplete') return 'finished';
    return 'requested';
  }

  download(): Promise<AsyncIterable<Uint8Array>> {
    throw new PollError('a storyboard draft comes with its answer; there is no file to download');
  }
}

/** The fields a draft gives a scene, as a person would write them. */
function draftScene(s: { imagePrompt: string; motionPrompt: string; narration: string | null; duration: number }) {
  return { imagePrompt: s.imagePrompt, motionPrompt: s.motionPrompt, narration: s.narration, duration: s.duration };
}

/** What the answer cost from its `usage` (ResponseUsage.input_tokens, output_tokens) at the catalogue's token prices. */
function tokenCost(model: string, usage: any): ReportedCost | null {
  const entry = entryFor('openai-responses', model, 'draft');
  if (!entry || entry.pricing.per !== 'token' || !usage || typeof usage !== 'object') return null;
  const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
  const tokensIn = count(usage.input_tokens);
  const tokensOut = count(usage.output_tokens);
  if (tokensIn === null || tokensOut === null) return null;
  const p = entry.pricing;
  return {
    amount: toMicros((tokensIn * p.input + tokensOut * p.output) / 1_000_000),
    currency: entry.currency,
    source: `usage reported with the draft: ${tokensIn} input tokens at ${p.input} and ${tokensOut} output tokens at ${p.output} ${entry.currency} per million; ${citation(entry)}`,
    // OpenAI reports tokens, not money: the amount is counted here at the catalogue's prices.
    reported: 'token',
    units: { count: tokensIn + tokensOut, unit: 'token' },
  };
}
