import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One throwaway PostgreSQL cluster for the run; each test file makes its own databases in it.
    globalSetup: ['test/helpers/postgresSetup.ts'],
    // Crash tests run real worker processes; the machines have two cores.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // A poll waits for what runs in the background (a save reaching another tab, a page redrawn), which on two busy
    // cores can take seconds; a time the product promises is asserted with a timeout of its own.
    expect: { poll: { timeout: 10_000 } },
    // The JSON report is what .ci/run reads for its closing "N passed, M failed" line.
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
  },
});
