// Bundles the Electron shell: the main process and the engine's process as ESM (so the engine's import.meta.url
// paths hold, at the same depth as in the source tree), the preload as one CommonJS file, as a sandboxed preload
// must be.
import { build } from 'esbuild';

const common = { bundle: true, platform: 'node', target: 'node20', logLevel: 'warning', sourcemap: true };
await build({ ...common, entryPoints: ['app/main.ts'], outfile: 'dist/app/main.mjs', format: 'esm', packages: 'external' });
// The engine's utility process (app/engineProcess.ts), beside the main process so its paths hold the same way.
await build({ ...common, entryPoints: ['app/engineProcess.ts'], outfile: 'dist/app/engineProcess.mjs', format: 'esm', packages: 'external' });
await build({ ...common, entryPoints: ['app/preload.ts'], outfile: 'dist/app/preload.cjs', format: 'cjs', external: ['electron'] });
