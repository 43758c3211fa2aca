import { defineConfig } from 'vite';

// The renderer is built once into dist/renderer; the loopback host and the desktop app serve those files.
export default defineConfig({
  root: 'renderer',
  base: './',
  build: { outDir: '../dist/renderer', emptyOutDir: true, target: 'es2022' },
  esbuild: { jsx: 'automatic' },
});
