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

/** A file the creator brought, copied into the project: its stored path (relative to the media folder) and checksum. */
export interface ImportedRef {
  $file: string;
  sha256: string;
  bytes: number;
}

const isImported = (o: Record<string, unknown>): o is Record<string, unknown> & ImportedRef =>
  typeof o.$file === 'string' && typeof o.sha256 === 'string' && typeof o.bytes === 'number';

/**
 * Replaces each `{"$output": id}` with what `to` makes of that task's output, and each `{"$file": path}` (a still the
 * creator brought) with what `file` makes of it.
 */
export async function replaceOutputRefs(value: unknown, to: (id: number) => Promise<unknown> | unknown, file: (ref: ImportedRef) => Promise<unknown> | unknown): Promise<unknown> {
  if (Array.isArray(value)) return Promise.all(value.map((v) => replaceOutputRefs(v, to, file)));
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.$output === 'number') return to(o.$output);
    if (isImported(o)) return file({ $file: o.$file, sha256: o.sha256, bytes: o.bytes });
    const entries = await Promise.all(Object.entries(o).map(async ([k, v]) => [k, await replaceOutputRefs(v, to, file)] as const));
    return Object.fromEntries(entries);
  }
  return value;
}

/** The media type of a saved output, by its extension. */
export function mimeOf(path: string): string {
  return MIME[path.split('.').pop() ?? ''] ?? 'application/octet-stream';
}

/** A file's bytes as a data: URI, the form generative APIs take an input image in. */
export function dataUri(path: string, bytes: Uint8Array): string {
  return `data:${mimeOf(path)};base64,${Buffer.from(bytes).toString('base64')}`;
}

/** A saved output as a data: URI. */
export async function asDataUri(path: string): Promise<string> {
  return dataUri(path, await readFile(path));
}
