import { createReadStream, existsSync, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { mediaType, rangeAnswer } from '../main/host/range.ts';
import { SUBTITLES_PATH, subtitlesBeside } from '../main/media/filmFiles.ts';

/**
 * Answers `studio-media://task/ID` (and `/INDEX` for each file of a result of several) from the task's output file,
 * `studio-media://task/ID/subtitles.vtt` from the subtitles beside a film, and `studio-media://own/PROJECT/SHA256`
 * from a project's own still or clip, honouring Range so a video can seek
 * (net.fetch on file: URLs ignores Range, which leaves <video> unable to seek).
 */
export async function mediaResponse(
  request: Request,
  outputPath: (taskId: number, index: number) => Promise<string | null>,
  ownPath: (project: string, sha256: string) => Promise<string | null> = async () => null,
): Promise<Response> {
  const url = new URL(request.url);
  const match = /^\/(\d+)(?:\/(\d+))?$/.exec(url.pathname);
  const subtitles = url.pathname.endsWith(`/${SUBTITLES_PATH}`) ? /^\/(\d+)\/[^/]+$/.exec(url.pathname) : null;
  const own = /^\/([^/]+)\/([0-9a-f]{64})$/.exec(url.pathname);
  const film = url.host === 'task' && subtitles ? await outputPath(Number(subtitles[1]), 0) : null;
  const path =
    film ? subtitlesBeside(film).vtt
    : url.host === 'task' && match ? await outputPath(Number(match[1]), Number(match[2] ?? 0))
    : url.host === 'own' && own ? await ownPath(decodeURIComponent(own[1]!), own[2]!)
    : null;
  if (!path || !existsSync(path)) return new Response('no such result', { status: 404 });
  const answer = rangeAnswer(request.headers.get('range'), statSync(path).size, mediaType(path));
  if (answer.status === 416) return new Response(null, { status: 416, headers: answer.headers });
  const stream = createReadStream(path, answer.range ? { start: answer.range.start, end: answer.range.end } : {});
  return new Response(Readable.toWeb(stream) as ReadableStream, { status: answer.status, headers: answer.headers });
}
