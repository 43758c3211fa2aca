import { describe, expect, it } from 'vitest';
import { carryOnto, type BoardLike } from '../renderer/src/views/storyboardMerge.ts';

const board = (revision: number, ...scenes: BoardLike['scenes']): BoardLike => ({ width: 1280, height: 720, revision, scenes });

describe("carrying the editor's unsaved draft onto a save of the same window's own action", () => {
  const base = board(3, { id: 'dawn', imagePrompt: 'a fox asleep', take: 2, clipSeed: 42 }, { id: 'dusk', imagePrompt: 'a fox at dusk' });

  it("takes the fields the action saved and keeps what was typed, even in the same scene, at the action's revision", () => {
    const mine = { ...board(3, { id: 'dawn', imagePrompt: 'a fox awake', take: 2, clipSeed: 42 }, { id: 'dusk', imagePrompt: 'a fox at dusk' }, { id: 'night', imagePrompt: 'stars' }), height: 1280, width: 720 };
    const picked = board(4, { id: 'dawn', imagePrompt: 'a fox asleep', take: 1 }, { id: 'dusk', imagePrompt: 'a fox at dusk' });
    expect(carryOnto(base, mine, picked, false)).toEqual({
      width: 720,
      height: 1280,
      revision: 4,
      scenes: [{ id: 'dawn', imagePrompt: 'a fox awake', take: 1 }, { id: 'dusk', imagePrompt: 'a fox at dusk' }, { id: 'night', imagePrompt: 'stars' }],
    });
  });

  it('keeps a scene removed here removed, and a renamed one under its new name', () => {
    const mine = board(3, { id: 'sunrise', imagePrompt: 'a fox asleep', take: 2, clipSeed: 42 });
    const picked = board(4, { id: 'dawn', imagePrompt: 'a fox asleep', take: 3 }, { id: 'dusk', imagePrompt: 'a fox at dusk' });
    expect(carryOnto(base, mine, picked, false).scenes).toEqual([{ id: 'sunrise', imagePrompt: 'a fox asleep', take: 2, clipSeed: 42 }]);
  });

  it("after a draft from an idea, shows the draft's scenes with the project settings typed here", () => {
    const mine = { ...board(3, { id: 'dawn', imagePrompt: 'typed' }), fps: 12 };
    const drafted = board(4, { id: 'scene-1', imagePrompt: 'a lighthouse' }, { id: 'scene-2', imagePrompt: 'a bottle' });
    expect(carryOnto(base, mine, drafted, true)).toEqual({ ...drafted, fps: 12 });
  });
});
