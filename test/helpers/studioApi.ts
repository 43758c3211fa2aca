import type { LaunchedHost } from '../../main/host/launch.ts';
import { hostForTest } from './running.ts';

export interface ApiAnswer<T> {
  status: number;
  result: T;
  error?: string;
}

/** StudioApi calls over HTTP, as the UI makes them, to the host `current` gives at the time of each call. */
export function apiCaller(current: () => LaunchedHost | undefined) {
  return async <T>(method: string, ...args: unknown[]): Promise<ApiAnswer<T>> => {
    const host = current()!;
    const res = await fetch(`${host.url.replace(/\/?(#.*)?$/, '')}/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${host.token}` },
      body: JSON.stringify(args),
    });
    return { status: res.status, ...((await res.json()) as { result: T; error?: string }) };
  };
}

/** A host on `dataDir` for this test (stopped when it ends), and a caller of its API. */
export async function apiForTest(dataDir: string) {
  const host = await hostForTest(dataDir);
  return apiCaller(() => host);
}
