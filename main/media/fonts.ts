import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/**
 * The fonts that ship in an npm package, since a fresh machine may have none: the folder libass is pointed at for
 * burned subtitles, and the one file drawtext is given. Inside the packaged app they are read by ffmpeg, a program
 * of its own, so see outsideAsar (binaries.ts) where a path is handed to it.
 */
export const FONTS_DIR = join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
export const FONT = join(FONTS_DIR, 'DejaVuSans.ttf');

/** DejaVuSans.ttf of dejavu-fonts-ttf 2.37.3 (the version package.json pins): a font whose bytes differ is damaged. */
export const FONT_SHA256 = '7da195a74c55bef988d0d48f9508bd5d849425c1770dba5d7bfc6ce9ed848954';
