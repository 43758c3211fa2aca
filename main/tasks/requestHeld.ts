/**
 * What a completion's event says when the provider named, with the result, a request id another task of the
 * provider holds: the result is kept, and the id stays with that task.
 */
export const REQUEST_HELD_NOTE = 'the provider named a request id another task holds; it was not recorded on this task';

export const requestHeldDetail = (requestId: string, heldBy: number) => ({ requestId, heldBy, note: REQUEST_HELD_NOTE });
