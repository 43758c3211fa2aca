import { describe, expect, it } from 'vitest';
import { ENQUEUE } from './helpers/cli.ts';
import { runStudio } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

describe('a new data folder opened by several processes at once', () => {
  it('is set up once: every process opens it, none trips over another\'s migration', async () => {
    const dataDir = tempDir();
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => runStudio(dataDir, [...ENQUEUE, '--input', JSON.stringify({ prompt: `fox ${i}` })])),
    );
    expect(runs.map((r) => [r.code, r.stderr])).toEqual(runs.map(() => [0, '']));
  });
});
