import { ApiError } from '../main/api/studioService.ts';
import { useNativeBinding } from '../main/db/nativeBinding.ts';
import { watchChanges } from '../main/host/server.ts';
import { openLog } from '../main/logging/logger.ts';
import type { Redaction } from '../main/logging/redact.ts';
import { startRuntime, type Runtime } from '../main/runtime.ts';
import { answerRequest } from './engineAnswers.ts';
import { relayedKeyStore } from './engineKeys.ts';
import { PendingCalls, type EngineStart, type FromEngine, type ToEngine } from './engineProtocol.ts';

/**
 * The engine's utility process (docs/api/utility-process.md): the SQLite store, the supervisor, the providers and the
 * StudioApi run here, off the process that runs the window, which only relays (app/engineRelay.ts). Messages come
 * on process.parentPort as events whose `data` is the message (docs/api/parent-port.md).
 */
const port = process.parentPort;
const post = (message: FromEngine) => port.postMessage(message);
// Once the engine's log exists, what goes to the main process's log is cut of keys as the engine's own lines are.
let redaction: Redaction | null = null;
const log = (message: string) => post({ type: 'log', message: redaction ? redaction.cut(message) : message });

// A packaged utility process with nothing left to do can end at once (electron/electron#42978); this one lives
// until it is asked to stop, even before its first message.
const alive = setInterval(() => undefined, 2 ** 30);

const keySaves = new PendingCalls<string | null>();
let running: Promise<{ runtime: Runtime; stopWatching: () => void }> | null = null;
let stopping: Promise<never> | null = null;

/** Has the main process encrypt and write a key (safeStorage is there alone); its refusal reaches the person. */
async function saveKey(name: string, value: string | null): Promise<void> {
  const { id, answer } = keySaves.add();
  post({ type: 'saveKey', id, name, value });
  const error = await answer;
  if (error !== null) throw new ApiError(error);
}

async function start(at: EngineStart) {
  // The driver built for this Electron, found and checked by the main process (app/nativeBinding.ts), loaded here.
  useNativeBinding(at.binding, at.driver);
  // A utility process's stderr is the terminal's by default (docs/api/utility-process.md, stdio), so warnings show there.
  const logger = openLog({ dir: at.logsDir, name: 'engine', makeParents: true }).echoing((l) => process.stderr.write(`${l}\n`), 'warn', 'studio: ');
  redaction = logger.redaction;
  const runtime = await startRuntime(at.dataDir, {
    keyStore: (studio) => relayedKeyStore(at.keys, () => studio.settings, saveKey),
    mediaUrl: (id) => `studio-media://task/${id}`,
    logger,
    folders: { 'Crash dumps': at.crashDumps },
  });
  const stopWatching = watchChanges(
    runtime.studio.store.watch(),
    (change) => post({ type: 'changed', change, paidWorkInFlight: runtime.supervisor.paidWorkInFlight(), keepAwake: runtime.studio.settings.ui.keepAwake }),
    log,
  );
  return { runtime, stopWatching };
}

/** Stops the engine as the loopback host does (a request being sent is let finish, so its id is saved), then exits. */
function stop(): Promise<never> {
  stopping ??= (async () => {
    const engine = await running?.catch(() => null);
    if (engine) {
      engine.stopWatching();
      await engine.runtime.stop();
    }
    clearInterval(alive);
    process.exit(0);
  })();
  return stopping;
}

port.on('message', (event) => {
  const message = event.data as ToEngine;
  switch (message.type) {
    case 'start':
      running = start(message.start);
      running.then(
        () => post({ type: 'ready' }),
        (err: unknown) => {
          log(`could not start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
          post({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
        },
      );
      return;
    case 'request': {
      const { id, request } = message;
      const notStarted = { error: "the studio's engine did not start; quit Take Studio and open it again" };
      const answer = running ? running.then((engine) => answerRequest(engine.runtime, request, log), () => notStarted) : Promise.resolve(notStarted);
      void answer.then((a) => post({ type: 'answer', id, answer: a }));
      return;
    }
    case 'keySaved':
      keySaves.settle(message.id, message.error);
      return;
    case 'renewNow':
      void running?.then((engine) => engine.runtime.supervisor.renewNow(), () => undefined);
      return;
    case 'stop':
      void stop();
      return;
  }
});
