/**
 * `gzipChunks` past 4 GiB: its output is one buffer, sized from the total. A total whose bound
 * passes the largest buffer was a RangeError from the allocation (Node) or from pako's piece
 * (browser) before a byte was read; now the output buffer is capped at the largest one (the
 * data usually compresses far below its total) and only an output that outgrows it is an error,
 * a typed `PROFKIT_E_LIMIT`. The bound itself no longer wraps past 4 GiB.
 */

import { describe, expect, it } from 'vitest';
import { ErrorCodes, isProfkitError } from '../src/index.js';
import * as nodeGzip from '../src/gzip-node.js';
import * as browserGzip from '../src/gzip-browser.js';
import { MAX_GZIP_BUFFER_BYTES, gzipBound } from '../src/gzip-shared.js';
import { rejectionOf, seededRandom } from '@profkit/test-utils';

const FIVE_GIB = 5 * 2 ** 30;

/** `count` chunks of one `size`-byte buffer (never changed: the gzip may deflate it later). */
function* repeated(bytes: Uint8Array, count: number): Generator<Uint8Array> {
  for (let i = 0; i < count; i++) yield bytes;
}

function randomBytes(n: number, seed: number): Uint8Array {
  const r = seededRandom(seed);
  return Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
}

describe.each([
  ['node', nodeGzip.gzipChunks],
  ['browser', browserGzip.gzipChunks],
] as const)('gzipChunks (%s)', (name, gzipChunks) => {
  it('a total past 4 GiB is not refused up front: the chunks are read and deflated', async () => {
    let pulled = 0;
    const chunks = (function* () {
      pulled++;
      yield new Uint8Array(1 << 20);
    })();
    const gz = gzipChunks(FIVE_GIB, chunks, 1);
    if (name === 'node') {
      // They fall short of the total: Node's parallel deflate checks it (a typed usage error).
      const e = await rejectionOf(gz);
      expect(isProfkitError(e) ? e.code : e).toBe(ErrorCodes.USAGE);
    } else {
      // pako deflates what it is given (the total only sized its output).
      expect(Array.from((await gz).subarray(-4))).toEqual([0, 0, 0x10, 0]); // ISIZE 1 MiB
    }
    expect(pulled).toBe(1);
  });

  it('an output past the largest buffer is a PROFKIT_E_LIMIT error (the largest lowered to 1 MiB here)', async () => {
    const block = randomBytes(256 << 10, 7);
    const e = await rejectionOf(gzipChunks(8 * block.length, repeated(block, 8), 1, 1 << 20));
    expect(isProfkitError(e) ? [e.code, e.detail.limit] : e).toEqual([ErrorCodes.LIMIT, 1 << 20]);
  });

  it('an output that fits the largest buffer is whole, however much larger the bound', async () => {
    // Zeros deflate to almost nothing: 4 MiB into a 64 KiB output while the bound is 4 MiB.
    const zeros = new Uint8Array(1 << 20);
    const gz = await gzipChunks(4 * zeros.length, repeated(zeros, 4), 1, 64 << 10);
    expect(gz.length).toBeLessThan(64 << 10);
    expect(Array.from(gz.subarray(gz.length - 4))).toEqual([0, 0, 0x40, 0]); // ISIZE 4 MiB
  });
});

describe('gzipBound', () => {
  it('grows with the size past 4 GiB (it wrapped at 2^32)', () => {
    expect(gzipBound(FIVE_GIB)).toBeGreaterThan(FIVE_GIB);
    expect(gzipBound(2 ** 32 + 4096)).toBeGreaterThan(gzipBound(2 ** 32 - 4096));
    expect(MAX_GZIP_BUFFER_BYTES).toBe(2 ** 32);
  });
});
