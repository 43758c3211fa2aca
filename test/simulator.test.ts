import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probe } from '../main/media/probe.ts';
import { PollError, ResultGone, SubmitError } from '../main/providers/port.ts';
import { SimulatorAdapter } from '../main/providers/simulatorAdapter.ts';
import type { Faults, SubmitFault } from '../main/simulator/faults.ts';
import { makeMedia } from '../main/simulator/media.ts';
import { startSimulator } from '../main/simulator/server.ts';
import { tempDir } from './helpers/tmp.ts';

async function probeBytes(bytes: Buffer, name: string) {
  const path = join(tempDir(), name);
  writeFileSync(path, bytes);
  return probe(path);
}

describe('simulator media (real ffmpeg, real eSpeak)', () => {
  it('draws the prompt on a PNG', async () => {
    const media = await makeMedia('image', { prompt: 'a red fox' });
    expect(media.contentType).toBe('image/png');
    expect((await probeBytes(media.bytes, 'a.png')).video).toMatchObject({ codec: 'png', width: 640, height: 360 });
  });

  it('makes an H.264 clip of the asked duration, from a source image too', async () => {
    const still = await makeMedia('image', { prompt: 'source' });
    const media = await makeMedia('clip', { prompt: 'push in', duration: 1.5, image_url: `data:image/png;base64,${still.bytes.toString('base64')}` });
    const p = await probeBytes(media.bytes, 'c.mp4');
    expect(p.video).toMatchObject({ codec: 'h264', width: 640, height: 360 });
    expect(p.durationSec).toBeCloseTo(1.5, 1);
  });

  it('speaks the text', async () => {
    const media = await makeMedia('speech', { text: 'The fox runs through the snow.' });
    const p = await probeBytes(media.bytes, 's.wav');
    expect(p.audio).not.toBeNull();
    expect(p.durationSec).toBeGreaterThan(1);
  });
});

describe('simulator faults, as the adapter classifies them', () => {
  // [fault, classification, charged, the request id reaches the engine from the headers]
  const cases: [SubmitFault, string, boolean, boolean][] = [
    ['reject', 'rejected', false, false],
    ['rate-limit', 'rate_limited', false, false],
    ['unavailable', 'maybe_applied', false, false],
    ['drop-after-accept', 'maybe_applied', true, false],
    ['error-after-accept', 'maybe_applied', true, false],
    ['accepted-5xx', 'maybe_applied', true, true],
    ['cut-body', 'maybe_applied', true, true],
    ['malformed-json', 'maybe_applied', true, true],
    ['slow-body', 'maybe_applied', true, true],
  ];

  it.each(cases)('%s → %s (charged: %s, id from the headers: %s)', async (fault, kind, charged, named) => {
    const sim = await startSimulator({ faults: { submit: [fault] } });
    try {
      const adapter = new SimulatorAdapter(sim.url, { submit: { headersMs: 2_000, bodyMs: 500 } });
      const heard: string[] = [];
      const err = await adapter
        .submit(adapter.prepare({ kind: 'image', model: 'sim-image-1', input: { prompt: 'x' } }), {
          idempotencyKey: 'studio-task-1-attempt-1',
          onRequestId: (id) => heard.push(id),
        })
        .catch((e) => e);
      expect(err).toBeInstanceOf(SubmitError);
      expect(err.failure.kind).toBe(kind);
      // Only the 503 is documented as never billed; a 5xx after the job was queued is not.
      expect(err.failure.neverBilled ?? false).toBe(fault === 'unavailable');
      if (fault === 'rate-limit') expect(err.failure.retryAfterMs).toBe(1_000);
      if (fault === 'accepted-5xx') expect(err.message).toMatch(/HTTP (500|504)/);
      expect(sim.charges).toHaveLength(charged ? 1 : 0);
      expect(heard).toEqual(named ? [sim.charges[0]!.requestId] : []);
      expect(sim.injected.map((i) => i.fault)).toEqual([fault]);
    } finally {
      await sim.close();
    }
  });

  it('names an accepted request in x-request-id before its body', async () => {
    const sim = await startSimulator();
    try {
      const adapter = new SimulatorAdapter(sim.url);
      const heard: string[] = [];
      const sent = await adapter.submit(adapter.prepare({ kind: 'image', model: 'sim-image-1', input: { prompt: 'x' } }), {
        idempotencyKey: 'k',
        onRequestId: (id) => heard.push(id),
      });
      expect(heard).toEqual([sent.requestId]);
    } finally {
      await sim.close();
    }
  });

  it('answers 404 to a model it does not serve, and charges nothing', async () => {
    const sim = await startSimulator({ jobMs: 0 });
    try {
      for (const [kind, model] of [['image', 'sim-image-2'], ['image', 'sim-clip-1'], ['speech', 'eleven_v3']]) {
        const res = await fetch(`${sim.url}/v1/${kind}/${model}/requests`, { method: 'POST', body: JSON.stringify({ input: { prompt: 'x', text: 'x' } }) });
        expect(res.status).toBe(404);
        expect(((await res.json()) as { detail: string }).detail).toBe(`the simulator has no ${kind} model "${model}"; its ${kind} model is "sim-${kind}-1"`);
      }
      expect(sim.charges).toEqual([]);
    } finally {
      await sim.close();
    }
  });

  it('accepted-5xx answers 500 or 504 as the seed draws, with the id of a charged job the engine can poll', async () => {
    const statuses: number[] = [];
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const sim = await startSimulator({ jobMs: 0, faults: { seed, submit: ['accepted-5xx'] } });
      try {
        const res = await fetch(`${sim.url}/v1/image/sim-image-1/requests`, { method: 'POST', body: JSON.stringify({ input: { prompt: 'x' } }) });
        statuses.push(res.status);
        const id = res.headers.get('x-request-id')!;
        expect(sim.charges.map((c) => c.requestId)).toEqual([id]);
        expect(await new SimulatorAdapter(sim.url).poll({ requestId: id, model: 'sim-image-1', handle: null })).toMatchObject({ state: 'succeeded' });
      } finally {
        await sim.close();
      }
    }
    expect(new Set(statuses)).toEqual(new Set([500, 504]));
  });

  it('result-401-once: the first call for a finished result is refused, the next one works, for the result and the file', async () => {
    const sim = await startSimulator({ jobMs: 0, faults: { job: ['result-401-once', 'result-401-once'] } });
    try {
      const adapter = new SimulatorAdapter(sim.url);
      const submit = (prompt: string) => adapter.submit(adapter.prepare({ kind: 'image', model: 'sim-image-1', input: { prompt } }), { idempotencyKey: prompt });
      const viaResult = await submit('result');
      const first = await adapter.poll({ requestId: viaResult.requestId, model: 'sim-image-1', handle: null }).catch((e) => e);
      expect(first).toBeInstanceOf(PollError);
      expect(first.message).toMatch(/HTTP 401/);
      const again = await adapter.poll({ requestId: viaResult.requestId, model: 'sim-image-1', handle: null });
      expect(again.state).toBe('succeeded');

      // The file asked for directly: the refusal is a passing one, not a lost result.
      const viaFile = await submit('file');
      const failed = await adapter.download({ url: `${sim.url}/files/${viaFile.requestId}/0`, contentType: null }).catch((e) => e);
      expect(failed).toBeInstanceOf(PollError);
      expect(failed).not.toBeInstanceOf(ResultGone);
      const polled = await adapter.poll({ requestId: viaFile.requestId, model: 'sim-image-1', handle: null });
      if (polled.state !== 'succeeded') throw new Error(`not succeeded: ${polled.state}`);
      const chunks: Uint8Array[] = [];
      for await (const c of await adapter.download(polled.result.outputs[0]!)) chunks.push(c);
      expect(Buffer.concat(chunks).subarray(1, 4).toString()).toBe('PNG');
      expect(sim.charges).toHaveLength(2);
    } finally {
      await sim.close();
    }
  });

  it('a request id the simulator does not know, or a file it does not have, is asked again; only its expiry answer is a lost result', async () => {
    const sim = await startSimulator({ jobMs: 0, faults: { job: ['expired-result'] } });
    try {
      const adapter = new SimulatorAdapter(sim.url);
      const unknown = await adapter.poll({ requestId: 'no-such-request', model: 'sim-image-1', handle: null }).catch((e) => e);
      expect(unknown).toBeInstanceOf(PollError);
      const missing = await adapter.download({ url: `${sim.url}/files/no-such-request/0`, contentType: null }).catch((e) => e);
      expect(missing).toBeInstanceOf(PollError);

      const sent = await adapter.submit(adapter.prepare({ kind: 'image', model: 'sim-image-1', input: { prompt: 'gone' } }), { idempotencyKey: 'k' });
      const polled = await adapter.poll({ requestId: sent.requestId, model: 'sim-image-1', handle: null });
      if (polled.state !== 'succeeded') throw new Error(`not succeeded: ${polled.state}`);
      await expect(adapter.download(polled.result.outputs[0]!)).rejects.toBeInstanceOf(ResultGone);
    } finally {
      await sim.close();
    }
  });

  it('refuses a faults object it does not understand, saying what is wrong', async () => {
    const sim = await startSimulator();
    try {
      const res = await fetch(`${sim.url}/_sim/faults`, { method: 'POST', body: JSON.stringify({ submit: ['explode'] }) });
      expect(res.status).toBe(400);
      expect((await res.json()).detail).toMatch(/faults.submit must be a list of reject/);
    } finally {
      await sim.close();
    }
  });

  it('passes over lines of its job file that are not jobs (garbled, or restored from elsewhere) and serves the rest', async () => {
    const stateDir = tempDir();
    const first = await startSimulator({ stateDir, jobMs: 0 });
    const adapter = new SimulatorAdapter(first.url);
    const sent = await adapter.submit(adapter.prepare({ kind: 'image', model: 'sim-image-1', input: { prompt: 'kept' } }), { idempotencyKey: 'k' });
    await first.close();
    appendFileSync(join(stateDir, 'jobs.jsonl'), 'null\n{"id":"x"}\n[1]\n{"id":"y","kind":"image","model":"m","createdAt":1,"durationMs":0,"input":{}}\n');
    const second = await startSimulator({ stateDir });
    try {
      expect(await new SimulatorAdapter(second.url).poll({ requestId: sent.requestId, model: 'sim-image-1', handle: null })).toMatchObject({ state: 'succeeded' });
      expect(second.charges.map((c) => c.requestId)).toEqual([sent.requestId]);
    } finally {
      await second.close();
    }
  });

  it('keeps its accepted jobs across a restart, as a real provider would', async () => {
    const stateDir = tempDir();
    const first = await startSimulator({ stateDir, jobMs: 0 });
    const adapter = new SimulatorAdapter(first.url);
    const sent = await adapter.submit(adapter.prepare({ kind: 'image', model: 'sim-image-1', input: { prompt: 'kept' } }), { idempotencyKey: 'k' });
    await first.close();
    const second = await startSimulator({ stateDir });
    try {
      const again = new SimulatorAdapter(second.url);
      expect(await again.poll({ requestId: sent.requestId, model: 'sim-image-1', handle: null })).toMatchObject({ state: 'succeeded' });
      expect(second.charges).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});

describe('simulators sharing one job store (one per process on a data folder)', () => {
  const adapterFor = (url: string) => new SimulatorAdapter(url);
  const image = (adapter: SimulatorAdapter, prompt: string) => adapter.prepare({ kind: 'image', model: 'sim-image-1', input: { prompt } });

  it('a job accepted by one is polled, collected and cancelled through the other, started before it, and charged once in both ledgers', async () => {
    const stateDir = tempDir();
    const first = await startSimulator({ stateDir, jobMs: 0 });
    const second = await startSimulator({ stateDir, jobMs: 60_000 });
    try {
      const [a, b] = [adapterFor(first.url), adapterFor(second.url)];
      const done = await a.submit(image(a, 'done'), { idempotencyKey: 'studio-task-1-attempt-1' });
      const polled = await b.poll({ requestId: done.requestId, model: 'sim-image-1', handle: null });
      if (polled.state !== 'succeeded') throw new Error(`not succeeded: ${polled.state}`);
      expect(polled.result.outputs[0]!.url).toContain(second.url);
      const chunks: Uint8Array[] = [];
      for await (const c of await b.download(polled.result.outputs[0]!)) chunks.push(c);
      expect(Buffer.concat(chunks).length).toBeGreaterThan(100);

      const slow = await b.submit(image(b, 'slow'), { idempotencyKey: 'studio-task-2-attempt-1' });
      await a.cancel({ requestId: slow.requestId, model: 'sim-image-1', handle: null });
      expect(await b.poll({ requestId: slow.requestId, model: 'sim-image-1', handle: null })).toMatchObject({ state: 'failed', error: expect.stringMatching(/cancelled/) });

      for (const sim of [first, second]) {
        const ledger = (await (await fetch(`${sim.url}/_sim/charges`)).json()) as { requestId: string }[];
        expect(ledger.map((c) => c.requestId).sort()).toEqual([done.requestId, slow.requestId].sort());
      }
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('a job accepted by a simulator that is gone is still served by the other', async () => {
    const stateDir = tempDir();
    const survivor = await startSimulator({ stateDir, jobMs: 0 });
    const doomed = await startSimulator({ stateDir, jobMs: 0 });
    try {
      const sent = await adapterFor(doomed.url).submit(image(adapterFor(doomed.url), 'orphan'), { idempotencyKey: 'k' });
      await doomed.close();
      expect(await adapterFor(survivor.url).poll({ requestId: sent.requestId, model: 'sim-image-1', handle: null })).toMatchObject({ state: 'succeeded' });
    } finally {
      await survivor.close();
    }
  });

  it('a line left unfinished by a killed process hides neither the job written after it nor the others', async () => {
    const stateDir = tempDir();
    const before = await startSimulator({ stateDir, jobMs: 0 });
    const kept = await adapterFor(before.url).submit(image(adapterFor(before.url), 'kept'), { idempotencyKey: 'k1' });
    await before.close();
    appendFileSync(join(stateDir, 'jobs.jsonl'), '{"id":"cut-short","kind":"im');
    const writer = await startSimulator({ stateDir, jobMs: 0 });
    const reader = await startSimulator({ stateDir, jobMs: 0 });
    try {
      const after = await adapterFor(writer.url).submit(image(adapterFor(writer.url), 'after'), { idempotencyKey: 'k2' });
      for (const id of [kept.requestId, after.requestId]) {
        expect(await adapterFor(reader.url).poll({ requestId: id, model: 'sim-image-1', handle: null })).toMatchObject({ state: 'succeeded' });
      }
      const ledger = (await (await fetch(`${reader.url}/_sim/charges`)).json()) as unknown[];
      expect(ledger).toHaveLength(2);
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  it('a once-only fault given by one simulator is not given again by the other', async () => {
    const stateDir = tempDir();
    const faults: Faults = { job: ['result-401-once'] };
    const first = await startSimulator({ stateDir, jobMs: 0, faults });
    const second = await startSimulator({ stateDir, jobMs: 0 });
    try {
      const sent = await adapterFor(first.url).submit(image(adapterFor(first.url), 'x'), { idempotencyKey: 'k' });
      await expect(adapterFor(first.url).poll({ requestId: sent.requestId, model: 'sim-image-1', handle: null })).rejects.toBeInstanceOf(PollError);
      expect(await adapterFor(second.url).poll({ requestId: sent.requestId, model: 'sim-image-1', handle: null })).toMatchObject({ state: 'succeeded' });
    } finally {
      await first.close();
      await second.close();
    }
  });
});
