import { copyFile as realCopy, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkFileCall, IpcRefused } from '../app/ipcValidation.ts';
import { fileName, OutputFileRefused, saveOutputAs, showOutputInFolder, type OutputFileDeps } from '../app/outputFile.ts';
import { tempDir } from './helpers/tmp.ts';

// The Electron binary cannot run here: the dialog and the shell are fakes that record what they were asked;
// the copy is a real copy between real files.
function deps(answer: { canceled: boolean; filePath?: string }, output: { path: string; name: string } | null) {
  const asked: { window: string; options: unknown }[] = [];
  const shown: string[] = [];
  const d: OutputFileDeps<string> = {
    dialog: {
      showSaveDialog: async (window, options) => {
        asked.push({ window, options });
        return answer;
      },
    },
    shell: { showItemInFolder: (p) => shown.push(p) },
    copyFile: realCopy,
    output: () => output,
    window: () => 'the studio window',
    downloadsDir: () => '/home/someone/Downloads',
  };
  return { d, asked, shown };
}

describe('Save as… and Show in folder', () => {
  it('asks where, attached to the window, offering the project name in Downloads, and copies the video there', async () => {
    const dir = tempDir();
    const video = join(dir, 'render-9.mp4');
    await writeFile(video, 'the video bytes');
    const target = join(dir, 'chosen.mp4');
    const { d, asked } = deps({ canceled: false, filePath: target }, { path: video, name: 'Fox film.mp4' });
    expect(await saveOutputAs(d, 9)).toBe(target);
    expect(await readFile(target, 'utf8')).toBe('the video bytes');
    expect(await readFile(video, 'utf8')).toBe('the video bytes');
    expect(asked).toEqual([
      { window: 'the studio window', options: { title: 'Save the video as', defaultPath: join('/home/someone/Downloads', 'Fox film.mp4'), filters: [{ name: 'MP4', extensions: ['mp4'] }] } },
    ]);
  });

  it('copies nothing when the person cancels', async () => {
    const dir = tempDir();
    const video = join(dir, 'render-9.mp4');
    await writeFile(video, 'x');
    const { d } = deps({ canceled: true, filePath: '' }, { path: video, name: 'Fox.mp4' });
    expect(await saveOutputAs(d, 9)).toBeNull();
  });

  it('says so in words when the copy fails, and when the task has no result', async () => {
    const dir = tempDir();
    const video = join(dir, 'render-9.mp4');
    await writeFile(video, 'x');
    const { d } = deps({ canceled: false, filePath: join(dir, 'no-such-folder', 'v.mp4') }, { path: video, name: 'Fox.mp4' });
    await expect(saveOutputAs(d, 9)).rejects.toThrow(/the video could not be saved to .*no-such-folder.*ENOENT/);
    const none = deps({ canceled: false, filePath: 'x' }, null);
    await expect(saveOutputAs(none.d, 4)).rejects.toThrow(OutputFileRefused);
    expect(() => showOutputInFolder(none.d, 4)).toThrow('task 4 has no saved result to save or show');
    expect(none.asked).toEqual([]);
  });

  it('shows the output itself in the file manager', () => {
    const { d, shown } = deps({ canceled: true }, { path: '/data/media/render-9.mp4', name: 'Fox.mp4' });
    showOutputInFolder(d, 9);
    expect(shown).toEqual(['/data/media/render-9.mp4']);
  });

  it('names the copy after the project, in characters every file system takes', () => {
    expect(fileName('Fox: the "return"/home', 'render', 9, '/m/render-9.mp4')).toBe('Fox the return home.mp4');
    expect(fileName('Fox', 'image', 3, '/m/x.png')).toBe('Fox image 3.png');
    expect(fileName('///', 'render', 3, '/m/x.mp4')).toBe('video.mp4');
    expect(fileName('Fox film', 'render', 7, '/m/render-7/Fox film - vertical.mp4', 'vertical')).toBe('Fox film - vertical.mp4');
    expect(fileName('Fox film', 'render', 8, '/m/render-8/Fox film - gif-preview.gif', 'gif-preview')).toBe('Fox film - gif-preview.gif');
  });

  it('takes file calls only from the studio window, for a known action and one task id', () => {
    const page = { url: 'app://studio/index.html', isMainFrame: true };
    expect(() => checkFileCall('saveOutputAs', [9], page)).not.toThrow();
    expect(() => checkFileCall('showOutputInFolder', [9], page)).not.toThrow();
    expect(() => checkFileCall('saveOutputAs', [9], { url: 'https://evil.example/', isMainFrame: true })).toThrow(/did not come from the studio window/);
    expect(() => checkFileCall('saveOutputAs', [9], { ...page, isMainFrame: false })).toThrow(IpcRefused);
    expect(() => checkFileCall('openPath', [9], page)).toThrow(/no file action openPath/);
    expect(() => checkFileCall('saveOutputAs', ['/etc/passwd'], page)).toThrow(/takes a task id/);
    expect(() => checkFileCall('saveOutputAs', [9, '/tmp/x'], page)).toThrow(/takes a task id/);
  });
});
