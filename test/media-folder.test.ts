import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseMediaDir, studioMedia } from '../main/config/media.ts';
import { sha256File } from '../main/media/checksum.ts';
import { FileChecks } from '../main/media/fileChecks.ts';
import { dataFolderMedia, mediaFolderAt } from '../main/media/mediaFolder.ts';
import { OutputLocator, OutputNotHere } from '../main/engine/outputLocator.ts';
import { notHereWords } from '../main/media/outputWords.ts';
import type { Task, TaskOutput } from '../main/domain/tasks/model.ts';
import { tempDir } from './helpers/tmp.ts';

describe('the media folder', () => {
  it('is --media, else STUDIO_MEDIA_DIR, else settings team.mediaDir, else none', () => {
    expect(chooseMediaDir('/a', { STUDIO_MEDIA_DIR: '/b' }, { mediaDir: '/c' })).toBe('/a');
    expect(chooseMediaDir(undefined, { STUDIO_MEDIA_DIR: '/b' }, { mediaDir: '/c' })).toBe('/b');
    expect(chooseMediaDir(undefined, {}, { mediaDir: '/c' })).toBe('/c');
    expect(chooseMediaDir(undefined, {}, {})).toBeNull();
    expect(chooseMediaDir('rel/dir', {}, {})).toBe(join(process.cwd(), 'rel/dir'));
  });

  it('keeps a file saved in it relative to it, with forward slashes, and finds it under another mount', () => {
    const studioA = mediaFolderAt('/mnt/media', 'team', 'studio-a', true);
    const stored = studioA.stored(join(studioA.base, 'projects', '3', 'media', 'task-9-a1.png'));
    expect(stored).toBe('team/projects/3/media/task-9-a1.png');
    const studioB = mediaFolderAt('/Volumes/shared/media', 'team', 'studio-b', true);
    expect(studioB.resolve(stored)).toBe('/Volumes/shared/media/team/projects/3/media/task-9-a1.png');
  });

  it('reads a path kept before it, absolute, as it is', () => {
    const media = mediaFolderAt('/mnt/media', 'team', 'studio-a', true);
    expect(media.resolve('/home/a/.config/take-studio/projects/1/media/task-1-a1.png')).toBe('/home/a/.config/take-studio/projects/1/media/task-1-a1.png');
    expect(media.resolve('C:\\Users\\a\\take-studio\\x.png')).toBe('C:\\Users\\a\\take-studio\\x.png');
    expect(media.stored('/elsewhere/x.png')).toBe('/elsewhere/x.png');
  });

  it('without one, the embedded studio keeps its files in its data folder, relative to it, so the folder may move', () => {
    const media = studioMedia({ dataDir: '/data', configured: null, kind: 'sqlite', space: 'local-ab12', machine: 'm' });
    expect(media.base).toBe('/data');
    expect(media.stored('/data/projects/1/media/task-1-a1.png')).toBe('projects/1/media/task-1-a1.png');
    expect(media.shared).toBe(false);
  });

  it('puts each database in a folder of its own: the team database and every embedded one', () => {
    expect(studioMedia({ dataDir: '/data', configured: '/m', kind: 'postgres', space: 'team', machine: 'm' }).base).toBe('/m/team');
    expect(studioMedia({ dataDir: '/data', configured: '/m', kind: 'sqlite', space: 'local-ab12', machine: 'm' }).base).toBe('/m/local-ab12');
    const unshared = studioMedia({ dataDir: '/data', configured: null, kind: 'postgres', space: 'team', machine: 'm' });
    expect(unshared.base).toBe('/data/team');
    expect(unshared.stored('/data/team/projects/1/media/x.png')).toBe('team/projects/1/media/x.png');
  });
});

describe('saying why a file cannot be read here', () => {
  const here = mediaFolderAt('/mnt/media', 'team', 'studio-a', true);

  it('names the machine that saved a file missing from this machine\'s media folder, and what to do', () => {
    expect(notHereWords("scene 2's clip", { path: 'team/projects/1/media/task-4-a1.mp4', machine: 'studio-b' }, 'missing', here)).toBe(
      "scene 2's clip was saved on machine 'studio-b' at team/projects/1/media/task-4-a1.mp4; it is not in this machine's media folder /mnt/media: " +
        'share the media folder (Settings → Media folder, or --media)',
    );
  });

  it('says a file this machine saved was moved or deleted', () => {
    expect(notHereWords("task 4's result", { path: 'team/x.png', machine: 'studio-a' }, 'missing', here)).toMatch(
      /^task 4's result was saved on this machine \('studio-a'\) at team\/x\.png in the media folder \/mnt\/media, and is no longer there: it was moved or deleted \(looked for at \/mnt\/media\/team\/x\.png\)$/,
    );
    expect(notHereWords("task 4's result", { path: '/data/x.png', machine: null }, 'missing', here)).toBe("task 4's result is no longer at /data/x.png: it was moved or deleted (looked for at /data/x.png)");
  });

  it('says a file that is there but not the one saved is changed, naming who saved it', () => {
    expect(notHereWords("task 4's result", { path: 'team/x.png', machine: 'studio-b' }, 'changed', here)).toBe(
      "task 4's result at /mnt/media/team/x.png is not the file machine 'studio-b' saved: its checksum differs, so it was changed or damaged since it was saved",
    );
  });
});

describe('finding saved results on this machine (real files)', () => {
  async function saved(dir: string, name: string, body: string) {
    const media = mediaFolderAt(dir, 'team', 'studio-a', true);
    mkdirSync(media.base, { recursive: true });
    const path = join(media.base, name);
    writeFileSync(path, body);
    return { media, output: { taskId: 7, index: 0, path: media.stored(path), sha256: await sha256File(path), bytes: body.length, contentType: 'image/png', machine: 'studio-b' } };
  }

  function storeOf(output: TaskOutput) {
    const task = { id: 7, status: 'SUCCEEDED', outputPath: output.path, outputSha256: output.sha256 } as Task;
    return { get: async (id: number) => (id === 7 ? task : undefined), outputs: async () => [output] };
  }

  it('gives the file when it is whole, says which machine has it when it is not here', async () => {
    const dir = tempDir();
    const { media, output } = await saved(dir, 'x.png', 'picture');
    const locator = new OutputLocator(storeOf(output), media);
    expect(await locator.input(7, "scene 1's image")).toBe(join(dir, 'team', 'x.png'));
    const elsewhere = new OutputLocator(storeOf(output), mediaFolderAt(join(dir, 'not-mounted'), 'team', 'studio-a', true));
    await expect(elsewhere.input(7, "scene 1's image")).rejects.toThrow(OutputNotHere);
    await expect(elsewhere.input(7, "scene 1's image")).rejects.toThrow(/saved on machine 'studio-b' at team\/x\.png; it is not in this machine's media folder/);
    expect(await elsewhere.file(7, 0, "task 7's result")).toMatchObject({ state: 'missing' });
    expect(await elsewhere.file(7, 1, "task 7's result")).toBeNull();
  });

  it('says a file of the same size with other bytes is changed', async () => {
    const dir = tempDir();
    const { media, output } = await saved(dir, 'x.png', 'picture');
    writeFileSync(join(dir, 'team', 'x.png'), 'PICTURE');
    const found = await new OutputLocator(storeOf(output), media).file(7, 0, "task 7's result");
    expect(found).toMatchObject({ state: 'changed' });
    expect(found?.state !== 'here' && found?.words).toMatch(/is not the file machine 'studio-b' saved: its checksum differs/);
  });

  it('reads a file once per version for its checksum, and again once it changes', async () => {
    const dir = tempDir();
    const { output } = await saved(dir, 'x.png', 'picture');
    const checks = new FileChecks();
    const path = join(dir, 'team', 'x.png');
    expect(await checks.state(path, output, true)).toBe('here');
    writeFileSync(path, 'changed!');
    expect(await checks.state(path, { ...output, bytes: null }, true)).toBe('changed');
    expect(await checks.state(path, output, false)).toBe('changed');
  });

  it('finds files of the data folder relative to it when there is no media folder, and those kept absolute before', () => {
    const media = dataFolderMedia('/data', 'm');
    expect(media.resolve('projects/1/media/x.png')).toBe('/data/projects/1/media/x.png');
    expect(media.resolve('/data/projects/1/media/x.png')).toBe('/data/projects/1/media/x.png');
  });
});
