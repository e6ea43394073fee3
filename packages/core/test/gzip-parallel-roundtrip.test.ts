/**
 * The parallel gzip writer (`gzipStream`/`gzipChunks` on Node) read back by three independent
 * readers: node:zlib, pako and the `gzip` program. Random, highly compressible, profile-like and
 * real fixture bytes, at sizes around the block boundaries of both ways of cutting blocks (the
 * fixed `DEFLATE_BLOCK_BYTES` blocks of a stream of unknown length, and the blocks an announced
 * total gets from `deflateBlockBytes`). Each output must be exactly one gzip member whose trailer holds the input's CRC-32 and
 * size, and the same bytes whatever the chunking or the timing of the thread pool.
 */
import { spawnSync } from 'node:child_process';
import { constants as zc, crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import { ungzip } from 'pako';
import { describe, expect, it } from 'vitest';
import { haveSharedFixtures, haveTool, readSharedFixture, seededRandom } from '@profkit/test-utils';
import { DEFLATE_BLOCK_BYTES, MIN_DEFLATE_BLOCK_BYTES, deflateBlockBytes, gzipChunks, gzipStream } from '../src/gzip-node.js';

const LARGE_CPU = 'pprof/internal/proftest/testdata/large.cpu';

function randomBytes(n: number, seed: number): Uint8Array {
  const random = seededRandom(seed);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(random() * 256);
  return out;
}

/** Long runs and a short repeating pattern: deflate shrinks it ~1000:1. */
function compressibleBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i >> 12) % 3 === 0 ? 0 : i % 7;
  return out;
}

/** Varint-like bytes between repeated names, as in profile.proto. */
function profileLikeBytes(n: number, seed: number): Uint8Array {
  const random = seededRandom(seed);
  const words = Array.from({ length: 48 }, (_, i) => new TextEncoder().encode(`pkg${i}.(*T${i % 5}).M${i * 17}`));
  const out = new Uint8Array(n);
  for (let at = 0; at < n; ) {
    if (random() < 0.5) {
      const w = words[Math.floor(random() * words.length)]!;
      out.set(w.subarray(0, n - at), at);
      at += w.length;
    } else out[at++] = Math.floor(random() * 256);
  }
  return out;
}

/** `bytes` handed over in pieces of `size` (the last shorter). */
function chunked(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

async function gzipped(chunks: Iterable<Uint8Array>, total?: number): Promise<Buffer> {
  return Buffer.concat(await gzipPieces(chunks, total));
}

/** The pieces of `gzipStream`: the header, one per deflated block, the trailer. */
async function gzipPieces(chunks: Iterable<Uint8Array>, total?: number): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const piece of gzipStream(chunks, 6, total)) out.push(piece);
  return out;
}

/**
 * Checks `gz` is one gzip member holding `input`: the fixed 10-byte header, one deflate stream
 * that ends (final block) exactly where the 8-byte trailer starts, and a trailer with the CRC-32
 * and the size modulo 2^32. (node:zlib's and pako's gunzip read any further members silently.)
 */
function expectOneMember(gz: Buffer, input: Uint8Array): void {
  expect([...gz.subarray(0, 4)]).toEqual([0x1f, 0x8b, 8, 0]);
  const body = gz.subarray(10, gz.length - 8);
  // Throws unless the deflate stream reaches its final block; bytesWritten is the input consumed.
  const { buffer, engine } = inflateRawSync(body, { info: true, finishFlush: zc.Z_FINISH }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
  expect(engine.bytesWritten).toBe(body.length);
  expect(buffer.equals(input)).toBe(true);
  expect(gz.readUInt32LE(gz.length - 8)).toBe(crc32(input) >>> 0);
  expect(gz.readUInt32LE(gz.length - 4)).toBe(input.length % 2 ** 32);
}

/** Reads `gz` back with node:zlib and pako, and with `gzip -t` (which checks CRC and size) when given. */
function expectReadable(gz: Buffer, input: Uint8Array, gzipProgram: boolean): void {
  expect(gunzipSync(gz).equals(input)).toBe(true);
  expect(Buffer.from(ungzip(gz)).equals(input)).toBe(true);
  expectOneMember(gz, input);
  if (gzipProgram) {
    const test = spawnSync('gzip', ['-t'], { input: gz });
    expect(test.status, String(test.stderr)).toBe(0);
  }
}

const haveGzip = haveTool('gzip', 'gzip', 'gzip-parallel-roundtrip tests');

describe('parallel gzip read back by node:zlib, pako and gzip -t', () => {
  const B = DEFLATE_BLOCK_BYTES;
  // A stream of unknown length is cut into blocks of DEFLATE_BLOCK_BYTES.
  const streamSizes = [0, 1, B - 1, B, B + 1, 3 * B + 7];
  // An announced total picks its block size: around the smallest block, and where it doubles.
  const m = MIN_DEFLATE_BLOCK_BYTES;
  const totalSizes = [0, 1, m - 1, m, m + 1, 8 * m - 1, 8 * m, 8 * m + 1];
  const kinds: [string, (n: number) => Uint8Array][] = [
    ['random', (n) => randomBytes(n, 11)],
    ['compressible', compressibleBytes],
    ['profile-like', (n) => profileLikeBytes(n, 12)],
  ];

  for (const [kind, make] of kinds) {
    it(`${kind}: a stream of unknown length, sizes around its fixed block`, async () => {
      const all = make(Math.max(...streamSizes));
      for (const size of streamSizes) {
        const input = all.subarray(0, size);
        const gz = await gzipped(chunked(input, 300_007));
        expectReadable(gz, input, haveGzip);
        // Other chunks, same bytes: the blocks are cut from the bytes.
        expect((await gzipped(chunked(input, 65_536))).equals(gz)).toBe(true);
      }
    });

    it(`${kind}: an announced total, sizes around its block sizes`, async () => {
      const all = make(Math.max(...totalSizes));
      for (const size of totalSizes) {
        const input = all.subarray(0, size);
        const pieces = await gzipPieces(chunked(input, 1 << 20), size);
        const gz = Buffer.concat(pieces);
        expectReadable(gz, input, haveGzip);
        // Cut as deflateBlockBytes says; from 4 smallest blocks on, at least 4 blocks.
        const blocks = pieces.length - 2;
        expect(blocks).toBe(Math.max(1, Math.ceil(size / deflateBlockBytes(size))));
        if (size >= 4 * m) expect(blocks).toBeGreaterThanOrEqual(4);
        expect((await gzipped(chunked(input, 4099), size)).equals(gz)).toBe(true);
        const whole = await gzipChunks(size, chunked(input, 77_777), 6);
        expect(Buffer.from(whole).equals(gz)).toBe(true);
      }
    });
  }

  it('the same bytes in two runs while other deflate jobs compete for the thread pool', async () => {
    const input = profileLikeBytes(3 * B + 12_345, 13);
    const first = await gzipped(chunked(input, 1 << 20), input.length);
    // A slow consumer and other gzip streams deflating at the same time change the timing only.
    const [second, , third] = await Promise.all([
      (async () => {
        const out: Uint8Array[] = [];
        for await (const piece of gzipStream(chunked(input, 1 << 20), 6, input.length)) {
          out.push(piece);
          await new Promise((r) => setTimeout(r, 3));
        }
        return Buffer.concat(out);
      })(),
      gzipped(chunked(randomBytes(2 * B, 14), 1 << 20)),
      gzipped(chunked(input, 333_333), input.length),
    ]);
    expect(second.equals(first)).toBe(true);
    expect(third.equals(first)).toBe(true);
  });

  describe.skipIf(!haveSharedFixtures('gzip-parallel-roundtrip tests', LARGE_CPU))('real fixture data', () => {
    it('large.cpu, compressed and inflated, with and without the total', async () => {
      const compressed = readSharedFixture(LARGE_CPU);
      for (const input of [compressed, new Uint8Array(gunzipSync(compressed))]) {
        for (const total of [undefined, input.length]) {
          const gz = await gzipped(chunked(input, 1 << 20), total);
          expectReadable(gz, input, haveGzip);
        }
      }
    });
  });
});
