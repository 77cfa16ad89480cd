import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // LangGraph's checkpoint validation suite calls describe / beforeAll / it as globals.
    globals: true,
  },
});
