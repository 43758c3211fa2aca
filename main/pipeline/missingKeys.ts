import type { MissingKey } from '../providers/invalidInput.ts';

/** A provider that a new step needs and that has no key yet. */
export interface MissingKeyNote {
  provider: string;
  /** The name a person knows it by ("fal", "OpenAI"). */
  title: string;
  /** The variable its key can be set in, besides Settings. */
  variable: string;
}

export const missingKeyNote = (provider: string, error: MissingKey): MissingKeyNote => ({ provider, title: error.provider, variable: error.variable });

/** Each provider once, in the order its steps come. */
export function distinctKeys(notes: ReadonlyArray<MissingKeyNote | null>): MissingKeyNote[] {
  const seen = new Map<string, MissingKeyNote>();
  for (const n of notes) if (n && !seen.has(n.provider)) seen.set(n.provider, n);
  return [...seen.values()];
}

/** "fal (Settings, or FAL_KEY), OpenAI (Settings, or OPENAI_API_KEY)". */
export function missingKeysWords(notes: readonly MissingKeyNote[]): string {
  return notes.map((n) => `${n.title} (Settings, or ${n.variable})`).join(', ');
}
