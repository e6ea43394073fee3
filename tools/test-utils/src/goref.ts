/**
 * goref, the reference oracle over google/pprof's own Go `profile` package
 * (`<shared>/tools/goref`): `$PROFKIT_GOREF`, or built once per cache name with its build.sh.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, sharedDir } from './paths.js';

const PPROF_SOURCES = '/usr/share/gocode/src/github.com/google/pprof/profile';
const APT = 'apt-get install -y golang-go golang-github-google-pprof-dev';

/** Why goref cannot be used (for the skip message), or undefined when it can. */
export function gorefMissing(): string | undefined {
  const env = process.env.PROFKIT_GOREF;
  if (env) return existsSync(env) ? undefined : `PROFKIT_GOREF=${env} does not exist`;
  if (spawnSync('sh', ['-c', 'command -v go'], { stdio: 'ignore' }).status !== 0) return `go is not installed (${APT})`;
  if (!existsSync(PPROF_SOURCES)) return `google/pprof sources are absent (${APT})`;
  const build = join(sharedDir(), 'tools', 'goref', 'build.sh');
  if (!existsSync(build)) return `${build} is absent`;
  return undefined;
}

/**
 * The goref binary: `$PROFKIT_GOREF`, or built (once) into `node_modules/.cache/<cacheName>`.
 * Check `gorefMissing()` first.
 */
export function gorefBinary(cacheName = 'profkit-goref'): string {
  if (process.env.PROFKIT_GOREF) return process.env.PROFKIT_GOREF;
  const dir = join(repoRoot, 'node_modules', '.cache', cacheName);
  const out = join(dir, 'goref');
  if (!existsSync(out)) {
    mkdirSync(dir, { recursive: true });
    execFileSync(join(sharedDir(), 'tools', 'goref', 'build.sh'), [out], { env: { ...process.env, GOCACHE: join(dir, 'gocache') }, stdio: 'pipe' });
  }
  return out;
}
