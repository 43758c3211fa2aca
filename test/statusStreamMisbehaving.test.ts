import { describe, expect, it } from 'vitest';
import { systemClock } from '../main/adapters/systemClock.ts';
import { pollUntilDone } from '../main/engine/poller.ts';
import { eventData } from '../main/http/sse.ts';
import { FalAdapter } from '../main/providers/fal.ts';
import type { Task } from '../main/domain/tasks/model.ts';
import { FAL_MODEL } from './fakes/providers.ts';
import { send, startFake } from './fakes/server.ts';

/** A fal queue whose status stream is refused with Retry-After; its status answers IN_QUEUE until `doneAt`. */
async function refusedStream(retryAfterS: number, doneAt: number) {
  const seen: { path: string; at: number }[] = [];
  const fake = await startFake((req, res) => {
    seen.push({ path: req.path, at: Date.now() });
    if (req.path.includes('/status/stream')) return send(res, 429, { detail: 'Too many requests' }, { 'retry-after': String(retryAfterS) });
    if (req.path.includes('/status')) return send(res, 200, Date.now() >= doneAt ? { status: 'COMPLETED' } : { status: 'IN_QUEUE', queue_position: 0 });
    return send(res, 200, { images: [{ url: `http://${req.headers.host}/out.png`, content_type: 'image/png' }] });
  });
  return { fake, seen };
}

describe('a status stream that misbehaves', () => {
  it('waits out the Retry-After of a refused stream before the first poll', async () => {
    const { fake, seen } = await refusedStream(2, Date.now() + 2_500);
    const fal = new FalAdapter({ key: 'fal-test-key-123456', baseUrl: fake.url });
    const base = `${fake.url}/${FAL_MODEL}/requests/r-1`;
    const task = { id: 1, remoteRequestId: 'r-1', model: FAL_MODEL, remoteHandle: { status_url: `${base}/status`, response_url: base }, submittedAt: Date.now() } as unknown as Task;
    const outcome = await pollUntilDone(
      task,
      { repo: { saveProgress: async () => true }, provider: fal, clock: systemClock, random: () => 0.5, log: () => undefined },
      { intervalMs: 500, maxIntervalMs: 2_000, deadlineMs: 60_000, owner: 'me', leaseMs: 30_000 },
      new AbortController().signal,
    );
    expect(outcome.state).toBe('succeeded');
    const refused = seen.find((s) => s.path.includes('/status/stream'))!.at;
    const firstPoll = seen.find((s) => /\/status$/.test(s.path))!.at;
    expect(firstPoll - refused).toBeGreaterThanOrEqual(1_900);
  });

  it('gives up on an event whose data lines never end, instead of holding them all', async () => {
    // 12 MB of data lines with no blank line between them: one event, far past the 1 MB limit.
    async function* endless() {
      const line = new TextEncoder().encode(`data: ${'x'.repeat(60_000)}\n`);
      for (let i = 0; i < 200; i++) yield line;
    }
    await expect(async () => {
      for await (const _ of eventData(endless())) void _;
    }).rejects.toThrow(/longer than/);
  });
});
