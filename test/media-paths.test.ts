import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ffmpegPath, outsideAsar } from '../main/media/binaries.ts';
import { escapeFilterValue } from '../main/media/filterEscape.ts';
import { probe } from '../main/media/probe.ts';
import { FONT } from '../main/media/fonts.ts';
import { still } from '../main/simulator/media.ts';
import { tempDir } from './helpers/tmp.ts';

describe('outsideAsar: paths a child process can open', () => {
  it('rewrites a path inside app.asar to the unpacked copy, with either separator', () => {
    expect(outsideAsar('/opt/Take Studio/resources/app.asar/node_modules/dejavu-fonts-ttf/ttf/DejaVuSans.ttf'))
      .toBe('/opt/Take Studio/resources/app.asar.unpacked/node_modules/dejavu-fonts-ttf/ttf/DejaVuSans.ttf');
    expect(outsideAsar(String.raw`C:\Program Files\Take Studio\resources\app.asar\node_modules\@ffmpeg-installer\win32-x64\ffmpeg.exe`))
      .toBe(String.raw`C:\Program Files\Take Studio\resources\app.asar.unpacked\node_modules\@ffmpeg-installer\win32-x64\ffmpeg.exe`);
  });

  it('leaves every other path as it is, and is unchanged when applied twice', () => {
    for (const path of [
      '/opt/Take Studio/resources/app.asar.unpacked/node_modules/x/ffmpeg',
      '/opt/studio/resources/myapp.asar/node_modules/x/ffmpeg',
      '/home/a/app.asar.bak/ffmpeg',
      '/opt/studio/resources/app.asar',
      String.raw`C:\Users\a b\f'o,n[t];.ttf`,
      '/usr/bin/ffmpeg',
      'ffmpeg',
    ]) expect(outsideAsar(path)).toBe(path);
    const once = outsideAsar('/r/app.asar/node_modules/f.ttf');
    expect(outsideAsar(once)).toBe(once);
  });

  it('is applied to ffmpeg chosen in settings', () => {
    expect(ffmpegPath('/r/app.asar/bin/ffmpeg')).toBe('/r/app.asar.unpacked/bin/ffmpeg');
  });
});

describe('escapeFilterValue: a path as one filter option value', () => {
  it('escapes a Windows path at both filtergraph levels', () => {
    // Level 1: C\:\\Users\\a b\\f\'o,n[t];.ttf — then level 2 escapes each \ ' [ ] , ; of that.
    expect(escapeFilterValue(String.raw`C:\Users\a b\f'o,n[t];.ttf`)).toBe(String.raw`C\\:\\\\Users\\\\a b\\\\f\\\'o\,n\[t\]\;.ttf`);
  });

  it('leaves a plain POSIX path alone and escapes a special one', () => {
    expect(escapeFilterValue('/usr/share/fonts/DejaVuSans.ttf')).toBe('/usr/share/fonts/DejaVuSans.ttf');
    expect(escapeFilterValue("/tmp/we:ird, 'dir' [x]/f.ttf")).toBe(String.raw`/tmp/we\\:ird\, \\\'dir\\\' \[x\]/f.ttf`);
  });
});

describe('the simulator draws text with a font in an awkward folder (real ffmpeg)', () => {
  it('renders a frame when the font and text file sit under a name with : , \' [ ] ;', async () => {
    const dir = join(tempDir(), "we:ird, 'dir' [x];");
    mkdirSync(dir);
    const font = join(dir, "Deja:Vu, 'Sans' [1].ttf");
    copyFileSync(FONT, font);
    const out = await still(dir, "a fox: 'quoted', [bracketed]; done", font);
    expect((await probe(out)).video).toMatchObject({ codec: 'png', width: 640, height: 360 });
  });
});
