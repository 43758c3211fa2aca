import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { databasePath } from '../main/config/paths.ts';
import { openRuntime } from '../main/runtime.ts';
import { openSqliteStore } from '../main/store/sqlite/store.ts';
import { runStudio, writeSettings } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import { tempDir } from './helpers/tmp.ts';

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const SETTINGS = { engine: { tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200 } } };

/** A data folder with one finished task whose file is in the shared media folder `media`, and a copy of it. */
async function finishedThenCopied() {
  const sim = await simulatorForTest({ jobMs: 100 });
  const media = tempDir();
  const a = tempDir();
  writeSettings(a, SETTINGS);
  const env = { STUDIO_SIMULATOR_BASE_URL: sim.url, STUDIO_MEDIA_DIR: media };
  const store = openSqliteStore(databasePath(a));
  const project = await store.projects.ensure('Fox', Date.now());
  await store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'a fox' } }, Date.now());
  const spaceA = store.mediaSpace;
  await store.close();
  expect((await runStudio(a, ['worker', '--until-idle'], env)).code).toBe(0);
  const b = tempDir();
  cpSync(a, b, { recursive: true });
  expect((await runStudio(b, ['tasks'], env)).code).toBe(0);
  const original = join(media, spaceA, 'projects', '1', 'media', 'task-1-a1.png');
  return { sim, media, a, b, original };
}

describe('a result finished before its data folder was copied, both copies sharing one media folder (real processes)', () => {
  it('stays whole in the copy when the original deletes its file', async () => {
    const { sim, media, b, original } = await finishedThenCopied();
    const kept = sha(original);
    rmSync(original);
    const runtime = await openRuntime(b, { mediaUrl: (id) => `/media/${id}`, media });
    try {
      const [output] = await runtime.studio.tasks.outputs(1);
      const found = runtime.studio.media.resolve(output!.path);
      expect(sha(found)).toBe(kept);
      expect(output!.sha256).toBe(kept);
    } finally {
      await runtime.stop();
    }
    expect(sim.charges).toHaveLength(1);
  });

  it("the copy deleting it from its library leaves the original's file", async () => {
    const { media, b, original } = await finishedThenCopied();
    const runtime = await openRuntime(b, { mediaUrl: (id) => `/media/${id}`, media });
    try {
      await runtime.service.deleteOutput(1);
    } finally {
      await runtime.stop();
    }
    expect(existsSync(original)).toBe(true);
  });
});
