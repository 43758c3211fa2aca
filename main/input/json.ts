/** JSON a person or a page sent that is too large or too deep to be meant: refused before it is used. */
export class JsonRefused extends Error {}

export const MAX_JSON_BYTES = 1 << 20;
export const MAX_JSON_DEPTH = 32;

function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_JSON_DEPTH) return deepest;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** Parses JSON from `what` (a flag, a file, a request), refusing more than 1 MiB or 32 levels of nesting. */
export function parseJsonInput(text: string, what: string): unknown {
  if (Buffer.byteLength(text) > MAX_JSON_BYTES) throw new JsonRefused(`${what} is larger than ${MAX_JSON_BYTES} bytes; nothing that big is needed`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new JsonRefused(`${what} is not JSON (${(err as Error).message})`);
  }
  if (depthOf(value) > MAX_JSON_DEPTH) throw new JsonRefused(`${what} is nested more than ${MAX_JSON_DEPTH} levels deep`);
  return value;
}
