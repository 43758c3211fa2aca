import { createReadStream, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { ApiError } from '../api/studioService.ts';
import { UploadDiskFull, UploadTooLarge, type UploadedMusic, type UploadedPicture } from '../api/ownUpload.ts';
import { mediaType, rangeAnswer } from './range.ts';

/** What the host does with a creator's own pictures and music: take one in for a scene or the music bed, and find one to show. */
export interface OwnPictures {
  receive(project: string, scene: string, name: string, body: AsyncIterable<Uint8Array>, announced: number | null): Promise<UploadedPicture>;
  receiveMusic(project: string, name: string, body: AsyncIterable<Uint8Array>, announced: number | null): Promise<UploadedMusic>;
  path(project: string, sha256: string): Promise<string | null>;
}

type Send = (res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>) => void;

/**
 * POST /upload/picture?project=P&scene=S&name=N, the picture's bytes as the body: checked and copied into the
 * project (see main/api/ownUpload.ts). POST /upload/music?project=P&name=N: the same for the storyboard's music bed.
 * GET /media/own/PROJECT/SHA256: a project's own still, clip or music, to show or play it.
 * Returns false for any other request. The token is checked by the caller.
 */
export async function ownPictureRoutes(req: IncomingMessage, res: ServerResponse, url: URL, own: OwnPictures, send: Send, log?: (m: string) => void): Promise<boolean> {
  if (req.method === 'POST' && (url.pathname === '/upload/picture' || url.pathname === '/upload/music')) {
    await receive(req, res, url, own, send, log);
    return true;
  }
  const shown = /^\/media\/own\/([^/]+)\/([0-9a-f]{64})$/.exec(url.pathname);
  if (req.method !== 'GET' || !shown) return false;
  const path = await own.path(decodeURIComponent(shown[1]!), shown[2]!);
  if (!path) {
    send(res, 404, { error: 'no such picture in this project' });
    return true;
  }
  // A Range is served as on the other media routes, so an own clip can be sought in the browser.
  const answer = rangeAnswer(req.headers.range, statSync(path).size, mediaType(path));
  res.writeHead(answer.status, { ...answer.headers, 'cache-control': 'private, max-age=3600', 'x-content-type-options': 'nosniff' });
  if (answer.status === 416) {
    res.end();
    return true;
  }
  pipeline(createReadStream(path, answer.range ?? {}), res, () => undefined);
  return true;
}

async function receive(req: IncomingMessage, res: ServerResponse, url: URL, own: OwnPictures, send: Send, log?: (m: string) => void): Promise<void> {
  const [project = '', scene = '', name = ''] = ['project', 'scene', 'name'].map((k) => url.searchParams.get(k) ?? '');
  const music = url.pathname === '/upload/music';
  // The rest of a refused upload is not read: the connection is closed once the answer is out.
  const close = { connection: 'close' };
  if (!project || !(scene || music) || !name) return send(res, 400, { error: music ? 'an upload of music names its project and file name' : 'an upload names its project, scene and file name' }, close);
  const length = Number(req.headers['content-length']);
  const announced = Number.isFinite(length) && req.headers['content-length'] ? length : null;
  try {
    send(res, 200, { result: await (music ? own.receiveMusic(project, name, req, announced) : own.receive(project, scene, name, req, announced)) });
  } catch (err) {
    if (err instanceof UploadTooLarge) return send(res, 413, { error: err.message }, close);
    if (err instanceof UploadDiskFull) return send(res, 507, { error: err.message }, close);
    if (err instanceof ApiError) return send(res, 400, { error: err.message }, close);
    // Only a body that never came whole was cut off: a request read to its end is destroyed too, yet waits for its answer.
    if (!req.complete) return log?.(`an upload for ${music ? 'the music' : `scene "${scene}"`} was cut off; nothing was kept`);
    log?.(`upload: ${(err as Error).stack}`);
    send(res, 500, { error: 'the studio hit an internal error; it was logged' }, close);
  }
}
