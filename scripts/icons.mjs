// `node scripts/icons.mjs`: draws every icon file from resources/icon.svg in Chromium (CHROMIUM_PATH, or
// Debian's chromium), each at its own size so small icons are rasterised from the drawing rather than shrunk
// from a large bitmap, and stamps each with the SVG's hash. Run it after changing the SVG and commit the PNGs.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { chromium } from 'playwright-core';
import { OUTPUTS, SOURCE, withStamp } from './iconFiles.mjs';

const svg = readFileSync(SOURCE);
const hash = createHash('sha256').update(svg).digest('hex');
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let browser;
try {
  browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
} catch (err) {
  console.error(`Chromium could not be started from ${executablePath} (${err.message.split('\n')[0]}); install it or set CHROMIUM_PATH.`);
  process.exit(1);
}
try {
  const page = await browser.newPage();
  const source = `data:image/svg+xml;base64,${svg.toString('base64')}`;
  for (const { file, size } of OUTPUTS) {
    await page.setViewportSize({ width: size, height: size });
    await page.setContent(`<body style="margin:0;background:transparent"><img src="${source}" width="${size}" height="${size}" style="display:block"></body>`);
    await page.locator('img').evaluate((img) => img.decode());
    const png = await page.screenshot({ type: 'png', omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } });
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, withStamp(png, hash));
    console.log(`${file} (${size}x${size})`);
  }
} finally {
  await browser.close();
}
