/**
 * The worker's native gzip path (src/app/native-gunzip.ts): it must give exactly the inflated
 * bytes, or `undefined` so that core's own reader decides (its errors, its limits, every member)
 * — never a partial result. Runs on Node's `DecompressionStream` (Chromium's, which rejects bytes
 * after the first member, is exercised by browser.test.ts through the page).
 */

import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { nativeGunzip, streamedProfileBytes } from '../src/app/native-gunzip.js';

/** Bytes that do not compress much (as a profile's), `n` of them. */
function noise(n: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = 12345;
  for (let i = 0; i < n; i++) out[i] = (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 24;
  return out;
}

describe('nativeGunzip', () => {
  it('inflates one gzip member to exactly its bytes', async () => {
    const raw = noise(300_000);
    expect(await nativeGunzip(gzipSync(raw))).toEqual(raw);
    // The output buffer grown as it fills (the limit is below the announced size's buffer).
    expect(await nativeGunzip(gzipSync(raw), 400_000)).toEqual(raw);
    expect(await nativeGunzip(gzipSync(new Uint8Array(0)))).toEqual(new Uint8Array(0));
  });

  it('leaves input that is not gzip to core', async () => {
    expect(await nativeGunzip(noise(1000))).toBeUndefined();
    expect(await nativeGunzip(new Uint8Array([0x1f, 0x8b]))).toBeUndefined();
  });

  it('leaves corrupt gzip and output above maxDecompressedBytes to core (its typed errors), never a part of it', async () => {
    // A Uint8Array, not a Buffer: Buffer's slice is a view, the corruptions below would reach `gz`.
    const gz = new Uint8Array(gzipSync(noise(100_000)));
    // A wrong size in the trailer is corrupt too (zlib checks it).
    const lying = gz.slice();
    new DataView(lying.buffer).setUint32(lying.length - 4, 10, true);
    expect(await nativeGunzip(lying)).toBeUndefined();
    const corrupt = gz.slice();
    corrupt.fill(0xff, 20, 200);
    expect(await nativeGunzip(corrupt)).toBeUndefined();
    expect(await nativeGunzip(gz.subarray(0, gz.length - 1000))).toBeUndefined();
    expect(await nativeGunzip(gz, 99_999)).toBeUndefined();
    expect(await nativeGunzip(gz, 100_000)).toEqual(noise(100_000));
  });

  it("sizes its buffer from the trailer's ISIZE no larger than 4x the file (a forged claim up to deflate's 1032x, 2 GiB for a 2 MB file, is not allocated), growing an honest larger one to exactly its size", async () => {
    const gz = new Uint8Array(gzipSync(noise(100_000)));
    // Within deflate's 1032x of the file: the size the old bound let through (a 103 MB buffer).
    const forged = gz.slice();
    new DataView(forged.buffer).setUint32(forged.length - 4, 1000 * gz.length, true);
    let largest = 0;
    const largestBuffer = (soFar: Uint8Array) => void (largest = Math.max(largest, soFar.buffer.byteLength));
    // zlib checks ISIZE at the end: undefined (core then reports it), after a buffer as small as no claim's.
    expect(await nativeGunzip(forged, undefined, largestBuffer)).toBeUndefined();
    expect(largest).toBeGreaterThan(0);
    expect(largest).toBeLessThanOrEqual(4 * gz.length);
    // An honest file inflating 60x: first 4x the file, then grown to its announced size, not past it.
    const raw = new Uint8Array(600_000);
    raw.set(noise(10_000));
    const honest = new Uint8Array(gzipSync(raw));
    expect(raw.length).toBeGreaterThan(8 * 4 * honest.length);
    largest = 0;
    const got = await nativeGunzip(honest, undefined, largestBuffer);
    expect(got).toEqual(raw);
    expect(got!.buffer.byteLength).toBe(raw.length);
    expect(largest).toBe(raw.length);
  });

  it('two members: all of it or undefined (core then reads every member), never the first member alone', async () => {
    const raw = noise(50_000);
    const two = Buffer.concat([gzipSync(raw.subarray(0, 20_000)), gzipSync(raw.subarray(20_000))]);
    const got = await nativeGunzip(two);
    if (got !== undefined) expect(got).toEqual(raw);
  });
});

/**
 * A stand-in for the inflate's helper worker (Node has no `Worker`): what crosses to it is
 * structured-cloned, as between threads, and `copied` counts the bytes those clones copy.
 */
class ClonedStreamWorker {
  static copied = 0;
  onmessage: ((e: { data: ReadableStream<Uint8Array> }) => void) | null = null;
  onerror: ((e: unknown) => void) | null = null;
  postMessage(gzip: ReadableStream<Uint8Array>): void {
    const reader = gzip.getReader();
    const crossed = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        const clone = structuredClone(value);
        ClonedStreamWorker.copied += clone.buffer.byteLength;
        controller.enqueue(clone);
      },
    });
    const out = crossed.pipeThrough(new DecompressionStream('gzip') as unknown as ReadableWritablePair<Uint8Array, Uint8Array>);
    setTimeout(() => this.onmessage?.({ data: out }));
  }
  terminate(): void {}
}

describe('nativeGunzip with the helper worker', () => {
  afterEach(() => void vi.unstubAllGlobals());

  it("hands the helper worker the input once, not its whole buffer with every piece (a view crossing a thread copies all of it: minutes for the 1M profile)", async () => {
    vi.stubGlobal('Worker', ClonedStreamWorker);
    ClonedStreamWorker.copied = 0;
    const raw = noise(1_000_000);
    const gz = new Uint8Array(gzipSync(raw));
    expect(await nativeGunzip(gz)).toEqual(raw);
    // Each piece's own bytes crossed (16 pieces of 64 KiB), not 16 copies of the whole file.
    expect(ClonedStreamWorker.copied).toBe(gz.length);
  });
});

/** `bytes` as a stream of `piece`-byte chunks, erroring after them when `fail` is given. */
function streamOf(bytes: Uint8Array, piece = 7_001, fail?: Error): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at < bytes.length) {
        controller.enqueue(bytes.slice(at, at + piece));
        at += piece;
      } else if (fail) controller.error(fail);
      else controller.close();
    },
  });
}

describe('streamedProfileBytes (the served file, inflated while it downloads)', () => {
  const limits = { maxInputBytes: 1 << 20, maxDecompressedBytes: 1 << 20 };
  it('gives the inflated bytes of one gzip member, and any other input as it came (for core)', async () => {
    const raw = noise(200_000);
    const gz = new Uint8Array(gzipSync(raw));
    expect(await streamedProfileBytes('p.pb.gz', streamOf(gz), gz.length, limits)).toEqual(raw);
    expect(await streamedProfileBytes('p.pb.gz', streamOf(gz), 0, limits)).toEqual(raw);
    expect(await streamedProfileBytes('p.pb', streamOf(raw), raw.length, limits)).toEqual(raw);
    const two = new Uint8Array(Buffer.concat([gzipSync(raw.subarray(0, 1000)), gzipSync(raw.subarray(1000))]));
    const got = await streamedProfileBytes('p.pb.gz', streamOf(two), two.length, limits);
    expect([raw, two]).toContainEqual(got);
    // Inflating past maxDecompressedBytes: the gzip bytes, whose limit error is core's.
    expect(await streamedProfileBytes('p.pb.gz', streamOf(gz), gz.length, { ...limits, maxDecompressedBytes: 100_000 })).toEqual(gz);
  });

  it('more than maxInputBytes arriving is a PROFKIT_E_LIMIT error naming the option; a broken download is its error', async () => {
    const raw = noise(200_000);
    await expect(streamedProfileBytes('p.pb', streamOf(raw), 0, { ...limits, maxInputBytes: 100_000 })).rejects.toMatchObject({ code: 'PROFKIT_E_LIMIT', detail: { option: 'maxInputBytes', file: 'p.pb' } });
    await expect(streamedProfileBytes('p.pb.gz', streamOf(new Uint8Array(gzipSync(raw)), 7_001, new Error('connection reset')), 0, limits)).rejects.toThrow('connection reset');
  });

  it('grows the buffer of the arriving bytes no larger than maxInputBytes (doubling near the limit would allocate twice it)', async () => {
    // No size announced: the buffer starts at the first chunk and doubles; 200,000 bytes fit a
    // 200,000-byte limit, where doubling 7,001-byte chunks would have made a 224,032-byte buffer.
    const raw = noise(200_000);
    const got = await streamedProfileBytes('p.pb', streamOf(raw, 7_001), 0, { ...limits, maxInputBytes: 200_000 });
    expect(got).toEqual(raw);
    expect(got.buffer.byteLength).toBeLessThanOrEqual(200_000);
  });

  it('sizes the buffer from the announced inflated size, and a forged (larger) one allocates no more than no announcement', async () => {
    const raw = new Uint8Array(100_000);
    raw.set(noise(50_000));
    const gz = new Uint8Array(gzipSync(raw));
    const roomy = { maxInputBytes: 1 << 30, maxDecompressedBytes: 1 << 30 };
    const honest = await streamedProfileBytes('p.pb.gz', streamOf(gz), gz.length, roomy, undefined, raw.length);
    expect(honest).toEqual(raw);
    expect(honest.buffer.byteLength).toBe(raw.length);
    // A trailer that claims 1 GB (within 1032x the download): not a buffer of tens of megabytes for 50 KB.
    const forged = await streamedProfileBytes('p.pb.gz', streamOf(gz), gz.length, roomy, undefined, 1e9);
    expect(forged).toEqual(raw);
    expect(forged.buffer.byteLength).toBeLessThanOrEqual(4 * gz.length);
  });

  it('past maxInputBytes, the body is no longer read (the inflate of the rest stopped too)', async () => {
    const gz = new Uint8Array(gzipSync(noise(400_000)));
    let pulled = 0;
    let cancelled = false;
    let sawCancel!: () => void;
    const cancel = new Promise<void>((resolve) => (sawCancel = resolve));
    const body = new ReadableStream<Uint8Array>({
      // A chunk a millisecond, as from a network: the readers keep up with it.
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (pulled * 7_001 < gz.length) controller.enqueue(gz.slice(pulled++ * 7_001, pulled * 7_001));
        else controller.close();
      },
      cancel() {
        cancelled = true;
        sawCancel();
      },
    });
    await expect(streamedProfileBytes('p.pb.gz', body, 0, { ...limits, maxInputBytes: 50_000 })).rejects.toMatchObject({ code: 'PROFKIT_E_LIMIT', detail: { option: 'maxInputBytes' } });
    // The cancel travels through the tee and the inflate asynchronously: waited for (the test's
    // timeout bounds it), not given 200 ms that a loaded machine may not be enough for.
    await cancel;
    expect(cancelled).toBe(true);
    expect(pulled * 7_001).toBeLessThan(gz.length);
  });
});
