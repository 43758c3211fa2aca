import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { defineConfig } from 'vitest/config';
import full from './vitest.config.ts';

/**
 * `npm run test:fast`: the unit and contract tests, without those that start processes, browsers or PostgreSQL
 * clusters of their own. A test file is left out when it imports node:child_process or playwright-core itself, or
 * imports (itself or through another test helper) one of the helpers that start them; so a new test file is sorted by
 * what it does, not by a list. The store contract tests stay in: they use the one cluster the run starts
 * (test/helpers/postgresSetup.ts).
 */
const STARTERS = ['test/helpers/processes.ts', 'test/helpers/browser.ts', 'test/helpers/pgCluster.ts'];
const SPAWNS = ['node:child_process', 'playwright-core'];

const IMPORT = /(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g;

function importsOf(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) => m[1]!).map((spec) => (spec.startsWith('.') ? normalize(join(dirname(file), spec)) : spec));
}

function usesStarter(file: string, seen: Set<string>): boolean {
  if (seen.has(file)) return false;
  seen.add(file);
  return importsOf(file).some((spec) => STARTERS.includes(spec) || (spec.startsWith('test/') && usesStarter(spec, seen)));
}

function startsSomething(file: string): boolean {
  return importsOf(file).some((spec) => SPAWNS.includes(spec)) || usesStarter(file, new Set());
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return testFiles(path);
    return e.name.endsWith('.test.ts') ? [path] : [];
  });
}

export default defineConfig({
  ...full,
  test: {
    ...full.test,
    include: testFiles('test').filter((file) => !startsSomething(file)),
    outputFile: { json: 'test-results/vitest-fast.json' },
  },
});
