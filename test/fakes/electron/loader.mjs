// Resolves `electron` to the stand-in beside this file (node --import of this module registers the hook).
import Module, { register } from 'node:module';
import { fileURLToPath } from 'node:url';

register('data:text/javascript,' + encodeURIComponent(`
  export async function resolve(specifier, context, next) {
    if (specifier === 'electron') return { url: ${JSON.stringify(new URL('./index.mjs', import.meta.url).href)}, shortCircuit: true };
    return next(specifier, context);
  }
`));

// CommonJS packages (electron-updater) require('electron'), which the hook above does not see: their
// resolution is pointed at the same file, which require() loads as the same ES module instance.
const standIn = fileURLToPath(new URL('./index.mjs', import.meta.url));
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === 'electron' ? standIn : resolveFilename.call(this, request, ...rest);
};
