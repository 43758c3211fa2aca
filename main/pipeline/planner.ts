import type { Kind } from '../domain/tasks/model.ts';
import type { Scene, StepChoice, StepKind, Storyboard } from '../domain/storyboard.ts';
import { stepChoice } from './stepChoice.ts';
import { sizeFor } from '../providers/frameSizes.ts';
import { stepSeed } from './newTakes.ts';
import { clipSeconds } from './clipLength.ts';
import { longerClipSeconds } from '../providers/clipDurations.ts';
import { CUT, DEFAULT_LOUDNESS_LUFS } from '../domain/finishing.ts';
import { cutsOf } from '../domain/filmTimeline.ts';
import { presetFrame, type Preset } from '../domain/presets.ts';

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
  /**
   * The same step as planned before a model was asked for the frame's size and a clip for its narration's length:
   * what a project bought then (a still or clip in the model's own default shape, a clip of the scene's written
   * length) is reused, never bought again, and the estimate says so.
   */
  formerInput?: Record<string, unknown>;
  /** The same clip asked longer, shortest first: one bought so (for a narration since shortened) covers this scene. */
  longerInputs?: Record<string, unknown>[];
  /** The earlier step of this plan it is one purchase with (see sameSteps.ts): not bought again. */
  sameAs?: string;
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
/** The task a scene's own still or clip is the output of, if it is one. */
/** The step whose result a scene shows: its clip, or for a scene shown as its still, its image; none when it is the creator's own. */
function pictureStep(s: Scene, clips: ReadonlyMap<string, unknown>, stills: ReadonlyMap<string, unknown>): string[] {
  if (s.motion !== undefined) return stills.has(s.id) ? [] : [`${s.id}:image`];
  return clips.has(s.id) ? [] : [`${s.id}:clip`];
}

const taskOf = (mine: { $file: string } | { $output: number } | undefined) => (mine && '$output' in mine ? [mine.$output] : []);

/**
 * A step's input with the frame's size fields first, so a size the storyboard's options name is the one sent; and,
 * when it differs from it, the input as it was before any size was asked (`former`, else `rest`; see
 * PlannedStep.formerInput).
 */
function sized(size: Record<string, unknown>, rest: Record<string, unknown>, former = rest): Pick<PlannedStep, 'input' | 'formerInput'> {
  return Object.keys(size).length > 0 || former !== rest ? { input: { ...size, ...rest }, formerInput: former } : { input: rest };
}

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
  /** Each scene's own clip: nothing is bought for such a scene's image or clip; the render uses it (see planRender). */
  clips: ReadonlyMap<string, unknown> = new Map(),
): PlannedStep[] {
  const steps: PlannedStep[] = [];
  const choose = (kind: StepKind, own: Partial<Record<StepKind, StepChoice>>) => stepChoice(board, defaults, { steps: own }, kind);

  for (const scene of board.scenes) {
    if (skip.has(scene.id)) continue;
    const image = choose('image', scene.steps);
    const clip = choose('clip', scene.steps);
    const speech = choose('speech', scene.steps);
    const imageKey = `${scene.id}:image`;
    const mine = own.get(scene.id);
    const mineClip = clips.has(scene.id);
    if (!mine && !mineClip) steps.push({
      key: imageKey,
      kind: 'image',
      scene: scene.id,
      provider: image.provider,
      model: image.model,
      ...sized(sizeFor(image.provider, image.model, 'image', board.width, board.height).input, { ...image.options, prompt: scene.imagePrompt, seed: stepSeed(scene, 'image') }),
      dependsOn: [],
    });
    const seconds = clipSeconds(board, defaults, scene, clip);
    const clipInput = { ...clip.options, prompt: scene.motionPrompt, image_url: mine ?? ref(imageKey), duration: seconds, seed: stepSeed(scene, 'clip') };
    // A clip as long as the narration's predicted length (see clipLength.ts); one bought at the written length is kept.
    const clipStep = sized(sizeFor(clip.provider, clip.model, 'clip', board.width, board.height).input, clipInput, seconds === scene.duration ? clipInput : { ...clipInput, duration: scene.duration });
    // A scene whose length follows its narration: a longer clip bought for a longer wording still covers it.
    const longer = scene.fit === 'narration' && scene.narration ? longerClipSeconds(clip.provider, clip.model, seconds) : [];
    // A scene shown as its still (with a move) needs no clip: the render moves over the still.
    if (!mineClip && scene.motion === undefined) steps.push({
      key: `${scene.id}:clip`,
      kind: 'clip',
      scene: scene.id,
      provider: clip.provider,
      model: clip.model,
      ...clipStep,
      ...(longer.length > 0 ? { longerInputs: longer.map((duration) => ({ ...clipStep.input, duration })) } : {}),
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

/**
 * The render of every scene: a scene in `made` by the tasks of that earlier take, one in `own` by the creator's own
 * clip (the project's copy, or a task's), any other by its planned steps.
 */
export function planRender(
  board: Storyboard,
  made: ReadonlyMap<string, TakeSource>,
  own: ReadonlyMap<string, { $file: string } | { $output: number }> = new Map(),
  music?: { $file: string } | { $output: number },
  stills: ReadonlyMap<string, { $file: string } | { $output: number }> = new Map(),
  /** An export in another shape or format (presets.ts), named after the project. */
  exported?: { preset: Preset; project: string },
): PlannedStep {
  const frame = exported ? presetFrame(exported.preset, board) : null;
  const cuts = cutsOf(board.scenes, board.transition ?? CUT);
  const output = (id: number) => ({ $output: id });
  const planned = board.scenes.filter((s) => !made.has(s.id));
  const shown = (s: Scene) => (s.motion === undefined ? own.get(s.id) ?? ref(`${s.id}:clip`) : stills.get(s.id) ?? ref(`${s.id}:image`));
  return {
    key: 'render',
    kind: 'render',
    scene: null,
    provider: RENDER_PROVIDER,
    model: RENDER_MODEL,
    input: {
      width: frame?.width ?? board.width,
      height: frame?.height ?? board.height,
      fit: board.fit,
      fps: frame?.fps ?? board.fps,
      ...(exported && frame ? { preset: exported.preset, title: exported.project, container: frame.container, ...(frame.seconds ? { seconds: frame.seconds } : {}) } : {}),
      scenes: board.scenes.map((s, i) => {
        const take = made.get(s.id);
        // The render measures each narration and, with fit "narration", lengthens the scene to hold all of it.
        const finish = { text: s.narration, transition: cuts[i]!, ...(s.trim ? { trim: s.trim } : {}) };
        if (take) return { id: s.id, duration: take.duration, fit: s.fit, clip: output(take.clip), narration: take.narration === null ? null : output(take.narration), ...finish };
        // The creator's own clip is rendered whole with its sound (see renderExecutor.ts); a bought clip as before.
        const still = s.motion === undefined ? {} : { still: s.motion };
        return { id: s.id, duration: s.duration, fit: s.fit, clip: shown(s), narration: s.narration ? ref(`${s.id}:speech`) : null, ...(own.has(s.id) ? { ownClip: true } : {}), ...still, ...finish };
      }),
      subtitles: board.subtitles ?? { burn: false },
      ...(music && board.music ? { music: { sound: music, volume: board.music.volume } } : {}),
      loudness: board.loudness ?? DEFAULT_LOUDNESS_LUFS,
    },
    dependsOn: planned.flatMap((s) => [...pictureStep(s, own, stills), ...(s.narration ? [`${s.id}:speech`] : [])]),
    dependsOnTasks: [
      ...[...made.values()].flatMap((t) => [t.clip, ...(t.narration === null ? [] : [t.narration])]),
      ...planned.flatMap((s) => taskOf(s.motion === undefined ? own.get(s.id) : stills.get(s.id))),
      ...taskOf(music),
    ],
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

/** `value` with each `{"$step": key}` whose key is in `keys` renamed to the key `keys` gives it. */
export function renameStepRefs(value: unknown, keys: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => renameStepRefs(v, keys));
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.$step === 'string') return { $step: keys.get(o.$step) ?? o.$step };
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, renameStepRefs(v, keys)]));
  }
  return value;
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
