import type { Kind } from '../domain/tasks/model.ts';

/** The models the simulator serves, one per kind; any other is answered 404, as a provider answers a model it lacks. */
export const SIMULATOR_MODELS: Readonly<Partial<Record<Kind, string>>> = { image: 'sim-image-1', clip: 'sim-clip-1', speech: 'sim-speech-1', draft: 'sim-draft-1' };
