import type { ChangeEvent } from '../main/api/contract.ts';
import {
  crashNotice,
  ENGINE_DOWN,
  howItEnded,
  mayRestart,
  PendingCalls,
  QUITTING,
  STOPPED_MIDWAY,
  type Answer,
  type EngineRequest,
  type EngineStart,
  type FromEngine,
  type ToEngine,
} from './engineProtocol.ts';

/** Electron's UtilityProcess as far as the relay uses it (docs/api/utility-process.md). */
export interface EngineChild {
  postMessage(message: ToEngine): void;
  kill(): boolean;
  readonly pid?: number | undefined;
  on(event: 'exit', listener: (code: number) => void): unknown;
  on(event: 'message', listener: (message: FromEngine) => void): unknown;
}

/** What the engine's changes mean for the machine's sleep (app/power.ts). */
export interface EnginePower {
  paidWorkInFlight: boolean;
  keepAwake: boolean;
}

export interface EngineRelayDeps {
  /** A new engine process (utilityProcess.fork); called at the start and at each restart. */
  fork(): EngineChild;
  /** What the engine starts with, read anew each time: the keys may have changed since. */
  start(): EngineStart;
  /** Encrypts and writes a key the person entered (app/keys.ts); throws words for the person. */
  saveKey(name: string, value: string | null): void;
  changed(change: ChangeEvent, power: EnginePower): void;
  /** The engine process ended unasked: shown to the person; `restarting` false once the limit is reached. */
  crashed(notice: { message: string; detail: string }, restarting: boolean): void;
  log(message: string): void;
  now?: () => number;
}

type State = 'starting' | 'running' | 'stopping' | 'stopped' | 'down';

/**
 * The main process's side of the engine: it forks the engine's utility process, relays requests to it and its
 * answers and changes back, and restarts it when it crashes, a limited number of times. As VS Code does with its
 * utility processes (microsoft/vscode src/vs/platform/utilityProcess/electron-main/utilityProcess.ts), the first
 * message is posted right after the fork, an exit is learnt from the 'exit' event, and a stop is waited for before
 * the process is killed.
 *
 * A call in flight when the engine process ends is answered that it may or may not have happened, never sent
 * again: a paid request it was sending is recovered by the next engine from the task table and its receipt
 * journal (rows of a process that no longer exists are recovered at once), with its request id, so nothing is
 * sent twice. Calls made while it starts again wait for it.
 */
export class EngineRelay {
  private state: State = 'starting';
  private child: EngineChild | null = null;
  /** Settles once the current launch is ready, or once its exit has been dealt with. */
  private launched: Promise<void> = Promise.resolve();
  private exited: Promise<void> = Promise.resolve();
  private readonly calls = new PendingCalls<Answer>();
  private readonly crashes: number[] = [];
  private version = 0;

  constructor(private readonly deps: EngineRelayDeps) {}

  /** Starts the engine; rejects with the engine's own words when it cannot start, and then nothing is restarted. */
  open(): Promise<void> {
    return new Promise((resolve, reject) => this.launch({ resolve, reject }));
  }

  /** Relays one request; the answer is the engine's, or words saying why it was not done. */
  async request(request: EngineRequest): Promise<Answer> {
    while (this.state === 'starting') await this.launched;
    const child = this.child;
    if (this.state !== 'running' || !child) return { error: this.state === 'down' ? ENGINE_DOWN : QUITTING };
    const { id, answer } = this.calls.add();
    child.postMessage({ type: 'request', id, request });
    return answer;
  }

  /** The system suspended or resumed: the engine renews its leases now (app/power.ts). */
  renewNow(): void {
    if (this.state === 'running') this.child?.postMessage({ type: 'renewNow' });
  }

  /** Asks the engine to stop (it lets a request being sent finish, so its id is saved) and waits for its exit. */
  stop(): Promise<void> {
    if (!this.child) {
      this.state = 'stopped';
      return Promise.resolve();
    }
    if (this.state !== 'stopping') {
      this.state = 'stopping';
      this.child.postMessage({ type: 'stop' });
    }
    return this.exited;
  }

  /** Ends an engine that overran its stop, as the app quits anyway; whatever it leaves is recovered at the next start. */
  kill(): void {
    const child = this.child;
    if (!child) return;
    // utilityProcess.kill() sends SIGTERM on POSIX (docs/api/utility-process.md), which an engine stopped by
    // SIGSTOP never acts on, outliving the app; one that overran its stop is ended for sure.
    try {
      if (child.pid !== undefined) return void process.kill(child.pid, 'SIGKILL');
    } catch {
      // Already gone, or not ours to signal: Electron's own kill below.
    }
    child.kill();
  }

  private launch(first?: { resolve(): void; reject(err: Error): void }): void {
    const start = this.deps.start();
    const child = this.deps.fork();
    this.child = child;
    this.state = 'starting';
    let settle!: () => void;
    this.launched = new Promise((resolve) => (settle = resolve));
    let exitDone!: () => void;
    this.exited = new Promise((resolve) => (exitDone = resolve));
    let failure: string | null = null;
    child.on('message', (message: FromEngine) => {
      if (this.child !== child) return;
      if (message.type === 'ready') {
        if (this.state === 'starting') this.state = 'running';
        first?.resolve();
        first = undefined;
        settle();
      } else if (message.type === 'failed') {
        failure = message.message;
        this.deps.log(`the engine could not start: ${message.message}`);
        child.postMessage({ type: 'stop' });
      } else this.receive(child, message);
    });
    child.on('exit', (code: number) => {
      if (this.child === child) {
        this.child = null;
        if (first) {
          // The first start failed: the person is told why (app/startup.ts), and nothing is restarted.
          this.state = 'stopped';
          first.reject(new Error(failure ?? `the engine process stopped as it started (${howItEnded(code)})`));
        } else this.ended(code, failure);
      }
      settle();
      exitDone();
    });
    // Posted at once, as VS Code does: Electron queues it until the process listens (docs/api/parent-port.md).
    child.postMessage({ type: 'start', start });
  }

  private ended(code: number, failure: string | null): void {
    if (this.state === 'stopping' || this.state === 'stopped') {
      this.calls.failAll({ error: QUITTING });
      this.state = 'stopped';
      return;
    }
    const inFlight = this.calls.failAll({ error: STOPPED_MIDWAY });
    const now = (this.deps.now ?? Date.now)();
    let restarting = mayRestart(this.crashes, now);
    this.crashes.push(now);
    let unstartable: string | undefined;
    if (restarting) {
      try {
        this.launch();
      } catch (err) {
        // What it starts with could not be read (settings.json made unreadable meanwhile): there is nothing to start.
        restarting = false;
        unstartable = (err as Error).message;
      }
    }
    if (!restarting) this.state = 'down';
    const next = restarting ? 'starting it again' : `not started again: ${unstartable ?? 'it stopped too often'}`;
    this.deps.log(`the engine process ${howItEnded(code)}${failure ? ` (${failure})` : ''}; ${inFlight} call(s) in flight were answered that it stopped, none sent again; ${next}`);
    this.deps.crashed(crashNotice(code, restarting, unstartable), restarting);
  }

  private receive(child: EngineChild, message: Exclude<FromEngine, { type: 'ready' | 'failed' }>): void {
    switch (message.type) {
      case 'answer':
        this.calls.settle(message.id, message.answer);
        return;
      case 'changed':
        // Numbered here, so the page sees its versions rise across restarts of the engine.
        this.deps.changed({ ...message.change, version: ++this.version }, { paidWorkInFlight: message.paidWorkInFlight, keepAwake: message.keepAwake });
        return;
      case 'saveKey': {
        let error: string | null = null;
        try {
          this.deps.saveKey(message.name, message.value);
        } catch (err) {
          error = (err as Error).message;
        }
        child.postMessage({ type: 'keySaved', id: message.id, error });
        return;
      }
      case 'log':
        this.deps.log(message.message);
        return;
    }
  }
}
