import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { checkCall, IpcRefused } from '../app/ipcValidation.ts';
import { ApiError } from '../main/api/studioService.ts';
import { openRuntime } from '../main/runtime.ts';
import { tempDir } from './helpers/tmp.ts';

const page = { url: 'app://studio/index.html', isMainFrame: true };

describe('saveTeam over IPC', () => {
  it('takes an address and a machine name, each text or null', () => {
    expect(() => checkCall('saveTeam', [{ databaseUrl: 'postgres://ann:s3cret@db/studio', machineName: 'studio-a' }], page)).not.toThrow();
    expect(() => checkCall('saveTeam', [{ databaseUrl: null }], page)).not.toThrow();
  });

  it.each([
    ['no change', []],
    ['a field it does not take', [{ databaseUrl: 'postgres://db/studio', keys: 'x' }]],
    ['a number for an address', [{ databaseUrl: 5432 }]],
    ['an address of 3,000 characters', [{ databaseUrl: `postgres://db/${'x'.repeat(3_000)}` }]],
    ['a list', [['postgres://db/studio']]],
  ])('refuses %s before it reaches the engine', (_name, args) => {
    expect(() => checkCall('saveTeam', args, page)).toThrow(IpcRefused);
  });
});

describe('the team settings of a studio (embedded store)', () => {
  it('show the store in use and save the address and name for the next start, never giving the password back', async () => {
    const dataDir = tempDir();
    const runtime = await openRuntime(dataDir, { mediaUrl: (id) => `/media/${id}` });
    onTestFinished(() => runtime.stop());
    const api = runtime.service;
    expect((await api.getSettings()).team).toEqual({
      store: { kind: 'embedded', where: join(dataDir, 'studio.db') },
      storeFrom: null,
      databaseUrl: null,
      machineName: runtime.studio.machine,
      savedMachineName: null,
      machineNameFromEnvironment: false,
      mediaDir: null,
      savedMediaDir: null,
    });

    const saved = await api.saveTeam({ databaseUrl: ' postgres://ann:s3cret@db.example:5432/studio ', machineName: 'studio-a' });
    expect(saved.team).toMatchObject({ store: { kind: 'embedded' }, databaseUrl: 'postgres://ann@db.example:5432/studio', savedMachineName: 'studio-a' });
    expect(JSON.stringify(await api.getSettings())).not.toContain('s3cret');
    expect(JSON.parse(readFileSync(join(dataDir, 'settings.json'), 'utf8')).team).toEqual({ databaseUrl: 'postgres://ann:s3cret@db.example:5432/studio', machineName: 'studio-a' });

    await expect(api.saveTeam({ databaseUrl: 'mysql://db/studio' })).rejects.toThrow(new ApiError('"mysql://db/studio" is not a PostgreSQL address; write it like postgres://user:password@host:5432/studio'));
    await expect(api.saveTeam({ machineName: 'studio:a' })).rejects.toThrow(/"studio:a" cannot name a machine/);
    await expect(api.saveTeam({ databaseUrl: 'postgres://db/other', machineName: 'no way' })).rejects.toThrow(ApiError);
    // A refused change writes nothing, not even its good half.
    expect(JSON.parse(readFileSync(join(dataDir, 'settings.json'), 'utf8')).team.databaseUrl).toBe('postgres://ann:s3cret@db.example:5432/studio');

    await api.saveTeam({ databaseUrl: null, machineName: null });
    expect(JSON.parse(readFileSync(join(dataDir, 'settings.json'), 'utf8')).team).toBeUndefined();
  });
});
