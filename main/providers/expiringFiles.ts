import type { ProviderHttp } from './providerHttp.ts';
import { PollError, ResultMissing, type ProviderOutput } from './port.ts';

/** The answers of a result's address that say nothing is there; no provider here documents another for an expired one. */
const NOTHING_THERE = new Set([404, 410]);

/**
 * Downloads a result file of a provider that documents its files expire: a file URL answering 404 or 410 is
 * ResultMissing (asked for again in rounds, see collectRetry.ts), any other failure a PollError as usual.
 */
export async function downloadExpiring(http: ProviderHttp, output: ProviderOutput, signal?: AbortSignal, withCredentials = false): Promise<AsyncIterable<Uint8Array>> {
  try {
    return await http.download(output, signal, withCredentials);
  } catch (err) {
    if (err instanceof PollError && output.url && NOTHING_THERE.has(err.status ?? 0)) throw new ResultMissing(err.message, output.url, err.status!);
    throw err;
  }
}

/** Whether an answer's status says nothing is there; no answer at all (null), a timeout or a 5xx never does. */
export function saysNothingIsThere(status: number | null): boolean {
  return status !== null && NOTHING_THERE.has(status);
}
