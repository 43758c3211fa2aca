import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clearAttempt, clearOthers, forgetFfmpeg, noteFfmpeg } from '../main/engine/renderLeftovers.ts';
import { tempDir } from './helpers/tmp.ts';

function folders() {
  const dir = tempDir();
  const f = { renders: join(dir, 'renders'), segments: join(dir, 'segments') };
  mkdirSync(f.renders);
  mkdirSync(f.segments);
  return f;
}

describe("a render's leftovers", () => {
  it('a note of its ffmpeg cut short by a crash is cleared with the rest of the attempt, not thrown on', async () => {
    const f = folders();
    for (const text of ['', '{"pid": 12', 'null']) {
      writeFileSync(join(f.renders, 'render-7.pid'), text);
      writeFileSync(join(f.renders, 'render-7-ab12.part.mp4'), 'half');
      await clearAttempt(f, 7);
      expect(readdirSync(f.renders)).toEqual([]);
    }
  });

  it("a worker that slept past its lease leaves its successor's note alone", async () => {
    const f = folders();
    noteFfmpeg(f, 3, 1111, '/a/piece.part.mp4');
    // The successor started its own ffmpeg since.
    noteFfmpeg(f, 3, 2222, '/b/piece.part.mp4');
    await forgetFfmpeg(f, 3, 1111);
    expect(existsSync(join(f.renders, 'render-3.pid'))).toBe(true);
    await forgetFfmpeg(f, 3, 2222);
    expect(existsSync(join(f.renders, 'render-3.pid'))).toBe(false);
  });

  it('what a render cancelled while its worker was dead left is cleared by the next render of the project, its ffmpeg stopped', async () => {
    const f = folders();
    const part = join(f.segments, 'abc.render-5-dead.part.mp4');
    writeFileSync(part, 'half');
    // The dead worker's ffmpeg, still running: a process whose command line names the part it writes.
    const orphan = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', part], { stdio: 'ignore' });
    noteFfmpeg(f, 5, orphan.pid!, part);
    mkdirSync(join(f.renders, 'render-5-dead.work'));
    writeFileSync(join(f.renders, 'render-5-dead.part.mp4'), 'half');
    // A render still running elsewhere is not touched.
    writeFileSync(join(f.renders, 'render-6.pid'), JSON.stringify({ pid: 1, temp: 'x' }));
    const exited = new Promise((resolve) => orphan.on('exit', resolve));
    await clearOthers(f, 9, async (id) => id === 5);
    expect(await exited).toBe(null);
    expect(readdirSync(f.renders)).toEqual(['render-6.pid']);
    expect(readdirSync(f.segments)).toEqual([]);
  });
});
