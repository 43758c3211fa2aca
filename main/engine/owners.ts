import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { bootIdentity } from './bootIdentity.ts';

export interface OwnerIdentity {
  id: string;
  /** The machine's name: a label for people (the computer's, unless the person chose one for team mode). */
  hostname: string;
  /** The machine's id, kept in its data folder (see config/machineId.ts): two computers may share a name, never this. */
  machine: string;
  /** The running system its pid belongs to (see bootIdentity.ts); null when it cannot be read. */
  boot: string | null;
  pid: number;
}

/**
 * This process as a lease owner on the machine `machine`. Only owners registered with this same machine id and
 * this same boot are judged by their pid; see Supervisor.register. Without a kept id the process is a machine of
 * its own: it judges no other process by pid, only by its leases.
 */
export function newOwner(name: string = hostname(), machine: string = randomBytes(16).toString('hex'), boot: string | null = bootIdentity()): OwnerIdentity {
  return { id: `${name}:${process.pid}:${randomBytes(4).toString('hex')}`, hostname: name, machine, boot, pid: process.pid };
}

/** True unless the process is certainly gone (the same check a part file's writer is judged by). A reused pid only delays recovery to the lease's end. */
export { alive as processAlive } from '../media/staleParts.ts';
