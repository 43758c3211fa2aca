import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';

export interface OwnerIdentity {
  id: string;
  hostname: string;
  pid: number;
}

export function newOwner(): OwnerIdentity {
  const host = hostname();
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
