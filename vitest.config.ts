import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // .mts: LangGraph's own tests, ported as they are (test/PORTED.md).
    include: ['test/**/*.test.ts', 'test/**/*.test.mts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // LangGraph's checkpoint validation suite calls describe / beforeAll / it as globals.
    globals: true,
  },
});
