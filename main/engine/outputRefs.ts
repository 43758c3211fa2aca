import { readFile } from 'node:fs/promises';

const MIME: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp', mp4: 'video/mp4', mp3: 'audio/mpeg', wav: 'audio/wav' };

/** Another task's saved output, named in an input as `{"$output": taskId}`. */
export function outputRefs(value: unknown): number[] {
  if (Array.isArray(value)) return value.flatMap(outputRefs);
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.$output === 'number') return [o.$output];
    return Object.values(o).flatMap(outputRefs);
  }
  return [];
}

/** Replaces each `{"$output": id}` with what `to` makes of that task's output. */
export async function replaceOutputRefs(value: unknown, to: (id: number) => Promise<unknown> | unknown): Promise<unknown> {
  if (Array.isArray(value)) return Promise.all(value.map((v) => replaceOutputRefs(v, to)));
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.$output === 'number') return to(o.$output);
    const entries = await Promise.all(Object.entries(o).map(async ([k, v]) => [k, await replaceOutputRefs(v, to)] as const));
    return Object.fromEntries(entries);
  }
  return value;
}

/** A saved output as a data: URI, the form generative APIs take an input image in. */
export async function asDataUri(path: string): Promise<string> {
  const ext = path.split('.').pop() ?? '';
  return `data:${MIME[ext] ?? 'application/octet-stream'};base64,${(await readFile(path)).toString('base64')}`;
}
