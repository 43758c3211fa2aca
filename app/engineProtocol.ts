import type { ChangeEvent } from '../main/api/contract.ts';

/**
 * The messages between the window's process (Electron's main process) and the engine's utility process
 * (docs/api/utility-process.md), carried by child.postMessage and process.parentPort. Both ends are this app,
 * so the shapes are typed, not parsed. The pure parts (ids and their answers, the restart limit, the words)
 * live here so they are tested without Electron.
 */

/** What the window's process asks of the engine. */
export type EngineRequest =
  /** A StudioApi call from the page, already checked against its shape (app/ipcValidation.ts). */
  | { kind: 'api'; method: string; args: unknown[] }
  /** A picture, clip or music file the person picked, by its path (app/ownPicture.ts). */
  | { kind: 'own'; what: 'picture' | 'music'; args: unknown[] }
  /** The file behind studio-media://task/ID[/INDEX]. */
  | { kind: 'outputPath'; taskId: number; index: number }
  /** The file behind studio-media://own/PROJECT/SHA256. */
  | { kind: 'ownPicturePath'; project: string; sha256: string }
  /** A finished task's output and the name to offer for a copy (Save as…, Show in folder). */
  | { kind: 'outputFile'; taskId: number };

/** An answer as the page gets it: a result, or words for the person. */
export type Answer = { result: unknown } | { error: string };

/**
 * The provider keys, decrypted by the main process, which alone has safeStorage (docs/api/safe-storage.md):
 * each stored key by name, null where one is stored but cannot be decrypted here.
 */
export interface KeySnapshot {
  encrypted: boolean;
  keys: Record<string, string | null>;
}

export interface EngineStart {
  dataDir: string;
  /** The database driver built for this Electron, already checked against its ABI (app/nativeBinding.ts). */
  binding: string;
  /** That driver's own JavaScript, staged beside the bundle (app/nativeBinding.ts electronDriverDir). */
  driver: string;
  /** Electron's logs path, where the engine writes engine.log, and its crash dumps folder, which diagnostics names. */
  logsDir: string;
  crashDumps: string;
  keys: KeySnapshot;
}

export type ToEngine =
  | { type: 'start'; start: EngineStart }
  | { type: 'request'; id: number; request: EngineRequest }
  /** The main process's answer to a saveKey: null when the key was encrypted and written. */
  | { type: 'keySaved'; id: number; error: string | null }
  | { type: 'renewNow' }
  | { type: 'stop' };

export type FromEngine =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'answer'; id: number; answer: Answer }
  /** A change to the database, with what the main process needs to keep the machine awake or let it sleep. */
  | { type: 'changed'; change: ChangeEvent; paidWorkInFlight: boolean; keepAwake: boolean }
  /** A key the person entered, to be encrypted and written to keys.json by the main process. */
  | { type: 'saveKey'; id: number; name: string; value: string | null }
  | { type: 'log'; message: string };

/** Calls sent and not yet answered, by id. An id is never reused, so a late answer can settle nothing else. */
export class PendingCalls<T> {
  private next = 0;
  private readonly waiting = new Map<number, (answer: T) => void>();

  add(): { id: number; answer: Promise<T> } {
    const id = ++this.next;
    return { id, answer: new Promise<T>((resolve) => this.waiting.set(id, resolve)) };
  }

  /** False when no call of that id waits (answered already, or failed by a crash). */
  settle(id: number, answer: T): boolean {
    const resolve = this.waiting.get(id);
    if (!resolve) return false;
    this.waiting.delete(id);
    resolve(answer);
    return true;
  }

  /** Answers every waiting call with `answer`; returns how many there were. Nothing is sent again. */
  failAll(answer: T): number {
    const all = [...this.waiting.values()];
    this.waiting.clear();
    for (const resolve of all) resolve(answer);
    return all.length;
  }

  get size(): number {
    return this.waiting.size;
  }
}

/** At most this many restarts within this window; a crash past it leaves the engine stopped and says so. */
export const RESTART_LIMIT = { restarts: 3, withinMs: 60_000 };

/** Whether a crash at `now` may be followed by a restart, given the times of the crashes before it. */
export function mayRestart(earlier: readonly number[], now: number, limit = RESTART_LIMIT): boolean {
  return earlier.filter((at) => now - at < limit.withinMs).length < limit.restarts;
}

/** How the engine process ended, in words: Electron gives the waitpid code, the signal's number for a kill. */
export function howItEnded(code: number): string {
  return code === 0 ? 'ended with no error' : `ended with code ${code}`;
}

/** What a call in flight when the engine stopped is answered: it may have been done, and it is never sent again. */
export const STOPPED_MIDWAY =
  "the studio's engine stopped while this was being done, so it may or may not have happened, and it was not tried again. Look at the task list once the engine is back before you repeat it";

/** What a call is answered while the engine is down for good. */
export const ENGINE_DOWN = "the studio's engine stopped and was not started again (the message shown then says why), so this was not done. Quit Take Studio and open it again";

/** What the page is told of a bug, which is logged with its stack where it happened. */
export const INTERNAL_ERROR = 'the studio hit an internal error; it was logged';

/** What a call is answered once the app is quitting. */
export const QUITTING = 'Take Studio is quitting, so this was not done';

/**
 * What the person is shown when the engine process crashed: it starts again, or it stopped too often, or what it
 * starts with could not be read (`unstartable`, in words).
 */
export function crashNotice(code: number, restarting: boolean, unstartable?: string): { message: string; detail: string } {
  const how = howItEnded(code);
  if (unstartable) {
    return {
      message: "The studio's engine stopped unexpectedly and could not be started again",
      detail: `The engine process ${how}, and starting it again failed: ${unstartable}. Nothing more is sent to a provider. Fix what that names, then quit Take Studio and open it again; paid requests in flight are recovered then, each with its request id.`,
    };
  }
  return restarting
    ? {
        message: "The studio's engine stopped unexpectedly and is starting again",
        detail: `The engine process ${how}. Paid requests it was sending are recovered as it starts: each keeps its request id, and none is sent twice. Anything you were doing at that moment was not repeated; look at the task list before you do it again.`,
      }
    : {
        message: "The studio's engine keeps stopping, so it was not started again",
        detail: `The engine process ${how}, ${RESTART_LIMIT.restarts} times within a minute. Nothing more is sent to a provider. Quit Take Studio and open it again; paid requests in flight are recovered then, each with its request id. If it happens again, the log says why.`,
      };
}
