import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';

export interface OwnerIdentity {
  id: string;
  hostname: string;
  pid: number;
}

/**
 * This process as a lease owner: `host` is the machine's name (the computer's, unless the person chose one for
 * team mode). Only owners of this machine's name are judged by their pid; see Supervisor.register.
 */
export function newOwner(host: string = hostname()): OwnerIdentity {
  return { id: `${host}:${process.pid}:${randomBytes(4).toString('hex')}`, hostname: host, pid: process.pid };
}

/** True unless the process is certainly gone. A reused pid only delays recovery to the lease's end. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
