import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../engine/owners.ts';
import type { Receipt, ReceiptLog } from '../ports.ts';

/** A file name that says which process wrote it, so another process knows when its writer is gone. */
const FILE = /^(.+)-(\d+)-([0-9a-f]+)\.jsonl$/;

const host = (): string => hostname().replace(/[^\w.-]/g, '_');

function isReceipt(value: unknown): value is Receipt {
  const r = value as Receipt | null;
  return !!r && Number.isInteger(r.taskId) && typeof r.idempotencyKey === 'string' && typeof r.requestId === 'string' && r.requestId !== '';
}

function parse(text: string): Receipt[] {
  const receipts: Receipt[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (isReceipt(value)) receipts.push({ ...value, handle: value.handle ?? null });
    } catch {
      // A line cut short by a crash was never synced, so its writer never relied on it.
    }
  }
  return receipts;
}

/**
 * Request ids as the providers gave them, one synced JSON line each, in `<data>/receipts/`, one file per
 * process so no two processes write one file. The row is written after the journal; if that write
 * fails or the process dies first, the next start-up replays the journal into the table.
 */
export class ReceiptJournal implements ReceiptLog {
  private readonly dir: string;
  private readonly own: string;
  private fd: number | null = null;
  private written = 0;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'receipts');
    this.own = `${host()}-${process.pid}-${randomBytes(4).toString('hex')}.jsonl`;
  }

  append(receipt: Receipt): void {
    if (this.fd === null) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.fd = openSync(join(this.dir, this.own), 'a', 0o600);
    }
    const line = Buffer.from(`${JSON.stringify(receipt)}\n`);
    const before = fstatSync(this.fd).size;
    try {
      // A full disk can take part of a line without an error: the rest is written or the line is undone.
      for (let done = 0; done < line.length; ) done += writeSync(this.fd, line, done);
      fsyncSync(this.fd);
    } catch (err) {
      try {
        ftruncateSync(this.fd, before);
      } catch {
        // The cut line fails to parse and is skipped; the lines after it stay whole.
      }
      throw err;
    }
    this.written++;
  }

  private files(): string[] {
    try {
      return readdirSync(this.dir).filter((f) => FILE.test(f));
    } catch {
      return [];
    }
  }

  all(): Receipt[] {
    return this.files().flatMap((f) => {
      try {
        return parse(readFileSync(join(this.dir, f), 'utf8'));
      } catch {
        return [];
      }
    });
  }

  settle(isSettled: (receipt: Receipt) => boolean): void {
    for (const file of this.files()) {
      const path = join(this.dir, file);
      let receipts: Receipt[];
      try {
        receipts = parse(readFileSync(path, 'utf8'));
      } catch {
        continue;
      }
      if (!receipts.every(isSettled)) continue;
      if (file === this.own) {
        if (this.fd !== null && this.written > 0) ftruncateSync(this.fd, 0);
        this.written = 0;
        continue;
      }
      const [, writerHost, pid] = FILE.exec(file)!;
      // A living writer may still append to its file; only a gone one's file can be dropped.
      if (writerHost === host() && !processAlive(Number(pid))) rmSync(path, { force: true });
    }
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
