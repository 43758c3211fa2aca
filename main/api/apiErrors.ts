import { SettingsError } from '../config/settings.ts';
import { DecisionRefused } from '../engine/decisions.ts';
import { GenerateRefused } from '../pipeline/generate.ts';
import { DraftPaidAndFailed, DraftRefused } from '../pipeline/draft.ts';
import { StoryboardError } from '../domain/storyboard.ts';
import { StaleStoryboard } from '../domain/storyboardRevision.ts';
import { TakeRefused } from '../pipeline/takes.ts';
import { ProjectRefused } from '../domain/project.ts';
import { PatchRefused } from './settingsPatch.ts';

/** A refusal the person can act on; hosts pass its message to the UI as it is. */
export class ApiError extends Error {}

/** A save made from a revision older than the stored one (the loopback host answers 409): open it again, or save over it knowingly. */
export class ApiConflict extends ApiError {}

/** Maps errors a person can act on into ApiError; anything else stays a bug. */
export async function refusals<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof StaleStoryboard || err instanceof DraftPaidAndFailed) throw new ApiConflict(err.message);
    if (err instanceof GenerateRefused || err instanceof DecisionRefused || err instanceof StoryboardError || err instanceof TakeRefused || err instanceof DraftRefused) throw new ApiError(err.message);
    if (err instanceof SettingsError || err instanceof PatchRefused || err instanceof ProjectRefused) throw new ApiError(err.message);
    throw err;
  }
}
