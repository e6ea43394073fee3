import { describe, expect, it } from 'vitest';
import { thrownBy } from '@profkit/test-utils';
import { gunzipSync, gzipSync } from 'node:zlib';
import { ErrorCodes, ProfileBuilder, createRegistry, gunzipBounded, isProfkitError } from '@profkit/core/node';
import adapter from '../src/index.js';
import { encodeProfile, encodeProfileChunks, parsePprof, serializePprof } from '../src/codec.js';
import { gunzipExact, gzipAnnouncedSize, gzipChunks, gzipOneBuffer } from '../src/gzip.js';
import { bigProfile } from './helpers.js';

// The memory-saving paths of issue 4 (one-buffer gunzip/gzip, chunked encoding streamed into
// zlib) must give exactly what the plain paths give: the same bytes, or once the encoding is
// deflated in parallel blocks (above 128 KiB, core's `deflateBlockBytes`) the same payload.

/** Deterministic pseudo-random bytes with some redundancy (compressible, not trivially). */
function bytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let a = seed >>> 0;
  for (let i = 0; i < n; i++) {
    a = (Math.imul(a, 1103515245) + 12345) >>> 0;
    out[i] = (a >>> 24) % 40;
  }
  return out;
}

function concat(parts: Iterable<Uint8Array>): Uint8Array {
  const list = [...parts];
  return new Uint8Array(Buffer.concat(list.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength))));
}

describe('gunzipExact', () => {
  const data = bytes(300_000, 1);
  const gz = gzipSync(data);

  it('reads the size from the trailer and inflates to the same bytes as gunzipSync', () => {
    expect(gzipAnnouncedSize(gz)).toBe(data.length);
    expect(Buffer.compare(gunzipExact(gz), data)).toBe(0);
  });

  it('inflates every member of a multi-member stream (the trailer only tells the last size)', () => {
    const tail = bytes(1000, 2);
    const cat = Buffer.concat([gz, gzipSync(tail)]);
    expect(gzipAnnouncedSize(cat)).toBe(tail.length);
    expect(Buffer.compare(gunzipExact(cat), Buffer.concat([data, tail]))).toBe(0);
  });

  it('gives core gunzipBounded error codes for a lying trailer, a truncated stream and the size limit', () => {
    const lying = Buffer.from(gz);
    lying.writeUInt32LE(data.length - 5, lying.length - 4);
    const truncated = gz.subarray(0, gz.length - 100);
    for (const bad of [lying, truncated]) {
      const e = thrownBy(() => gunzipExact(bad, {}, 'bad.pb.gz'));
      const ref = thrownBy(() => gunzipBounded(bad, {}, 'bad.pb.gz'));
      expect(isProfkitError(e) && isProfkitError(ref)).toBe(true);
      if (isProfkitError(e) && isProfkitError(ref)) {
        expect(e.code).toBe(ref.code);
        expect(e.detail.file).toBe('bad.pb.gz');
      }
    }
    const limited = thrownBy(() => gunzipExact(gz, { maxDecompressedBytes: data.length - 1 }));
    expect(isProfkitError(limited) && limited.code).toBe(ErrorCodes.LIMIT);
    expect(Buffer.compare(gunzipExact(gz, { maxDecompressedBytes: data.length }), data)).toBe(0);
  });

  it('does not trust a trailer announcing more than deflate can expand to', () => {
    const huge = Buffer.from(gz);
    huge.writeUInt32LE(0xffffffff, huge.length - 4);
    expect(gzipAnnouncedSize(huge)).toBeUndefined();
    expect(isProfkitError(thrownBy(() => gunzipExact(huge)))).toBe(true);
  });
});

describe('one-buffer gzip and streamed gzip', () => {
  it('gzipOneBuffer and gzipChunks give streams that inflate to the input, the same bytes up to one block (128 KiB)', async () => {
    const data = bytes(700_000, 3);
    const one = gzipOneBuffer(data, 6);
    expect(Buffer.compare(gunzipSync(one), data)).toBe(0);
    const pieces = [data.subarray(0, 1), data.subarray(1, 65_537), data.subarray(65_537, 400_000), data.subarray(400_000)];
    const streamed = await gzipChunks(data.length, pieces, 6);
    expect(Buffer.compare(gunzipSync(streamed), data)).toBe(0);
    // Deflated in blocks on several threads: a few bytes per block join more than one stream.
    expect(streamed.length / one.length).toBeLessThan(1.005);
    const small = data.subarray(0, 60_000);
    expect(Buffer.compare(await gzipChunks(small.length, [small.subarray(0, 7), small.subarray(7)], 6), gzipOneBuffer(small, 6))).toBe(0);
  });

  it('level 1 inflates to the input too', async () => {
    const data = bytes(100_000, 4);
    expect(Buffer.compare(gunzipSync(await gzipChunks(data.length, [data], 1)), data)).toBe(0);
  });
});

describe('encodeProfileChunks', () => {
  const p = bigProfile(4000);
  const whole = encodeProfile(p);

  it('concatenated chunks are the bytes of encodeProfile, each chunk about chunkSize', () => {
    const { total, chunks } = encodeProfileChunks(p, { chunkSize: 4096 });
    const list = [...chunks];
    expect(total).toBe(whole.length);
    expect(list.length).toBeGreaterThan(whole.length / 8192);
    // Every chunk but the last two (the one before the trailing small fields, and those) is
    // filled to chunkSize, and none passes it by more than one message (all small here).
    for (const c of list.slice(0, -2)) expect(c.length).toBeGreaterThanOrEqual(4096);
    for (const c of list) expect(c.length).toBeLessThan(2 * 4096);
    expect(Buffer.compare(concat(list), whole)).toBe(0);
  });

  it('a window has room for the largest sample, however much larger than the others and than chunkSize', () => {
    // The window is chunkSize plus the largest message: the sample sizes' maximum is taken while
    // sizing them (a window without room for this sample would lose its bytes past the end).
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }] });
    const fn = b.internFunction({ name: 'f', filename: 'f.go' });
    const locs = Array.from({ length: 200 }, (_, i) => b.addLocation({ functionId: fn, line: i + 1 }));
    for (let s = 0; s < 300; s++) b.addSample(s === 150 ? Array.from({ length: 6000 }, (_, k) => locs[k % 200]!) : [locs[s % 200]!], [1n, 10000000n]);
    const q = b.build();
    const list = [...encodeProfileChunks(q, { chunkSize: 4096 }).chunks];
    expect(Math.max(...list.map((c) => c.length))).toBeGreaterThan(2 * 4096);
    expect(Buffer.compare(concat(list), encodeProfile(q))).toBe(0);
  });

  it('interleaved encodings (and a whole encoding in between) do not disturb each other', () => {
    const q = bigProfile(1500, 99);
    const qWhole = encodeProfile(q);
    const a = encodeProfileChunks(p, { chunkSize: 4096 }).chunks[Symbol.iterator]();
    const b = encodeProfileChunks(q, { chunkSize: 4096 }).chunks[Symbol.iterator]();
    const pa: Uint8Array[] = [];
    const pb: Uint8Array[] = [];
    let ra = a.next();
    let rb = b.next();
    while (!ra.done || !rb.done) {
      if (!ra.done) {
        pa.push(ra.value);
        ra = a.next();
      }
      expect(Buffer.compare(encodeProfile(q), qWhole)).toBe(0);
      if (!rb.done) {
        pb.push(rb.value);
        rb = b.next();
      }
    }
    expect(Buffer.compare(concat(pa), whole)).toBe(0);
    expect(Buffer.compare(concat(pb), qWhole)).toBe(0);
  });

  it('the adapter write (streamed into zlib) gives what serializePprof gives once inflated, for both levels', async () => {
    const registry = createRegistry([adapter]);
    for (const level of [6, 1]) {
      const r = await registry.serialize(p, { format: 'pprof', fileName: 'out.pb.gz', options: { level } });
      // One zlib stream against blocks deflated apart: the same payload, about the same size.
      const one = serializePprof(p, { level });
      expect(Buffer.compare(gunzipSync(r.data), gunzipSync(one))).toBe(0);
      // (Often smaller: each block's Huffman tables fit its own statistics.)
      expect(r.data.length / one.length).toBeLessThan(1.005);
      expect(Buffer.compare(gunzipSync(r.data), whole)).toBe(0);
      expect(Buffer.compare(encodeProfile(parsePprof(r.data).profile), whole)).toBe(0);
      expect([...r.data.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, level === 1 ? 4 : 0, 0xff]);
    }
  });
});
