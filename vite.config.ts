import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { defineConfig, type Plugin } from 'vite';

/**
 * Writes build-stamp.json into the build: the content hash of every file the build read (its modules, and
 * what decides how they are built: this file, tsconfig.json, package-lock.json for the packages). `npm
 * start` builds again only when one of them differs (scripts/start.mjs). Being inside the output folder,
 * which every build empties first, the stamp always describes the build beside it.
 */
function buildStamp(): Plugin {
  const root = process.cwd();
  let read: string[] = [];
  return {
    name: 'build-stamp',
    apply: 'build',
    generateBundle() {
      read = [...this.getModuleIds()]
        .filter((id) => !id.startsWith('\0') && !id.includes('/node_modules/'))
        .map((id) => id.replace(/[?#].*$/, ''));
    },
    writeBundle(output) {
      const files: Record<string, string> = {};
      for (const file of new Set([...read, 'vite.config.ts', 'tsconfig.json', 'package-lock.json', 'renderer/index.html'].map((f) => resolve(root, f)))) {
        files[relative(root, file).split('\\').join('/')] = createHash('sha256').update(readFileSync(file)).digest('hex');
      }
      writeFileSync(join(output.dir!, 'build-stamp.json'), JSON.stringify({ files }, null, 1));
    },
  };
}

// The renderer is built once into dist/renderer; the loopback host and the desktop app serve those files.
export default defineConfig({
  root: 'renderer',
  base: './',
  build: { outDir: '../dist/renderer', emptyOutDir: true, target: 'es2022' },
  esbuild: { jsx: 'automatic' },
  plugins: [buildStamp()],
});
