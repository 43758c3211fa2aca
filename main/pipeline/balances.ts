/** Asks each provider of a Generate's new steps what its account has left, for the estimate to show beside the price. */
import type { PreparedRequest } from '../providers/port.ts';
import { titleOf } from '../providers/registry.ts';
import type { BalanceNote } from './estimate.ts';
import type { PipelineDeps } from './generateOptions.ts';

const ALLOWANCE_TIMEOUT_MS = 5_000;

/** Asks each provider of the new steps what its account has left, where it tells an API key. */
export async function balances(deps: PipelineDeps, requests: Map<string, PreparedRequest[]>): Promise<BalanceNote[]> {
  const notes: BalanceNote[] = [];
  for (const [provider, sent] of requests) {
    const adapter = deps.provider(provider)!;
    if (!adapter.allowance) {
      if (provider !== 'simulator') notes.push({ provider, text: `${titleOf(provider)} tells an API key nothing of its balance; check it on its own site`, over: false });
      continue;
    }
    try {
      const a = await adapter.allowance(sent, AbortSignal.timeout(ALLOWANCE_TIMEOUT_MS));
      const over = a.used + a.needed > a.limit;
      const resets = a.resetsAt === null ? '' : `, counted afresh on ${new Date(a.resetsAt).toISOString().slice(0, 10)}`;
      notes.push({
        provider,
        text: `${a.used} of ${a.limit} ${a.unit} used this period${resets}; these steps need about ${a.needed}${over ? `, ${a.used + a.needed - a.limit} more than is left` : ''}${a.note ? `. ${a.note}` : ''}`,
        over,
      });
    } catch (err) {
      notes.push({ provider, text: `${titleOf(provider)} could not be asked what the account has left (${(err as Error).message})`, over: false });
    }
  }
  return notes;
}
