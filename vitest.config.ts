import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'all', include: ['test/**/*.test.ts'] } },
      // The workspace tests again with Node's lstat instead of the compiled one (src/world/lstatNames.ts);
      // test/native/ compares the two itself.
      { extends: true, test: { name: 'node-lstat', include: ['test/world/**/*.test.ts'], env: { FORKPOINT_NATIVE: '0' } } },
    ],
  },
})
