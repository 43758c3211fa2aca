import { describe, expect, it } from 'vitest';
import { readStoryboard } from '../main/domain/storyboard.ts';
import { planRender, planScenes, planStoryboard } from '../main/pipeline/planner.ts';

const DEFAULTS = {
  image: { provider: 'simulator', model: 'sim-image-1' },
  clip: { provider: 'simulator', model: 'sim-clip-1' },
  speech: { provider: 'simulator', model: 'sim-speech-1' },
};

const BOARD = readStoryboard({
  width: 320,
  height: 240,
  scenes: [
    { id: 'dawn', imagePrompt: 'a fox', narration: 'The fox wakes.', duration: 2, seed: 7 },
    { id: 'dusk', imagePrompt: 'the fox walks home', duration: 1, seed: 9 },
  ],
});

describe('own clips in the plan', () => {
  it('a storyboard with no own still or clip plans exactly the steps it planned before', () => {
    const steps = planStoryboard(BOARD, DEFAULTS);
    expect(steps.map((s) => [s.key, s.dependsOn, s.dependsOnTasks ?? []])).toEqual([
      ['dawn:image', [], []],
      ['dawn:clip', ['dawn:image'], []],
      ['dawn:speech', [], []],
      ['dusk:image', [], []],
      ['dusk:clip', ['dusk:image'], []],
      ['render', ['dawn:clip', 'dawn:speech', 'dusk:clip'], []],
    ]);
    expect(steps[1]!.input).toEqual({ width: 320, height: 240, prompt: 'a fox', image_url: { $step: 'dawn:image' }, duration: 2, seed: 7 });
    // The render also carries how the film is finished (its words for subtitles, its cuts, its loudness): a render
    // is made on this machine at no charge, so a new field only renders the film again.
    const cut = { type: 'cut', duration: 0 };
    expect(steps.at(-1)!.input).toEqual({
      width: 320,
      height: 240,
      fit: 'crop',
      fps: 24,
      scenes: [
        { id: 'dawn', duration: 2, fit: 'narration', clip: { $step: 'dawn:clip' }, narration: { $step: 'dawn:speech' }, text: 'The fox wakes.', transition: cut },
        { id: 'dusk', duration: 1, fit: 'narration', clip: { $step: 'dusk:clip' }, narration: null, text: null, transition: cut },
      ],
      subtitles: { burn: false },
      loudness: -14,
    });
  });

  it('a scene with its own clip plans no image or clip; the render takes the clip as it is', () => {
    const own = new Map([['dawn', { $file: 'projects/1/media/own-ab.mp4', sha256: 'ab', bytes: 3 }]]);
    const library = new Map([['dusk', { $output: 42 }]]);
    const clips = new Map<string, { $file: string; sha256: string; bytes: number } | { $output: number }>([...own, ...library]);
    expect(planScenes(BOARD, DEFAULTS, new Set(), new Map(), clips).map((s) => s.key)).toEqual(['dawn:speech']);
    const render = planRender(BOARD, new Map(), clips);
    expect(render.dependsOn).toEqual(['dawn:speech']);
    expect(render.dependsOnTasks).toEqual([42]);
    expect((render.input.scenes as { clip: unknown }[]).map((s) => s.clip)).toEqual([own.get('dawn'), { $output: 42 }]);
  });
});
