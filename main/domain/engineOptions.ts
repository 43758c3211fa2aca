import type { Kind } from './tasks/model.ts';

/**
 * The engine's settings and their defaults: here, below both the settings that read them and the engine that uses
 * them, so neither imports the other for a default.
 */

export interface PollOptions {
  intervalMs: number;
  maxIntervalMs: number;
  /** Measured from the moment the provider accepted the request. */
  deadlineMs: number;
  /** How long a result the provider said was complete must stay missing before it is called expired (MISSING_FOR_MS when absent). */
  missingForMs?: number;
}

export interface LookupOptions {
  /** Time from the parking, then between lookups of one task. */
  intervalMs: number;
  /** Lookups that find nothing before the person is asked (more while the listing could not show the request yet). */
  tries: number;
  /** How long a request may wait in the provider's queue (DEFAULT_QUEUE_MS when absent); see engine/listedBy.ts. */
  queueMs?: number;
}

export interface EngineOptions {
  leaseMs: number;
  tickMs: number;
  concurrency: Record<Kind, number>;
  poll: PollOptions;
  /** Lookups of unknown outcomes at providers that list their requests (DEFAULT_LOOKUP when absent). */
  lookup?: LookupOptions;
}

export const DEFAULT_ENGINE_OPTIONS: EngineOptions = {
  leaseMs: 30_000,
  tickMs: 500,
  concurrency: { image: 4, clip: 3, speech: 2, render: 1, draft: 1 },
  poll: { intervalMs: 1_000, maxIntervalMs: 10_000, deadlineMs: 30 * 60_000 },
};

/**
 * Ten lookups, thirty seconds apart: five minutes in which a queued request has time to start and end, for a
 * provider whose listing may show a request only then (fal's).
 */
export const DEFAULT_LOOKUP: LookupOptions = { intervalMs: 30_000, tries: 10 };

/**
 * How long a request may wait in a provider's queue for reasons the studio cannot see: requests of the same
 * account sent from elsewhere, and the pauses between the provider's own retries. fal sets no limit of its own:
 * its start deadline, X-Fal-Request-Timeout, has "Default: No timeout" (docs.fal.ai/documentation/model-apis/common-parameters).
 * The studio's own requests ahead of it are counted apart (see queuedBehind). A setting.
 */
export const DEFAULT_QUEUE_MS = 10 * 60_000;

/**
 * How long a completed result must stay missing before it is called expired, unless settings say otherwise. Each
 * provider here keeps a result about an hour: fal keeps a queue result "for 1 hour after the request completes",
 * 6 minutes when it is 10 KB or larger (fal.ai/docs/inference-api/queue/result), its CDN files apart from it
 * (fal.ai/docs/model-apis/data-retention); Replicate removes an API prediction's output files "after an hour"
 * (replicate.com/docs/topics/predictions/data-retention); OpenAI's image URLs "are only valid for 60 minutes after
 * the image has been generated" (openai-node src/resources/images.ts, response_format). A result missing since
 * longer than that is what those documents describe; one missing for less may be a CDN not caught up, a file not
 * propagated yet, or a passing fault, so the first rounds, seconds after the provider said it was complete, decide
 * nothing.
 */
export const MISSING_FOR_MS = 60 * 60_000;
