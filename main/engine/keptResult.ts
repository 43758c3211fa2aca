import type { ProviderResult, ReportedCost } from '../providers/port.ts';
import type { TaskEvent } from '../domain/tasks/model.ts';

/**
 * A completed result's file URLs, kept in the task's history the moment they are received, where the provider keeps
 * the files longer than the answer that names them (fal: see ProviderCapabilities.filesOutliveResult). When that
 * answer is gone, or cannot be had, the files are asked for at these URLs before anything is called missing.
 */
export interface KeptResult {
  requestId: string;
  files: { url: string; contentType: string | null }[];
  costActual: ReportedCost | null;
}

/** The event detail that keeps `result` for `requestId`, or null when it has no file at a web address to keep. */
export function keptDetail(requestId: string, result: ProviderResult): { resultFiles: KeptResult } | null {
  const files = result.outputs.filter((o) => !o.bytes && o.url && /^https?:\/\//.test(o.url)).map((o) => ({ url: o.url!, contentType: o.contentType }));
  if (files.length === 0 || files.length < result.outputs.length) return null;
  return { resultFiles: { requestId, files, costActual: result.costActual } };
}

/** The result kept for `requestId` since a person last acted on the task, or null. */
export function keptResult(events: readonly TaskEvent[], requestId: string | null): ProviderResult | null {
  let kept: KeptResult | null = null;
  for (const e of events) {
    const found = (e.detail as { resultFiles?: KeptResult } | null)?.resultFiles;
    if (e.actor === 'person') kept = null;
    else if (found && found.requestId === requestId) kept = found;
  }
  return kept && { outputs: kept.files.map((f) => ({ url: f.url, contentType: f.contentType })), costActual: kept.costActual };
}
