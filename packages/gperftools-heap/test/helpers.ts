import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';

const here = dirname(fileURLToPath(import.meta.url));
/** The repository root (packages/gperftools-heap/test/../../..). */
export const repoRoot = resolve(here, '../../..');

/** `../shared/fixtures` beside the clone, or `$PROFKIT_SHARED/fixtures`. */
export const sharedFixturesDir = process.env.PROFKIT_SHARED ? join(process.env.PROFKIT_SHARED, 'fixtures') : resolve(repoRoot, '../shared/fixtures');
export const pprofTestdata = join(sharedFixturesDir, 'pprof/profile/testdata');
export const haveShared = existsSync(pprofTestdata);
if (!haveShared) console.warn(`gperftools-heap tests: shared fixtures missing at ${pprofTestdata}; fixture tests are skipped`);

export function sharedFixture(rel: string): Uint8Array {
  return new Uint8Array(readFileSync(join(sharedFixturesDir, rel)));
}

export function localFixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(join(here, 'fixtures', name)));
}

export const localFixturesDir = join(here, 'fixtures');

export function bytes(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

/** Whether a command exists on PATH. */
export function haveCommand(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).status === 0;
}

/** Runs `fn` and returns the ProfkitError it throws (fails the test when nothing is thrown). */
export function catchError(fn: () => unknown): { code: string; message: string; detail: Record<string, unknown> } {
  try {
    fn();
  } catch (e) {
    return e as { code: string; message: string; detail: Record<string, unknown> };
  }
  throw new Error('expected an error, none was thrown');
}
