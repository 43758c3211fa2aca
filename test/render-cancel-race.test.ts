import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { databasePath } from '../main/config/paths.ts';
import { openDatabase } from '../main/db/database.ts';
import { cancelTask } from '../main/engine/decisions.ts';
import { runRenderTask } from '../main/engine/renderExecutor.ts';
import { ffmpegPath, ffprobePath } from '../main/media/binaries.ts';
import { makeMedia } from '../main/simulator/media.ts';
import { openStudio } from '../main/studio.ts';
import { tempDir } from './helpers/tmp.ts';

describe('a render cancelled as ffmpeg finishes', () => {
  it('leaves no film, subtitles or export folder behind its CANCELLED task', async () => {
    const dataDir = tempDir();
    const studio = await openStudio(dataDir);
    try {
      const project = await studio.projects.ensure('Fox', Date.now());
      const clip = join(dataDir, 'clip.mp4');
      writeFileSync(clip, (await makeMedia('clip', { prompt: 'a fox', duration: 1 })).bytes);
      const made = await studio.tasks.enqueue({ projectId: project.id, kind: 'clip', provider: 'simulator', model: 'sim-clip-1', input: { prompt: 'a fox' } }, Date.now());
      const db = openDatabase(databasePath(dataDir));
      db.prepare(`UPDATE tasks SET status = 'SUCCEEDED', output_path = ?, finished_at = 1 WHERE id = ?`).run(clip, made.id);
      db.close();
      for (const preset of [undefined, 'vertical'] as const) {
        const input = { width: 320, height: 180, fps: 12, scenes: [{ id: 'one', duration: 1, clip: { $output: made.id }, narration: null }], ...(preset ? { preset, title: 'Fox', container: 'mp4' } : {}) };
        const task = await studio.tasks.enqueue({ projectId: project.id, kind: 'render', provider: 'local', model: 'ffmpeg', input }, Date.now());
        const [claimed] = await studio.tasks.claim('render', 1, 60_000, { owner: 'test', now: Date.now() });
        // The cancel lands between ffmpeg's end and the completion: the completion is then refused.
        const repo = new Proxy(studio.tasks, {
          get(target, key, receiver) {
            if (key !== 'complete') return Reflect.get(target, key, receiver);
            return async (...args: Parameters<typeof target.complete>) => {
              await cancelTask(target, undefined, task.id, Date.now());
              return target.complete(...args);
            };
          },
        });
        const logged: string[] = [];
        await runRenderTask(claimed!, { repo, clock: studio.clock, dataDir, ffmpegPath: ffmpegPath(), ffprobePath: ffprobePath(), log: (m) => logged.push(m) }, { owner: 'test', leaseMs: 60_000 }, new AbortController().signal);
        expect((await studio.tasks.get(task.id))!.status).toBe('CANCELLED');
        expect(logged).toEqual([`task ${task.id}: cancelled as the render finished; its film was removed`]);
        const renders = join(dataDir, 'projects', String(project.id), 'renders');
        expect(existsSync(renders) ? readdirSync(renders).filter((f) => f.startsWith(`render-${task.id}`)) : []).toEqual([]);
      }
    } finally {
      await studio.close();
    }
  }, 60_000);
});
