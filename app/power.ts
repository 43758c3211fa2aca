/** The parts of Electron's powerMonitor and powerSaveBlocker this module uses, injected. */
export interface PowerEvents {
  on(event: 'suspend' | 'resume', listener: () => void): unknown;
}
export interface SleepBlocker {
  start(type: 'prevent-app-suspension'): number;
  stop(id: number): void;
}

/**
 * On resume the engine renews its leases at once, before anything can judge them expired (the sleep
 * detector would notice too, on its next tick; the event makes it immediate). While paid work is in flight,
 * and the person asked for it, the machine is kept from sleeping.
 */
export function wirePower(
  power: PowerEvents,
  blocker: SleepBlocker,
  engine: { renewNow(): void; paidWorkInFlight(): boolean },
  keepAwake: () => boolean,
): { update(): void } {
  let blockId: number | null = null;
  power.on('resume', () => engine.renewNow());
  power.on('suspend', () => engine.renewNow());
  const update = () => {
    const want = keepAwake() && engine.paidWorkInFlight();
    if (want && blockId === null) blockId = blocker.start('prevent-app-suspension');
    if (!want && blockId !== null) {
      blocker.stop(blockId);
      blockId = null;
    }
  };
  return { update };
}
