import { describe, expect, it } from 'vitest';
import { mergeBoards, type BoardLike } from '../renderer/src/views/storyboardMerge.ts';

const scene = (id: string, imagePrompt: string) => ({ id, imagePrompt, duration: 3 });
const board = (revision: number, ...scenes: ReturnType<typeof scene>[]): BoardLike => ({ width: 1280, height: 720, revision, scenes });

describe('merging two editors\' storyboards', () => {
  const base = board(1, scene('dawn', 'a fox asleep'), scene('dusk', 'a fox at dusk'));

  it('takes each side\'s scenes that the other left alone, with their revision', () => {
    const mine = board(1, scene('dawn', 'a fox awake'), scene('dusk', 'a fox at dusk'), scene('night', 'stars'));
    const theirs = { ...board(2, scene('dawn', 'a fox asleep'), scene('dusk', 'a fox hunting at dusk')), width: 1080 };
    expect(mergeBoards(base, mine, theirs)).toEqual({
      board: { width: 1080, height: 720, revision: 2, scenes: [scene('dawn', 'a fox awake'), scene('dusk', 'a fox hunting at dusk'), scene('night', 'stars')] },
      collisions: [],
    });
    // A scene one side removed and the other left alone is removed.
    expect(mergeBoards(base, board(1, scene('dusk', 'a fox at dusk')), theirs).board.scenes).toEqual([scene('dusk', 'a fox hunting at dusk')]);
  });

  it('never drops a scene one side changed and the other removed: a collision', () => {
    const mine = board(1, scene('dawn', 'a fox awake'), scene('dusk', 'a fox at dusk'));
    expect(mergeBoards(base, mine, board(2, scene('dusk', 'a fox at dusk'))).collisions).toEqual(['scene dawn']);
  });

  it('names the scenes and settings both changed differently', () => {
    const mine = { ...board(1, scene('dawn', 'mine'), scene('dusk', 'a fox at dusk')), fps: 30 };
    const theirs = { ...board(2, scene('dawn', 'theirs'), scene('dusk', 'a fox at dusk')), fps: 25 };
    expect(mergeBoards(base, mine, theirs).collisions).toEqual(['project fps', 'scene dawn']);
  });
});
