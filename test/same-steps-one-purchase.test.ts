import { it as base, describe, expect } from 'vitest';
import { Pipeline } from '../main/pipeline/generate.ts';
import { parseStoryboard } from '../main/providers/storyboards.ts';
import { openProviders } from '../main/providers/registry.ts';
import { openStudio } from '../main/studio.ts';
import { storeKinds } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';

const SAME_WORDS = { aspect: '9:16', resolution: 480, scenes: [
  { id: 'a', imagePrompt: 'a red fox', duration: 2, narration: 'Same words.' },
  { id: 'b', imagePrompt: 'a blue owl', duration: 2, narration: 'Same words.' },
] };
// The same prompt, seed and length: the same still, the same clip made from it, the same speech.
const TWINS = { aspect: '9:16', resolution: 480, scenes: [
  { id: 'a', imagePrompt: 'a red fox', seed: 7, duration: 2, narration: 'Twice.' },
  { id: 'b', imagePrompt: 'a red fox', seed: 7, duration: 2, narration: 'Twice.' },
] };

describe.each(storeKinds())('on the $kind store, steps of one Generate with the same provider, model and input', (kind) => {
  const it = base.skipIf(!kind.available);

  /** A studio with project P holding `board`, and a Generate for it. */
  async function opened(board: object) {
    const dataDir = tempDir();
    const database = kind.kind === 'postgres' ? await kind.fresh() : undefined;
    const studio = await openStudio(dataDir, undefined, { database });
    const providers = await openProviders(studio.settings, dataDir);
    const pipeline = new Pipeline({ studio, provider: providers.get, defaults: studio.settings.defaults });
    const close = async () => {
      await providers.close();
      await studio.close();
    };
    const { id } = await studio.projects.ensure('P', Date.now());
    await studio.storyboards.save(id, parseStoryboard(board), Date.now(), 0);
    return { studio, pipeline, close, id };
  }
  const kinds = async (studio: Awaited<ReturnType<typeof opened>>['studio']) => (await studio.tasks.list()).map((t) => t.kind);

  it('are bought once and used by each scene; the render names each task once; Generate again makes nothing', async () => {
    const { studio, pipeline, close, id } = await opened(SAME_WORDS);
    try {
      const e = await pipeline.generate('P');
      expect(await kinds(studio)).toEqual(['image', 'clip', 'speech', 'image', 'clip', 'render']);
      const b = e.steps.find((s) => s.key === 'b:speech')!;
      expect([b.sameAs, b.cost, b.taskId]).toEqual(['a:speech', 0, e.steps.find((s) => s.key === 'a:speech')!.taskId]);
      expect(e.total).toBe(e.steps.filter((s) => s.key !== 'b:speech').reduce((n, s) => n + (s.cost ?? 0), 0));
      const render = (await studio.tasks.list()).find((t) => t.kind === 'render')!;
      expect((await studio.tasks.related(render.id)).dependsOn.map((t) => t.kind).sort()).toEqual(['clip', 'clip', 'speech']);
      const again = await pipeline.generate('P');
      expect(again.steps.every((s) => s.action === 'reuse')).toBe(true);
      expect((await studio.takes.list(id)).map((t) => [t.scene, t.speechTaskId])).toEqual([['a', b.taskId], ['b', b.taskId]]);
    } finally {
      await close();
    }
  });

  it('identical stills and the clips made from them are bought once too', async () => {
    const { studio, pipeline, close } = await opened(TWINS);
    try {
      const e = await pipeline.generate('P');
      expect(await kinds(studio)).toEqual(['image', 'clip', 'speech', 'render']);
      expect(e.steps.filter((s) => s.scene === 'b').map((s) => s.sameAs)).toEqual(['a:image', 'a:clip', 'a:speech']);
      expect((await pipeline.generate('P')).steps.every((s) => s.action === 'reuse')).toBe(true);
    } finally {
      await close();
    }
  });

  it('a project that already bought the same speech twice keeps working: no crash, the render links it once', async () => {
    const { studio, pipeline, close, id } = await opened(SAME_WORDS);
    try {
      // As a Generate before this change left it: the identical speech, two tasks.
      const speech = { projectId: id, kind: 'speech' as const, provider: 'simulator', model: 'sim-speech-1', input: { text: 'Same words.' } };
      await studio.tasks.enqueue(speech, Date.now());
      await studio.tasks.enqueue(speech, Date.now());
      await pipeline.generate('P');
      expect(await kinds(studio)).toEqual(['speech', 'speech', 'image', 'clip', 'image', 'clip', 'render']);
      const render = (await studio.tasks.list()).find((t) => t.kind === 'render')!;
      expect((await studio.tasks.related(render.id)).dependsOn.map((t) => t.kind).sort()).toEqual(['clip', 'clip', 'speech']);
      expect((await pipeline.generate('P')).steps.every((s) => s.action === 'reuse')).toBe(true);
    } finally {
      await close();
    }
  });
});
