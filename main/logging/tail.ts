import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LINE_START } from './logLine.ts';

const CHUNK = 64 * 1024;
/** A log file's name: `name.log`, or a rotated `name.log.N`, with N its age. */
const LOG_FILE = /^(.+)\.log(?:\.(\d+))?$/;

/** The last `n` lines of one file, read from its end, so a full file is not read whole for them. */
export function lastLinesOf(path: string, n: number): string[] {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return [];
  }
  try {
    const size = statSync(path).size;
    let start = size;
    let text = '';
    while (start > 0 && text.split('\n').length <= n + 1) {
      const from = Math.max(0, start - CHUNK);
      const buffer = Buffer.alloc(start - from);
      readSync(fd, buffer, 0, buffer.length, from);
      text = buffer.toString('utf8') + text;
      start = from;
    }
    const lines = text.split('\n').filter((l) => l.length > 0);
    // A read that began inside a line leaves its end, which is no line of its own.
    if (start > 0) lines.shift();
    return lines.slice(-n);
  } finally {
    closeSync(fd);
  }
}

/**
 * The last `n` lines written to a log folder by every process writing there (each its own file, and the files it
 * rotated), as one history in time order: every line begins with its time, and within one file the order written
 * is kept. A log's rotated files are read, newest first, only while its newer ones hold fewer than `n` lines.
 */
export function lastLines(dir: string, n: number): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const logs = new Map<string, { age: number; name: string }[]>();
  for (const name of names) {
    const m = LOG_FILE.exec(name);
    if (!m) continue;
    logs.set(m[1]!, [...(logs.get(m[1]!) ?? []), { age: Number(m[2] ?? 0), name }]);
  }
  const all: string[] = [];
  for (const files of logs.values()) {
    let lines: string[] = [];
    for (const file of files.sort((a, b) => a.age - b.age)) {
      if (lines.length >= n) break;
      lines = [...lastLinesOf(join(dir, file.name), n - lines.length), ...lines];
    }
    all.push(...lines);
  }
  const timed = all.map((line, i) => ({ line, i, at: LINE_START.test(line) ? line.slice(0, 24) : '' }));
  timed.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.i - b.i));
  return timed.slice(-n).map((t) => t.line);
}
