import { describe, expect, it } from 'vitest';
import { FAL_MODEL } from './fakes/providers.ts';
import { send, startFake } from './fakes/server.ts';
import { startStudio } from './helpers/processes.ts';
import { storeKinds } from './helpers/stores.ts';
import { teamOn } from './helpers/team.ts';
import { until } from './helpers/wait.ts';

const INTERVAL_MS = 1_000;
const LOOKUPS = 4;
const SETTINGS = {
  engine: { tickMs: 100, concurrency: { image: 0, clip: 0, speech: 0, render: 0 }, lookup: { intervalMs: INTERVAL_MS, tries: 50, queueMs: 0 } },
};

describe.each(storeKinds())('the lookups of an unknown outcome, with several workers on the $kind store', (kind) => {
  it.skipIf(!kind.available)('are made once per interval between them all, and each counts as one try on the row', async () => {
    // fal's request history (fal.ai/docs/platform-apis/v1/models/requests/by-endpoint.md), here listing nothing:
    // the request was never accepted, so every lookup finds nothing and another is due an interval later. It takes
    // its time to answer, as a listing does, so the other workers look at the row while a lookup is under way.
    const listed: number[] = [];
    const fal = await startFake(async (req, res) => {
      if (!req.path.startsWith('/v1/models/requests/by-endpoint')) return;
      listed.push(Date.now());
      await new Promise((r) => setTimeout(r, 600));
      send(res, 200, { items: [], has_more: false, next_cursor: null });
    });
    const { store, machine } = await teamOn(kind, { STUDIO_FAL_BASE_URL: fal.url, FAL_KEY: 'fal-key-0123456789' });
    const project = await store.projects.ensure('Lookups', Date.now());
    const task = await store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: FAL_MODEL, input: { prompt: 'a fox' } }, Date.now());
    const lease = () => ({ owner: 'gone', now: Date.now() });
    await store.tasks.claim('image', 1, 60_000, lease());
    await store.tasks.markSubmitStarted(task.id, `key-${task.id}`, 60_000, lease());
    expect(await store.tasks.parkUnknown(task.id, 'the answer was lost', lease())).toMatchObject({ status: 'OUTCOME_UNKNOWN' });

    const workers = ['machine-a', 'machine-b', 'machine-c'].map((name) => {
      const m = machine(name, SETTINGS);
      return startStudio(m.dataDir, ['worker'], m.env);
    });
    const tries = async () => (await store.tasks.events(task.id)).map((e) => (e.detail as { lookup?: number } | null)?.lookup).filter((n) => n !== undefined);
    // Stopped just after a lookup was noted: the next one is an interval away.
    await until(async () => (await tries()).length >= LOOKUPS, 30_000);
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));

    // One lookup at the stand-in per interval, whichever worker made it.
    const gaps = listed.slice(1).map((at, i) => at - listed[i]!);
    expect(Math.min(...gaps), `lookups at ${listed.map((at) => at - listed[0]!).join(', ')} ms`).toBeGreaterThanOrEqual(INTERVAL_MS - 100);
    // Each is one try on the row, numbered in turn: none counted twice, none made without being counted.
    expect(await tries()).toEqual(listed.map((_, i) => i + 1));
    expect(listed.length).toBeGreaterThanOrEqual(LOOKUPS);
    expect(await store.tasks.get(task.id)).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null });
  }, 60_000);

  it.skipIf(!kind.available)('are taken by one of many asking at once, and are due again only an interval later', async () => {
    const where = await kind.fresh();
    const [one, two] = [await kind.open(where), await kind.open(where)];
    const project = await one.projects.ensure('Lookups', Date.now());
    const task = await one.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: FAL_MODEL, input: { prompt: 'a fox' } }, Date.now());
    const lease = () => ({ owner: 'gone', now: Date.now() });
    await one.tasks.claim('image', 1, 60_000, lease());
    await one.tasks.markSubmitStarted(task.id, `key-${task.id}`, 60_000, lease());
    await one.tasks.parkUnknown(task.id, 'the answer was lost', lease());
    const ask = () => Promise.all([one, two, one, two, one, two].map((s) => s.tasks.dueForLookup(['fal'], 10, 300, Date.now(), 8)));

    await new Promise((r) => setTimeout(r, 300));
    expect((await ask()).flat().map((d) => d.task.id)).toEqual([task.id]);
    // Taken and not yet noted: nobody takes it again within the interval.
    expect((await ask()).flat()).toEqual([]);
    await one.tasks.lookupNoted(task.id, `key-${task.id}`, 'looked: nothing listed yet', { lookup: 1, verdict: 'again' }, Date.now());
    await new Promise((r) => setTimeout(r, 300));
    expect((await ask()).flat().map((d) => [d.task.id, d.tries])).toEqual([[task.id, 1]]);
  });
});
