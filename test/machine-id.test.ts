import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bootIdentity } from '../main/engine/bootIdentity.ts';
import { machineId, MACHINE_ID_FILE } from '../main/config/machineId.ts';
import { ENQUEUE } from './helpers/cli.ts';
import { runStudio } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

describe("a machine's id, kept in its data folder", () => {
  it('is drawn once and read back after; another folder (another computer) has another', () => {
    const dir = tempDir();
    const id = machineId(dir);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(machineId(dir)).toBe(id);
    expect(readFileSync(join(dir, MACHINE_ID_FILE), 'utf8').trim()).toBe(id);
    expect(machineId(tempDir())).not.toBe(id);
  });

  it('is one id for studio processes starting at once in a new folder', async () => {
    const dir = tempDir();
    const runs = await Promise.all(Array.from({ length: 4 }, (_, i) => runStudio(dir, [...ENQUEUE, '--input', JSON.stringify({ prompt: `fox ${i}` })])));
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const id = readFileSync(join(dir, MACHINE_ID_FILE), 'utf8').trim();
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(machineId(dir)).toBe(id);
  });

  it('that is damaged is refused with the file and what to do, before anything is written', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, MACHINE_ID_FILE), 'not an id\n');
    const run = await runStudio(dir, [...ENQUEUE, '--input', '{"prompt":"a fox"}']);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(`studio: ${join(dir, MACHINE_ID_FILE)} does not hold a machine id (32 hexadecimal digits); delete the file and the studio draws a new one`);
    expect(existsSync(join(dir, 'studio.db'))).toBe(false);
  });

  it('that is a link to nothing is refused in words, not taken as no id', async () => {
    const dir = tempDir();
    symlinkSync(join(dir, 'gone'), join(dir, MACHINE_ID_FILE));
    expect(() => machineId(dir)).toThrow(/is a link to a file that does not exist; delete the link/);
    const run = await runStudio(dir, [...ENQUEUE, '--input', '{"prompt":"a fox"}']);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(`studio: ${join(dir, MACHINE_ID_FILE)} is a link to a file that does not exist; delete the link and the studio draws a new id`);
    expect(existsSync(join(dir, 'studio.db'))).toBe(false);
  });
});

describe('the boot a pid belongs to', () => {
  it.runIf(process.platform === 'linux')("is the kernel's boot and this process space, the same for every process of them", () => {
    const here = `${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()} ${readlinkSync('/proc/self/ns/pid')}`;
    expect(bootIdentity()).toBe(here);
    const read = `import('${new URL('../main/engine/bootIdentity.ts', import.meta.url).href}').then((m) => process.stdout.write(String(m.bootIdentity())))`;
    const env = { ...process.env, STUDIO_BOOT_ID: '' };
    expect(execFileSync(process.execPath, ['--import', 'tsx', '-e', read], { encoding: 'utf8', env })).toBe(here);
  });
});
