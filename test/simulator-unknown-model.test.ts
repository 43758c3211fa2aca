import { describe, expect, it } from 'vitest';
import { SubmitError } from '../main/providers/port.ts';
import { SimulatorAdapter } from '../main/providers/simulatorAdapter.ts';
import { startSimulator } from '../main/simulator/server.ts';

describe('the simulator and a model it does not serve', () => {
  it('answers a malformed escape in the model 404, like any model it lacks, and charges nothing', async () => {
    const sim = await startSimulator({ jobMs: 0 });
    try {
      const res = await fetch(`${sim.url}/v1/image/%E0/requests`, { method: 'POST', body: JSON.stringify({ input: { prompt: 'x' } }) });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { detail: string }).detail).toBe('the simulator has no image model "%E0"; its image model is "sim-image-1"');
      expect(sim.charges).toEqual([]);
    } finally {
      await sim.close();
    }
  });

  it('a 404 reaching the adapter is a rejection: not applied, nothing charged', async () => {
    const sim = await startSimulator({ jobMs: 0 });
    try {
      const adapter = new SimulatorAdapter(sim.url);
      // A request built for the model the simulator serves, then pointed at one it lacks, as a stale task would be.
      const request = { ...adapter.prepare({ kind: 'image', model: 'sim-image-1', input: { prompt: 'x' } }), model: 'sim-image-0' };
      const err = await adapter.submit(request, { idempotencyKey: 'k' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SubmitError);
      expect((err as SubmitError).failure).toMatchObject({ kind: 'rejected' });
      expect(sim.charges).toEqual([]);
    } finally {
      await sim.close();
    }
  });
});
