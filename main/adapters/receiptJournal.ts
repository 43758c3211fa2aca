import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../engine/owners.ts';
import type { Receipt, ReceiptLog } from '../domain/ports.ts';

/** A file name that says which process wrote it, so another process knows when its writer is gone. */
const FILE = /^(.+)-(\d+)-([0-9a-f]+)\.jsonl$/;

const host = (): string => hostname().replace(/[^\w.-]/g, '_');

/**
 * How long settled receipts are kept: a database restored from a backup up to this old still finds the requests its
 * rows had sent. Longer than any backup a person would restore rather than start over from, short enough that reading
 * the archive at start-up stays cheap.
 */
export const SETTLED_KEPT_MS = 30 * 86_400_000;

/** Appends `text` to `path` and syncs it, so a receipt moved to the archive is there before its journal file goes. */
function appendSynced(path: string, text: string): void {
  const fd = openSync(path, 'a', 0o600);
  try {
    const bytes = Buffer.from(text);
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function isReceipt(value: unknown): value is Receipt {
  const r = value as Receipt | null;
  return (
    !!r &&
    (r.database === undefined || r.database === null || typeof r.database === 'string') &&
    (r.task === undefined || r.task === null || (typeof r.task.inputHash === 'string' && Number.isInteger(r.task.createdAt))) &&
    Number.isInteger(r.taskId) &&
    typeof r.idempotencyKey === 'string' &&
    typeof r.requestId === 'string' &&
    r.requestId !== ''
  );
}

/** Every whole receipt of a file, of whichever database and task it names (null: written before receipts named them). */
function parse(text: string): Receipt[] {
  const receipts: Receipt[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (isReceipt(value)) receipts.push({ ...value, database: value.database ?? null, task: value.task ?? null, handle: value.handle ?? null });
    } catch {
      // A line cut short by a crash was never synced, so its writer never relied on it.
    }
  }
  return receipts;
}

/**
 * Request ids as the providers gave them, one synced JSON line each, one file per process so no two processes write
 * one file. The row is written after the journal; if that write fails or the process dies first, the next start-up
 * replays the journal into the table.
 *
 * A journal belongs to one database: its files are in `<data>/receipts/<database id>/` and every line names that
 * database, so a team worker and the embedded studio sharing a data folder never read each other's receipts, and a
 * receipt that reaches another database's folder (a journal copied from elsewhere) is passed over, never dropped.
 * Files of journals written before then, in `<data>/receipts/` itself, are still read: their receipts name no database.
 *
 * A database copied (see Store.earlier) took a new id; the journal of the id it had before is read as its own too, as
 * the receipts of requests its rows sent then, and settled into its own archive.
 *
 * Settled files are moved to `<data>/receipts/<database id>/settled/`, never deleted at once: every start-up settles the
 * journal, so a database restored from a backup older than the last start-up would otherwise send its rows' requests
 * again. The archive is read only for rows behind it (see replayReceipts) and pruned after SETTLED_KEPT_MS.
 */
export class ReceiptJournal implements ReceiptLog {
  private readonly root: string;
  private readonly dir: string;
  private readonly archive: string;
  private readonly own: string;
  /** The folders of the ids the database had before it was copied. */
  private readonly earlier: string[];
  private fd: number | null = null;
  private written = 0;

  constructor(
    dataDir: string,
    private readonly database: string,
    private readonly earlierIds: readonly string[] = [],
  ) {
    this.root = join(dataDir, 'receipts');
    this.dir = join(this.root, database);
    this.earlier = earlierIds.map((id) => join(this.root, id));
    this.archive = join(this.dir, 'settled');
    this.own = `${host()}-${process.pid}-${randomBytes(4).toString('hex')}.jsonl`;
  }

  append(receipt: Receipt): void {
    if (receipt.database !== this.database) throw new Error(`a receipt of database ${receipt.database} does not belong in the journal of database ${this.database}`);
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

  /** This database's files, those of its ids before it was copied, then those written before journals named their database. */
  private files(): { dir: string; file: string }[] {
    const list = (dir: string) => {
      try {
        return readdirSync(dir)
          .filter((file) => FILE.test(file))
          .map((file) => ({ dir, file }));
      } catch {
        return [];
      }
    };
    return [...list(this.dir), ...this.earlier.flatMap(list), ...list(this.root)];
  }

  /** Archived files: this database's, then those of its ids before it was copied. */
  private archivedFiles(): string[] {
    const list = (dir: string) => {
      try {
        return readdirSync(dir)
          .filter((file) => FILE.test(file))
          .map((file) => join(dir, file));
      } catch {
        return [];
      }
    };
    return [this.archive, ...this.earlier.map((dir) => join(dir, 'settled'))].flatMap(list);
  }

  /**
   * Keeps a settled file's receipts in the archive, under the file's own name (a writer's later lines are appended).
   * False when they could not be written (a full disk): the file then stays in the journal.
   */
  private keep(file: string, text: string): boolean {
    if (!text) return true;
    try {
      mkdirSync(this.archive, { recursive: true, mode: 0o700 });
      appendSynced(join(this.archive, file), text);
      return true;
    } catch {
      return false;
    }
  }

  private prune(now: number): void {
    for (const path of this.archivedFiles()) {
      try {
        if (statSync(path).mtimeMs < now - SETTLED_KEPT_MS) rmSync(path, { force: true });
      } catch {
        // Pruned by another process meanwhile.
      }
    }
  }

  /** A receipt of this database (under its id now or one it had before it was copied), or of a journal written before receipts named theirs. */
  private mine(receipt: Receipt): boolean {
    return receipt.database === null || receipt.database === this.database || this.earlierIds.includes(receipt.database);
  }

  all(): Receipt[] {
    return this.files().flatMap(({ dir, file }) => {
      try {
        return parse(readFileSync(join(dir, file), 'utf8')).filter((r) => this.mine(r));
      } catch {
        return [];
      }
    });
  }

  archived(): Receipt[] {
    return this.archivedFiles().flatMap((path) => {
      try {
        return parse(readFileSync(path, 'utf8')).filter((r) => this.mine(r));
      } catch {
        return [];
      }
    });
  }

  settle(isSettled: (receipt: Receipt) => boolean): void {
    this.prune(Date.now());
    for (const { dir, file } of this.files()) {
      const path = join(dir, file);
      let text: string;
      let receipts: Receipt[];
      try {
        text = readFileSync(path, 'utf8');
        receipts = parse(text);
      } catch {
        continue;
      }
      // A file holding another database's receipts is that database's to settle, never this one's.
      if (!receipts.every((r) => this.mine(r) && isSettled(r))) continue;
      if (dir === this.dir && file === this.own) {
        if (this.fd !== null && this.written > 0) {
          if (!this.keep(file, text)) continue;
          ftruncateSync(this.fd, 0);
        }
        this.written = 0;
        continue;
      }
      const [, writerHost, pid] = FILE.exec(file)!;
      // A living writer may still append to its file; only a gone one's file can be dropped.
      if (writerHost === host() && !processAlive(Number(pid)) && this.keep(file, text)) rmSync(path, { force: true });
    }
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
