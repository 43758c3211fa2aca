import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ffmpegPath } from '../media/binaries.ts';
import type { Kind } from '../tasks/model.ts';

const run = promisify(execFile);

function colourOf(input: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify(input)).digest('hex').slice(0, 6);
}

/** Real media made locally: a PNG still, an H.264 clip of the asked duration, a WAV of speech length. */
export async function makeMedia(kind: Kind, input: Record<string, unknown>): Promise<{ bytes: Buffer; contentType: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'studio-sim-'));
  try {
    const colour = colourOf(input);
    const duration = Math.max(0.5, Number(input.duration ?? 1));
    const [args, file, contentType] = ((): [string[], string, string] => {
      switch (kind) {
        case 'image':
          return [['-f', 'lavfi', '-i', `color=c=0x${colour}:s=640x360`, '-frames:v', '1'], 'out.png', 'image/png'];
        case 'clip':
          return [
            ['-f', 'lavfi', '-i', `color=c=0x${colour}:s=640x360:r=24:d=${duration}`, '-c:v', 'libx264', '-pix_fmt', 'yuv420p'],
            'out.mp4',
            'video/mp4',
          ];
        case 'speech':
          return [['-f', 'lavfi', '-i', `sine=frequency=440:duration=${duration}`], 'out.wav', 'audio/wav'];
        case 'render':
          throw new Error('the simulator does not render; renders are local');
      }
    })();
    await run(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', ...args, '-y', join(dir, file)]);
    return { bytes: await readFile(join(dir, file)), contentType };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
