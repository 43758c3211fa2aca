import { describe, expect, it } from 'vitest';
import { openStudio } from '../main/studio.ts';
import { tempDir } from './helpers/tmp.ts';

describe('the per-kind concurrency', () => {
  it('counts this owner\'s running tasks whose lease ran out (a held lock stopped the heartbeat), so no third one starts', async () => {
    const studio = await openStudio(tempDir());
    try {
      const project = await studio.projects.ensure('Film', 1);
      const enqueue = (prompt: string) => studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt } }, 1);
      for (const p of ['a', 'b', 'c']) await enqueue(p);
      const running = await studio.tasks.claim('image', 2, 1_000, { owner: 'me', now: 10 });
      expect(running).toHaveLength(2);
      // Later than the leases' end: they are still running in this process.
      expect(await studio.tasks.claim('image', 2, 1_000, { owner: 'me', now: 5_000 })).toHaveLength(0);
    } finally {
      await studio.close();
    }
  });
});
