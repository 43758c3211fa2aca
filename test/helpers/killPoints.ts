import type { StopPoint } from '../../main/engine/stopPoints.ts';
import type { Status } from '../../main/domain/tasks/model.ts';

/** Each boundary of the executor a worker is killed at, what its task ends as once a worker runs again, and how many charges it costs. */
export const KILL_POINTS: [StopPoint, Status, number][] = [
  ['before-mark', 'SUCCEEDED', 1],
  ['after-mark', 'OUTCOME_UNKNOWN', 0],
  // The provider named the request in its headers before the kill: the journaled id is recorded and polled.
  ['after-send', 'SUCCEEDED', 1],
  ['after-record', 'SUCCEEDED', 1],
  ['mid-poll', 'SUCCEEDED', 1],
];
