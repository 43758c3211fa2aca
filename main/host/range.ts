/** A byte range of a file, inclusive, as HTTP Range asks for it. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Reads a `Range: bytes=...` header against a file size: null for the whole file, 'unsatisfiable' for a
 * range outside it (416). Only single ranges: that is what media elements ask for when they seek.
 */
export function parseRange(header: string | undefined | null, size: number): ByteRange | null | 'unsatisfiable' {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return null;
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

/** The status and headers of an answer to a media request with an optional Range. */
export function rangeAnswer(header: string | undefined | null, size: number, contentType: string) {
  const range = parseRange(header, size);
  const base = { 'accept-ranges': 'bytes', 'content-type': contentType };
  if (range === 'unsatisfiable') return { status: 416, headers: { ...base, 'content-range': `bytes */${size}` }, range: null };
  if (!range) return { status: 200, headers: { ...base, 'content-length': String(size) }, range: null };
  return {
    status: 206,
    headers: { ...base, 'content-length': String(range.end - range.start + 1), 'content-range': `bytes ${range.start}-${range.end}/${size}` },
    range,
  };
}

const TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif', mp4: 'video/mp4', m4v: 'video/mp4', mov: 'video/quicktime', webm: 'video/webm', mp3: 'audio/mpeg', wav: 'audio/wav', m4a: 'audio/mp4', aac: 'audio/aac', flac: 'audio/flac', ogg: 'audio/ogg', opus: 'audio/ogg', vtt: 'text/vtt; charset=utf-8', srt: 'application/x-subrip' };

export function mediaType(path: string): string {
  return TYPES[path.split('.').pop()?.toLowerCase() ?? ''] ?? 'application/octet-stream';
}
