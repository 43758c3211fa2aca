/** "Copy diagnostics" in Settings: what a person sends when something went wrong, with every key cut out. */

import { readFileSync } from 'node:fs';
import { arch, release, type } from 'node:os';
import { STATUSES, type Status } from '../domain/tasks/model.ts';
import { Redaction } from '../logging/redact.ts';
import { heldSecrets } from './heldSecrets.ts';
import type { ServiceContext } from './serviceContext.ts';
import { iso } from './taskView.ts';

/** How many of the last log lines go into the text, as issue 25 asks. */
export const LOG_LINES = 200;

export interface DiagnosticsFacts {
  at: number;
  app: { name: string; version: string };
  /** process.versions: Electron and Chrome where the studio runs in Electron, Node and V8 always. */
  versions: Partial<Record<'electron' | 'chrome' | 'node' | 'v8', string>>;
  os: string;
  /** Folders by what they hold. */
  folders: [string, string][];
  database: string;
  engine: {
    state: 'not started' | 'running' | 'stopped' | 'not known here';
    paused: { reason: string; since: number } | null;
    paidWorkInFlight: boolean | null;
  };
  tasks: Record<Status, number>;
  promptsLogged: boolean;
  /** Why there are no lines, or why the newest may be missing; null when the log is written. */
  logNote: string | null;
  logLines: string[];
}

function section(title: string, rows: [string, string][]): string {
  // Signal's debug log is laid out so: a titled section of "key: value" lines each (ts/logging/debuglogs.ts).
  return [`========= ${title} =========`, ...rows.map(([k, v]) => `${k}: ${v}`), ''].join('\n');
}

/** The text, from what was gathered; pure, so its layout is tested alone. */
export function diagnosticsText(f: DiagnosticsFacts): string {
  const v = f.versions;
  const paused = f.engine.paused ? `yes, since ${iso(f.engine.paused.since)}: ${f.engine.paused.reason}` : 'no';
  const inFlight = f.engine.paidWorkInFlight === null ? 'not known here' : f.engine.paidWorkInFlight ? 'yes' : 'no';
  const counts = STATUSES.filter((s) => f.tasks[s] > 0).map((s) => `${s} ${f.tasks[s]}`);
  return [
    `${f.app.name} diagnostics, ${iso(f.at)}`,
    'Keys are cut out of this text' + (f.promptsLogged ? '' : ', and prompts out of the log lines') + '. Read it before you send it.',
    '',
    section('Versions', [
      [f.app.name, f.app.version],
      ...(v.electron ? ([['Electron', v.electron]] as [string, string][]) : []),
      ...(v.chrome ? ([['Chrome', v.chrome]] as [string, string][]) : []),
      ['Node', v.node ?? 'unknown'],
      ['V8', v.v8 ?? 'unknown'],
      ['OS', f.os],
    ]),
    section('Folders', [...f.folders, ['Database', f.database]]),
    section('Engine', [
      ['Running', f.engine.state],
      ['Paused', paused],
      ['Paid requests in flight in this process', inFlight],
      ['Tasks', counts.length > 0 ? counts.join(', ') : 'none'],
      ['Needing your decision', String(f.tasks.OUTCOME_UNKNOWN)],
      ['Prompts written to the logs', f.promptsLogged ? 'yes (asked for in settings or STUDIO_LOG_PROMPTS)' : 'no'],
    ]),
    `========= The last ${LOG_LINES} log lines =========`,
    ...(f.logNote ? [`(${f.logNote})`] : []),
    ...f.logLines,
    '',
  ].join('\n');
}

/** The app's name and version from its package.json, two folders up here as in the desktop's bundle (dist/app/). */
function appIdentity(): DiagnosticsFacts['app'] {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { productName?: string; name?: string; version?: string };
    return { name: pkg.productName ?? pkg.name ?? 'Take Studio', version: pkg.version ?? 'unknown' };
  } catch (err) {
    return { name: 'Take Studio', version: `unknown (package.json could not be read: ${(err as Error).message})` };
  }
}

export async function diagnostics(ctx: ServiceContext): Promise<string> {
  const studio = ctx.studio;
  const deps = ctx.deps.diagnostics;
  const redaction = deps?.redaction ?? new Redaction();
  if (!deps) {
    redaction.hold(() => heldSecrets(studio, ctx.deps.keys));
    redaction.logPromptsWhen(() => studio.settings.logging.prompts);
  }
  const tasks = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<Status, number>;
  for (const row of await studio.tasks.counts()) tasks[row.status] += row.n;
  const logger = deps?.logger;
  const engine = deps?.engine();
  const facts: DiagnosticsFacts = {
    at: Date.now(),
    app: appIdentity(),
    versions: { electron: process.versions.electron, chrome: process.versions.chrome, node: process.versions.node, v8: process.versions.v8 },
    os: `${type()} ${release()} (${process.platform}, ${arch()})`,
    folders: [
      ['Data folder', studio.dataDir],
      ['Logs', logger?.dir ?? 'none kept by this process'],
      ['Media', studio.media.root],
      ...Object.entries(deps?.folders ?? {}),
    ],
    database: studio.store.kind === 'postgres' ? `the team database at ${studio.store.where}` : studio.store.where,
    engine: {
      state: engine?.state ?? 'not known here',
      paused: ctx.deps.paused(),
      paidWorkInFlight: engine?.paidWorkInFlight ?? null,
    },
    tasks,
    promptsLogged: redaction.promptsAllowed,
    logNote: !logger?.dir ? 'this process keeps no log file' : logger.problem,
    logLines: logger?.tail(LOG_LINES) ?? [],
  };
  // Cut again as a whole, as Signal does at publish: a key saved after a line was written is cut from it too.
  return redaction.cut(diagnosticsText(facts));
}
