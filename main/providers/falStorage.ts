import { send, TransportError, type HttpTimeouts } from '../http/client.ts';
import type { ProviderHttp } from './providerHttp.ts';
import { UploadRefused } from './port.ts';

/** fal's REST API, where uploads start (fal-js libs/client/src/config.ts getRestApiUrl). */
export const FAL_REST_URL = 'https://rest.fal.ai';

/** The bytes go to a signed storage URL: a few MB, given time to arrive on a slow link. */
const PUT_TIMEOUTS: HttpTimeouts = { headersMs: 30_000, bodyMs: 30_000, totalMs: 5 * 60_000 };

/**
 * Puts a file in fal's storage as fal-js does (libs/client/src/storage.ts, `upload` below its 90 MB multipart
 * size): `POST /storage/upload/initiate?storage_type=fal-cdn-v3` with `{content_type, file_name}` answers
 * `{upload_url, file_url}`; the bytes are PUT to `upload_url` with their Content-Type and no credentials (it is
 * signed); the request then names the file by `file_url`. fal's model docs take such a URL for an input image
 * (Kling's `image_url`: "URL of the image to be used for the video").
 */
export async function falUpload(rest: ProviderHttp, file: { bytes: Uint8Array; contentType: string; name: string }, signal?: AbortSignal): Promise<string> {
  const answer = await rest.answer('/storage/upload/initiate?storage_type=fal-cdn-v3', signal, 'POST', JSON.stringify({ content_type: file.contentType, file_name: file.name }));
  if (answer.status < 200 || answer.status >= 300) {
    // A timeout, a rate limit or fal's own fault may pass (RFC 9110 408, 429, 5xx); any other refusal (the key
    // refused, the account locked) comes back the same until the person changes something.
    if (answer.status >= 400 && answer.status < 500 && answer.status !== 408 && answer.status !== 429) throw new UploadRefused(rest.failure(answer).message);
    throw rest.failure(answer);
  }
  const started = answer.json && typeof answer.json === 'object' ? (answer.json as Record<string, unknown>) : {};
  const { upload_url: uploadUrl, file_url: fileUrl } = started;
  if (!isWebUrl(uploadUrl) || !isWebUrl(fileUrl)) throw new UploadRefused('fal answered the upload without an upload_url and a file_url');
  let status: number;
  try {
    const res = await send('PUT', uploadUrl, { headers: { 'content-type': file.contentType }, body: Buffer.from(file.bytes), timeouts: PUT_TIMEOUTS, signal });
    status = res.status;
    await res.body.dump();
  } catch (err) {
    if (err instanceof TransportError) throw new Error(`fal's storage did not take the file: ${err.message}`);
    throw err;
  }
  if (status < 200 || status >= 300) throw new Error(`fal's storage refused the file (HTTP ${status})`);
  return fileUrl;
}

function isWebUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    return ['https:', 'http:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}
