import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { coreVersion } from '../src/index.js';

describe('coreVersion', () => {
  it('is the version in package.json (src/version.ts must be updated with it)', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(coreVersion()).toBe(pkg.version);
  });
});
