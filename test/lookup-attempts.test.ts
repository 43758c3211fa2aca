import { describe, expect, it } from 'vitest';
import { UnknownLookups } from '../main/engine/unknownLookups.ts';
import { FalAdapter } from '../main/providers/fal.ts';
import { send, startFake } from './fakes/server.ts';
import { ManualClock, openTestStore, type TestStore } from './helpers/engine.ts';
import { tempDir } from './helpers/tmp.ts';
import { dataFolderMedia } from '../main/media/mediaFolder.ts';
import { OutputLocator } from '../main/engine/outputLocator.ts';

const LEASE = 60_000;
const FAL_MODEL = 'fal-ai/flux/dev';
const INPUT = { prompt: 'a fox', image_size: 'square_hd' };

/**
 * fal's request history (fal.ai/docs/platform-apis/v1/models/requests/by-endpoint.md), listing requests that
 * have ended (its docs name no queued status): `sent_at`, `json_input` with `expand=payloads`.
 */
const falItem = (id: string, sentAt: number) => ({
  request_id: id,
  endpoint_id: FAL_MODEL,
  sent_at: new Date(sentAt).toISOString(),
  started_at: new Date(sentAt).toISOString(),
  ended_at: new Date(sentAt + 5_000).toISOString(),
  status_code: 200,
  json_input: INPUT,
});

async function setup() {
  const clock = new ManualClock();
  const { repo, projectId } = await openTestStore(tempDir());
  const lease = () => ({ owner: 'w', now: clock.now() });
  /** One attempt: claimed, marked as sent at the clock's time, its answer lost two seconds later. */
  const attempt = async (id: number, n: number) => {
    await repo.claim('image', 10, LEASE, lease());
    await repo.markSubmitStarted(id, `key-${id}-${n}`, LEASE, lease());
    clock.advance(2_000);
    await repo.parkUnknown(id, 'the answer was lost', lease());
  };
  const id = (await repo.enqueue({ projectId, kind: 'image', provider: 'fal', model: FAL_MODEL, input: INPUT, estimate: { cost: 25_000, source: 'test', currency: 'USD' } }, clock.now())).id;
  return { clock, repo, id, attempt };
}

const lookups = (repo: TestStore['repo'], fal: FalAdapter, clock: ManualClock) =>
  new UnknownLookups({ repo, providers: (p) => (p === 'fal' ? fal : undefined), files: new OutputLocator(repo, dataFolderMedia(tempDir(), 'test')), clock, log: () => undefined }, { intervalMs: 1_000, tries: 3 });

describe('a lookup never adopts, for a later attempt, the request of an earlier attempt of the same task', () => {
  it('a request sent by an earlier attempt just before a resubmit is no proof of which one this is: the person is asked', async () => {
    const { clock, repo, id, attempt } = await setup();
    const firstSent = clock.now();
    await attempt(id, 1);
    // The person resubmits at once; the second attempt's answer is lost too, and its request is still queued
    // at fal, so fal's listing shows only the first attempt's request (made 12 s before the second send).
    clock.advance(10_000);
    await repo.resubmit(id, clock.now());
    await attempt(id, 2);
    const fake = await startFake((req, res) => {
      if (req.path.startsWith('/v1/models/requests/by-endpoint')) return send(res, 200, { items: [falItem('req-first', firstSent + 300)], has_more: false });
    });
    const fal = new FalAdapter({ key: 'fal-key-0123456789', baseUrl: fake.url });
    clock.advance(1_000);

    await lookups(repo, fal, clock).tick();
    const task = (await repo.get(id))!;
    expect(task.status).toBe('OUTCOME_UNKNOWN');
    expect(task.remoteRequestId).toBeNull();
    expect((await repo.events(id)).at(-1)!.reason).toMatch(/an earlier attempt of this task.*; it needs your decision$/);
  });

  it('a lookup still under way when the person resubmits cannot adopt into the next attempt what it found for the earlier one', async () => {
    const { clock, repo, id, attempt } = await setup();
    const firstSent = clock.now();
    await attempt(id, 1);
    let answer!: () => void;
    const asked = new Promise<void>((r) => (answer = r));
    let reached!: () => void;
    const listingAsked = new Promise<void>((r) => (reached = r));
    const fake = await startFake(async (req, res) => {
      if (req.path.startsWith('/v1/models/requests/by-endpoint')) {
        reached();
        await asked;
        return send(res, 200, { items: [falItem('req-first', firstSent + 300)], has_more: false });
      }
    });
    const fal = new FalAdapter({ key: 'fal-key-0123456789', baseUrl: fake.url });
    clock.advance(1_000);
    const pass = lookups(repo, fal, clock).tick()!;
    await listingAsked;
    // Meanwhile the person resubmits, and the new attempt's answer is lost in turn.
    clock.advance(5 * 60_000);
    await repo.resubmit(id, clock.now());
    await attempt(id, 2);
    answer();
    await pass;

    const task = (await repo.get(id))!;
    expect(task).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null, idempotencyKey: `key-${id}-2` });
  });
});
