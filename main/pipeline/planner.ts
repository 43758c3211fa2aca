import type { Kind } from '../tasks/model.ts';
import type { StepChoice, StepKind, Storyboard } from './storyboard.ts';

/** One step of the graph a Generate makes. `{"$step": key}` in its input names another step's output. */
export interface PlannedStep {
  key: string;
  kind: Kind;
  scene: string | null;
  provider: string;
  model: string;
  input: Record<string, unknown>;
  dependsOn: string[];
}

export const RENDER_PROVIDER = 'local';
export const RENDER_MODEL = 'ffmpeg';

const ref = (key: string) => ({ $step: key });

/**
 * The task graph of a storyboard: each scene's image, then its clip from that image, and its narration;
 * then one render of them all. Pure: which steps are reused or new is decided by the caller.
 */
export function planStoryboard(board: Storyboard, defaults: Record<StepKind, StepChoice>): PlannedStep[] {
  const steps: PlannedStep[] = [];
  const choose = (kind: StepKind, own: Partial<Record<StepKind, StepChoice>>) => own[kind] ?? board.steps[kind] ?? defaults[kind];
  // A new take changes the seed, so its input (and so its identity) differs from every earlier take.
  const seedFor = (seed: number, take: number) => seed + (take - 1) * 7_919;

  for (const scene of board.scenes) {
    const image = choose('image', scene.steps);
    const clip = choose('clip', scene.steps);
    const speech = choose('speech', scene.steps);
    const seed = seedFor(scene.seed, scene.take);
    const imageKey = `${scene.id}:image`;
    steps.push({
      key: imageKey,
      kind: 'image',
      scene: scene.id,
      provider: image.provider,
      model: image.model,
      input: { ...image.options, prompt: scene.imagePrompt, seed },
      dependsOn: [],
    });
    steps.push({
      key: `${scene.id}:clip`,
      kind: 'clip',
      scene: scene.id,
      provider: clip.provider,
      model: clip.model,
      input: { ...clip.options, prompt: scene.motionPrompt, image_url: ref(imageKey), duration: scene.duration, seed },
      dependsOn: [imageKey],
    });
    if (scene.narration) {
      steps.push({
        key: `${scene.id}:speech`,
        kind: 'speech',
        scene: scene.id,
        provider: speech.provider,
        model: speech.model,
        input: { ...speech.options, text: scene.narration },
        dependsOn: [],
      });
    }
  }
  const sceneSteps = steps.filter((s) => s.kind !== 'image').map((s) => s.key);
  steps.push({
    key: 'render',
    kind: 'render',
    scene: null,
    provider: RENDER_PROVIDER,
    model: RENDER_MODEL,
    input: {
      width: board.width,
      height: board.height,
      fps: board.fps,
      scenes: board.scenes.map((s) => ({
        id: s.id,
        duration: s.duration,
        clip: ref(`${s.id}:clip`),
        narration: s.narration ? ref(`${s.id}:speech`) : null,
      })),
    },
    dependsOn: sceneSteps,
  });
  return steps;
}

/** Replaces `{"$step": key}` with `{"$output": taskId}`; undefined if a referenced step has no task yet. */
export function bindStepRefs(value: unknown, ids: ReadonlyMap<string, number>): unknown | undefined {
  let unbound = false;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o.$step === 'string') {
        const id = ids.get(o.$step);
        if (id === undefined) unbound = true;
        return { $output: id ?? null };
      }
      return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  const bound = walk(value);
  return unbound ? undefined : bound;
}

/** The input with every `{"$step": key}` replaced by `stand`. */
export function stepRefsAs(value: unknown, stand: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => stepRefsAs(v, stand));
  if (value && typeof value === 'object') {
    if ('$step' in value) return stand;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stepRefsAs(v, stand)]));
  }
  return value;
}
