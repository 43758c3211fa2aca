import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * The path a child process can open. Electron reads inside app.asar through its own fs, but another
 * program goes to the OS, where only the unpacked copy (app.asar.unpacked, see asarUnpack) exists.
 * Only a folder named exactly app.asar is rewritten, so the result is unchanged when applied again.
 */
export function outsideAsar(path: string): string {
  return path.replace(/(^|[\\/])app\.asar(?=[\\/])/, '$1app.asar.unpacked');
}

function fromInstaller(pkg: string): string | null {
  try {
    return (require(pkg) as { path: string }).path;
  } catch {
    return null;
  }
}

/** ffmpeg: the studio's setting, then FFMPEG_PATH, then the bundled binary, then the one on PATH. */
export function ffmpegPath(setting?: string | null): string {
  return outsideAsar(setting || process.env.FFMPEG_PATH || fromInstaller('@ffmpeg-installer/ffmpeg') || 'ffmpeg');
}

export function ffprobePath(setting?: string | null): string {
  return outsideAsar(setting || process.env.FFPROBE_PATH || fromInstaller('@ffprobe-installer/ffprobe') || 'ffprobe');
}
