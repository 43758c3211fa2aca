import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { send, startFake } from './fakes/server.ts';
import { runStudio, startStudio } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

const FAL_MODEL = 'fal-ai/flux/dev';
const QUOTE_MS = 1_500;

/** Images from fal (whose price is asked over the network), clips and narration from the bundled simulator. */
const BOARD = {
  width: 320,
  height: 180,
  fps: 24,
  steps: {
    image: { provider: 'fal', model: FAL_MODEL },
    clip: { provider: 'simulator', model: 'sim-clip-1' },
    speech: { provider: 'simulator', model: 'sim-speech-1' },
  },
  scenes: [
    { id: 'dawn', imagePrompt: 'a fox asleep in snow', motionPrompt: 'push in', narration: 'At dawn, the fox wakes.', duration: 2 },
    { id: 'hunt', imagePrompt: 'the fox listening', motionPrompt: 'hold', narration: 'It listens.', duration: 1.5 },
    { id: 'home', imagePrompt: 'the fox going home', motionPrompt: 'track', duration: 1 },
  ],
};

describe('two Generates at once, in two processes', () => {
  it('enqueue each step once, however slow the price quotes: the later Generate reuses what the earlier enqueued', async () => {
    // fal's pricing endpoint (fal.ai/docs/platform-apis/v1/models/pricing); slow, so both Generates are pricing at once.
    const fal = await startFake(async (req, res) => {
      if (req.method === 'GET' && req.path.startsWith('/v1/models/pricing')) {
        await new Promise((r) => setTimeout(r, QUOTE_MS));
        return send(res, 200, { prices: [{ endpoint_id: FAL_MODEL, unit_price: 0.03, unit: 'images', currency: 'USD' }] });
      }
    });
    const dir = tempDir();
    const env = { STUDIO_FAL_BASE_URL: fal.url, FAL_KEY: 'test' };
    const file = join(dir, 'board.json');
    writeFileSync(file, JSON.stringify(BOARD));
    expect((await runStudio(dir, ['storyboard', 'create', 'Fox', '--file', file], env)).code).toBe(0);

    const both = [startStudio(dir, ['generate', 'Fox'], env), startStudio(dir, ['generate', 'Fox'], env)];
    expect(await Promise.all(both.map((p) => p.exited))).toEqual([0, 0]);

    // Each process priced all three images: both had judged every step new before either enqueued.
    expect(fal.count('GET', /^\/v1\/models\/pricing/)).toBe(6);
    const tasks = JSON.parse((await runStudio(dir, ['tasks', '--json'])).stdout) as { kind: string }[];
    expect(tasks).toHaveLength(9);
    expect(tasks.map((t) => t.kind).sort()).toEqual(['clip', 'clip', 'clip', 'image', 'image', 'image', 'render', 'speech', 'speech']);
    const outputs = both.map((p) => p.stdout());
    expect(outputs.filter((o) => o.includes('Enqueued 9 step(s)'))).toHaveLength(1);
    const later = outputs.find((o) => !o.includes('Enqueued'))!;
    expect(later).toContain('Nothing new to make');
    expect(later).toMatch(/enqueued by another Generate while this one was being priced/);
    expect(fal.count('POST', /./)).toBe(0);
  }, 60_000);
});
