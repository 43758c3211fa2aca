import { MAX_SCENES, readStoryboard, StoryboardError, type StepCatalogue, type Storyboard } from './storyboard.ts';

/** What a person asks a draft for: the idea in their words and how many scenes. */
export interface DraftRequest {
  idea: string;
  scenes: number;
}

/** The longest idea a draft takes: a paragraph or a page, not a script. */
export const MAX_IDEA = 4000;
/** Scenes a draft makes when not told: a short film of about half a minute. */
export const DEFAULT_DRAFT_SCENES = 6;
/** The most scenes one draft asks for; a longer film is drafted in parts and edited together. */
export const MAX_DRAFT_SCENES = 24;

/**
 * The longest text a drafted scene field may hold: the shortest prompt a clip model of the studio takes (Kling's 2500
 * characters, main/providers/fal.ts), so a drafted scene is never one its own steps would refuse when estimated.
 */
const MAX_DRAFT_TEXT = 2500;

/** A draft asks the model for the fields a person writes for each scene; every other field keeps its default. */
const DRAFT_SCENE_FIELDS = ['imagePrompt', 'motionPrompt', 'narration', 'duration'] as const;

/** Reads a draft request as a person gave it, saying what to fix. */
export function readDraftRequest(value: { idea?: unknown; scenes?: unknown }): DraftRequest {
  const idea = typeof value.idea === 'string' ? value.idea.trim() : '';
  if (!idea) throw new StoryboardError('the idea: write a few sentences of what the film is about');
  if (idea.length > MAX_IDEA) throw new StoryboardError(`the idea: is ${idea.length} characters; a draft takes at most ${MAX_IDEA}, so shorten it`);
  const scenes = value.scenes === undefined ? DEFAULT_DRAFT_SCENES : value.scenes;
  if (typeof scenes !== 'number' || !Number.isInteger(scenes) || scenes < 1 || scenes > MAX_DRAFT_SCENES) {
    throw new StoryboardError(`scenes: must be a whole number from 1 to ${MAX_DRAFT_SCENES}, not ${JSON.stringify(scenes)}`);
  }
  return { idea, scenes };
}

/**
 * The storyboard's scene fields as a JSON schema in the subset OpenAI's Structured Outputs take with `strict: true`:
 * every property listed in `required`, `additionalProperties: false`, an optional value as a union with null
 * (openai-node src/resources/responses/responses.ts ResponseFormatTextJSONSchemaConfig.strict: "Only a subset of
 * JSON Schema is supported when `strict` is `true`"). Limits the schema cannot carry (the duration's range, the
 * number of scenes) are checked afterwards by the storyboard's own reader.
 */
export function draftSchema(): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['scenes'],
    properties: {
      scenes: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: [...DRAFT_SCENE_FIELDS],
          properties: {
            imagePrompt: { type: 'string', description: 'the still of the scene: subject, setting, light, framing' },
            motionPrompt: { type: 'string', description: 'what moves in the scene and how the camera moves' },
            narration: { type: ['string', 'null'], description: 'the words spoken over the scene, or null for none' },
            duration: { type: 'number', description: 'seconds the scene lasts, from 2 to 10' },
          },
        },
      },
    },
  };
}

/** What the model is told: the instructions, and the idea as its input. */
export function draftInstructions(scenes: number): string {
  return (
    `You turn a creator's idea into a storyboard for a short video of exactly ${scenes} scene${scenes === 1 ? '' : 's'}, in the order they play. ` +
    'For each scene write an imagePrompt (one still: subject, setting, light, framing), a motionPrompt (what moves and how the camera moves), ' +
    'the narration spoken over it (one or two short sentences, or null), and its duration in seconds (2 to 10). Keep people, places and style the same from scene to scene.'
  );
}

/**
 * Reads a model's answer as a storyboard, with the same reader as a saved one, naming what is wrong. Fewer scenes than
 * asked is still a storyboard the person paid for and edits; more is cut to the number asked (keepAsked).
 */
export function readDraftAnswer(text: string, catalogue?: StepCatalogue): Storyboard {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new StoryboardError('the answer is not JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new StoryboardError('the answer is not a JSON object with "scenes"');
  const list = (value as { scenes?: unknown }).scenes;
  if (!Array.isArray(list)) throw new StoryboardError('the answer has no list of "scenes"');
  if (list.length > MAX_SCENES) throw new StoryboardError(`the answer has more than ${MAX_SCENES} scenes`);
  list.forEach((scene, i) => {
    for (const field of DRAFT_SCENE_FIELDS) {
      const text = (scene as Record<string, unknown> | null)?.[field];
      if (typeof text === 'string' && text.length > MAX_DRAFT_TEXT) {
        throw new StoryboardError(`scene ${i + 1} ${field}: is ${text.length} characters; a scene's text is at most ${MAX_DRAFT_TEXT}`);
      }
    }
  });
  return readStoryboard({ scenes: list }, catalogue);
}

/**
 * The draft cut to the scenes asked for: a model that wrote more than asked keeps the first ones, in order (the story
 * as it begins), and `dropped` says how many were left out, so the person is told and never gets 150 of 3 silently.
 */
export function keepAsked(board: Storyboard, asked: number): { board: Storyboard; dropped: number } {
  const dropped = Math.max(0, board.scenes.length - asked);
  return { board: dropped === 0 ? board : { ...board, scenes: board.scenes.slice(0, asked) }, dropped };
}
