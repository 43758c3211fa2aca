import { describe, expect, it } from 'vitest';
import { FAL_QUEUE_URL, falRequestUrls } from '../../main/providers/falUrls.ts';

const handleOn = (root: string) => ({ status_url: `${root}/status`, response_url: root, cancel_url: `${root}/cancel` });

describe("fal's request URLs", () => {
  it('follows the URLs of the submit answer on fal\'s queue host', () => {
    const root = 'https://queue.fal.run/fal-ai/flux/requests/req-1';
    expect(falRequestUrls({ requestId: 'req-1', model: 'fal-ai/flux/dev', handle: handleOn(root) }, FAL_QUEUE_URL)).toEqual({
      status: `${root}/status`,
      response: root,
      cancel: `${root}/cancel`,
      alternate: null,
    });
  });

  it('reaches a request known only by its id under owner/app, without the endpoint sub-path (fal-js queue.ts, fal_client from_request_id)', () => {
    expect(falRequestUrls({ requestId: 'req-1', model: 'fal-ai/flux/schnell', handle: null }, FAL_QUEUE_URL)).toEqual({
      status: 'https://queue.fal.run/fal-ai/flux/requests/req-1/status',
      response: 'https://queue.fal.run/fal-ai/flux/requests/req-1',
      cancel: 'https://queue.fal.run/fal-ai/flux/requests/req-1/cancel',
      // The form of fal's per-endpoint OpenAPI documents, asked when the first answers 404.
      alternate: {
        status: 'https://queue.fal.run/fal-ai/flux/schnell/requests/req-1/status',
        response: 'https://queue.fal.run/fal-ai/flux/schnell/requests/req-1',
        cancel: 'https://queue.fal.run/fal-ai/flux/schnell/requests/req-1/cancel',
      },
    });
    expect(falRequestUrls({ requestId: 'req-1', model: 'fal-ai/fast-sdxl', handle: null }, FAL_QUEUE_URL).alternate).toBeNull();
    expect(falRequestUrls({ requestId: 'a/b', model: 'fal-ai/kling-video/v2.1/standard/image-to-video', handle: null }, FAL_QUEUE_URL).response).toBe(
      'https://queue.fal.run/fal-ai/kling-video/requests/a%2Fb',
    );
  });

  it('follows no URL off fal\'s queue host, over plain http, with credentials, or relative: the documented one stands in', () => {
    const documented = 'https://queue.fal.run/fal-ai/flux/requests/req-1/status';
    for (const root of [
      'http://queue.fal.run/fal-ai/flux/requests/req-1',
      'https://queue.fal.run.example.com/fal-ai/flux/requests/req-1',
      'https://user:secret@queue.fal.run/fal-ai/flux/requests/req-1',
      'https://example.com/fal-ai/flux/requests/req-1',
      '/fal-ai/flux/requests/req-1',
      'javascript:alert(1)',
    ]) {
      expect(falRequestUrls({ requestId: 'req-1', model: 'fal-ai/flux/dev', handle: handleOn(root) }, FAL_QUEUE_URL).status, root).toBe(documented);
    }
  });

  it('follows URLs on the configured base\'s own origin (a local stand-in), and no other port of the same host', () => {
    const base = 'http://127.0.0.1:4100';
    const own = falRequestUrls({ requestId: 'req-1', model: 'fal-ai/flux/dev', handle: handleOn(`${base}/fal-ai/flux/requests/req-1`) }, base);
    expect(own.status).toBe(`${base}/fal-ai/flux/requests/req-1/status`);
    const other = falRequestUrls({ requestId: 'req-1', model: 'fal-ai/flux/dev', handle: handleOn('http://127.0.0.1:4101/x/requests/req-1') }, base);
    expect(other).toMatchObject({ status: `${base}/fal-ai/flux/requests/req-1/status`, response: `${base}/fal-ai/flux/requests/req-1`, cancel: `${base}/fal-ai/flux/requests/req-1/cancel` });
  });
});
