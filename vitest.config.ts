import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // uWebSockets.js and better-sqlite3 are native: one process per file keeps them apart
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
