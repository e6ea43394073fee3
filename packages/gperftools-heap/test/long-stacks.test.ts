/**
 * Heap rows whose address text is longer than V8 hashes (16,383 UTF-16 units: such strings hash
 * by their length alone). The reader shares the stack of rows with equal address text through a
 * map of those texts: 1,500 distinct rows of 2,501 addresses (a 45 KB gzip, 26 MB of text) made
 * it one hash chain, 30.7 s for `profkit info`; with core's StringKeyedMap, 1.7 s.
 */
import { describe, expect, it } from 'vitest';
import { sampleCount, stackOf } from '@profkit/core/node';
import { readLegacy } from '../src/node.js';
import { bytes } from './helpers.js';

describe('rows of long address lists', () => {
  it('distinct rows keep distinct stacks, equal rows share one', () => {
    const common = Array.from({ length: 2500 }, () => '0x1000').join(' ');
    const row = (i: number) => `1: 2 [3: 4] @ ${common} 0x${(0x10000000 + i).toString(16)}\n`;
    const rows = Array.from({ length: 3000 }, (_, i) => row(i));
    const text = 'heap profile:   1:   2 [   3:   4] @ heapprofile\n' + rows.join('') + row(7);
    const p = readLegacy(bytes(text)).profile;
    expect(sampleCount(p)).toBe(3001);
    expect(stackOf(p, 3000)).toEqual(stackOf(p, 7));
    expect(stackOf(p, 3000)).not.toEqual(stackOf(p, 8));
    expect(stackOf(p, 0).length).toBe(2501);
    // 3 s with the fix, over 30 s without (1,500 rows: 1.4 and 8.8 s): a bound, not a measurement.
  }, 15_000);
});
