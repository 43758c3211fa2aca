import { readStoryboard, type StepCatalogue, type Storyboard } from '../domain/storyboard.ts';
import type { StoryboardStore } from '../store/port.ts';
import { InvalidInput } from './invalidInput.ts';
import { checkModel, STEP_PROVIDER_IDS } from './registry.ts';

/** The providers and models this studio has, for a storyboard's steps. */
const STEP_CATALOGUE: StepCatalogue = {
  providers: STEP_PROVIDER_IDS,
  isProvider: (id) => STEP_PROVIDER_IDS.includes(id),
  modelProblem(provider, kind, model) {
    try {
      checkModel(provider, kind, model);
      return null;
    } catch (e) {
      if (e instanceof InvalidInput) return e.message;
      throw e;
    }
  },
};

/** Reads a storyboard as a person wrote it, naming the scene and field of anything wrong, models included. */
export function parseStoryboard(value: unknown): Storyboard {
  return readStoryboard(value, STEP_CATALOGUE);
}

/**
 * The stored storyboards, each checked as it is read against the providers and models of this studio (a store
 * knows no providers): a StoryboardError names what no longer passes.
 */
export function checkedStoryboards(store: StoryboardStore): StoryboardStore {
  return {
    get: async (projectId) => {
      const raw = await store.raw(projectId);
      return raw === undefined ? undefined : parseStoryboard(raw);
    },
    raw: (projectId) => store.raw(projectId),
    revision: (projectId) => store.revision(projectId),
    save: (projectId, board, now, from) => store.save(projectId, board, now, from),
  };
}
