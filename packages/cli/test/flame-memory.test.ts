/**
 * `flame` of a profile whose locations hold many inline lines stays within a small JavaScript
 * heap: every one of the 600,000 inline frames of `manyInlineLinesProfile` is drawn, and the
 * drawn frames are columns of the cut (`FlameFrames`: name id, caller, value, self) written
 * straight into the page's JSON. Before, each was a `FlameNode` (object, callee array, two
 * bigints: ~270 bytes) kept for the whole render, then two Map entries and four array numbers:
 * 487 MB peak RSS for this 1.9 MB file (`convert`: 100 MB), a heap of ~170 MB.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { haveCli } from '@profkit/test-utils';
import { manyInlineLinesProfile, profkitInHeap } from './many-inline-lines.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-flame-memory-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.skipIf(!haveCli('flame memory tests'))('flame of 600,000 inline lines in a 32 MB heap', () => {
  it('draws every inline frame into the HTML page', () => {
    const file = join(tmp, 'inline.pb.gz');
    const page = join(tmp, 'inline.html');
    writeFileSync(file, manyInlineLinesProfile());
    // 600,001 levels: past the default maxFlameDepth (65,536), raised to test the memory.
    const r = profkitInHeap(32, ['flame', file, '-o', page, '--quiet', '--limit', 'maxFlameDepth=700000']);
    expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
    const html = readFileSync(page, 'utf8');
    const json = /<script type="application\/json" id="flame-data">(.*)<\/script>/.exec(html)![1]!;
    const data = JSON.parse(json) as { names: string[]; frames: number[] };
    // The root, the outer location's 400,000 frames (both samples), the inner's 200,000 (the second).
    const frames = data.frames.length / 4;
    expect(frames).toBe(1 + 400_000 + 200_000);
    const value = (f: number) => data.frames[4 * f + 1];
    const self = (f: number) => data.frames[4 * f + 2];
    const parent = (f: number) => data.frames[4 * f + 3];
    const name = (f: number) => data.names[data.frames[4 * f]!];
    expect([name(0), value(0), self(0), parent(0)]).toEqual(['all', 5, 0, -1]);
    // A chain: each frame the callee of the one before, outermost inline line first.
    for (let f = 1; f < frames; f++) expect(parent(f)).toBe(f - 1);
    expect([name(1), name(2), name(400_000), name(400_001), name(600_000)]).toEqual(['f99', 'f98', 'f0', 'f99', 'f0']);
    expect([value(400_000), self(400_000), value(400_001), value(600_000), self(600_000)]).toEqual([5, 3, 2, 2, 2]);
  });
});
