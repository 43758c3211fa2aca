import { execFile } from 'node:child_process';
import { ffmpegPath } from './binaries.ts';

/** Longest a decode check may take: a still or a clip's last seconds decode in well under this. */
const DECODE_LIMIT_MS = 60_000;
/** How much of a clip's end is decoded: a clip cut short fails there, and reading only its end keeps a large clip quick. */
export const CLIP_TAIL_SEC = 3;

/**
 * What ffmpeg says is wrong when it decodes the file (all of it, or with `tailSec` only its last seconds), or null
 * when it decodes cleanly. ffprobe reads only a file's header, so a picture cut short passes it; a decode does not.
 * A decode that cannot finish in time is taken as a fault of the file too: a model would choke on it as well.
 */
export function decodeFault(path: string, tailSec?: number): Promise<string | null> {
  const args = ['-v', 'error', '-xerror', ...(tailSec ? ['-sseof', `-${tailSec}`] : []), '-i', path, '-f', 'null', '-'];
  return new Promise((done) => {
    execFile(ffmpegPath(), args, { timeout: DECODE_LIMIT_MS, maxBuffer: 1024 * 1024 }, (err, _out, stderr) => {
      // ffmpeg names its decoder and an address ("[png @ 0x...]"): only the words are kept.
      const said = String(stderr).trim().split('\n').filter(Boolean).map((l) => l.replace(/^\[[^\]]*\]\s*/, ''));
      if (err && (err as { killed?: boolean }).killed) return done(`could not be read to its end within ${DECODE_LIMIT_MS / 1000} s`);
      if (err || said.length > 0) return done(said.at(-1)?.slice(0, 200) || 'could not be decoded');
      done(null);
    });
  });
}
