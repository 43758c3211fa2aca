import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { ffmpegPath, outsideAsar } from '../media/binaries.ts';
import { escapeFilterValue } from '../media/filterEscape.ts';
import { FONT } from '../media/fonts.ts';
import { captionLayout } from './caption.ts';
import { simulatedDraft } from './draft.ts';
import type { Kind } from '../domain/tasks/model.ts';

const run = promisify(execFile);
const require = createRequire(import.meta.url);


/** The size made when the input asks for none, as the simulator always made. */
const WIDTH = 640;
const HEIGHT = 360;
const FPS = 24;
/** The simulator's own bounds, so a test cannot ask it for a picture that fills the disk. */
const SIDE_MIN = 16;
const SIDE_MAX = 3840;

export interface Size {
  width: number;
  height: number;
}

/** The size an input asks for in the simulator's `width` and `height`, even-sided for H.264; its default without them. */
export function sizeOf(input: Record<string, unknown>): Size {
  const side = (v: unknown, fallback: number) =>
    typeof v === 'number' && Number.isFinite(v) ? Math.min(SIDE_MAX, Math.max(SIDE_MIN, Math.round(v / 2) * 2)) : fallback;
  return { width: side(input.width, WIDTH), height: side(input.height, HEIGHT) };
}

export interface Media {
  bytes: Buffer;
  contentType: string;
}

function colourOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 6);
}

async function ffmpeg(args: string[]): Promise<void> {
  await run(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', ...args, '-y']);
}

/** Reads an image given as a data: URI or an http(s) URL, as generative APIs take them. */
async function fetchImage(source: string): Promise<Buffer> {
  const data = /^data:[^;,]+;base64,(.*)$/s.exec(source);
  if (data) return Buffer.from(data[1]!, 'base64');
  const res = await fetch(source);
  if (!res.ok) throw new Error(`could not read the source image (HTTP ${res.status})`);
  return Buffer.from(await res.arrayBuffer());
}

/** A path as a drawtext option: readable by ffmpeg in the packaged app, and escaped for the filtergraph. */
const filterPath = (path: string): string => escapeFilterValue(outsideAsar(path));

/** A PNG of the prompt on a colour of its own, made in dir; the font can be given for a test. */
export async function still(dir: string, prompt: string, font = FONT, size: Size = { width: WIDTH, height: HEIGHT }): Promise<string> {
  const text = join(dir, 'prompt.txt');
  const { lines, fontSize } = captionLayout(prompt, size.width, size.height);
  await writeFile(text, lines.join('\n'));
  const out = join(dir, 'still.png');
  // textfile= rather than text=, so no prompt needs escaping for the filter syntax.
  await ffmpeg([
    '-f', 'lavfi', '-i', `color=c=0x${colourOf(prompt)}:s=${size.width}x${size.height}`,
    '-frames:v', '1',
    '-vf', `drawtext=fontfile=${filterPath(font)}:textfile=${filterPath(text)}:expansion=none:fontcolor=white:fontsize=${fontSize}:line_spacing=${Math.round(fontSize / 4)}:x=(w-text_w)/2:y=(h-text_h)/2`,
    out,
  ]);
  return out;
}

/**
 * A clip with a slow push-in over its whole length, so no stretch of a long clip stands still, at the size asked,
 * from the source image when one is given (scaled to cover that size, as an image-to-video model keeps the frame
 * it is asked for), else from a still of the prompt.
 */
async function clip(dir: string, input: Record<string, unknown>, duration: number): Promise<string> {
  const { width, height } = sizeOf(input);
  let source: string;
  if (typeof input.image_url === 'string') {
    source = join(dir, 'source');
    await writeFile(source, await fetchImage(input.image_url));
  } else {
    source = await still(dir, String(input.prompt ?? ''), FONT, { width, height });
  }
  const frames = Math.max(1, Math.round(duration * FPS));
  const out = join(dir, 'clip.mp4');
  await ffmpeg([
    '-loop', '1', '-i', source,
    '-vf', `scale=${width * 2}:${height * 2}:force_original_aspect_ratio=increase,crop=${width * 2}:${height * 2},zoompan=z='1+0.3*on/${frames}':d=${frames}:s=${width}x${height}:fps=${FPS}`,
    '-frames:v', String(frames), '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', out,
  ]);
  return out;
}

let espeakWasm: Promise<Buffer> | null = null;

/** Real speech from eSpeak NG compiled to WebAssembly: nothing is downloaded at run time. */
async function speech(text: string): Promise<Buffer> {
  const { default: ESpeakNg } = await import('espeak-ng');
  espeakWasm ??= readFile(join(dirname(require.resolve('espeak-ng')), 'espeak-ng.wasm'));
  const instance = await ESpeakNg({
    arguments: ['-v', 'en-us', '-w', 'out.wav', text],
    wasmBinary: await espeakWasm,
    print: () => undefined,
    printErr: () => undefined,
  });
  return Buffer.from(instance.FS.readFile('out.wav'));
}

/** Real media made on this machine: a PNG with the prompt drawn on it, an H.264 clip, spoken WAV. */
export async function makeMedia(kind: Kind, input: Record<string, unknown>): Promise<Media> {
  if (kind === 'speech') return { bytes: await speech(String(input.text ?? '')), contentType: 'audio/wav' };
  if (kind === 'draft') return { bytes: Buffer.from(JSON.stringify(simulatedDraft(String(input.idea ?? ''), Number(input.scenes ?? 6)), null, 2)), contentType: 'application/json' };
  const dir = await mkdtemp(join(tmpdir(), 'studio-sim-'));
  try {
    if (kind === 'image') return { bytes: await readFile(await still(dir, String(input.prompt ?? ''), FONT, sizeOf(input))), contentType: 'image/png' };
    if (kind === 'clip') {
      const duration = Math.max(0.5, Number(input.duration ?? 2));
      return { bytes: await readFile(await clip(dir, input, duration)), contentType: 'video/mp4' };
    }
    throw new Error('renders are made on this machine, not by a provider');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
