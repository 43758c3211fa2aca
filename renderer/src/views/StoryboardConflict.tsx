import { mergeBoards, type BoardLike } from './storyboardMerge.ts';

export interface Conflict<B extends BoardLike> {
  /** What this editor tried to save, with the revision it was made from. */
  mine: B;
  /** What is saved now, by another tab or machine. */
  theirs: B;
  /** What this editor started from, for the merge; null for a storyboard new here. */
  base: B | null;
}

function Version<B extends BoardLike>({ title, board, other, testId }: { title: string; board: B; other: B; testId: string }) {
  const others = new Map(other.scenes.map((s) => [s.id, JSON.stringify(s)]));
  return (
    <div className="conflict-version" data-testid={testId}>
      <h3>{title}</h3>
      <ol>
        {board.scenes.map((s, i) => (
          <li key={i} className={others.get(s.id) === JSON.stringify(s) ? '' : 'differs'}>
            <strong>{s.id}</strong> ({String(s.duration)} s): {String(s.imagePrompt ?? '')}
            {s.narration ? <em> “{String(s.narration)}”</em> : null}
          </li>
        ))}
      </ol>
    </div>
  );
}

/**
 * The storyboard was saved elsewhere since this editor loaded it: both versions side by side, and the person
 * chooses. "Keep mine" saves this one over the newer, now knowingly; "Take theirs" drops what was typed here;
 * the merge takes every scene only one side changed and is offered only when no scene was changed on both.
 */
export function StoryboardConflict<B extends BoardLike>({
  conflict,
  busy,
  onKeepMine,
  onTakeTheirs,
  onMerge,
}: {
  conflict: Conflict<B>;
  busy: boolean;
  onKeepMine: (board: B) => void;
  onTakeTheirs: (board: B) => void;
  onMerge: (board: B) => void;
}) {
  const { mine, theirs, base } = conflict;
  const merged = mergeBoards(base, mine, theirs);
  return (
    <section className="storyboard-conflict" role="alertdialog" aria-label="The storyboard was changed elsewhere" data-testid="storyboard-conflict">
      <p>
        Someone saved this storyboard (revision {theirs.revision}) after you opened it. Your changes are not saved yet. Choose which version to keep.
      </p>
      <div className="conflict-versions">
        <Version title="Yours, not saved" board={mine} other={theirs} testId="conflict-mine" />
        <Version title={`Saved elsewhere, revision ${theirs.revision}`} board={theirs} other={mine} testId="conflict-theirs" />
      </div>
      <div className="row">
        <button disabled={busy} onClick={() => onKeepMine({ ...mine, revision: theirs.revision })}>
          Keep mine
        </button>
        <button disabled={busy} onClick={() => onTakeTheirs(theirs)}>
          Take theirs
        </button>
        <button disabled={busy || merged.collisions.length > 0} onClick={() => onMerge(merged.board)}>
          Merge scenes that do not collide
        </button>
      </div>
      {merged.collisions.length > 0 && <p className="note">No merge: both changed {merged.collisions.join(', ')}.</p>}
    </section>
  );
}
