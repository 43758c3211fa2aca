/**
 * A three-way merge of two editors' storyboards against the one both started from: what only one side changed
 * is taken from it; a scene (or a project setting) changed differently on both sides is a collision, left to
 * the person. Scenes are matched by their names.
 */
export interface BoardLike {
  scenes: { id: string; [field: string]: unknown }[];
  revision?: number;
  [field: string]: unknown;
}

export interface Merged<B extends BoardLike> {
  board: B;
  /** What both sides changed differently: "scene NAME" or "project FIELD". Empty when the merge can be taken. */
  collisions: string[];
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** One side's value over the base's, or `collided` when both changed it differently. */
function pick<T>(base: T | undefined, mine: T | undefined, theirs: T | undefined): { value: T | undefined; collided: boolean } {
  if (same(mine, base) || same(mine, theirs)) return { value: theirs, collided: false };
  if (same(theirs, base)) return { value: mine, collided: false };
  return { value: mine, collided: true };
}

export function mergeBoards<B extends BoardLike>(base: B | null, mine: B, theirs: B): Merged<B> {
  const collisions: string[] = [];
  const board = { ...theirs } as B;
  for (const field of new Set([...Object.keys(mine), ...Object.keys(theirs)])) {
    if (field === 'scenes' || field === 'revision') continue;
    const { value, collided } = pick(base?.[field], mine[field], theirs[field]);
    if (collided) collisions.push(`project ${field}`);
    if (value === undefined) delete (board as Record<string, unknown>)[field];
    else (board as Record<string, unknown>)[field] = value;
  }
  const byId = (b: B | null) => new Map((b?.scenes ?? []).map((s) => [s.id, s]));
  const [was, mineById, theirsById] = [byId(base), byId(mine), byId(theirs)];
  // Their order, then this side's scenes they do not have (added here, or removed there), in this side's order.
  const ids = [...theirs.scenes.map((s) => s.id), ...mine.scenes.map((s) => s.id).filter((id) => !theirsById.has(id))];
  const scenes: B['scenes'] = [];
  for (const id of new Set(ids)) {
    const { value, collided } = pick(was.get(id), mineById.get(id), theirsById.get(id));
    if (collided) collisions.push(`scene ${id}`);
    if (value) scenes.push(value);
  }
  board.scenes = scenes;
  board.revision = theirs.revision;
  return { board, collisions };
}

/**
 * This tab's own action saved `theirs` (a pick, a new take, a draft, a picture used in a scene) over `base`, the
 * revision the editor's draft `mine` was made from: what the action changed is taken from it, field by field, and
 * what was typed and not saved is kept everywhere else. A draft from an idea replaces the scenes: only the project
 * settings typed here are kept then. The result is made from the action's revision, so its save is not refused.
 */
export function carryOnto<B extends BoardLike>(base: B | null, mine: B, theirs: B, scenesReplaced: boolean): B {
  const fields = <T extends Record<string, unknown>>(was: T | undefined, typed: T, saved: T): T => {
    const out = { ...saved } as Record<string, unknown>;
    for (const field of new Set([...Object.keys(typed), ...Object.keys(saved)])) {
      if (field === 'scenes' || field === 'revision' || !same(saved[field], was?.[field])) continue;
      if (typed[field] === undefined) delete out[field];
      else out[field] = typed[field];
    }
    return out as T;
  };
  const board = fields(base ?? undefined, mine, theirs);
  if (scenesReplaced) board.scenes = theirs.scenes;
  else {
    const was = new Map((base?.scenes ?? []).map((s) => [s.id, s]));
    const saved = new Map(theirs.scenes.map((s) => [s.id, s]));
    // This editor's order and scenes; a scene the action saved that is not here (it could not add one) is kept.
    board.scenes = [
      ...mine.scenes.map((s) => (saved.has(s.id) ? fields(was.get(s.id), s, saved.get(s.id)!) : s)),
      ...theirs.scenes.filter((s) => !mine.scenes.some((m) => m.id === s.id) && !was.has(s.id)),
    ];
  }
  board.revision = theirs.revision;
  return board;
}
