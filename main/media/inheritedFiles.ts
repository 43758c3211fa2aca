import { existsSync } from 'node:fs';
import { link, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MediaFolder } from './mediaFolder.ts';

/** A filesystem that has no hard links answers a link with one of these (see placement.ts). */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV', 'EMLINK']);

/** Every file under `dir`, relative to it; synced temporary files left by a crash are not results. */
async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(join(dir, prefix), { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) found.push(...(await filesUnder(dir, rel)));
    else if (entry.isFile() && !entry.name.endsWith('.part') && !entry.name.startsWith('.')) found.push(rel);
  }
  return found;
}

/**
 * A copied database's rows name the files its original saved before the copy, in the original's space of the media
 * folder they share, and the original may delete them (a result removed from its library). So once, the first time the
 * copy opens, every file of each space it had before gets a name of its own at the same place in its own space: a hard
 * link, which costs no room; rows are read there first (see placesOf). A filesystem without hard links (FAT, exFAT,
 * some shares) gets none: copying a whole library would double it; the files stay shared, as said in the docs.
 * Returns what could not be done, in words for the log.
 */
export async function keepInheritedFiles(media: MediaFolder, earlierSpaces: readonly string[]): Promise<string[]> {
  if (!media.shared) return [];
  const problems: string[] = [];
  for (const space of earlierSpaces) {
    const done = join(media.base, `.inherited-${space}`);
    if (existsSync(done)) continue;
    const from = join(media.root, space);
    try {
      for (const rel of await filesUnder(from)) {
        const to = join(media.base, ...rel.split('/'));
        if (existsSync(to)) continue;
        await mkdir(join(to, '..'), { recursive: true, mode: 0o700 });
        await link(join(from, ...rel.split('/')), to).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'EEXIST') throw err;
        });
      }
      await writeFile(done, '');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (NO_LINKS.has(code)) await writeFile(done, '').catch(() => undefined);
      problems.push(`the files this copy of the studio shares with the one it was copied from, in ${from}, were not given names of its own (${(err as Error).message})`);
    }
  }
  return problems;
}
