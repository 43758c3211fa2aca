import { beforeAll, describe, expect, it as base } from 'vitest';
import { ElevenLabsAdapter } from '../main/providers/elevenlabs.ts';
import { openStudio } from '../main/studio.ts';
import type { NewTask } from '../main/domain/tasks/model.ts';
import { elevenLabs, realMedia, type Ledger } from './fakes/providers.ts';
import { send, startFake, type Route } from './fakes/server.ts';
import { runStudio, startStudio, writeSettings } from './helpers/processes.ts';
import { imageTask } from './helpers/engine.ts';
import { openUnderTest } from './helpers/storeUnderTest.ts';
import { storeKinds, type StoreKind } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * One ElevenLabs generation has two names: the `request-id` header of its answer, which a task records, and its history
 * item id, which ElevenLabs' history page shows (both on the history item: elevenlabs-docs fern/apis/api/openapi.json,
 * SpeechHistoryItemResponseModel). A person adopting, for an unknown outcome, the history item of a generation another
 * task already holds by its request id would take that task's audio and bill: refused, naming the task that holds it.
 */

let media: Awaited<ReturnType<typeof realMedia>>;
beforeAll(async () => {
  media = await realMedia();
}, 60_000);

const SETTINGS = { engine: { tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200 }, lookup: { intervalMs: 100, tries: 1 } } };
const speech = (text: string): Omit<NewTask, 'projectId'> => ({ kind: 'speech', provider: 'elevenlabs', model: 'eleven_multilingual_v2', input: { text, voice_id: 'voice-1' } });

describe.each(storeKinds())('on the $kind store, adopting an ElevenLabs history item id', (kind) => {
  const it = base.skipIf(!kind.available);

  it("of a generation another task holds by its request id is refused, naming that task; nothing of its audio or bill is taken", async () => {
    const ledger: Ledger = { charged: [] };
    const fake = await startFake(elevenLabs(ledger, media.speech));
    const dataDir = tempDir();
    writeSettings(dataDir, SETTINGS);
    const database = kind.kind === 'postgres' ? await kind.fresh() : undefined;
    const env = { STUDIO_ELEVENLABS_BASE_URL: fake.url, ELEVENLABS_API_KEY: 'el-key-0123456789', ...(database ? { STUDIO_DATABASE_URL: database } : {}) };
    const studio = await openStudio(dataDir, undefined, { database });
    try {
      const project = await studio.projects.ensure('Voices', Date.now());
      const held = (await studio.tasks.enqueue({ ...speech('hello there'), projectId: project.id }, Date.now())).id;
      const first = await runStudio(dataDir, ['worker', '--until-idle'], env);
      expect(first.code, first.stderr).toBe(0);
      expect(await studio.tasks.get(held)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'el-req-1', charged: 'yes' });

      // Another step whose worker died after its boundary mark: nothing left, the outcome is unknown.
      const unknown = (await studio.tasks.enqueue({ ...speech('goodbye for now'), projectId: project.id }, Date.now())).id;
      const doomed = startStudio(dataDir, ['worker'], { ...env, STUDIO_STOP_AT: 'after-mark' });
      await doomed.waitFor(new RegExp(`stopped at after-mark for task ${unknown}\\b`));
      doomed.child.kill('SIGKILL');
      await doomed.exited;
      const parked = await runStudio(dataDir, ['worker', '--until-idle'], env);
      expect(parked.code, parked.stderr).toBe(0);
      expect(await studio.tasks.get(unknown)).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null });

      for (const name of ['hist-0', 'HIST-0', 'el-req-1']) {
        const adopt = await runStudio(dataDir, ['resolve', String(unknown), '--adopt', name], env);
        expect(adopt.code, adopt.stdout).toBe(2);
        expect(adopt.stderr).toContain(`request ${name} already belongs to task ${held} (SUCCEEDED`);
      }
      expect(await studio.tasks.get(unknown)).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null, charged: 'maybe' });

      const after = await runStudio(dataDir, ['worker', '--until-idle'], env);
      expect(after.code, after.stderr).toBe(0);
      expect(await studio.tasks.get(unknown)).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null, outputPath: null });
      expect(await studio.tasks.outputs(unknown)).toEqual([]);
      expect(fake.count('GET', /\/v1\/history\/hist-0\/audio/)).toBe(0);
      expect(ledger.charged).toEqual(['el-req-1']);
    } finally {
      await studio.close();
    }
  });

  it('keeps the other name of a request it adopted, so no other task takes it by either name', async () => {
    const { repo, projectId, clock, as } = await openUnderTest(kind);
    const parked = async (prompt: string) => {
      const { id } = await repo.enqueue(imageTask(projectId, prompt), clock.now());
      await repo.claim('image', 4, 60_000, as('a'));
      await repo.markSubmitStarted(id, `k-${prompt}`, 60_000, as('a'));
      await repo.parkUnknown(id, 'lost', as('a'));
      return id;
    };
    const [first, second] = [await parked('one'), await parked('two')];
    expect(await repo.adopt(first, 'hist-7', clock.now(), ['hist-7', 'el-req-7'])).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'hist-7' });
    // The provider could name it by the id given alone (it knew no other yet): the row's other name still holds it.
    expect(await repo.adopt(second, 'EL-REQ-7', clock.now(), ['EL-REQ-7'])).toBeUndefined();
    expect((await repo.requestHolder(second, ['EL-REQ-7']))?.id).toBe(first);
    expect(await repo.requestIdsInUse('fake', ['el-req-7', 'hist-8'], second)).toEqual(new Set(['el-req-7']));
    expect(await repo.get(second)).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null });
  });
});

/** A studio on `kind` whose ElevenLabs is `route`, with a step SUCCEEDED (`held`) and another parked as unknown (`unknown`). */
async function heldAndUnknown(kind: StoreKind, route: Route) {
  const fake = await startFake(route);
  const dataDir = tempDir();
  writeSettings(dataDir, SETTINGS);
  const database = kind.kind === 'postgres' ? await kind.fresh() : undefined;
  const env = { STUDIO_ELEVENLABS_BASE_URL: fake.url, ELEVENLABS_API_KEY: 'el-key-0123456789', ...(database ? { STUDIO_DATABASE_URL: database } : {}) };
  const studio = await openStudio(dataDir, undefined, { database });
  const project = await studio.projects.ensure('Voices', Date.now());
  const held = (await studio.tasks.enqueue({ ...speech('hello there'), projectId: project.id }, Date.now())).id;
  const first = await runStudio(dataDir, ['worker', '--until-idle'], env);
  expect(first.code, first.stderr).toBe(0);
  expect(await studio.tasks.get(held)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'el-req-1' });
  const unknown = (await studio.tasks.enqueue({ ...speech('goodbye for now'), projectId: project.id }, Date.now())).id;
  const doomed = startStudio(dataDir, ['worker'], { ...env, STUDIO_STOP_AT: 'after-mark' });
  await doomed.waitFor(new RegExp(`stopped at after-mark for task ${unknown}\\b`));
  doomed.child.kill('SIGKILL');
  await doomed.exited;
  expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
  expect(await studio.tasks.get(unknown)).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null });
  return { studio, dataDir, env, held, unknown };
}

const historyItemPath = (path: string) => path.startsWith('/v1/history/') && !path.endsWith('/audio');

describe.each(storeKinds())('on the $kind store, adopting an ElevenLabs history item id', (kind) => {
  const it = base.skipIf(!kind.available);

  it('is refused while the history answers an item that names neither id: no other name is concluded from it', async () => {
    const ledger: Ledger = { charged: [] };
    const inner = elevenLabs(ledger, media.speech);
    const mode = { empty: false };
    const s = await heldAndUnknown(kind, (req, res) => (mode.empty && historyItemPath(req.path) ? send(res, 200, {}) : inner(req, res)));
    try {
      mode.empty = true;
      const adopt = await runStudio(s.dataDir, ['resolve', String(s.unknown), '--adopt', 'hist-0'], s.env);
      expect(adopt.code, adopt.stdout).toBe(2);
      expect(adopt.stderr).toContain('request hist-0 was not adopted: elevenlabs could not be asked which request it names');
      expect(await s.studio.tasks.get(s.unknown)).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null });
      expect(ledger.charged).toEqual(['el-req-1']);
    } finally {
      await s.studio.close();
    }
  });

  it("of a generation another task holds is refused even with the history off: the answer's history-item-id is kept with its request id", async () => {
    const ledger: Ledger = { charged: [] };
    const inner = elevenLabs(ledger, media.speech, { historyHeader: true });
    // An account with history logging off: no generation is listed or found by id.
    const s = await heldAndUnknown(kind, (req, res) => {
      if (historyItemPath(req.path)) return send(res, 404, { detail: { status: 'history_item_not_found' } });
      if (req.path.startsWith('/v1/history')) return send(res, 200, { history: [], has_more: false, last_history_item_id: null });
      return inner(req, res);
    });
    try {
      const adopt = await runStudio(s.dataDir, ['resolve', String(s.unknown), '--adopt', 'hist-0'], s.env);
      expect(adopt.code, adopt.stdout).toBe(2);
      expect(adopt.stderr).toContain(`request hist-0 already belongs to task ${s.held} (SUCCEEDED`);
      expect(await s.studio.tasks.get(s.unknown)).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null });
    } finally {
      await s.studio.close();
    }
  });
});

describe("ElevenLabs' history, read a page at a time", () => {
  /** One history item a page, newest first, as many as `items`, paged by start_after_history_item_id. */
  function pagedHistory(items: number): Route {
    const all = Array.from({ length: items }, (_, i) => ({
      history_item_id: `hist-${i}`,
      request_id: `el-req-${i}`,
      text: i === items - 1 ? 'the oldest' : 'hello there',
      voice_id: 'voice-1',
      model_id: 'eleven_multilingual_v2',
      date_unix: 1_700_000_000,
      state: 'created',
    }));
    return (req, res) => {
      if (historyItemPath(req.path)) return send(res, 404, { detail: { status: 'history_item_not_found' } });
      const after = new URL(req.path, 'http://x').searchParams.get('start_after_history_item_id');
      const start = after === null ? 0 : all.findIndex((h) => h.history_item_id === after) + 1;
      const page = all.slice(start, start + 1);
      return send(res, 200, { history: page, has_more: start + 1 < all.length, last_history_item_id: page.at(-1)?.history_item_id ?? null });
    };
  }

  base('finds the other name of a request past the first page, and says when the history was read only in part', async () => {
    const fake = await startFake(pagedHistory(3));
    const eleven = new ElevenLabsAdapter({ key: 'el-key-0123456789', baseUrl: fake.url });
    expect(await eleven.aliases('el-req-2')).toEqual(['el-req-2', 'hist-2']);
    const request = eleven.prepare({ kind: 'speech', model: 'eleven_multilingual_v2', input: { text: 'the oldest', voice_id: 'voice-1' } });
    const listed = await eleven.lookup({ from: 0, to: Date.now() }, request);
    expect(listed.map((c) => [c.requestId, c.inputMatches])).toEqual([['el-req-0', false], ['el-req-1', false], ['el-req-2', true]]);
    expect(listed.cut).toBeUndefined();

    const long = await startFake(pagedHistory(50));
    const longer = new ElevenLabsAdapter({ key: 'el-key-0123456789', baseUrl: long.url });
    await expect(longer.aliases('el-req-49')).rejects.toThrow(/has no item for request el-req-49 among the newest 5 history items/);
    expect((await longer.lookup({ from: 0, to: Date.now() }, request)).cut).toMatch(/the history has more/);
  });
});
