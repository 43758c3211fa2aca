import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ReceiptJournal } from '../main/adapters/receiptJournal.ts';
import { tempDir } from './helpers/tmp.ts';

const DB = 'a'.repeat(32);
const receipt = (taskId: number, database: string | null = DB) => ({
  database,
  taskId,
  task: database === null ? null : { inputHash: `hash-${taskId}`, createdAt: taskId },
  idempotencyKey: `studio-${database ?? ''}-task-${taskId}-attempt-1`,
  requestId: `req-${taskId}-${'x'.repeat(60)}`,
  handle: null,
  at: 1,
});
const writer = (pid: number) => `${hostname().replace(/[^\w.-]/g, '_')}-${pid}-0000abcd.jsonl`;

/** A real, tiny filesystem, so a write really meets a full disk; it needs root, as this project's machines run. */
function smallDisk(): string | null {
  const dir = tempDir();
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8k', 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    return null;
  }
}

const mounted: string[] = [];
afterEach(() => {
  for (const dir of mounted.splice(0)) execFileSync('umount', [dir]);
});

describe('the receipt journal', () => {
  it('on a full disk, never keeps half a line: a failed append throws, and every receipt before and after it reads whole', (ctx) => {
    const disk = smallDisk();
    if (!disk) return ctx.skip('mounting a small tmpfs needs root');
    mounted.push(disk);
    writeFileSync(join(disk, 'filler'), Buffer.alloc(4096));
    const journal = new ReceiptJournal(disk, DB);
    const kept: number[] = [];
    let refused = 0;
    for (let id = 1; id <= 200; id++) {
      try {
        journal.append(receipt(id));
        kept.push(id);
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
        refused++;
        // Room again, as after the person frees some space: the next receipts land whole.
        if (refused === 1) rmSync(join(disk, 'filler'));
        if (refused > 1) break;
      }
    }
    expect(refused).toBe(2);
    expect(kept.length).toBeGreaterThan(25);
    expect(journal.all().map((r) => r.taskId)).toEqual(kept);
    const file = readdirSync(join(disk, 'receipts', DB))[0]!;
    expect(readFileSync(join(disk, 'receipts', DB, file), 'utf8').endsWith('\n')).toBe(true);
    journal.close();
  });

  it('drops the file of a writer that is gone once everything in it is settled, and empties its own', () => {
    const dir = tempDir();
    const journal = new ReceiptJournal(dir, DB);
    journal.append(receipt(1));
    const gone = join(dir, 'receipts', DB, writer(spawnSync('true').pid!));
    writeFileSync(gone, `${JSON.stringify(receipt(2))}\n`);
    expect(journal.all().map((r) => r.taskId).sort()).toEqual([1, 2]);
    journal.settle((r) => r.taskId === 1);
    expect(journal.all().map((r) => r.taskId)).toEqual([2]);
    expect(existsSync(gone)).toBe(true);
    journal.settle(() => true);
    expect(existsSync(gone)).toBe(false);
    journal.append(receipt(3));
    expect(journal.all().map((r) => r.taskId)).toEqual([3]);
    journal.close();
  });

  it("reads only its own database's receipts and the unnamed ones of older journals, and never drops a file holding another's", () => {
    const dir = tempDir();
    const other = 'b'.repeat(32);
    const dead = writer(spawnSync('true').pid!);
    const otherJournal = new ReceiptJournal(dir, other);
    otherJournal.append(receipt(1, other));
    // A journal copied in from another data folder, into this database's own folder, and an older journal's file.
    mkdirSync(join(dir, 'receipts', DB), { recursive: true });
    const copied = join(dir, 'receipts', DB, dead);
    writeFileSync(copied, `${JSON.stringify(receipt(2, other))}\n`);
    const older = join(dir, 'receipts', writer(spawnSync('true').pid!));
    writeFileSync(older, `${JSON.stringify({ ...receipt(3, null), database: undefined, task: undefined })}\n`);

    const journal = new ReceiptJournal(dir, DB);
    journal.append(receipt(4));
    expect(journal.all().map((r) => [r.taskId, r.database])).toEqual([
      [4, DB],
      [3, null],
    ]);
    expect(() => journal.append(receipt(5, other))).toThrow(/does not belong/);
    journal.settle(() => true);
    expect(existsSync(copied)).toBe(true);
    expect(existsSync(older)).toBe(false);
    expect(otherJournal.all().map((r) => r.taskId)).toEqual([1]);
    journal.close();
    otherJournal.close();
  });
});
