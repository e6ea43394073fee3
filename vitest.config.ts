import { defineConfig } from 'vitest/config';

// `npm run test:fast` runs every package's tests in one vitest process.
export default defineConfig({
  test: {
    projects: ['packages/*', 'tools/*'],
  },
});
