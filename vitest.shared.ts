import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** Settings every package's vitest config starts from. */
export const sharedTestConfig = defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    setupFiles: [fileURLToPath(new URL('./vitest.setup.ts', import.meta.url))],
    reporters: ['default'],
  },
});
