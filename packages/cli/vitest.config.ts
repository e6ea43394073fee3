import { defineProject, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.js';

// The CommonJS entry's modules (src/*.cts, written with import/export) are TypeScript too.
export default mergeConfig(sharedTestConfig, defineProject({ oxc: { include: /\.(m?ts|cts|[jt]sx)$/ }, test: { name: '@profkit/cli' } }));
