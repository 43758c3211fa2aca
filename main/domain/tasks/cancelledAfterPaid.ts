/**
 * A task the person cancelled after its provider had finished the request: the request is paid, so the cancel stops
 * nothing. The result is collected and the task ends SUCCEEDED, charged, its files linked, so spend, the library and
 * takes count it as the paid, saved result it is; these words, on the row and in the event that completes it, say
 * what happened. The other words below say it where the provider had not finished when the cancel came.
 */
export const CANCELLED_AFTER_PAID = 'cancelled after the provider had finished; the result it was paid for is kept';

/** A request still running when the provider was asked to stop it, which it finished anyway. */
export const FINISHED_ANYWAY = 'cancelled while the provider ran it; it finished anyway, and the result it was paid for is kept';

/** A request sent before the cancel reached the worker sending it (a cancel while it was being sent). */
export const SENT_BEFORE_CANCEL = 'cancelled while its request was being sent; the request was sent before the cancel reached the worker, and the result it was paid for is kept';

/** A cancel the provider did not answer (cut, timed out, an error): the request went on. */
export const CANCEL_UNANSWERED = 'cancelled, but the provider did not answer the cancel, and the request went on; the result it was paid for is kept';

/** The worker sending a cancelled task's request learnt of the cancel before it sent anything. */
export const NOT_SENT_AFTER_CANCEL = 'the cancel reached the worker before it sent the request: nothing was sent, nothing is charged';

/**
 * The detail of an event about a request after the person's cancel (see followAfterCancel): `kept`, the words the
 * task ends with if its result is collected (the latest said wins; CANCELLED_AFTER_PAID when none is).
 */
export const afterCancelDetail = (requestId: string, kept?: string) => ({ requestId, afterCancel: true, ...(kept ? { kept } : {}) });
