import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FilmRendersView, TaskView } from '../main/api/contract.ts';
import { Pipeline } from '../main/pipeline/generate.ts';
import { parseStoryboard } from '../main/providers/storyboards.ts';
import { openProviders } from '../main/providers/registry.ts';
import { openStudio } from '../main/studio.ts';
import { TWO_SCENES } from './helpers/boards.ts';
import { cli } from './helpers/cli.ts';
import { writeSettings } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import { apiForTest } from './helpers/studioApi.ts';
import { tempDir } from './helpers/tmp.ts';

describe('exports of the film over the StudioApi', () => {
  it('offers the six presets labelled for the film, refuses what it cannot make in words, and lists an export with its file name, buying nothing', async () => {
    const sim = await simulatorForTest({ jobMs: 20 });
    const dir = tempDir();
    writeSettings(dir, { engine: { tickMs: 20, poll: { intervalMs: 20, maxIntervalMs: 50 } }, providers: { simulator: { baseUrl: sim.url } } });
    const file = join(dir, 'board.json');
    writeFileSync(file, JSON.stringify(TWO_SCENES));
    expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', file)).code).toBe(0);
    const call = await apiForTest(dir);

    const before = await call<FilmRendersView>('filmRenders', 'Fox');
    expect(before.result).toEqual({
      presets: [
        { preset: '1080p', label: '1080p 1920 × 1080 (MP4)', use: 'Full HD, for YouTube and most players' },
        { preset: '4k', label: '4K 3840 × 2160 (MP4)', use: 'for big screens; the slowest to make' },
        { preset: 'vertical', label: 'Vertical 1080 × 1920 (MP4)', use: 'for Reels, Shorts and TikTok' },
        { preset: 'square', label: 'Square 1080 × 1080 (MP4)', use: 'for feeds that show squares' },
        { preset: 'webm', label: 'WebM 320 × 180 (VP9)', use: 'for web pages (VP9 video, Opus sound)' },
        { preset: 'gif-preview', label: 'GIF preview (first 6 s, 480 × 270)', use: 'silent, for chats and link previews' },
      ],
      exports: [],
      renders: [],
    });
    expect(await call('exportFilm', 'Fox', 'mkv')).toMatchObject({ status: 400, error: 'there is no export preset "mkv"; pick one of 1080p, 4k, vertical, square, webm, gif-preview' });
    expect(await call('exportFilm', 'Fox', 'webm')).toMatchObject({ status: 400, error: expect.stringMatching(/not made yet: generate them first$/) });

    expect((await cli(dir, 'generate', 'Fox')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    const charges = sim.charges.length;
    const { result: task } = await call<TaskView>('exportFilm', 'Fox', 'webm');
    expect(task).toMatchObject({ kind: 'render', status: 'PENDING' });
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);

    const { result: after } = await call<FilmRendersView>('filmRenders', 'Fox');
    expect(after.exports).toEqual([
      { preset: 'webm', label: 'WebM 320 × 180 (VP9)', fileName: 'Fox - webm.webm', task: expect.objectContaining({ id: task.id, status: 'SUCCEEDED', outputUrl: `/media/${task.id}` }) },
    ]);
    expect(after.renders).toEqual([
      { id: task.id, status: 'SUCCEEDED', preset: 'webm' },
      { id: expect.any(Number), status: 'SUCCEEDED', preset: null },
    ]);
    // An export is made on this machine: nothing more was bought for it.
    expect(sim.charges.length).toBe(charges);
  }, 60_000);
});

describe('a render or export whose storyboard changed after it was asked for', () => {
  it('is refused at the enqueue, buying none of the new storyboard\'s steps', async () => {
    const dataDir = tempDir();
    writeSettings(dataDir, {});
    const studio = await openStudio(dataDir);
    const providers = await openProviders(studio.settings, dataDir, {});
    try {
      const project = await studio.projects.ensure('Fox', Date.now());
      // Saved between render()'s own check and its Generate: nothing of it is made, and a render must buy none of it.
      await studio.storyboards.save(project.id, parseStoryboard({ width: 320, height: 180, scenes: [{ id: 'dawn', imagePrompt: 'a fox', narration: 'Hi.' }] }), Date.now());
      const pipeline = new Pipeline({ studio, provider: providers.get, defaults: studio.settings.defaults });
      await expect(pipeline.generate('Fox', { freshRender: true, renderOnly: true, preset: 'webm' })).rejects.toThrow('dawn:image, dawn:clip, dawn:speech not made yet: generate them first; nothing was enqueued');
      expect(await studio.tasks.list()).toEqual([]);
    } finally {
      await providers.close();
      await studio.close();
    }
  });
});
