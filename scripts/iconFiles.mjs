// The icon files made from resources/icon.svg, and the stamp each carries: the SVG's SHA-256 in a PNG tEXt chunk
// (PNG specification, 11.3.4.3 tEXt), so a test can tell an icon drawn from an older SVG without a browser.
import { crc32 } from 'node:zlib';

export const SOURCE = 'resources/icon.svg';
export const STAMP_KEY = 'source-sha256';

// electron-builder makes the macOS .icns and the Windows .ico from one PNG of at least 512 px (1024 gives the
// Retina 512@2x), and installs on Linux every size found in a folder of NxN.png files
// (app-builder-lib out/util/iconConverter.js: doConvertSingleFile, collectIconsFromDir).
export const OUTPUTS = [
  { file: 'resources/icon.png', size: 1024 },
  ...[16, 24, 32, 48, 64, 128, 256, 512].map((size) => ({ file: `resources/icons/${size}x${size}.png`, size })),
];

const SIGNATURE_LENGTH = 8;
const IHDR_END = SIGNATURE_LENGTH + 4 + 4 + 13 + 4;

/** The PNG with a tEXt chunk `key`=`value` right after its header chunk. */
export function withStamp(png, value, key = STAMP_KEY) {
  const type = Buffer.from('tEXt', 'latin1');
  const data = Buffer.from(`${key}\0${value}`, 'latin1');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([type, data])));
  return Buffer.concat([png.subarray(0, IHDR_END), length, type, data, crc, png.subarray(IHDR_END)]);
}

/** The value of the PNG's tEXt chunk `key`, or null. */
export function stampOf(png, key = STAMP_KEY) {
  for (let at = SIGNATURE_LENGTH; at + 8 <= png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    if (type === 'tEXt') {
      const [k, v] = png.toString('latin1', at + 8, at + 8 + length).split('\0');
      if (k === key) return v;
    }
    if (type === 'IEND') break;
    at += 12 + length;
  }
  return null;
}

/** Width and height from the PNG's header chunk. */
export const pngSize = (png) => ({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) });
