import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { MACHINE_ID_FILE, machineId } from '../main/config/machineId.ts';
import { tempDir } from './helpers/tmp.ts';

// A filesystem without hard links (exFAT, FAT32, some network shares) answers link() with EPERM. A loop device
// formatted as exFAT needs root and a FUSE driver, which a test machine may lack, so only link() is replaced here.
vi.mock('node:fs', async (original) => {
  const fs = await original<typeof import('node:fs')>();
  const refused = () => {
    throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
  };
  return { ...fs, default: { ...fs, linkSync: refused }, linkSync: refused };
});

describe('the machine id on a filesystem without hard links', () => {
  it('is drawn once and kept, as on any other folder', () => {
    const dir = tempDir();
    const id = machineId(dir);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(readFileSync(join(dir, MACHINE_ID_FILE), 'utf8').trim()).toBe(id);
    expect(machineId(dir)).toBe(id);
  });
});
