/**
 * gunzipBounded sized its first output chunk from the gzip trailer's ISIZE, trusted up to 1032
 * times the input: a 2 MB file claiming 2 GiB reserved 2 GiB before a byte was inflated. The
 * claim now sizes the first chunk only up to `firstInflateChunkSize` (the larger of 64 MiB and 4
 * times the input); the output grows as it fills, limited by maxDecompressedBytes. The chunk sizes are read where each
 * implementation asks for them (pako's `Inflate` options, node:zlib's `gunzipSync` options).
 */

import { thrownBy } from '@profkit/test-utils';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';

const chunkSizes: number[] = [];

vi.mock('pako', async (importOriginal) => {
  const pako = await importOriginal<typeof import('pako')>();
  class RecordingInflate extends pako.Inflate {
    constructor(options?: ConstructorParameters<typeof pako.Inflate>[0]) {
      chunkSizes.push(options?.chunkSize ?? -1);
      super(options);
    }
  }
  return { ...pako, Inflate: RecordingInflate };
});

vi.mock('node:zlib', async (importOriginal) => {
  const zlib = await importOriginal<typeof import('node:zlib')>();
  return {
    ...zlib,
    gunzipSync: (data: Uint8Array, options?: import('node:zlib').ZlibOptions) => {
      chunkSizes.push(options?.chunkSize ?? -1);
      return zlib.gunzipSync(data, options);
    },
  };
});

const { ErrorCodes, MAX_ANNOUNCED_INFLATE_RATIO, isProfkitError } = await import('../src/index.js');
const nodeGzip = await import('../src/gzip-node.js');
const browserGzip = await import('../src/gzip-browser.js');
const { TRUSTED_ANNOUNCED_INFLATE_BYTES } = await import('../src/gzip-shared.js');

/** Incompressible bytes (a gzip about as large as its input). */
function noise(n: number): Uint8Array {
  let x = 0x9e3779b9;
  return Uint8Array.from({ length: n }, () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x & 0xff;
  });
}

/** `gz` with its trailer's ISIZE replaced by `size` (mod 2^32). */
function withClaimedSize(gz: Uint8Array, size: number): Uint8Array {
  const forged = gz.slice();
  new DataView(forged.buffer).setUint32(forged.length - 4, size >>> 0, true);
  return forged;
}

/** Byte equality (vitest's deep equality walks a large array element by element, slowly). */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));
}

afterEach(() => {
  chunkSizes.length = 0;
});

describe.each([
  ['node', nodeGzip.gunzipBounded],
  ['browser', browserGzip.gunzipBounded],
])('gunzipBounded (%s) with a forged trailer', (_name, gunzipBounded) => {
  const raw = noise(64 * 1024);
  const gz = new Uint8Array(gzipSync(raw));

  it('sizes its first chunk no larger than 64 MiB or 4 times the input, however much the trailer claims', () => {
    // 1000 times the input: under deflate's 1032, so gzipAnnouncedSize passes it on as plausible;
    // past 64 MiB, so only the bound keeps it from being the first chunk.
    const input = new Uint8Array(gzipSync(noise(256 * 1024)));
    const claim = input.length * 1000;
    expect(claim).toBeGreaterThan(2 * TRUSTED_ANNOUNCED_INFLATE_BYTES);
    const e = thrownBy(() => gunzipBounded(withClaimedSize(input, claim)));
    // The inflated size differs from the claim: zlib's length check refuses it, a typed error.
    expect(isProfkitError(e) && e.code).toBe(ErrorCodes.DECOMPRESS);
    expect(chunkSizes.length).toBeGreaterThan(0);
    expect(chunkSizes[0]).toBeLessThanOrEqual(Math.max(input.length * MAX_ANNOUNCED_INFLATE_RATIO, TRUSTED_ANNOUNCED_INFLATE_BYTES));
  });

  it('still takes an honest claim as the one chunk', () => {
    expect(sameBytes(gunzipBounded(gz), raw)).toBe(true);
    expect(chunkSizes[0]).toBe(raw.length + 1);
  });

  it('takes a claim up to 64 MiB as the one chunk whatever the ratio (text profiles inflate 8 to 30 times)', () => {
    const big = new Uint8Array(4 * 1024 * 1024).fill(7);
    const packed = new Uint8Array(gzipSync(big));
    expect(big.length).toBeGreaterThan(100 * MAX_ANNOUNCED_INFLATE_RATIO * packed.length);
    expect(sameBytes(gunzipBounded(packed), big)).toBe(true);
    expect(chunkSizes).toEqual([big.length + 1]);
  });

  it('grows past the first chunk for a claim past 64 MiB and 4 times the input, limited by maxDecompressedBytes', () => {
    const huge = new Uint8Array(TRUSTED_ANNOUNCED_INFLATE_BYTES + 16 * 1024 * 1024);
    const packed = new Uint8Array(gzipSync(huge));
    expect(huge.length).toBeGreaterThan(MAX_ANNOUNCED_INFLATE_RATIO * packed.length);
    expect(sameBytes(gunzipBounded(packed), huge)).toBe(true);
    expect(chunkSizes[0]).toBe(TRUSTED_ANNOUNCED_INFLATE_BYTES);
    const e = thrownBy(() => gunzipBounded(packed, { maxDecompressedBytes: 1024 * 1024 }));
    expect(isProfkitError(e) && e.code).toBe(ErrorCodes.LIMIT);
    expect(isProfkitError(e) && e.detail.option).toBe('maxDecompressedBytes');
  });
});
