import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The file of a data folder that keeps the machine's id. */
export const MACHINE_ID_FILE = 'machine-id';

const MACHINE_ID = /^[0-9a-f]{32}$/;

/** The machine id file holds something else: said with the file and what to do. */
export class MachineIdUnreadable extends Error {}

/**
 * This machine's id: drawn at random the first time the data folder is used, then kept in it. Two computers may
 * go by one name (the host name is the default), and a process judges another's pid only on the same machine,
 * so the name cannot tell them apart; this id does. Made whole in a file of its own and linked into place (created
 * exclusively where the filesystem has no links), so two processes starting at once agree on one id.
 */
export function machineId(dataDir: string): string {
  const path = join(dataDir, MACHINE_ID_FILE);
  const kept = readKept(path);
  if (kept !== null) return kept;
  const drawn = randomBytes(16).toString('hex');
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, `${drawn}\n`, { mode: 0o600 });
  try {
    if (place(draft, path, drawn)) return drawn;
    const kept = readSettled(path);
    // Something is there that cannot be read as a file: a link to nothing.
    if (kept === null) throw new MachineIdUnreadable(`${path} is a link to a file that does not exist; delete the link and the studio draws a new id`);
    return kept;
  } finally {
    rmSync(draft, { force: true });
  }
}

/** What a filesystem without hard links (exFAT, FAT32, some network shares) answers a link with. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/** Puts the id in place; false when another process put one there first. */
function place(draft: string, path: string, id: string): boolean {
  try {
    linkSync(draft, path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') return false;
    if (!NO_LINKS.has(code)) throw err;
  }
  // No hard links here: created exclusively instead, so still only one process's id is kept.
  try {
    writeFileSync(path, `${id}\n`, { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** The id another process just put in place; created exclusively, its file may be empty for a moment. */
function readSettled(path: string): string | null {
  for (let tries = 0; ; tries++) {
    try {
      return readKept(path);
    } catch (err) {
      if (!(err instanceof MachineIdUnreadable) || tries === 50 || statSync(path).size > 0) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

function readKept(path: string): string | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const id = text.trim();
  if (!MACHINE_ID.test(id)) {
    throw new MachineIdUnreadable(`${path} does not hold a machine id (32 hexadecimal digits); delete the file and the studio draws a new one`);
  }
  return id;
}
