/**
 * `tags` and `traces` of a profile whose locations hold many inline lines stay within a small
 * JavaScript heap: the load (`goPprofLoad`'s merge, copying every location) and the traces' node
 * table read the lines from the profile's columns, with no object or key string per line. Before,
 * every line was an object in the merge (~56 bytes), a piece of the builder's location key string
 * (~15 bytes, kept) and a frame object in traces: a 67 MB profile of 9M lines peaked at 1.8 GB
 * (tags) and 2.0 GB (traces) RSS, and this profile of 600,000 lines did not fit a 64 MB heap.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { haveCli } from '@profkit/test-utils';
import { manyInlineLinesProfile, profkitInHeap } from './many-inline-lines.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-inline-memory-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

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
