/** The CLI (built, spawned from the repository root, where discovery finds @profkit/perf). */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { haveCli, runCli } from '@profkit/test-utils';
import { fixtures } from './helpers.js';

describe.skipIf(!haveCli('@profkit/perf cli tests'))('profkit with @profkit/perf', () => {
  it('`profkit formats` lists perf-script (read only) from @profkit/perf', () => {
    const r = runCli(['formats', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const perf = (JSON.parse(r.stdout) as { adapters: { name: string; packageName: string; formats: { id: string; read: boolean; write: boolean }[] }[] }).adapters.find((a) => a.name === 'perf');
    expect(perf).toMatchObject({ packageName: '@profkit/perf', formats: [{ id: 'perf-script', read: true, write: false }] });
  });
  it('detects perf script text by content and reports it with inlined frames and their lines', () => {
    const file = join(fixtures, 'inline-dwarf-srcline.txt');
    expect(runCli(['detect', file]).stdout).toContain('perf-script (adapter perf');
    const top = runCli(['top', file, '--by', 'line']);
    expect(top.code, top.stderr).toBe(0);
    expect(top.stdout).toContain('File: inl');
    expect(top.stdout).toMatch(/2500us .* leaf inl\.c:2 \(inline\)/);
  });
});
