/**
 * docs/cli.md's "`go tool pprof` equivalents" table names every output mode, option and
 * environment variable `go tool pprof -h` lists (issue 18: none missing, or why not).
 */

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { goAvailable, repoRoot } from './views-helpers.js';

describe.skipIf(!goAvailable)('docs/cli.md pprof equivalents table', () => {
  it('names every flag and environment variable of go tool pprof -h', () => {
    const help = spawnSync('go', ['tool', 'pprof', '-h'], { encoding: 'utf8', timeout: 120_000 });
    const text = help.stdout + help.stderr;
    // Flag lines: indented `-name` (a description follows); environment lines: indented `PPROF_NAME`.
    const flags = [...text.matchAll(/^\s+-([a-z_]+)\b/gm)].map((m) => m[1]!);
    const envs = [...text.matchAll(/^\s+(PPROF_[A-Z_]+)\b/gm)].map((m) => m[1]!);
    expect(flags).toContain('callgrind');
    expect(flags).toContain('tls_ca');
    expect(envs).toContain('PPROF_BINARY_PATH');
    const doc = readFileSync(join(repoRoot, 'docs/cli.md'), 'utf8');
    const start = doc.indexOf('### `go tool pprof` equivalents');
    expect(start).toBeGreaterThan(-1);
    const end = doc.indexOf('\n### ', start + 1);
    // The pprof column: the first cell of each row.
    const pprofColumn = doc
      .slice(start, end)
      .split('\n')
      .filter((l) => l.startsWith('| '))
      .map((l) => l.split(' | ')[0]!)
      .join(' ');
    // `-inuse_space`, … : the legacy sample-type shorthands are one row ("…").
    const shorthand = new Set(['inuse_objects', 'alloc_space', 'alloc_objects', 'total_delay', 'contentions']);
    const missing = [
      ...flags.filter((f) => !shorthand.has(f) && !new RegExp('`-' + f + '(?:[`=]|\\b)').test(pprofColumn)).map((f) => '-' + f),
      ...envs.filter((e) => !pprofColumn.includes('`' + e + '`')),
    ];
    expect(missing).toEqual([]);
  });
});
