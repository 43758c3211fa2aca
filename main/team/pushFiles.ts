import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { sha256File } from '../media/checksum.ts';
import type { FilePlan } from './pushPlan.ts';

/**
 * What became of one file of a moving project: copied into the team's media folder (or found there from a move
 * run before), already there, or not here to copy (gone, or not the file that was saved). A file not here still
 * moves as a row, which says, on every machine, that the file is missing.
 */
export type FileOutcome = 'copied' | 'there' | 'missing' | 'changed' | 'deleted';

/** A copy that came out different from what was read: nothing is moved on a copy that cannot be trusted. */
export class CopyFailed extends Error {}

async function sum(path: string): Promise<string | null> {
  try {
    return await sha256File(path);
  } catch {
    return null;
  }
}

async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Copies through a synced temporary file and a rename, then reads the copy back and compares its checksum. */
async function copyChecked(plan: FilePlan & { copyTo: string }): Promise<void> {
  await mkdir(dirname(plan.copyTo), { recursive: true, mode: 0o700 });
  const temp = `${plan.copyTo}.${randomBytes(4).toString('hex')}.part`;
  try {
    await copyFile(plan.source, temp);
    await syncPath(temp);
    await rename(temp, plan.copyTo);
  } finally {
    await rm(temp, { force: true });
  }
  await syncPath(dirname(plan.copyTo));
  if ((await sum(plan.copyTo)) !== plan.sha256) {
    throw new CopyFailed(`the copy of ${plan.source} at ${plan.copyTo} does not match its checksum; nothing was moved. Check the media folder's disk, then push again`);
  }
}

/** Puts one file where the team will look for it, checked by checksum. */
export async function placeFile(plan: FilePlan): Promise<FileOutcome> {
  if (!plan.kept) return 'deleted';
  if (plan.copyTo === null) {
    const found = await sum(plan.source);
    return found === plan.sha256 ? 'there' : found === null ? 'missing' : 'changed';
  }
  if ((await sum(plan.copyTo)) === plan.sha256) return 'copied';
  const found = await sum(plan.source);
  if (found !== plan.sha256) return found === null ? 'missing' : 'changed';
  await copyChecked({ ...plan, copyTo: plan.copyTo });
  return 'copied';
}
