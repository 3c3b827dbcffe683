import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-tls.ts', 'test/support/global-database.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file gets its own database; files run in parallel on the machine's cores.
    pool: 'forks',
    // At least two files at once: vitest's default (cores less one) runs a 2-core machine's files
    // one by one, and most files wait on PostgreSQL, a browser or a timer more than on a core.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
