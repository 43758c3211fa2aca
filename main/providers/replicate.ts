import { ProviderHttp } from './providerHttp.ts';
import { canonicalJson } from '../domain/tasks/inputHash.ts';
import { citation, entryFor } from '../pricing/catalogue.ts';
import { billedByTime, runSeconds, timeCost, timePriceOf } from '../pricing/timeBilling.ts';
import { toMicros, type RemoteRef, type Task } from '../domain/tasks/model.ts';
import type { AdapterConfig } from './config.ts';
import { PollError, ResultGone, SubmitError, type CancelOutcome, type Candidate, type PollResult, type PreparedRequest, type ReportedCost, type ProviderAdapter, type ProviderCapabilities, type ProviderOutput, type SubmitOptions, type SubmitResult } from './port.ts';
import { InvalidInput } from './invalidInput.ts';
import { modelFor, type ModelSpec } from './models.ts';
import { checkInput, type InputSchema } from './schema.ts';
import { collectOutputs, obj, requireKey } from './shared.ts';
import { downloadExpiring } from './expiringFiles.ts';
import { REPLICATE_FLUX_ASPECTS } from './frameSizes.ts';

export const REPLICATE_URL = 'https://api.replicate.com';

const PROMPT = { type: 'string', required: true, maxLength: 5000, hint: 'what to make, in words' } as const;
const IMAGE: InputSchema = {
  prompt: PROMPT,
  seed: { type: 'integer', min: 0 },
  num_outputs: { type: 'integer', min: 1, max: 4 },
  aspect_ratio: { type: 'string', oneOf: REPLICATE_FLUX_ASPECTS },
};
/**
 * black-forest-labs/flux-schnell's input schema as Replicate publishes it (replicate.com/black-forest-labs/flux-schnell/api,
 * version c846a699): num_inference_steps "Min: 1 Max: 4", output_quality "Max: 100".
 */
const SCHNELL: InputSchema = { ...IMAGE, num_inference_steps: { type: 'integer', min: 1, max: 4 }, output_quality: { type: 'integer', min: 0, max: 100 } };

/** Official models, run by owner/name (replicate.com/collections/official); a version may be pinned with ":<64 hex>". */
const MODELS: ModelSpec[] = [
  { id: 'black-forest-labs/flux-schnell', kind: 'image', title: 'FLUX.1 [schnell]', inputs: SCHNELL },
  { id: 'black-forest-labs/flux-dev', kind: 'image', title: 'FLUX.1 [dev]', inputs: IMAGE },
];

/**
 * Replicate predictions, created without `Prefer: wait` so the prediction id comes back at once and is
 * saved before any generation happens. Official models by owner/name, others by owner/name:version.
 * No response header names the prediction in Replicate's docs or its SDK (replicate-javascript reads
 * none), so the id is in the body only: a create whose answer is lost is an unknown outcome, found again
 * through the predictions listing.
 */
export class ReplicateAdapter implements ProviderAdapter {
  readonly id = 'replicate';
  readonly capabilities: ProviderCapabilities = {
    mode: 'async',
    idempotencyHeader: null,
    lookup: true,
    lookupLists:
      'Replicate lists every prediction by when it was created, queued ones included; it removes the input of an API ' +
      'prediction an hour after it ends, so an older one can be matched only by its model and the time it was made',
    pollById: true,
    cancel: true,
    quote: 'catalogue',
    billing: 'the output images of an official model\'s prediction, at its price per image; a pinned version\'s run time (metrics.predict_time), at the hardware\'s price per second',
    neverBilled: null,
    models: MODELS,
  };
  private readonly http: ProviderHttp;

  constructor(private readonly config: AdapterConfig) {
    this.http = new ProviderHttp({
      name: 'Replicate',
      baseUrl: config.baseUrl ?? REPLICATE_URL,
      headers: config.key ? { authorization: `Bearer ${config.key}` } : {},
      timeouts: config.timeouts,
      keyVariable: 'REPLICATE_API_TOKEN',
    });
  }

  prepare(task: Pick<Task, 'kind' | 'model' | 'input'>): PreparedRequest {
    const [name = '', version, ...rest] = task.model.split(':');
    const model = modelFor('Replicate', MODELS, task.kind, name);
    if (rest.length > 0 || (version !== undefined && !/^[0-9a-f]{64}$/.test(version))) {
      throw new InvalidInput(`"${task.model}" names no Replicate version; write ${name} or ${name}:<the 64-character version id>`);
    }
    requireKey(this.config, 'Replicate', 'REPLICATE_API_TOKEN');
    const input = checkInput(model.inputs, task.input);
    const body = version ? { version, input } : { input };
    return { kind: task.kind, model: task.model, input, body: { path: version ? '/v1/predictions' : `/v1/models/${name}/predictions`, json: JSON.stringify(body) } };
  }

  async submit(request: PreparedRequest, options: SubmitOptions): Promise<SubmitResult> {
    const { path, json } = request.body as { path: string; json: string };
    const res = await this.http.submit(path, json, { 'content-type': 'application/json' }, options);
    const body = await this.http.acceptedJson(res);
    if (typeof body.id !== 'string' || !body.id) {
      throw new SubmitError({ kind: 'maybe_applied', message: 'Replicate accepted the prediction but sent no id' });
    }
    return { requestId: body.id, handle: null, quote: null, result: null };
  }

  /**
   * Any failed GET, a 404 included, is asked again later. The one documented sign of a lost result is
   * `data_removed`: "Whether the prediction output has been deleted" (replicate-python-beta
   * src/replicate/types/prediction.py); API predictions lose their output after an hour
   * (replicate.com/docs/topics/predictions/data-retention).
   */
  async poll(remote: RemoteRef, signal?: AbortSignal): Promise<PollResult> {
    const p = obj((await this.http.get(`/v1/predictions/${encodeURIComponent(remote.requestId)}`, signal)).json);
    switch (p.status) {
      case 'starting':
      case 'processing':
        return { state: 'pending', progress: null };
      // Whether a failed prediction is billed, Replicate's documentation does not say.
      case 'failed':
        return { state: 'failed', error: `Replicate: ${String(p.error ?? 'the prediction failed')}`, costActual: null, charged: 'maybe' };
      // "aborted" (stopped before it started running) and "canceled" (stopped while running): "For public models,
      // you're only charged for predictions with a canceled status, not for aborted ones"
      // (replicate.com/changelog/2025-10-16-prediction-deadlines). An aborted one never ran and made no output,
      // so no billing rule, by time or by output, charges it.
      case 'canceled': {
        const { costActual, costWhy } = this.billedTime(remote.model, p.metrics);
        const error = 'the prediction was canceled at Replicate while it ran';
        return { state: 'failed', error: costWhy ? `${error}; ${costWhy}` : error, costActual, charged: 'yes' };
      }
      case 'aborted':
        return { state: 'failed', error: 'the prediction was aborted at Replicate before it started', costActual: null, charged: 'no' };
      case 'succeeded': {
        if (p.data_removed) throw new ResultGone('Replicate already deleted this result (it keeps API results for an hour); it was paid for');
        const outputs = collectOutputs(p.output);
        if (outputs.length === 0) throw new PollError('Replicate sent a finished prediction with no file in its output');
        const cost = billedByTime(this.id, remote.model) ? this.billedTime(remote.model, p.metrics) : { costActual: this.billed(remote.model, outputs.length) };
        return { state: 'succeeded', result: { outputs, ...cost } };
      }
      default:
        throw new PollError(`Replicate reported an unknown status ${JSON.stringify(p.status)}`);
    }
  }

  /**
   * Official models are "charged by output" (replicate.com/changelog/2025-01-29-official-models): the images
   * the prediction returned, at the model's price per image.
   */
  private billed(model: string, images: number): ReportedCost | null {
    const entry = entryFor(this.id, model, 'image');
    if (entry?.pricing.per !== 'image') return null;
    return {
      amount: toMicros(images * entry.pricing.price),
      currency: entry.currency,
      source: `${images} output image${images === 1 ? '' : 's'} returned, at ${entry.pricing.price} ${entry.currency} each (billed per output); ${citation(entry)}`,
      // Replicate reports the outputs, not the money: the amount is counted here at the catalogue's price.
      reported: 'image',
      units: { count: images, unit: 'image' },
    };
  }

  /**
   * A pinned version is billed by time: "Terminated predictions (with a status of `succeeded`, `failed`, or `canceled`)
   * will include a `metrics` object with a `predict_time` property showing the amount of CPU or GPU time, in seconds,
   * that the prediction used while running" (Replicate's API reference, replicate-python-beta
   * src/replicate/resources/predictions.py), at the hardware's price per second (prices.json timeBilling says which).
   * None for a model billed per output; none, with why, for a run time that cannot be billed from (runSeconds).
   */
  private billedTime(model: string, metrics: unknown): { costActual: ReportedCost | null; costWhy?: string } {
    const price = timePriceOf(this.id);
    if (!billedByTime(this.id, model) || !price) return { costActual: null };
    const run = runSeconds((metrics as { predict_time?: unknown } | null | undefined)?.predict_time);
    if ('why' in run) return { costActual: null, costWhy: run.why };
    const { seconds } = run;
    const { micros, how } = timeCost(seconds, price);
    return { costActual: { amount: micros, currency: price.currency, source: `billed by time: Replicate reported ${seconds} s of run time (metrics.predict_time); ${how}`, reported: 'second', units: { count: seconds, unit: 'second' } } };
  }

  /**
   * "For predictions created through the API, all input parameters, output values, output files, and logs are
   * automatically removed after an hour" (replicate.com/docs/topics/predictions/data-retention): an output file that
   * answers 404 or 410 while the prediction does not say `data_removed` is asked for again in rounds, and called
   * expired only when still gone after them (collectRetry.ts), or once the prediction says so.
   */
  download(output: ProviderOutput, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    // Files served by the API itself need the token; files on a delivery host do not.
    return downloadExpiring(this.http, output, signal, !!output.url?.startsWith(this.http.url('/')));
  }

  /** The cancel answers with the prediction (replicate.com/docs/reference/http#predictions.cancel): its status says what became of it. */
  async cancel(remote: RemoteRef, signal?: AbortSignal): Promise<CancelOutcome> {
    const { json } = await this.http.get(`/v1/predictions/${encodeURIComponent(remote.requestId)}/cancel`, signal, 'POST');
    const status = obj(json).status;
    if (status === 'canceled' || status === 'aborted') return 'cancelled';
    if (status === 'succeeded' || status === 'failed') return 'finished';
    return 'requested';
  }

  /**
   * Predictions created in the window (`created_after`, `created_before`: replicate-python-beta
   * types/prediction_list_params.py), of this model only. "For predictions created through the API, all input
   * parameters, output values, output files, and logs are automatically removed after an hour"
   * (replicate.com/docs/topics/predictions/data-retention); `data_removed` says so on the prediction
   * (types/prediction.py). Past that, a prediction of the same model made in the window is still offered,
   * with its time and the reason its input could not be compared, and left to the person.
   */
  async lookup(window: { from: number; to: number }, request: PreparedRequest, signal?: AbortSignal): Promise<Candidate[]> {
    const wanted = canonicalJson(request.input);
    const model = request.model.split(':')[0];
    const found: Candidate[] = [];
    let next: string | null = `/v1/predictions?created_after=${new Date(window.from).toISOString()}&created_before=${new Date(window.to).toISOString()}`;
    while (next && found.length < 1_000) {
      const page = obj((await this.http.get(next, signal)).json);
      for (const item of (page.results as unknown[] | undefined) ?? []) {
        const p = obj(item);
        if (p.model !== model) continue;
        const removed = p.data_removed === true || !p.input || typeof p.input !== 'object' || Object.keys(p.input).length === 0;
        found.push({
          requestId: String(p.id),
          createdAt: Date.parse(String(p.created_at)),
          status: String(p.status),
          inputMatches: !removed && canonicalJson(p.input) === wanted,
          ...(removed ? { inputGone: 'Replicate removes the input of an API prediction an hour after it ends' } : {}),
        });
      }
      next = typeof page.next === 'string' ? page.next : null;
    }
    return found;
  }
}
