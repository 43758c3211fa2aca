/**
 * What a completion's event says when the provider named, with the result, a request id another task of the
 * provider holds: the result is kept, and the id stays with that task.
 */
export const REQUEST_HELD_NOTE = 'the provider named a request id another task holds; it was not recorded on this task';

export const requestHeldDetail = (requestId: string, heldBy: number) => ({ requestId, heldBy, note: REQUEST_HELD_NOTE });

/**
 * The parameters a write that gives a task a request takes from every name the provider gives that request (`aliases`,
 * the id itself among them or not): the id the task records, the other name it keeps beside it (ElevenLabs: a history
 * item id beside a request id), and all of them, as a JSON array, to check none is another task's.
 */
export function requestNames(requestId: string, aliases: readonly string[]) {
  const alias = aliases.find((a) => a.toLowerCase() !== requestId.toLowerCase()) ?? null;
  return { requestId, alias, ids: JSON.stringify(alias === null ? [requestId] : [requestId, alias]) };
}
