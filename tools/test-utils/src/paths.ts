/**
 * Where things are: the repository root, and the public fixtures in `../shared/fixtures` beside
 * the clone (or `$PROFKIT_SHARED/fixtures`), which are never copied into the repository.
 */

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is `tools/test-utils/{src,dist}/paths`). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The shared folder: `$PROFKIT_SHARED`, or `../shared` beside the clone. */
export function sharedDir(): string {
  return process.env.PROFKIT_SHARED ?? resolve(repoRoot, '../shared');
}

/** The shared public fixtures: `<shared>/fixtures`. */
export function sharedFixturesDir(): string {
  return join(sharedDir(), 'fixtures');
}

/** The path of `rel` under the shared fixtures. */
export function sharedFixturePath(rel: string): string {
  return join(sharedFixturesDir(), rel);
}

/** The bytes of the shared fixture `rel`. */
export function readSharedFixture(rel: string): Uint8Array {
  return new Uint8Array(readFileSync(sharedFixturePath(rel)));
}

/**
 * Whether the shared fixtures (or `rel` under them) are present; when absent, warns once with
 * `who` (the test suite), the missing path and what is skipped, for `describe.skipIf(!…)`.
 */
export function haveSharedFixtures(who: string, rel = '', skipped = 'the fixture tests are skipped'): boolean {
  const path = rel === '' ? sharedFixturesDir() : sharedFixturePath(rel);
  if (existsSync(path)) return true;
  console.warn(`${who}: shared fixtures not found at ${path} (set PROFKIT_SHARED); ${skipped}`);
  return false;
}
