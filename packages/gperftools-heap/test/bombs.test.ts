/**
 * Repetitive heap and contention text (issue 15, item 2): the frames of all records together are
 * bounded by `maxTotalFrames` while reading, and repeated rows share their stack and values
 * (memory follows the distinct rows, not the records) with the same profile as before.
 */
import { describe, expect, it } from 'vitest';
import { isProfkitError, sampleCount, stackOf, type ProfkitError } from '@profkit/core/node';
import { readLegacy } from '../src/node.js';
import { parseHeap } from '../src/heap.js';
import { splitLines } from '../src/text.js';
import { bytes } from './helpers.js';

const HEAP_HEAD = 'heap profile:    3:   192 [     3:   192] @ heapprofile\n';

function limitOf(f: () => unknown): ProfkitError {
  try {
    f();
  } catch (e) {
    if (isProfkitError(e)) return e;
    throw e;
  }
  throw new Error('expected a limit error');
}

describe('maxTotalFrames in the text parsers', () => {
  it('heap: stops at the record whose stack passes the total, naming its line', () => {
    const text = HEAP_HEAD + '1: 64 [1: 64] @ 0x1000 0x2000 0x3000\n'.repeat(1000);
    const e = limitOf(() => readLegacy(bytes(text), { limits: { maxTotalFrames: 300 } }));
    expect(e.code).toBe('PROFKIT_E_LIMIT');
    expect(e.detail.option).toBe('maxTotalFrames');
    expect(e.detail.line).toBe(102); // record 101 brings 303 frames
    expect(readLegacy(bytes(text), { limits: { maxTotalFrames: 3000 } }).profile.samples.value.length).toBe(1000);
  });

  it('contention: the same', () => {
    const text = '--- contention:\ncycles/second=1000\nsampling period = 1\n' + '100 1 @ 0x1000 0x2000\n'.repeat(1000);
    const e = limitOf(() => readLegacy(bytes(text), { limits: { maxTotalFrames: 100 } }));
    expect(e.detail.option).toBe('maxTotalFrames');
    expect(e.detail.line).toBe(54);
  });
});

describe('maxTotalFrames and shared rows in Go count profiles', () => {
  it('stops at the record whose stack passes the total', () => {
    const text = 'goroutine profile: total 1000\n' + '1 @ 0x1000 0x2000\n'.repeat(1000);
    const e = limitOf(() => readLegacy(bytes(text), { limits: { maxTotalFrames: 100 } }));
    expect(e.detail.option).toBe('maxTotalFrames');
    expect(e.detail.line).toBe(52);
  });

  it('repeated rows share their stack and values and read as before', async () => {
    const { parseGoCount } = await import('../src/thread.js');
    const p = parseGoCount(splitLines('goroutine profile: total 5\n2 @ 0x1000\n2 @ 0x1000\n3 @ 0x1000\n'));
    expect(p.samples[1]!.locs).toBe(p.samples[0]!.locs);
    expect(p.samples[1]!.values).toBe(p.samples[0]!.values);
    expect(p.samples.map((s) => s.values[0])).toEqual([2n, 2n, 3n]);
  });
});

describe('repeated heap rows', () => {
  it('share one stack and one set of values, and read as before', () => {
    const rows = ['1: 64 [1: 64] @ 0x1000 0x2000\n', '2: 256 [2: 256] @ 0x1000 0x3000\n'];
    const text = HEAP_HEAD + (rows[0]! + rows[1]! + rows[0]!).repeat(2);
    const parsed = parseHeap(splitLines(text));
    const s = parsed.profile.samples;
    expect(s.length).toBe(6);
    expect(s[2]!.locs).toBe(s[0]!.locs);
    expect(s[2]!.values).toBe(s[0]!.values);
    expect(s[1]!.locs).not.toBe(s[0]!.locs);
    expect([...parsed.raw[0]]).toEqual([1n, 2n, 1n, 1n, 2n, 1n]);
    expect([...parsed.raw[1]]).toEqual([64n, 256n, 64n, 64n, 256n, 64n]);
    const p = readLegacy(bytes(text)).profile;
    expect(sampleCount(p)).toBe(6);
    expect([...p.samples['.values'][1]!]).toEqual([64n, 256n, 64n, 64n, 256n, 64n]);
    expect(stackOf(p, 2)).toEqual(stackOf(p, 0));
    expect(stackOf(p, 1)).not.toEqual(stackOf(p, 0));
  });
});

describe('a gzipped input inflating without end', () => {
  it('is read as a stream and stopped at 32 MiB when no maxDecompressedBytes is set', async () => {
    const { codec } = await import('../src/codec.js');
    const taken = { bytes: 0 };
    const row = new TextEncoder().encode('1: 64 [1: 64] @ 0x4000\n'.repeat(2000));
    const input = {
      fileName: 'bomb.heap.gz',
      gzipped: true,
      bytes: () => Promise.reject(new Error('buffered the whole inflated input')),
      async *chunks() {
        yield new TextEncoder().encode(HEAP_HEAD);
        for (;;) {
          taken.bytes += row.length;
          yield row;
        }
      },
    };
    let e: unknown;
    try {
      await codec.read(input, { limits: {} });
    } catch (err) {
      e = err;
    }
    expect(isProfkitError(e) && e.detail.option).toBe('maxDecompressedBytes');
    expect(taken.bytes).toBeLessThan(32 * 1024 * 1024 + row.length);
  });
});
