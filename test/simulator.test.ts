import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probe } from '../main/media/probe.ts';
import { SubmitError } from '../main/providers/port.ts';
import { SimulatorAdapter } from '../main/providers/simulatorAdapter.ts';
import type { SubmitFault } from '../main/simulator/faults.ts';
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
  const cases: [SubmitFault, string, boolean][] = [
    ['reject', 'rejected', false],
    ['rate-limit', 'rate_limited', false],
    ['unavailable', 'maybe_applied', false],
    ['drop-after-accept', 'maybe_applied', true],
    ['error-after-accept', 'maybe_applied', true],
    ['malformed-json', 'maybe_applied', true],
    ['slow-body', 'maybe_applied', true],
  ];

  it.each(cases)('%s → %s (charged: %s)', async (fault, kind, charged) => {
    const sim = await startSimulator({ faults: { submit: [fault] } });
    try {
      const adapter = new SimulatorAdapter(sim.url, { submit: { headersMs: 2_000, bodyMs: 500 } });
      const err = await adapter.submit(adapter.prepare({ kind: 'image', model: 'm', input: { prompt: 'x' } }), { idempotencyKey: 'studio-task-1-attempt-1' }).catch((e) => e);
      expect(err).toBeInstanceOf(SubmitError);
      expect(err.failure.kind).toBe(kind);
      if (fault === 'unavailable') expect(err.failure.neverBilled).toBe(true);
      if (fault === 'rate-limit') expect(err.failure.retryAfterMs).toBe(1_000);
      expect(sim.charges).toHaveLength(charged ? 1 : 0);
      expect(sim.injected.map((i) => i.fault)).toEqual([fault]);
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

  it('keeps its accepted jobs across a restart, as a real provider would', async () => {
    const stateDir = tempDir();
    const first = await startSimulator({ stateDir, jobMs: 0 });
    const adapter = new SimulatorAdapter(first.url);
    const sent = await adapter.submit(adapter.prepare({ kind: 'image', model: 'm', input: { prompt: 'kept' } }), { idempotencyKey: 'k' });
    await first.close();
    const second = await startSimulator({ stateDir });
    try {
      const again = new SimulatorAdapter(second.url);
      expect(await again.poll({ requestId: sent.requestId, model: 'm', handle: null })).toMatchObject({ state: 'succeeded' });
      expect(second.charges).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});
