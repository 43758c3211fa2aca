import { randomBytes } from 'node:crypto';
import { copyFile, link, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { sha256File } from './checksum.ts';

/**
 * The name a file takes when its own name already holds another file: the first 12 hex digits of its checksum
 * added before the extension. Decided from the name and the checksum alone, so a record that names the first name
 * finds the file at this one.
 */
export function alternatePath(path: string, sha256: string): string {
  const name = basename(path);
  const ext = extname(name.replace(/\.unusable$/, '')) + (name.endsWith('.unusable') ? '.unusable' : '');
  return join(dirname(path), `${name.slice(0, name.length - ext.length)}-${sha256.slice(0, 12)}${ext}`);
}

/** A filesystem that has no hard links (FAT and exFAT drives, some network shares) answers a link with one of these. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV', 'EMLINK']);

/** Puts `temp` at `target` only if nothing is there; false when something is. */
async function putNew(temp: string, target: string): Promise<boolean> {
  try {
    await link(temp, target);
    await rm(temp, { force: true });
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') return false;
    if (!NO_LINKS.has(code)) throw err;
  }
  // Without hard links a rename is the only atomic placement, and it replaces: a file put at `target` by another
  // process between the look and the rename would be replaced, a window of microseconds a copied database opened
  // at once with its original would need to hit.
  if (await stat(target).then(() => true, () => false)) return false;
  await rename(temp, target);
  return true;
}

/**
 * Puts the synced file `temp`, whose checksum is `sha256`, at `path` without ever replacing another file: a file
 * already there is kept (a result another database saved under the same name, a copy of this one among them), and
 * this one takes its alternate name. A file there with the same checksum is this one, put there before a crash.
 * Returns where the file is.
 */
export async function placeWithoutReplacing(temp: string, path: string, sha256: string): Promise<string> {
  for (const target of [path, alternatePath(path, sha256)]) {
    if (await putNew(temp, target)) return target;
    if ((await sha256File(target).catch(() => null)) === sha256) {
      await rm(temp, { force: true });
      return target;
    }
  }
  throw new Error(`${path} and ${alternatePath(path, sha256)} both hold other files; the result is kept at ${temp}`);
}

/**
 * Gives the file at `from` (checksum `sha256`) a name of its own at `path`, never over another file: a hard link where
 * the filesystem has them, else a synced copy. Another database's deleting its name then leaves this one whole.
 * Returns where it is.
 */
export async function keepOwnName(from: string, path: string, sha256: string): Promise<string> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${randomBytes(4).toString('hex')}.part`;
  try {
    await link(from, temp);
  } catch (err) {
    if (!NO_LINKS.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
    await copyFile(from, temp);
    const handle = await open(temp, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
  return placeWithoutReplacing(temp, path, sha256);
}
