import { closest } from '../domain/closest.ts';
import type { Kind } from '../domain/tasks/model.ts';
import { InvalidInput } from './invalidInput.ts';
import type { InputSchema } from './schema.ts';

/** A model an adapter sends to, with the input checked before the boundary mark. */
export interface ModelSpec {
  id: string;
  kind: Kind;
  title: string;
  inputs: InputSchema;
  /** About how long one request runs, as the provider's page for the model states it, where it does. */
  runMs?: number;
}

const KIND_WORDS: Record<Kind, string> = { image: 'images', clip: 'clips', speech: 'speech', render: 'renders', draft: 'storyboard drafts' };

function list(words: string[]): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

/**
 * The declared model a task names. Anything else is refused before a request is built, naming the models
 * this provider makes of that kind, so a misspelt model is never sent nor priced as some other model.
 */
export function modelFor(providerName: string, models: readonly ModelSpec[], kind: Kind, model: string): ModelSpec {
  const ofKind = models.filter((m) => m.kind === kind);
  if (ofKind.length === 0) {
    const kinds = [...new Set(models.map((m) => KIND_WORDS[m.kind]))];
    throw new InvalidInput(`${providerName} makes ${list(kinds)} here, not ${KIND_WORDS[kind]}`);
  }
  const found = ofKind.find((m) => m.id === model);
  if (found) return found;
  const ids = ofKind.map((m) => m.id);
  const named = model.length > 80 ? `${model.slice(0, 77)}…` : model;
  throw new InvalidInput(`${providerName} has no ${kind} model "${named}"; did you mean "${closest(model.slice(0, 200), ids)}"? The ${kind} models are ${ids.join(', ')}`);
}
