import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ffmpegPath } from '../main/media/binaries.ts';
import type { RunningSimulator } from '../main/simulator/server.ts';
import { cli } from './helpers/cli.ts';
import { freshDatabase, postgresAvailable } from './helpers/postgres.ts';
import { writeSettings } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import { tempDir } from './helpers/tmp.ts';

/** A machine's data folder: its name and media folder in its settings, the simulator as its provider. */
function machine(sim: RunningSimulator, name: string, media: string) {
  const dir = tempDir();
  writeSettings(dir, {
    engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } },
    providers: { simulator: { baseUrl: sim.url } },
    team: { machineName: name, mediaDir: media },
  });
  return dir;
}

interface TaskJson {
  kind: string;
  status: string;
  input: Record<string, unknown>;
}

describe.skipIf(!postgresAvailable)('your own picture in a team', () => {
  it('is copied into the team media folder under its checksum; another machine renders the scene from it, and one that does not see the folder says so and buys nothing', async () => {
    const sim = await simulatorForTest({ jobMs: 50 });
    const url = await freshDatabase();
    // One team media folder, mounted at another place on studio-b; studio-c has a media folder of its own.
    const team = tempDir();
    const mountB = join(tempDir(), 'team-media');
    symlinkSync(team, mountB);
    const mediaC = tempDir();
    const [dirA, dirB, dirC] = [machine(sim, 'studio-a', team), machine(sim, 'studio-b', mountB), machine(sim, 'studio-c', mediaC)];

    const png = join(tempDir(), 'mine.png');
    expect(spawnSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=orange:s=320x180', '-frames:v', '1', '-y', png]).status).toBe(0);
    const sum = createHash('sha256').update(readFileSync(png)).digest('hex');
    const board = join(dirA, 'board.json');
    writeFileSync(board, JSON.stringify({ width: 320, height: 180, fps: 12, scenes: [{ id: 'mine', imagePrompt: 'my still', motionPrompt: 'push in', duration: 1, image: { file: png } }] }));
    for (const args of [['storyboard', 'create', 'Fox', '--file', board], ['generate', 'Fox']]) {
      const run = await cli(dirA, '--db', url, ...args);
      expect(run.code, run.err).toBe(0);
    }
    // The copy is in the team media folder, in the database's own folder there, named by its checksum.
    const [space] = readdirSync(team).filter((f) => f.startsWith('team-'));
    expect(readdirSync(join(team, space!, 'projects', '1', 'media'))).toEqual([`own-${sum}.png`]);
    // The original was only on studio-a, and is gone now.
    rmSync(png);

    // studio-c does not see the team media folder: it says where the copy should be and what to do, and buys nothing.
    const refused =
      `scene 1 ("mine") image: the project's copy of ${png} (own-${sum}.png) is not in this machine's media folder ` +
      `${mediaC}, and there is no file at ${png}: ` +
      'share the media folder (Settings → Media folder, or --media), as on the machine that copied it, or put the picture back at that path';
    for (const command of ['estimate', 'generate']) {
      const run = await cli(dirC, '--db', url, command, 'Fox');
      expect(run.code).not.toBe(0);
      expect(run.err).toContain(refused);
    }
    // Its worker takes the clip studio-a enqueued, and ends it before sending anything, saying why.
    expect((await cli(dirC, '--db', url, 'worker', '--until-idle')).code).toBe(0);
    const failed = (JSON.parse((await cli(dirC, '--db', url, 'tasks', '--json')).out) as (TaskJson & { error: string })[]).find((t) => t.kind === 'clip')!;
    expect(failed).toMatchObject({
      status: 'FAILED',
      error: `your own picture, which this clip is made from, was saved at ${space}/projects/1/media/own-${sum}.png; it is not in this machine's media folder ${mediaC}: share the media folder (Settings → Media folder, or --media)`,
    });
    expect(sim.charges).toEqual([]);

    // studio-b finds the copy where it mounts the team folder: Generate there makes the clip from it and renders the scene.
    expect((await cli(dirB, '--db', url, 'generate', 'Fox')).code).toBe(0);
    expect((await cli(dirB, '--db', url, 'worker', '--until-idle')).code).toBe(0);
    const tasks = JSON.parse((await cli(dirB, '--db', url, 'tasks', '--json')).out) as TaskJson[];
    const made = tasks.filter((t) => t.status === 'SUCCEEDED');
    expect(made.map((t) => t.kind).sort()).toEqual(['clip', 'render']);
    expect(made.find((t) => t.kind === 'clip')!.input.image_url).toMatchObject({ sha256: sum, $file: `${space}/projects/1/media/own-${sum}.png` });
    expect(sim.charges.map((c) => c.kind)).toEqual(['clip']);
    // And its estimate buys nothing again: the picture is yours, the clip made.
    const estimate = await cli(dirB, '--db', url, 'estimate', 'Fox');
    expect(estimate.code, estimate.err).toBe(0);
    expect(estimate.out).toMatch(/mine:image\s+yours/);
  }, 80_000);
});
