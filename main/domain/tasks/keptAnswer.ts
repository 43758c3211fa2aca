import type { TaskEvent } from './model.ts';

/**
 * A provider's answer that is small text (a storyboard draft's JSON, or the refusal or broken answer of a paid
 * draft), kept in the task's history in the database: every machine of a team reads it there, so it is used from any
 * of them at no charge, and a paid answer the studio could not use is never thrown away.
 */
export const ANSWER_KEPT = 'the answer the provider sent, kept';

/** The newest answer kept in a task's history, or null. */
export function keptAnswer(events: readonly TaskEvent[]): string | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const answer = (events[i]!.detail as { answer?: unknown } | null)?.answer;
    if (events[i]!.reason === ANSWER_KEPT && typeof answer === 'string') return answer;
  }
  return null;
}
