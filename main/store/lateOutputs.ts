import type { SavedOutput } from '../domain/ports.ts';

/**
 * Which file of its attempt a saved output is, read from the name the studio gave it (`task-<id>-a<n>.<ext>` for the
 * first, `task-<id>-a<n>-<index>.<ext>` after it), whatever folder the path names; null for a name of another form.
 */
export function attemptFile(path: string): string | null {
  const name = path.split(/[\\/]/).at(-1) ?? '';
  const found = /^task-\d+-(a\d+)(?:-(\d+))?\.[^.]+$/.exec(name);
  return found ? `${found[1]} ${found[2] ?? '0'}` : null;
}

/**
 * The outputs of an attempt not linked to its task yet. The same file may come under another path (a worker that
 * went on after the data folder moved names it at the old place), so a file is known by its place in the attempt,
 * and by its checksum when a name does not tell that place: a file linked once is never linked again.
 */
export function notLinkedYet(linked: readonly Pick<SavedOutput, 'path' | 'sha256'>[], outputs: readonly SavedOutput[]): SavedOutput[] {
  const same = (l: Pick<SavedOutput, 'path' | 'sha256'>, o: SavedOutput) => {
    if (l.path === o.path) return true;
    const [was, is] = [attemptFile(l.path), attemptFile(o.path)];
    return was !== null && is !== null ? was === is : l.sha256 === o.sha256;
  };
  return outputs.filter((o) => !linked.some((l) => same(l, o)));
}
