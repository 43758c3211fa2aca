import type { Kind } from '../domain/tasks/model.ts';
import type { Scene, StepChoice, StepKind, Storyboard } from '../domain/storyboard.ts';
import { stepChoice } from './stepChoice.ts';
import { sizeFor } from '../providers/frameSizes.ts';

/** One step of the graph a Generate makes. `{"$step": key}` in its input names another step's output. */
export interface PlannedStep {
  key: string;
  kind: Kind;
  scene: string | null;
  provider: string;
  model: string;
  input: Record<string, unknown>;
  dependsOn: string[];
  /** Tasks made before this plan that it uses as they are (the clips of a picked earlier take). */
  dependsOnTasks?: number[];
}

/** What the render takes of a scene made earlier (its picked take), by task: used as it is, not planned again. */
export interface TakeSource {
  clip: number;
  narration: number | null;
  /** Seconds, as the take's clip was made. */
  duration: number;
}

export const RENDER_PROVIDER = 'local';
export const RENDER_MODEL = 'ffmpeg';

const ref = (key: string) => ({ $step: key });

// A new take changes the seed, so its input (and so its identity) differs from every earlier take.
export const sceneSeed = (scene: Pick<Scene, 'seed' | 'take'>) => scene.seed + (scene.take - 1) * 7_919;

/**
 * The task graph of a storyboard: each scene's image, then its clip from that image, and its narration;
 * then one render of them all. Pure: which steps are reused or new is decided by the caller.
 */
export function planStoryboard(board: Storyboard, defaults: Record<StepKind, StepChoice>): PlannedStep[] {
  return [...planScenes(board, defaults), planRender(board, new Map())];
}

/** Each scene's image, its clip from that image, and its narration; scenes in `skip` are left out. */
export function planScenes(
  board: Storyboard,
  defaults: Record<StepKind, StepChoice>,
  skip: ReadonlySet<string> = new Set(),
  /** Each scene's own still, as its clip names it (see ownImages.ts): no image is bought for such a scene. */
  own: ReadonlyMap<string, { $file: string } | { $output: number }> = new Map(),
): PlannedStep[] {
  const steps: PlannedStep[] = [];
  const choose = (kind: StepKind, own: Partial<Record<StepKind, StepChoice>>) => stepChoice(board, defaults, { steps: own }, kind);

  for (const scene of board.scenes) {
    if (skip.has(scene.id)) continue;
    const image = choose('image', scene.steps);
    const clip = choose('clip', scene.steps);
    const speech = choose('speech', scene.steps);
    const seed = sceneSeed(scene);
    const imageKey = `${scene.id}:image`;
    const mine = own.get(scene.id);
    if (!mine) steps.push({
      key: imageKey,
      kind: 'image',
      scene: scene.id,
      provider: image.provider,
      model: image.model,
      // The project's shape first, so a size the storyboard's options name is the one sent.
      input: { ...sizeFor(image.provider, image.model, 'image', board.width, board.height).input, ...image.options, prompt: scene.imagePrompt, seed },
      dependsOn: [],
    });
    steps.push({
      key: `${scene.id}:clip`,
      kind: 'clip',
      scene: scene.id,
      provider: clip.provider,
      model: clip.model,
      input: { ...sizeFor(clip.provider, clip.model, 'clip', board.width, board.height).input, ...clip.options, prompt: scene.motionPrompt, image_url: mine ?? ref(imageKey),
        // The scene's written length, not its narration's: a clip already bought stays the same step when a narration
        // is edited (a step is reused only for the very input it was bought with); the render holds its last frame.
        duration: scene.duration,
        seed,
      },
      dependsOn: mine ? [] : [imageKey],
      ...(mine && '$output' in mine ? { dependsOnTasks: [mine.$output] } : {}),
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
  return steps;
}

/** The scene field each step's own input field is written from (see planScenes). */
const SCENE_FIELDS: Partial<Record<Kind, Record<string, keyof Scene>>> = {
  image: { prompt: 'imagePrompt' },
  clip: { prompt: 'motionPrompt', duration: 'duration' },
  speech: { text: 'narration' },
};

/**
 * Where a field of a planned step's input was written, in the words of the storyboard (or of the settings'
 * defaults), so a refusal of that field says what to change; null for what the studio fills in itself.
 */
export function inputOrigin(board: Storyboard, defaults: Record<StepKind, StepChoice>, step: PlannedStep, field: string): string | null {
  const index = board.scenes.findIndex((s) => s.id === step.scene);
  const scene = board.scenes[index];
  if (!scene || step.kind === 'render') return null;
  const where = `scene ${index + 1} ("${scene.id}")`;
  const own = SCENE_FIELDS[step.kind]?.[field];
  if (own) return `${where} ${own}${own === 'motionPrompt' && scene.motionPrompt === scene.imagePrompt ? ' (its imagePrompt, when it has no motionPrompt)' : ''}`;
  const kind = step.kind as StepKind;
  const [choice, place] = scene.steps[kind] ? [scene.steps[kind], `${where} steps`] : board.steps[kind] ? [board.steps[kind], 'the storyboard\'s steps'] : [defaults[kind], 'the settings\' defaults'];
  return choice.options && Object.hasOwn(choice.options, field) ? `${place}.${kind}.options.${field}` : null;
}

/** The render of every scene: a scene in `made` by the tasks of that earlier take, any other by its planned steps. */
export function planRender(board: Storyboard, made: ReadonlyMap<string, TakeSource>): PlannedStep {
  const output = (id: number) => ({ $output: id });
  const planned = board.scenes.filter((s) => !made.has(s.id));
  return {
    key: 'render',
    kind: 'render',
    scene: null,
    provider: RENDER_PROVIDER,
    model: RENDER_MODEL,
    input: {
      width: board.width,
      height: board.height,
      fit: board.fit,
      fps: board.fps,
      scenes: board.scenes.map((s) => {
        const take = made.get(s.id);
        // The render measures each narration and, with fit "narration", lengthens the scene to hold all of it.
        if (take) return { id: s.id, duration: take.duration, fit: s.fit, clip: output(take.clip), narration: take.narration === null ? null : output(take.narration) };
        return { id: s.id, duration: s.duration, fit: s.fit, clip: ref(`${s.id}:clip`), narration: s.narration ? ref(`${s.id}:speech`) : null };
      }),
    },
    dependsOn: planned.flatMap((s) => [`${s.id}:clip`, ...(s.narration ? [`${s.id}:speech`] : [])]),
    dependsOnTasks: [...made.values()].flatMap((t) => [t.clip, ...(t.narration === null ? [] : [t.narration])]),
  };
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

/** The input with every file it names (`{"$step": key}`, `{"$output": id}`, `{"$file": path}`) replaced by `stand`. */
export function stepRefsAs(value: unknown, stand: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => stepRefsAs(v, stand));
  if (value && typeof value === 'object') {
    if ('$step' in value || '$output' in value || '$file' in value) return stand;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stepRefsAs(v, stand)]));
  }
  return value;
}
