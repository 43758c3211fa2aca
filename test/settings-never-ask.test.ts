import { describe, expect, it } from 'vitest';
import { openRuntime } from '../main/runtime.ts';
import { tempDir } from './helpers/tmp.ts';

async function confirmAboveAfterRestart(dataDir: string, patch: { confirmAbove: number | null }): Promise<number | null> {
  const first = await openRuntime(dataDir, { mediaUrl: (id) => `/media/${id}` });
  await first.service.saveSettings(patch);
  await first.stop();
  const again = await openRuntime(dataDir, { mediaUrl: (id) => `/media/${id}` });
  try {
    return (await again.service.getSettings()).confirmAbove;
  } finally {
    await again.stop();
  }
}

describe('the amount above which Generate asks first', () => {
  it('is 5 until it is set', async () => {
    const runtime = await openRuntime(tempDir(), { mediaUrl: (id) => `/media/${id}` });
    expect((await runtime.service.getSettings()).confirmAbove).toBe(5);
    await runtime.stop();
  });

  it('stays "never ask" after a restart once a person chose it', async () => {
    expect(await confirmAboveAfterRestart(tempDir(), { confirmAbove: null })).toBeNull();
  });

  it('keeps an amount set, 0 included', async () => {
    expect(await confirmAboveAfterRestart(tempDir(), { confirmAbove: 0 })).toBe(0);
  });
});
