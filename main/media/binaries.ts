import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function fromInstaller(pkg: string): string | null {
  try {
    // Inside a packaged app the binary sits in the unpacked copy of the archive, where it can run.
    return (require(pkg) as { path: string }).path.replace('app.asar', 'app.asar.unpacked');
  } catch {
    return null;
  }
}

/** ffmpeg: the studio's setting, then FFMPEG_PATH, then the bundled binary, then the one on PATH. */
export function ffmpegPath(setting?: string | null): string {
  return setting || process.env.FFMPEG_PATH || fromInstaller('@ffmpeg-installer/ffmpeg') || 'ffmpeg';
}

export function ffprobePath(setting?: string | null): string {
  return setting || process.env.FFPROBE_PATH || fromInstaller('@ffprobe-installer/ffprobe') || 'ffprobe';
}
