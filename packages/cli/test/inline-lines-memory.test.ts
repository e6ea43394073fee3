/**
 * `tags` and `traces` of a profile whose locations hold many inline lines stay within a small
 * JavaScript heap: the load (`goPprofLoad`'s merge, copying every location) and the traces' node
 * table read the lines from the profile's columns, with no object or key string per line. Before,
 * every line was an object in the merge (~56 bytes), a piece of the builder's location key string
 * (~15 bytes, kept) and a frame object in traces: a 67 MB profile of 9M lines peaked at 1.8 GB
 * (tags) and 2.0 GB (traces) RSS, and this profile of 600,000 lines did not fit a 64 MB heap.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProfileBuilder } from '@profkit/core';
import { serializePprof } from '@profkit/pprof';
import { cliBin, haveCli, repoRoot } from '@profkit/test-utils';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-inline-memory-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Two samples, on a location of 400,000 lines and on one of 200,000 lines above it (100 functions in turn). */
function manyInlineLinesProfile(): Uint8Array {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const fns = Array.from({ length: 100 }, (_, i) => b.internFunction({ name: `f${i}`, filename: 'f.go' }));
  const location = (lines: number, line: number) =>
    b.internLocation({ functionId: fns[0]!, line, inlinedInto: Array.from({ length: lines - 1 }, (_, k) => ({ functionId: fns[(k + 1) % 100]!, line: line + k })) });
  const outer = location(400_000, 1);
  const inner = location(200_000, 2);
  b.addSample([outer], [3n], [{ key: 'thread', str: 't1' }]);
  b.addSample([inner, outer], [2n], [{ key: 'thread', str: 't2' }]);
  return serializePprof(b.build());
}

/** `profkit ARGS` in a node whose old-generation heap is `heapMiB` (a heap out of memory aborts it). */
function profkitInHeap(heapMiB: number, args: string[]) {
  const r = spawnSync(process.execPath, [`--max-old-space-size=${heapMiB}`, cliBin, ...args], { cwd: repoRoot, encoding: 'utf8', maxBuffer: 256 << 20, timeout: 120_000 });
  return { code: r.status, signal: r.signal, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

describe.skipIf(!haveCli('inline-lines memory tests'))('tags and traces of 600,000 inline lines in a 32 MB heap', () => {
  const file = join(tmp, 'inline.pb.gz');
  writeFileSync(file, manyInlineLinesProfile());

  it('tags', () => {
    const r = profkitInHeap(32, ['tags', file, '--quiet']);
    expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
    expect(r.stdout).toMatch(/^ thread: Total 5\.0\n\s+3\.0 \(60\.00%\): t1\n\s+2\.0 \(40\.00%\): t2\n\n$/);
  });

  it('traces', () => {
    const r = profkitInHeap(32, ['traces', file, '--quiet']);
    expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
    const frames = r.stdout.split('\n').filter((l) => / {3}f\d+( \(inline\))?$/.test(l));
    // Every line of every location of both samples, all but each location's outermost inline.
    expect(frames.length).toBe(400_000 + 200_000 + 400_000);
    expect(frames.filter((l) => l.endsWith(' (inline)')).length).toBe(400_000 - 1 + (200_000 - 1) + (400_000 - 1));
  });
});
