import type { RemoteRef } from '../domain/tasks/model.ts';

export const FAL_QUEUE_URL = 'https://queue.fal.run';

export interface FalRequestUrls {
  status: string;
  response: string;
  cancel: string;
}

/**
 * Whether a URL from fal's answer may be followed (with the key): an absolute https URL on fal's queue host,
 * or one on the configured base URL's own origin (a local stand-in, a proxy). Anything else is not fal's
 * (fal.ai/docs/model-apis/model-endpoints/queue: the submit answer's URLs are on queue.fal.run).
 */
function followable(url: unknown, base: string): url is string {
  if (typeof url !== 'string') return false;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.username || parsed.password) return false;
  return (parsed.protocol === 'https:' && parsed.origin === FAL_QUEUE_URL) || parsed.origin === new URL(base).origin;
}

/**
 * Where a request's status, result and cancel are. fal asks that the URLs its submit answered with be used
 * (fal.ai/docs/inference-api/queue/cancel: "Do not add the endpoint path. The status_url, response_url, and
 * cancel_url fields contain the correct URL"); one that is missing, or not on fal's queue host, is not followed,
 * and the request is reached by its id under the model's owner and app, without the endpoint's sub-path, as
 * fal's SDKs build it (fal-js libs/client/src/queue.ts status/result/cancel over parseEndpointId's owner and
 * alias; fal_client client.py SyncRequestHandle.from_request_id). fal's per-endpoint OpenAPI documents
 * (fal.ai/api/openapi/queue/openapi.json?endpoint_id=...) write the same paths under the whole endpoint id
 * instead: for a model with a sub-path that form is `alternate`, asked when the first answers 404.
 */
export function falRequestUrls(remote: RemoteRef, base: string): FalRequestUrls & { alternate: FalRequestUrls | null } {
  const [owner, app, ...subPath] = remote.model.split('/');
  const id = encodeURIComponent(remote.requestId);
  const under = (endpoint: string) => {
    const root = `${base.replace(/\/$/, '')}/${endpoint}/requests/${id}`;
    return { status: `${root}/status`, response: root, cancel: `${root}/cancel` };
  };
  const given = (key: string) => (followable(remote.handle?.[key], base) ? remote.handle![key]! : null);
  const withGiven = (urls: FalRequestUrls) => ({ status: urls.status, response: given('response_url') ?? urls.response, cancel: given('cancel_url') ?? urls.cancel });
  const status = given('status_url');
  return {
    ...withGiven(under(`${owner}/${app}`)),
    ...(status ? { status } : {}),
    alternate: status === null && subPath.length > 0 ? withGiven(under(remote.model)) : null,
  };
}
