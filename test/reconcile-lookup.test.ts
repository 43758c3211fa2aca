import { describe, expect, it } from 'vitest';
import { reconcile } from '../main/engine/reconciler.ts';
import { UnknownLookups } from '../main/engine/unknownLookups.ts';
import { ElevenLabsAdapter } from '../main/providers/elevenlabs.ts';
import type { ProviderAdapter } from '../main/providers/port.ts';
import { ReplicateAdapter } from '../main/providers/replicate.ts';
import type { NewTask } from '../main/domain/tasks/model.ts';
import { send, startFake } from './fakes/server.ts';
import { ManualClock, openTestStore, type TestStore } from './helpers/engine.ts';
import { tempDir } from './helpers/tmp.ts';
import { dataFolderMedia } from '../main/media/mediaFolder.ts';
import { OutputLocator } from '../main/engine/outputLocator.ts';

const LEASE = 60_000;
const REPLICATE_MODEL = 'black-forest-labs/flux-schnell';

async function studioWith(clock: ManualClock) {
  const { repo, projectId } = await openTestStore(tempDir());
  const lease = () => ({ owner: 'w', now: clock.now() });
  /** A task sent at the clock's time and parked as unknown two seconds later, as after a lost answer. */
  const unknown = async (task: Omit<NewTask, 'projectId'>) => {
    const id = (await repo.enqueue({ ...task, projectId }, clock.now())).id;
    await repo.claim(task.kind, 10, LEASE, lease());
    await repo.markSubmitStarted(id, `key-${id}`, LEASE, lease());
    clock.advance(2_000);
    await repo.parkUnknown(id, 'the answer was lost', lease());
    return id;
  };
  /** A task that holds `requestId`, as the provider's answer named it. */
  const holding = async (task: Omit<NewTask, 'projectId'>, requestId: string) => {
    const id = (await repo.enqueue({ ...task, projectId }, clock.now())).id;
    await repo.claim(task.kind, 10, LEASE, lease());
    await repo.markSubmitStarted(id, `key-${id}`, LEASE, lease());
    await repo.recordSubmitted(id, { requestId, handle: null }, null, lease());
    return id;
  };
  return { repo, unknown, holding };
}

const lookups = (repo: TestStore['repo'], provider: ProviderAdapter, clock: ManualClock) =>
  new UnknownLookups({ repo, providers: (id) => (id === provider.id ? provider : undefined), files: new OutputLocator(repo, dataFolderMedia(tempDir(), 'test')), clock, log: () => undefined }, { intervalMs: 1_000, tries: 3 });

/**
 * Replicate's prediction listing (GET /v1/predictions, replicate-python-beta types/prediction.py): `model`,
 * `created_at`, `input` and `data_removed`. An API prediction's input is removed an hour after it ends
 * (replicate.com/docs/topics/predictions/data-retention), so the listing then shows it with no input.
 */
function replicateListing(predictions: Record<string, unknown>[]) {
  return startFake((req, res) => {
    if (req.method === 'GET' && req.path.startsWith('/v1/predictions?')) return send(res, 200, { results: predictions, next: null });
  });
}

describe('Replicate: a prediction whose input was removed', () => {
  it('is offered with its time and the reason its input could not be compared, and left to the person', async () => {
    const clock = new ManualClock();
    const { repo, unknown } = await studioWith(clock);
    const sentAt = clock.now();
    const id = await unknown({ kind: 'image', provider: 'replicate', model: REPLICATE_MODEL, input: { prompt: 'a fox' } });
    const fake = await replicateListing([
      { id: 'p-same-model', model: REPLICATE_MODEL, created_at: new Date(sentAt + 1_000).toISOString(), status: 'succeeded', data_removed: true, input: {} },
      { id: 'p-other-model', model: 'black-forest-labs/flux-dev', created_at: new Date(sentAt + 1_000).toISOString(), status: 'succeeded', data_removed: true, input: {} },
      { id: 'p-later', model: REPLICATE_MODEL, created_at: new Date(sentAt + 3_600_000).toISOString(), status: 'succeeded', data_removed: true, input: {} },
    ]);
    const replicate = new ReplicateAdapter({ key: 'r8_test_key', baseUrl: fake.url });
    clock.advance(2 * 3_600_000);

    const { candidates, lists } = await reconcile(repo, new OutputLocator(repo, dataFolderMedia(tempDir(), 'test')), replicate, id, clock.now());
    expect(candidates.map((c) => [c.requestId, c.createdAt])).toEqual([['p-same-model', sentAt + 1_000]]);
    expect(candidates[0]!.why).toMatch(/^same model, made 1 s after the send started; its input could not be compared: Replicate removes the input/);
    expect(lists).toMatch(/removes the input of an API prediction an hour after it ends/);

    await lookups(repo, replicate, clock).tick();
    expect((await repo.get(id))!.status).toBe('OUTCOME_UNKNOWN');
    expect((await repo.events(id)).at(-1)!.reason).toMatch(/could not be compared: Replicate removes the input.*; it needs your decision$/);
  });

  it('within the hour, the one prediction with the same input is adopted by the studio, with the evidence in its history', async () => {
    const clock = new ManualClock();
    const { repo, unknown } = await studioWith(clock);
    const sentAt = clock.now();
    const id = await unknown({ kind: 'image', provider: 'replicate', model: REPLICATE_MODEL, input: { prompt: 'a fox' } });
    const fake = await replicateListing([
      { id: 'p-fox', model: REPLICATE_MODEL, created_at: new Date(sentAt + 500).toISOString(), status: 'starting', data_removed: false, input: { prompt: 'a fox' } },
      { id: 'p-owl', model: REPLICATE_MODEL, created_at: new Date(sentAt + 700).toISOString(), status: 'starting', data_removed: false, input: { prompt: 'an owl' } },
    ]);
    const replicate = new ReplicateAdapter({ key: 'r8_test_key', baseUrl: fake.url });
    clock.advance(1_000);

    await lookups(repo, replicate, clock).tick();
    const task = (await repo.get(id))!;
    expect(task).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'p-fox', charged: 'yes' });
    expect(task.note).toMatch(/^adopted by the studio after a lookup: request p-fox/);
    const adopted = (await repo.events(id)).at(-1)!;
    expect(adopted).toMatchObject({ actor: 'engine', fromStatus: 'OUTCOME_UNKNOWN', toStatus: 'SUBMITTED' });
    expect(adopted.reason).toMatch(/^adopted by the studio after a lookup: the only request with this exact input/);
    expect(adopted.detail).toMatchObject({ adopted: 'p-fox', lookups: 1, found: { id: 'p-fox', status: 'starting' } });
  });
});

describe('ElevenLabs: candidates named by the request id the studio stores', () => {
  it('never offers another task’s request, and the adopted request’s audio is fetched by its history item id', async () => {
    const clock = new ManualClock();
    const { repo, unknown, holding } = await studioWith(clock);
    const speech = { kind: 'speech' as const, provider: 'elevenlabs', model: 'eleven_multilingual_v2', input: { text: 'hello there', voice_id: 'voice-1' } };
    // The studio stores the `request-id` header's value; history items carry it as `request_id` (ElevenLabs' OpenAPI).
    const earlier = clock.now();
    await holding(speech, 'el-req-1');
    // Sent ten minutes later: the two send windows do not overlap, so the studio may tell the requests apart.
    clock.advance(10 * 60_000);
    const sentAt = clock.now();
    const id = await unknown(speech);
    const item = (n: number, at: number) => ({
      history_item_id: `hist-${n}`,
      request_id: `el-req-${n}`,
      text: 'hello there',
      voice_id: 'voice-1',
      model_id: 'eleven_multilingual_v2',
      date_unix: Math.floor(at / 1000),
      character_count_change_from: 0,
      character_count_change_to: 11,
      state: 'created',
    });
    const fake = await startFake((req, res) => {
      if (/^\/v1\/history\/[\w-]+$/.test(req.path)) return send(res, 404, { detail: { status: 'history_item_not_found' } });
      if (req.path.startsWith('/v1/history?')) return send(res, 200, { history: [item(1, earlier), item(2, sentAt + 1_000)], has_more: false, last_history_item_id: 'hist-2' });
    });
    const eleven = new ElevenLabsAdapter({ key: 'el-key-0123456789', baseUrl: fake.url });

    const { candidates } = await reconcile(repo, new OutputLocator(repo, dataFolderMedia(tempDir(), 'test')), eleven, id, clock.now());
    expect(candidates.map((c) => [c.requestId, c.aliases])).toEqual([['el-req-2', ['hist-2']]]);

    clock.advance(1_000);
    await lookups(repo, eleven, clock).tick();
    expect(await repo.get(id)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'el-req-2' });
    const polled = await eleven.poll({ requestId: 'el-req-2', model: speech.model, handle: null });
    expect(polled.state === 'succeeded' && polled.result.outputs[0]!.url).toBe(`${fake.url}/v1/history/hist-2/audio`);
  });
});
