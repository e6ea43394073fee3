/** Whether the external tools of interop tests (go, R, sqlite3, gcc…) are installed. */

import { spawnSync } from 'node:child_process';

/** The path of `tool` on PATH, or undefined. */
export function which(tool: string): string | undefined {
  if (!/^[\w.+-]+$/.test(tool)) throw new Error(`which: not a plain command name: ${JSON.stringify(tool)}`);
  const r = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : undefined;
}

/**
 * Whether `tool` is on PATH; when not, warns (naming `who`, the test suite, and the Debian
 * package `apt` to install) that the tests needing it are skipped.
 */
export function haveTool(tool: string, apt: string, who = 'tests'): boolean {
  if (which(tool)) return true;
  console.warn(`${who}: skipping the tests that need ${tool}: not installed (apt-get install -y ${apt})`);
  return false;
}

/** Whether `go tool pprof` can run (Debian golang-go); warns like `haveTool` when not. */
export function haveGoPprof(who = 'tests'): boolean {
  if (spawnSync('go', ['tool', '-n', 'pprof'], { encoding: 'utf8' }).status === 0) return true;
  console.warn(`${who}: skipping the tests that need \`go tool pprof\`: not available (apt-get install -y golang-go)`);
  return false;
}
