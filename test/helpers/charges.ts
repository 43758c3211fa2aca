import type { RunningSimulator } from '../../main/simulator/server.ts';

/** The task a charge was for, from the idempotency key the studio sent with it (studio-DATABASE-task-ID-..., or studio-task-ID-... before databases had ids). */
export const taskOfKey = (key: string | null | undefined) => Number(/^studio-(?:[0-9a-f]{32}-)?task-(\d+)-/.exec(key ?? '')?.[1]);

/** What the simulator charged for one task. */
export const chargesOf = (sim: RunningSimulator, id: number) => sim.charges.filter((c) => taskOfKey(c.idempotencyKey) === id);
