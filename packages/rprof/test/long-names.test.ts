/**
 * Names longer than V8 hashes (16,383 UTF-16 units: such strings hash by their length alone): a
 * folded file of 2,000 distinct 20,000-character names of one length (a 50 KB gzip) made the
 * reader's name index one hash chain, 67 s of comparisons (CLI `info`; 42 s for this test); with
 * core's StringKeyedMap it reads in well under a second.
 */

import { describe, expect, it } from 'vitest';
import { readFoldedChunks, readRprofBytes } from '../src/index.js';

const encoder = new TextEncoder();
/** 2,000 names of 20,006 characters that differ only in their last 6. */
const names = Array.from({ length: 2000 }, (_, i) => 'x'.repeat(20_000) + String(i).padStart(6, '0'));

describe('long names', () => {
  it('folded: 2,000 distinct long names of one length are 2,000 functions', async () => {
    const { profile } = await readFoldedChunks([encoder.encode(names.map((n) => `main;${n} 1\n`).join(''))]);
    expect(profile.samples.value.length).toBe(2000);
    // (Not a Set of the names: that is the slow map this test is about.)
    expect(profile.functions.name.length).toBe(2001);
    expect(profile.functions.name.indexOf(names[1999]!)).toBe(2000);
    // Under a second with the fix, 42 s without: a bound, not a measurement.
  }, 20_000);

  it('Rprof: the same names, and a name used again is the same function', async () => {
    const text = 'sample.interval=20000\n' + names.map((n) => `"${n}" "main"\n`).join('') + `"${names[7]}" "main"\n`;
    const { profile } = await readRprofBytes(encoder.encode(text));
    expect(profile.functions.name.filter((n) => n.length > 20_000).length).toBe(2000);
    expect(profile.samples.value.length).toBe(2001);
    // The repeated line has sample 7's stack.
    const { offsets, location_id } = profile.samples.locations;
    const stackOf = (i: number) => [...location_id.subarray(offsets[i]!, offsets[i + 1]!)];
    expect(stackOf(2000)).toEqual(stackOf(7));
    expect(stackOf(2000)).not.toEqual(stackOf(8));
  });
});
