import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ReceiptJournal } from '../main/adapters/receiptJournal.ts';
import { tempDir } from './helpers/tmp.ts';

const receipt = (taskId: number) => ({ taskId, idempotencyKey: `studio-task-${taskId}-attempt-1`, requestId: `req-${taskId}-${'x'.repeat(60)}`, handle: null, at: 1 });

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
    const journal = new ReceiptJournal(disk);
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
    expect(kept.length).toBeGreaterThan(40);
    expect(journal.all().map((r) => r.taskId)).toEqual(kept);
    const file = readdirSync(join(disk, 'receipts'))[0]!;
    expect(readFileSync(join(disk, 'receipts', file), 'utf8').endsWith('\n')).toBe(true);
    journal.close();
  });

  it('drops the file of a writer that is gone once everything in it is settled, and empties its own', () => {
    const dir = tempDir();
    const journal = new ReceiptJournal(dir);
    journal.append(receipt(1));
    const deadPid = spawnSync('true').pid;
    const gone = join(dir, 'receipts', `${hostname().replace(/[^\w.-]/g, '_')}-${deadPid}-0000abcd.jsonl`);
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
});
