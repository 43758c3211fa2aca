/** The bills a spend view reads from providers' usage records before it is drawn (fal's, with an admin key: main/engine/falBills.ts). */
import { falBillsFor } from '../engine/falBills.ts';
import { baseUrlOf } from '../providers/registry.ts';
import { FAL_ADMIN_KEY_NAME, type ServiceContext } from './serviceContext.ts';
import type { BillReading } from './spendTypes.ts';

/** A spend view waits this long for fal's records; past it, the view shows what is recorded and the reading goes on. */
const WAIT_MS = 5_000;

export async function readBills(ctx: ServiceContext): Promise<BillReading[]> {
  const settings = () => ctx.studio.settings;
  const fal = falBillsFor(ctx.studio.tasks, () => ctx.deps.keys.secret(FAL_ADMIN_KEY_NAME), () => baseUrlOf('fal', settings()));
  const reading = fal.refresh().catch((err: Error): BillReading => ({ provider: 'fal', state: 'failed', message: `fal's usage records could not be read (${err.message}); no figure was changed` }));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<BillReading>((resolve) => {
    timer = setTimeout(() => {
      const before = fal.lastStatus;
      const waiting = "reading fal's usage records; the figures update when fal answers";
      resolve({ provider: 'fal', state: 'reading', message: before?.state === 'failed' ? `${waiting}. The reading before: ${before.message}` : waiting });
    }, WAIT_MS);
  });
  try {
    return [{ provider: 'fal', ...(await Promise.race([reading, late])) }];
  } finally {
    clearTimeout(timer);
  }
}
