import { readFile } from 'node:fs/promises';
import { readStoryboard } from '../domain/storyboard.ts';

/**
 * Why a saved storyboard draft is not one, or null: it is read by the storyboard's own reader, as every saved
 * storyboard is, so a draft kept in the task table can always be put on the storyboard later.
 */
export async function draftFileProblem(path: string): Promise<string | null> {
  try {
    readStoryboard(JSON.parse(await readFile(path, 'utf8')));
    return null;
  } catch (err) {
    return `the provider sent a storyboard draft the studio cannot read (${(err as Error).message})`;
  }
}
