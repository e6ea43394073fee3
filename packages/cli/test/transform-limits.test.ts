/**
 * `--limit` reaches transforms: `profkit top --accounting r` (the r-accounting transform of
 * @profkit/rprof) builds a table of R's entries bounded by `maxTableEntries`, which the command
 * line must be able to lower (and raise), as it does for readers.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { profkit } from './views-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-transform-limits-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** An Rprof file of `functions` distinct functions, one sample each under a common caller `main`. */
function rprofWithFunctions(functions: number): string {
  const lines = ['sample.interval=20000'];
  for (let i = 0; i < functions; i++) lines.push(`"f${i}" "main" `);
  const file = join(tmp, `functions-${functions}.out`);
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

describe('profkit top --accounting r honours --limit maxTableEntries', () => {
  const distinct = 40 + 1; // f0..f39 and main
  const file = rprofWithFunctions(40);

  it('fails with PROFKIT_E_LIMIT naming the option when the limit is below the distinct entries', async () => {
    const r = await profkit(['top', file, '--accounting', 'r', '--limit', `maxTableEntries=${distinct - 1}`]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/\(41\) exceeds the limit of 40 \(raise it with the option limits\.maxTableEntries\) \[PROFKIT_E_LIMIT\]/);
  });

  it('passes at exactly the distinct entries, and without the option', async () => {
    for (const extra of [['--limit', `maxTableEntries=${distinct}`], []]) {
      const r = await profkit(['top', file, '--accounting', 'r', '--json', ...extra]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const doc = JSON.parse(r.stdout) as { entries: { name: string }[] };
      expect(doc.entries).toHaveLength(distinct);
    }
  });
});
