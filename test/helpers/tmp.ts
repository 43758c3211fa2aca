import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/** A fresh folder per call, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'studio-test-'));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
