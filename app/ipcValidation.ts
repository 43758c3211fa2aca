import { API_METHODS, type StudioApi } from '../main/api/contract.ts';
import { PRESETS } from '../main/domain/presets.ts';
import { isAppUrl } from './window.ts';

export class IpcRefused extends Error {}

type Check = (args: unknown[]) => boolean;

const str = (v: unknown, max = 200) => typeof v === 'string' && v.length > 0 && v.length <= max;
const int = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;
const obj = (v: unknown) => !!v && typeof v === 'object' && !Array.isArray(v);
const takes = (v: unknown) => v === undefined || (Array.isArray(v) && v.length <= 100 && v.every((x) => str(x)));

const takeOptions = (o: Record<string, unknown>) => (o.only === undefined || ['clip', 'image', 'both'].includes(o.only as string)) && (o.seed === undefined || int(o.seed)) && (o.variations === undefined || int(o.variations));
const optionalStr = (v: unknown, max = 200) => v === undefined || v === null || v === '' || str(v, max);
const libraryQuery = (q: Record<string, unknown>) =>
  int(q.offset) &&
  int(q.limit) &&
  (q.limit as number) <= 200 &&
  ['project', 'provider', 'from', 'to'].every((k) => optionalStr(q[k])) &&
  optionalStr(q.search, 500) &&
  (q.kind === undefined || q.kind === null || ['image', 'clip', 'speech', 'render', 'draft'].includes(q.kind as string));

/** What each method accepts from the page; anything else is refused before it reaches the engine. */
const CHECKS: Record<(typeof API_METHODS)[number], Check> = {
  listProjects: (a) => a.length === 0,
  createProject: ([name]) => str(name),
  getStoryboard: ([p]) => str(p),
  saveStoryboard: ([p, board]) => str(p) && obj(board),
  storyboardRevision: ([p]) => str(p),
  estimateDraft: ([p, d]) => str(p) && obj(d),
  draftStoryboard: ([p, d]) => str(p) && obj(d),
  setBudget: ([p, amount]) => str(p) && (amount === null || (typeof amount === 'number' && Number.isFinite(amount) && amount >= 0)),
  estimate: ([p, t, o]) => str(p) && takes(t) && (o === undefined || (obj(o) && takeOptions(o as Record<string, unknown>))),
  generate: ([p, t, o]) =>
    str(p) &&
    takes(t) &&
    (o === undefined ||
      (obj(o) && takeOptions(o as Record<string, unknown>) && (['rebuyLost', 'confirmUnpriced'] as const).every((k) => ['undefined', 'boolean'].includes(typeof (o as Record<string, unknown>)[k])))),
  listTasks: ([p, offset, limit]) => str(p) && int(offset) && int(limit) && (limit as number) <= 500,
  unknownTasks: (a) => a.length === 0,
  reconcile: ([id]) => int(id),
  resolve: ([id, d]) => int(id) && obj(d) && (str((d as { adopt?: unknown }).adopt) || (d as { resubmit?: unknown }).resubmit === true || (d as { giveUp?: unknown }).giveUp === true),
  cancel: ([id]) => int(id),
  spend: ([p]) => str(p),
  spendCsv: ([p]) => p === null || str(p),
  spendOverview: (a) => a.length === 0,
  library: ([q]) => obj(q) && libraryQuery(q as Record<string, unknown>),
  deleteOutput: ([id]) => int(id),
  taskDetail: ([id]) => int(id),
  cancelPreview: ([id]) => int(id),
  getSettings: (a) => a.length === 0,
  saveSettings: ([patch]) => obj(patch),
  saveTeam: ([change]) =>
    obj(change) &&
    Object.keys(change as object).every((k) => k === 'databaseUrl' || k === 'machineName' || k === 'mediaDir') &&
    ['databaseUrl', 'machineName', 'mediaDir'].every((k) => optionalStr((change as Record<string, unknown>)[k], 2_000)),
  engineStatus: (a) => a.length === 0,
  listModels: (a) => a.length === 0,
  scenePlan: ([p]) => str(p),
  takes: ([p, scene]) => str(p) && (scene === undefined || str(scene)),
  moveToCheapest: ([p, change]) =>
    str(p) && obj(change) && Number.isSafeInteger((change as { revision?: unknown }).revision) && ((change as { scene?: unknown }).scene === undefined || str((change as { scene?: unknown }).scene)),
  pickTake: ([p, scene, take]) => str(p) && str(scene) && Number.isInteger(take) && (take as number) >= 1,
  exportFilm: ([p, preset]) => str(p) && (PRESETS as readonly unknown[]).includes(preset),
  filmRenders: ([p]) => str(p),
  diagnostics: (a) => a.length === 0,
};

/**
 * Every IPC call is checked twice: that it comes from the app's own page in the main frame (not an iframe,
 * not a page navigated elsewhere), and that its arguments have the shapes the method takes.
 */
export function checkCall(
  method: string,
  args: unknown[],
  sender: { url: string; isMainFrame: boolean } | null,
): asserts method is keyof StudioApi {
  if (!sender || !sender.isMainFrame || !isAppUrl(sender.url)) throw new IpcRefused('refused: the call did not come from the studio window');
  if (!(API_METHODS as readonly string[]).includes(method)) throw new IpcRefused(`refused: there is no method ${method}`);
  if (!Array.isArray(args) || !CHECKS[method as (typeof API_METHODS)[number]](args)) throw new IpcRefused(`refused: ${method} was called with arguments of the wrong shape`);
}

/** The desktop-only calls on a task's output file, over their own channel. */
export const FILE_ACTIONS = ['saveOutputAs', 'showOutputInFolder'] as const;
export type FileAction = (typeof FILE_ACTIONS)[number];

/** A file call is checked as an API call is: the app's own page in the main frame, a known action, a task id. */
export function checkFileCall(action: unknown, args: unknown, sender: { url: string; isMainFrame: boolean } | null): asserts action is FileAction {
  if (!sender || !sender.isMainFrame || !isAppUrl(sender.url)) throw new IpcRefused('refused: the call did not come from the studio window');
  if (!(FILE_ACTIONS as readonly unknown[]).includes(action)) throw new IpcRefused(`refused: there is no file action ${String(action)}`);
  if (!Array.isArray(args) || args.length !== 1 || !int(args[0])) throw new IpcRefused(`refused: ${String(action)} takes a task id`);
}

/**
 * The desktop's own-picture call (main/api/ownPictureFile.ts), over its own channel: from the app's page in the main
 * frame, a project, a scene, and the path the preload found for the file ("" when it is no file on disk, which the
 * call answers in words).
 */
export function checkOwnPictureCall(args: unknown, sender: { url: string; isMainFrame: boolean } | null): asserts args is [string, string, string] {
  if (!sender || !sender.isMainFrame || !isAppUrl(sender.url)) throw new IpcRefused('refused: the call did not come from the studio window');
  if (!Array.isArray(args) || args.length !== 3 || !str(args[0]) || !str(args[1]) || typeof args[2] !== 'string' || args[2].length > 4_096) {
    throw new IpcRefused('refused: useOwnPicture takes a project, a scene and a file');
  }
}

/** The desktop's own-music call (main/api/ownPictureFile.ts useOwnMusic): from the app's page, a project and the path found for the file. */
export function checkOwnMusicCall(args: unknown, sender: { url: string; isMainFrame: boolean } | null): asserts args is [string, string] {
  if (!sender || !sender.isMainFrame || !isAppUrl(sender.url)) throw new IpcRefused('refused: the call did not come from the studio window');
  if (!Array.isArray(args) || args.length !== 2 || !str(args[0]) || typeof args[1] !== 'string' || args[1].length > 4_096) {
    throw new IpcRefused('refused: useOwnMusic takes a project and a file');
  }
}
