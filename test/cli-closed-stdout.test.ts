import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cli } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';

const CLI = fileURLToPath(new URL('../bin/studio.mjs', import.meta.url));

/** Runs the CLI with its output read by no one (`studio estimate P | head` once head has exited). */
function withClosedOutput(dir: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, '--data', dir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
}

describe('a command whose output is closed early', () => {
  it('ends quietly with its own exit status, for every command that prints', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'sb.json'), JSON.stringify({ scenes: [{ id: 'a', imagePrompt: 'a red fox', duration: 2 }, { id: 'b', imagePrompt: 'an owl', duration: 2 }] }));
    expect((await cli(dir, 'storyboard', 'create', 'P', '--file', join(dir, 'sb.json'))).code).toBe(0);
    expect((await cli(dir, 'generate', 'P')).code).toBe(0);
    for (const args of [['estimate', 'P'], ['tasks'], ['storyboard', 'show', 'P', '--json']]) {
      const { code, stderr } = await withClosedOutput(dir, args);
      expect(stderr, args.join(' ')).not.toContain('EPIPE');
      expect(code, args.join(' ')).toBe(0);
    }
  });
});
