import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { haveSharedFixtures, readSharedFixture, repoRoot, sharedFixturePath, thrownBy, which } from '@profkit/test-utils';

const here = dirname(fileURLToPath(import.meta.url));
export { repoRoot };

export const pprofTestdata = sharedFixturePath('pprof/profile/testdata');
export const haveShared = haveSharedFixtures('gperftools-heap tests', 'pprof/profile/testdata');

export const sharedFixture = readSharedFixture;

export function localFixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(join(here, 'fixtures', name)));
}

export const localFixturesDir = join(here, 'fixtures');

export function bytes(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

/** Whether a command exists on PATH. */
export function haveCommand(cmd: string): boolean {
  return which(cmd) !== undefined;
}

/** Runs `fn` and returns the ProfkitError it throws (fails the test when nothing is thrown). */
export function catchError(fn: () => unknown): { code: string; message: string; detail: Record<string, unknown> } {
  return thrownBy(fn);
}
