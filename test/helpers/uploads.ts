import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { expect } from 'vitest';
import { NO_PROVIDER, serve } from './browser.ts';
import { cli } from './cli.ts';
import { tempDir } from './tmp.ts';

/**
 * Sends `name` as an upload that never says its length and goes on past `limitMb`, and checks that it is refused as
 * it streams (413 with `words`, or the connection cut), long before `twiceMb` is sent.
 */
export async function refusedWhileStreaming(upload: (name: string, body: ReadableStream<Uint8Array>) => Promise<Response>, name: string, twiceMb: number, words: string): Promise<void> {
  let sent = 0;
  const piece = new Uint8Array(1024 * 1024);
  const endless = new ReadableStream<Uint8Array>({
    pull(c) {
      sent += piece.length;
      if (sent > twiceMb * 1024 * 1024) c.close();
      else c.enqueue(piece);
    },
  });
  const streamed = await upload(name, endless).catch((err: Error) => err);
  if (streamed instanceof Response) {
    expect(streamed.status).toBe(413);
    expect(((await streamed.json()) as { error: string }).error).toContain(words);
  }
  expect(sent).toBeLessThan(twiceMb * 1024 * 1024);
}

/**
 * A data folder with the project "Fox" (one scene, "dawn") served by the loopback host, and the ways a test sends to
 * `route` (like `/upload/picture?project=Fox&scene=dawn`): whole, or announcing a length and sending only its start.
 */
export async function uploadStudio(route: string) {
  const dir = tempDir();
  const file = join(dir, 'board.json');
  writeFileSync(file, JSON.stringify({ width: 320, height: 240, scenes: [{ id: 'dawn', imagePrompt: 'a fox', narration: 'At dawn, the fox wakes.' }] }));
  expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', file)).code).toBe(0);
  const { host, url } = await serve(dir, NO_PROVIDER);
  const base = new URL(url);
  const token = new URLSearchParams(base.hash.slice(1)).get('token')!;
  const to = (name: string) => `${base.origin}${route}&name=${encodeURIComponent(name)}`;
  const upload = (name: string, body: BodyInit, headers: Record<string, string> = {}) =>
    fetch(to(name), { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers }, body, duplex: 'half' } as RequestInit);
  const api = async (method: string, ...args: unknown[]) => {
    const res = await fetch(`${base.origin}/api/${method}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
    return (await res.json()) as { result?: unknown; error?: string };
  };
  /** A send that announces `length` bytes and gives only the first 64 KB: what the host answers before reading on. */
  const announce = (name: string, length: number) =>
    new Promise<{ status: number; body: string }>((resolve) => {
      const req = request(to(name), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-length': String(length) } });
      req.on('error', () => undefined);
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.write(new Uint8Array(64 * 1024));
    });
  const media = join(dir, 'projects', '1', 'media');
  /** What the data folder keeps of uploads: the temporary files, and the copies in the project. */
  const kept = () => [...(existsSync(join(dir, 'uploads')) ? readdirSync(join(dir, 'uploads')) : []), ...(existsSync(media) ? readdirSync(media) : [])];
  return { dir, host, base, token, upload, api, announce, kept };
}
