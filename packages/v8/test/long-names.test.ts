/**
 * Function names and URLs longer than V8 hashes (16,383 UTF-16 units: such strings hash by their
 * length alone): the readers key call frames, frames and interned strings through core's
 * StringKeyedMap, so many distinct long names of one length are not one hash chain.
 */

import { describe, expect, it } from 'vitest';
import { readCpuProfileBytes, readCpuProfileChunks, readHeapProfileBytes, readHeapProfileChunks } from '../src/index.js';

// 1,200 names of 16,400 characters (just past V8's 16,383): a few seconds here; with Maps each
// lookup compares against every name of the chain (2,000 names of 20,006: 147 s).
const names = Array.from({ length: 1200 }, (_, i) => 'n'.repeat(16_400) + String(i).padStart(6, '0'));
const frame = (i: number) => ({ functionName: names[i]!, scriptId: '1', url: 'file:///app.js', lineNumber: 0, columnNumber: 0 });
const encoder = new TextEncoder();

/** A root with a child for each name, each a distinct long-named function, one sample in each. */
function cpuProfile(): Uint8Array {
  const nodes = [{ id: 1, callFrame: { ...frame(0), functionName: '(root)' }, children: names.map((_, i) => i + 2) }, ...names.map((_, i) => ({ id: i + 2, callFrame: frame(i), hitCount: 1 }))];
  return encoder.encode(JSON.stringify({ nodes, startTime: 0, endTime: 1200, samples: names.map((_, i) => i + 2), timeDeltas: names.map(() => 1) }));
}

function heapProfile(): Uint8Array {
  const head = { callFrame: { ...frame(0), functionName: '(root)' }, selfSize: 0, id: 1, children: names.map((_, i) => ({ callFrame: frame(i), selfSize: 64, id: i + 2, children: [] })) };
  return encoder.encode(JSON.stringify({ head, samples: names.map((_, i) => ({ size: 64, nodeId: i + 2, ordinal: i + 1 })) }));
}

const longNames = (fns: ArrayLike<string>) => Array.from(fns).filter((n) => n.length > 16_400);

describe('long function names', () => {
  it('.cpuprofile: 1,200 distinct long names of one length are 1,200 functions (whole and streamed readers)', async () => {
    const bytes = cpuProfile();
    for (const r of [readCpuProfileBytes(bytes), await readCpuProfileChunks([bytes])]) {
      expect(longNames(r.profile.functions.name)).toEqual(names);
      expect(r.profile.samples.value.length).toBe(1200);
    }
    // With Maps: 147 s (.cpuprofile) and 165 s (.heapprofile) on a busy machine for 2,000 names of
    // 20,006, over 15 s each for these; now 1.4 s each.
    // The timeout is a bound, not a measurement.
  }, 10_000);

  it('.heapprofile: the same (whole and streamed readers)', async () => {
    const bytes = heapProfile();
    for (const r of [readHeapProfileBytes(bytes), await readHeapProfileChunks([bytes])]) {
      expect(longNames(r.profile.functions.name)).toEqual(names);
    }
  }, 10_000);
});
