/**
 * Which of this studio's fal requests a line of fal's usage records bills, and for how much. fal's usage API sums
 * usage per endpoint and time bucket ("Each item includes the billed unit quantity and unit price used to compute
 * cost", cost "(quantity × unit_price)": fal.ai/docs/platform-apis/v1/models/usage.md, read 2026-12-02) and names no
 * request. A line is split among this studio's requests only where they account for all of it: the line's quantity
 * is exactly what they asked for, in its unit, so no other request (another app of the workspace, another machine's
 * studio on another database) can be in it; each request's share is then its units at the line's unit price.
 * Anything less certain leaves the estimate, with the reason.
 *
 * Each result of a bucket has `endpoint_id`, `unit`, `quantity`, `unit_price`, `cost` and `currency` (same page). The
 * quantity is counted in the one unit the line names, read the one way the quote reads it for the model
 * (falQuote.ts falQuantity: an 'image' of FLUX [dev] is a megapixel's worth, of a flat-priced model one image; a
 * 'video' one clip of the priced length): a line is never matched by counting our requests in some other unit that
 * happens to give its number. A line in another currency than the task's keeps the estimate: the store keeps one
 * currency per task, and no rate is set to convert.
 */
import { toMicros, type Kind } from '../domain/tasks/model.ts';
import type { CatalogueEntry } from './catalogue.ts';
import { falQuantity } from './falQuote.ts';

/** One line of a usage bucket, as fal's usage API gives it. */
export interface UsageLine {
  /** The bucket's start, ms; it runs `bucketMs`. */
  bucket: number;
  endpointId: string;
  unit: string;
  quantity: number;
  unitPrice: number;
  cost: number;
  currency: string;
}

/** One of this studio's fal requests that fal may have billed. */
export interface SentRequest {
  id: number;
  endpointId: string;
  kind: Kind;
  input: Record<string, unknown>;
  /** When its send was marked, ms: fal cannot have billed it before. */
  sentAt: number;
  /** When its result was collected, ms (null while open): fal billed it by then. */
  endedAt: number | null;
  /** Succeeded and charged: its units are known. Otherwise a charge of unknown size may be in any bucket it spans. */
  settled: boolean;
  /** The currency its estimate, and so any bill recorded for it, is in. */
  currency: string;
  /** The catalogue's entry for its model, which says how fal's units count it (falQuote.ts). */
  entry: CatalogueEntry | undefined;
}

export type BillVerdict = { id: number; billed: true; amount: number; source: string } | { id: number; billed: false; why: string };

const same = (a: number, b: number) => Math.abs(a - b) < 1e-9;
const stamp = (ms: number) => new Date(ms).toISOString().replace(':00.000Z', ' UTC').replace('T', ' ');

/**
 * The verdict for each settled request of ours in a bucket fal has a line for. A request is in a bucket only when
 * its whole span (send to collection) lies inside it; one that spans two buckets, or is still open, or whose charge
 * is unknown, makes every bucket it touches undecidable for its endpoint.
 */
export function attributeUsage(lines: readonly UsageLine[], requests: readonly SentRequest[], bucketMs: number, now: number): BillVerdict[] {
  const bucketOf = (ms: number) => Math.floor(ms / bucketMs) * bucketMs;
  const verdicts: BillVerdict[] = [];
  const byKey = new Map<string, UsageLine[]>();
  for (const l of lines) byKey.set(`${l.endpointId} ${l.bucket}`, [...(byKey.get(`${l.endpointId} ${l.bucket}`) ?? []), l]);
  for (const [key, found] of byKey) {
    const [endpointId, at] = [key.slice(0, key.lastIndexOf(' ')), Number(key.slice(key.lastIndexOf(' ') + 1))];
    const end = at + bucketMs;
    const touching = requests.filter((r) => r.endpointId === endpointId && r.sentAt < end && (r.endedAt ?? now) >= at);
    const inside = touching.filter((r) => r.settled && r.endedAt !== null && bucketOf(r.sentAt) === at && bucketOf(r.endedAt) === at);
    if (inside.length === 0) continue;
    const where = `fal's usage for ${endpointId} in the hour from ${stamp(at)}`;
    const keep = (why: string) => inside.forEach((r) => verdicts.push({ id: r.id, billed: false, why: `an estimate: ${where} ${why}` }));
    if (touching.length > inside.length) {
      keep('also holds a request of this studio still open, unsettled or spanning two hours, so each request\'s share is not known');
      continue;
    }
    if (found.length > 1) {
      keep(`has ${found.length} lines at different prices, so each request's share is not known`);
      continue;
    }
    const line = found[0]!;
    const foreign = inside.find((r) => r.currency !== line.currency);
    if (foreign) {
      keep(`is in ${line.currency} where this studio counts the request in ${foreign.currency}: a bill in another currency is not recorded as this one`);
      continue;
    }
    const units = inside.map((r) => falQuantity(line.unit, r.kind, r.input, r.entry));
    if (units.some((u) => u === null)) {
      keep(`bills in "${line.unit}", not a unit this studio can count a request of ${endpointId} in, so each request's share is not known`);
      continue;
    }
    const counted = (units as number[]).reduce((s, u) => s + u, 0);
    if (!same(line.quantity, counted)) {
      keep(`bills ${line.quantity} ${line.unit} where this studio's ${inside.length} request${inside.length === 1 ? '' : 's'} asked for ${counted}: requests from elsewhere share it`);
      continue;
    }
    const shares = inside.map((r, i) => ({ r, amount: toMicros(units[i]! * line.unitPrice) }));
    if (Math.abs(shares.reduce((s, x) => s + x.amount, 0) - toMicros(line.cost)) > inside.length) {
      keep(`costs ${line.cost} ${line.currency}, not its quantity times its unit price`);
      continue;
    }
    for (const { r, amount } of shares) {
      verdicts.push({
        id: r.id,
        billed: true,
        amount,
        source:
          `fal's usage API: ${units[inside.indexOf(r)]} of the ${line.quantity} ${line.unit} at ${line.unitPrice} ${line.currency} ` +
          `(${line.cost} ${line.currency}) ${endpointId} billed in the hour from ${stamp(at)}, all of them this studio's requests`,
      });
    }
  }
  return verdicts;
}
