import type { Media } from '../../main/simulator/media.ts';
import { send, type Route } from './server.ts';

/** What the stand-in would bill: by output for an official model, by predict_time for a pinned version. */
export interface ReplicateBill {
  id: string;
  model: string;
  version: string | null;
  /** USD. */
  amount: number;
  predictTime: unknown;
}

export interface ReplicateStandInOptions {
  /** The predict_time of the n-th prediction, in seconds (anything else, to send a reading that cannot be billed from). */
  predictTime: (n: number) => unknown;
  /** USD per output image of an official model (black-forest-labs/flux-schnell: $3 per thousand). */
  perImage: number;
  /** USD per second of the hardware a pinned version runs on. */
  perSecond: number;
}

/**
 * Replicate's predictions API for the models the studio sends (replicate.com/docs/reference/http): a create by model
 * (POST /v1/models/{owner}/{name}/predictions) or by version (POST /v1/predictions with `version`) answers 201 with the
 * prediction, `status: "starting"`; a get answers it `succeeded` with its output URLs and, as a terminated prediction
 * does, "a `metrics` object with a `predict_time` property showing the amount of CPU or GPU time, in seconds, that the
 * prediction used while running ... [and] a `total_time` property" (replicate-python-beta
 * src/replicate/resources/predictions.py). The bill it keeps follows Replicate's rules: an official model per output
 * (replicate.com/changelog/2025-01-29-official-models), a version by time (replicate.com/docs/topics/billing).
 */
export function replicateStandIn(png: Media, opts: ReplicateStandInOptions): { route: Route; bills: ReplicateBill[] } {
  const bills: ReplicateBill[] = [];
  const predictions = new Map<string, Record<string, unknown>>();
  const route: Route = (req, res) => {
    const host = `http://${req.headers.host}`;
    const byModel = /^\/v1\/models\/([\w.-]+\/[\w.-]+)\/predictions$/.exec(req.path);
    if (req.method === 'POST' && (byModel || req.path === '/v1/predictions')) {
      const body = JSON.parse(req.body) as { version?: string; input: Record<string, unknown> };
      const n = bills.length + 1;
      const id = `rp${n}`;
      const version = byModel ? null : (body.version ?? null);
      const model = byModel?.[1] ?? 'black-forest-labs/flux-schnell';
      const predictTime = opts.predictTime(n);
      const images = typeof body.input.num_outputs === 'number' ? body.input.num_outputs : 1;
      bills.push({ id, model, version, predictTime, amount: version ? Number(predictTime) * opts.perSecond : images * opts.perImage });
      const created = { id, model, version: version ?? 'official', input: body.input, status: 'starting', created_at: new Date().toISOString(), urls: { get: `${host}/v1/predictions/${id}` } };
      predictions.set(id, {
        ...created,
        status: 'succeeded',
        output: Array.from({ length: images }, (_, i) => `${host}/delivery/${id}/out-${i}.png`),
        data_removed: false,
        metrics: { predict_time: predictTime, total_time: Number(predictTime) + 0.4 },
      });
      return send(res, 201, created);
    }
    const got = /^\/v1\/predictions\/(\w+)$/.exec(req.path);
    if (req.method === 'GET' && got) {
      const p = predictions.get(got[1]!);
      return p ? send(res, 200, p) : send(res, 404, { detail: 'Not found.' });
    }
    if (req.method === 'GET' && req.path.startsWith('/delivery/')) return send(res, 200, png.bytes, { 'content-type': png.contentType });
  };
  return { route, bills };
}
