/**
 * Issue 17: on Node, `gzipStream`/`gzipChunks` deflate independent blocks (128–512 KiB) on several
 * thread-pool threads (pigz's scheme). The output must stay one ordinary gzip stream that any
 * reader inflates to the input, about as small as one zlib stream, and every block must end on a
 * byte-aligned sync point (what lets the blocks be deflated apart and joined).
 */
import { constants as zc, gunzipSync, gzipSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { rejectionOf, seededRandom } from '@profkit/test-utils';
import { ErrorCodes, isProfkitError } from '../src/errors.js';
import { DEFLATE_BLOCK_BYTES, INFLATE_AHEAD_BYTES, MIN_DEFLATE_BLOCK_BYTES, deflateBlockBytes, gunzipChunks, gzipBytes, gzipChunks, gzipStream } from '../src/gzip-node.js';
import { profileLike } from './gzip-data.js';

async function pieces(it: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const p of it) out.push(p);
  return out;
}

describe('parallel gzip on Node', () => {
  const input = profileLike(5 * DEFLATE_BLOCK_BYTES + 12_345, 17);
  // Handed over in odd-sized chunks: blocks are cut from the stream, not from the chunks.
  const chunks = () => Array.from({ length: Math.ceil(input.length / 300_000) }, (_, i) => input.subarray(i * 300_000, (i + 1) * 300_000));

  it('writes one gzip stream that inflates to the input, within 0.1 % of one zlib stream', async () => {
    const streamed = Buffer.concat(await pieces(gzipStream(chunks(), 6)));
    expect(gunzipSync(streamed).equals(input)).toBe(true);
    const single = gzipBytes(input, 6);
    expect(Math.abs(streamed.length - single.length) / single.length).toBeLessThan(0.001);
    const whole = await gzipChunks(input.length, chunks(), 6);
    expect(Buffer.from(whole).equals(Buffer.concat(await pieces(gzipStream(chunks(), 6, input.length))))).toBe(true);
    // The blocks are cut from the bytes, not from the chunks: other chunks, same output.
    const rechunked = Buffer.concat(await pieces(gzipStream([input.subarray(0, 7), input.subarray(7, 2_500_000), input.subarray(2_500_000)], 6)));
    expect(rechunked.equals(streamed)).toBe(true);
  });

  it('with the exact total announced (each block deflated as soon as it exists), the bytes inflate to the input whatever the chunking; a wrong total throws', async () => {
    // Sizes: a partial last block, an exact multiple of the block (the last block is full), empty.
    for (const size of [input.length, 16 * MIN_DEFLATE_BLOCK_BYTES, 0]) {
      const part = input.subarray(0, size);
      const announced = Buffer.concat(await pieces(gzipStream([part.subarray(0, 5), part.subarray(5)], 6, size)));
      expect(gunzipSync(announced).equals(part)).toBe(true);
      const rechunked = Buffer.concat(await pieces(gzipStream([part.subarray(0, 100_003), part.subarray(100_003)], 6, size)));
      expect(rechunked.equals(announced)).toBe(true);
    }
    const two = input.subarray(0, 2 * DEFLATE_BLOCK_BYTES);
    // A typed error (the producer's bug), whether the producer gives more or fewer bytes, also
    // within the last block (a 1,024-byte producer announced as 1,000).
    const wrongTotals: [Uint8Array, number, RegExp][] = [
      [two, DEFLATE_BLOCK_BYTES, /more than the announced/],
      [two, 3 * DEFLATE_BLOCK_BYTES, /not the announced/],
      [two.subarray(0, 1024), 1000, /1024 bytes, not the announced 1000/],
    ];
    for (const [bytes, total, message] of wrongTotals) {
      const error = await rejectionOf(pieces(gzipStream([bytes], 6, total)));
      expect(isProfkitError(error) && error.code === ErrorCodes.USAGE).toBe(true);
      expect((error as Error).message).toMatch(message);
    }
  });

  it('primes the small blocks of an announced total with the 32 KiB before them: within 0.5 % of one zlib stream', async () => {
    // 700,000 bytes: 6 blocks of 128 KiB, +0.27 % over one stream; unprimed, +2.8 %.
    const part = input.subarray(0, 700_000);
    expect(deflateBlockBytes(part.length)).toBe(MIN_DEFLATE_BLOCK_BYTES);
    const announced = await gzipChunks(part.length, [part], 6);
    expect(gunzipSync(announced).equals(part)).toBe(true);
    expect(announced.length / gzipBytes(part, 6).length).toBeLessThan(1.005);
  });

  it('cuts an announced total into at least 4 blocks of a power-of-two size between 128 KiB and 512 KiB', () => {
    expect(deflateBlockBytes(undefined)).toBe(DEFLATE_BLOCK_BYTES);
    expect(deflateBlockBytes(0)).toBe(MIN_DEFLATE_BLOCK_BYTES);
    expect(deflateBlockBytes(100_000)).toBe(MIN_DEFLATE_BLOCK_BYTES);
    // The Rprof benchmark's 1.96 MB encoding: 8 blocks of 256 KiB (it was 2 blocks of 1 MiB).
    expect(deflateBlockBytes(1_964_625)).toBe(256 << 10);
    expect(deflateBlockBytes(4 * (512 << 10) - 1)).toBe(256 << 10);
    expect(deflateBlockBytes(4 * (512 << 10))).toBe(512 << 10);
    expect(deflateBlockBytes(19_098_831)).toBe(DEFLATE_BLOCK_BYTES);
    expect(deflateBlockBytes(2 ** 40)).toBe(DEFLATE_BLOCK_BYTES);
  });

  it('keeps up to 2 MiB of small blocks deflating while the producer goes on, and no more (backpressure)', async () => {
    // 3 MiB announced: 6 blocks of 512 KiB, 4 of them (2 MiB) in flight at most.
    const size = 3 << 20;
    expect(deflateBlockBytes(size)).toBe(512 << 10);
    const part = profileLike(size, 21);
    let produced = 0;
    function* counted(): Generator<Uint8Array> {
      for (let at = 0; at < size; at += 512 << 10) {
        produced++;
        yield part.subarray(at, at + (512 << 10));
      }
    }
    const stream = gzipStream(counted(), 6, size);
    await stream.next(); // the header
    await stream.next(); // the first block: 4 started, the 5th produced and waiting for room
    // Limited to 2 blocks in flight, it would stop at 3: encoding a 1 MiB chunk and deflating its
    // small blocks would take turns instead of overlapping.
    expect(produced).toBe(5);
    const rest: Uint8Array[] = [];
    for (let next = await stream.next(); !next.done; next = await stream.next()) rest.push(next.value);
    expect(produced).toBe(6);
    expect(rest).toHaveLength(6); // 5 more blocks and the trailer
  });

  it('ends every block on a byte-aligned sync point: the stream cut after block k inflates to k blocks', async () => {
    const out = await pieces(gzipStream(chunks(), 6));
    // The 10-byte header, one piece per block, the 8-byte trailer.
    expect(out).toHaveLength(2 + Math.ceil(input.length / DEFLATE_BLOCK_BYTES));
    const deflate = out.slice(1, -1);
    for (let k = 1; k < deflate.length; k++) {
      const prefix = inflateRawSync(Buffer.concat(deflate.slice(0, k)), { finishFlush: zc.Z_SYNC_FLUSH });
      expect(prefix.equals(input.subarray(0, k * DEFLATE_BLOCK_BYTES))).toBe(true);
    }
  });

  it('up to the smallest block, gzipChunks gives the bytes of gzipBytes (one zlib stream)', async () => {
    const small = input.subarray(0, MIN_DEFLATE_BLOCK_BYTES);
    const whole = await gzipChunks(small.length, [small.subarray(0, 1), small.subarray(1, 65_537), small.subarray(65_537)], 6);
    expect(Buffer.from(whole).equals(gzipBytes(small, 6))).toBe(true);
    expect(Buffer.from(await gzipChunks(0, [], 6)).equals(gzipBytes(new Uint8Array(0), 6))).toBe(true);
  });

  it("a small output does not write over other buffers of Node's shared pool", async () => {
    // More than one 8 KiB pool of small buffers: the pool in use starts with one of them.
    const marks = Array.from({ length: 300 }, () => Buffer.from('m'.repeat(32)));
    const out = await gzipChunks(3, [Uint8Array.of(1, 2, 3)], 6);
    expect(gunzipSync(out)).toEqual(Buffer.from([1, 2, 3]));
    expect(marks.every((m) => m.toString() === 'm'.repeat(32))).toBe(true);
  });

  it("an error of the producer ends the stream with that error", async () => {
    function* failing(): Generator<Uint8Array> {
      yield input.subarray(0, 3 * DEFLATE_BLOCK_BYTES);
      throw new Error('encoder failed');
    }
    expect(((await rejectionOf(pieces(gzipStream(failing(), 6)))) as Error).message).toBe('encoder failed');
  });
});

describe('streamed gunzip on Node', () => {
  it('inflates ahead of its consumer (up to INFLATE_AHEAD_BYTES), not one piece at a time', async () => {
    // Random bytes: deflate stores them, so compressed and inflated sizes are about equal.
    const random = seededRandom(5);
    const words = Uint32Array.from({ length: (2 * INFLATE_AHEAD_BYTES) / 4 }, () => Math.floor(random() * 2 ** 32));
    const raw = new Uint8Array(words.buffer);
    const gz = gzipSync(raw, { level: 1 });
    let pulled = 0;
    async function* source(): AsyncGenerator<Uint8Array> {
      for (let at = 0; at < gz.length; at += 64 * 1024) {
        const piece = gz.subarray(at, at + 64 * 1024);
        pulled += piece.length;
        yield piece;
      }
    }
    const inflated = gunzipChunks(source());
    const first = await inflated.next();
    expect(first.done).toBe(false);
    // While the consumer holds its first piece, the inflating goes on (it stopped after one more
    // 256 KiB piece before: under 1 MiB of input pulled).
    await vi.waitFor(() => expect(pulled).toBeGreaterThanOrEqual(INFLATE_AHEAD_BYTES - (512 << 10)), { timeout: 10_000, interval: 20 });
    // ... and no further than the bound (plus the pieces in the stream's buffers).
    expect(pulled).toBeLessThan(INFLATE_AHEAD_BYTES + (2 << 20));
    const rest = await drain(inflated);
    expect(Buffer.concat([first.value!, rest]).equals(raw)).toBe(true);
  });
});

async function drain(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const p of it) parts.push(p);
  return Buffer.concat(parts);
}
