import { closeSync, fstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isKind } from '../domain/tasks/model.ts';
import type { SavedJob } from './job.ts';

/** A line that is a whole job as `save` writes it; anything else in the file (a garbled or restored line) is passed over. */
function isSavedJob(value: unknown): value is SavedJob {
  const j = value as SavedJob | null;
  return (
    !!j &&
    typeof j.id === 'string' &&
    isKind(String(j.kind)) &&
    typeof j.model === 'string' &&
    Number.isFinite(j.createdAt) &&
    Number.isFinite(j.durationMs) &&
    !!j.input &&
    typeof j.input === 'object' &&
    !!j.charge &&
    typeof j.charge.requestId === 'string'
  );
}

/**
 * The simulator's accepted jobs as JSON lines, shared by every simulator on the same folder (one per
 * process on a data folder): each appends its own jobs and reads the others' as they arrive, by offset,
 * so a job outlives the process that accepted it. The last line for an id wins.
 */
export class JobStore {
  private readonly fd: number;
  private offset = 0;
  private closed = false;

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true });
    // O_APPEND: each line lands whole at the end, whichever process writes it.
    this.fd = openSync(join(dir, 'jobs.jsonl'), 'a+');
  }

  /** The lines appended since the last read, by this process or another; a line still being written waits for the next read. */
  readNew(): SavedJob[] {
    const size = fstatSync(this.fd).size;
    if (size < this.offset) this.offset = 0;
    if (size === this.offset) return [];
    const buffer = Buffer.alloc(size - this.offset);
    for (let read = 0; read < buffer.length; ) {
      const n = readSync(this.fd, buffer, read, buffer.length - read, this.offset + read);
      if (n === 0) break;
      read += n;
    }
    const end = buffer.lastIndexOf(0x0a);
    if (end < 0) return [];
    this.offset += end + 1;
    const jobs: SavedJob[] = [];
    for (const line of buffer.subarray(0, end).toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      try {
        const job: unknown = JSON.parse(line);
        if (isSavedJob(job)) jobs.push(job);
      } catch {
        // A line cut short by a crash is the only damage an append can suffer; the rest stands.
      }
    }
    return jobs;
  }

  save(job: SavedJob): void {
    const { id, kind, model, input, createdAt, durationMs, charge, fault, faultSpent, cancelled } = job;
    // The leading newline ends any line a killed process left unfinished, so it cannot swallow this one.
    const line = Buffer.from(`\n${JSON.stringify({ id, kind, model, input, createdAt, durationMs, charge, fault, faultSpent, cancelled })}\n`);
    for (let written = 0; written < line.length; ) written += writeSync(this.fd, line, written);
  }

  /** Once only: a descriptor number closed twice may by then belong to another file (the database). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}
