import type { Task } from '../domain/tasks/model.ts';
import { creditsOf, entryFor } from './catalogue.ts';

/** A task's credits at a provider that bills in credits: as the provider reported them (billed), else from its text (estimated). */
export interface TaskCredits {
  count: number;
  billed: boolean;
}

export function taskCredits(t: Pick<Task, 'provider' | 'model' | 'kind' | 'input' | 'billedUnits'>): TaskCredits | null {
  if (t.billedUnits?.unit === 'credit') return { count: t.billedUnits.count, billed: true };
  const pricing = entryFor(t.provider, t.model, t.kind)?.pricing;
  if (pricing?.per !== 'credit' || !t.input || typeof t.input !== 'object') return null;
  return { count: creditsOf(t.input as Record<string, unknown>, pricing.creditsPerCharacter), billed: false };
}

/** "180 credits billed", "about 180 credits": beside the money. */
export function creditsWords(c: TaskCredits): string {
  return `${c.billed ? '' : 'about '}${c.count} credit${c.count === 1 ? '' : 's'}${c.billed ? ' billed' : ''}`;
}
