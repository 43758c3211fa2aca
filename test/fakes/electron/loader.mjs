// Resolves `electron` to the stand-in beside this file (node --import of this module registers the hook).
import { register } from 'node:module';

register('data:text/javascript,' + encodeURIComponent(`
  export async function resolve(specifier, context, next) {
    if (specifier === 'electron') return { url: ${JSON.stringify(new URL('./index.mjs', import.meta.url).href)}, shortCircuit: true };
    return next(specifier, context);
  }
`));
