/**
 * Issue 16 item 1: the main entry works without Node. The gzip seam's two implementations
 * (node:zlib, and pako for browsers) behave the same (output, limits, typed errors), and a
 * registry of the main entry reads bytes, Blobs and streams and refuses paths with a usage error.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { Inflate } from 'pako';
import { thrownBy } from '@profkit/test-utils';
import * as browserGzip from '../src/gzip-browser.js';
import * as nodeGzip from '../src/gzip-node.js';
import { createRegistry as createNeutralRegistry, defineAdapter, createProfile, ErrorCodes, isProfkitError, GZIP_IMPLEMENTATION } from '../src/index.js';

const impls = { 'node:zlib': nodeGzip, pako: browserGzip } as const;

function text(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = 97 + ((i * 7) % 13);
  return out;
}

/** Byte equality (vitest's deep equality walks a 300 KB array element by element: seconds). */
function same(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

async function drain(it: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const c of it) parts.push(c);
  return Buffer.concat(parts);
}

describe('the gzip seam', () => {
  it('picks node:zlib on Node through the #gzip imports map', () => {
    expect(GZIP_IMPLEMENTATION).toBe('node:zlib');
    expect(browserGzip.GZIP_IMPLEMENTATION).toBe('pako');
  });

  for (const [name, gz] of Object.entries(impls)) {
    describe(name, () => {
      const raw = text(300_000);
      it('inflates every member of a multi-member gzip, whole and streamed, and reads the other implementation\'s output', async () => {
        const twoMembers = Buffer.concat([gzipSync(raw.subarray(0, 1000)), gzipSync(raw.subarray(1000))]);
        expect(same(gz.gunzipBounded(twoMembers), raw)).toBe(true);
        // Streamed in pieces that end exactly where the first member ends, and in odd sizes.
        const first = gzipSync(raw.subarray(0, 1000));
        async function* pieces(): AsyncGenerator<Uint8Array> {
          yield twoMembers.subarray(0, first.length);
          for (let at = first.length; at < twoMembers.length; at += 777) yield twoMembers.subarray(at, Math.min(twoMembers.length, at + 777));
        }
        expect(same(await drain(gz.gunzipChunks(pieces())), raw)).toBe(true);
        const other = name === 'pako' ? nodeGzip : browserGzip;
        expect(same(gz.gunzipBounded(other.gzipBytes(raw, 6)), raw)).toBe(true);
        expect(same(gz.gunzipBounded(await other.gzipChunks(raw.length, [raw.subarray(0, 5), raw.subarray(5)], 1)), raw)).toBe(true);
        expect(same(gz.gunzipBounded(await drain(other.gzipStream([raw.subarray(0, 9), raw.subarray(9)], 6))), raw)).toBe(true);
      });

      it('stops at maxDecompressedBytes with PROFKIT_E_LIMIT naming the option', () => {
        const e = thrownBy(() => gz.gunzipBounded(gzipSync(raw), { maxDecompressedBytes: 100_000 }, 'bomb.gz'));
        expect(isProfkitError(e) && e.code).toBe(ErrorCodes.LIMIT);
        expect(isProfkitError(e) && e.detail).toMatchObject({ option: 'maxDecompressedBytes', file: 'bomb.gz' });
      });

      it('says PROFKIT_E_DECOMPRESS for corrupt and truncated data', async () => {
        const good = gzipSync(raw);
        const corrupt = Uint8Array.from(good);
        corrupt.fill(0xff, 20, 60);
        for (const bad of [corrupt, good.subarray(0, good.length - 9)]) {
          const e = thrownBy(() => gz.gunzipBounded(bad, {}, 'x.gz'));
          expect(isProfkitError(e) && e.code).toBe(ErrorCodes.DECOMPRESS);
          async function* one(): AsyncGenerator<Uint8Array> {
            yield bad;
          }
          const s = await drain(gz.gunzipChunks(one(), 'x.gz')).then(() => undefined, (err: unknown) => err);
          expect(isProfkitError(s) && s.code).toBe(ErrorCodes.DECOMPRESS);
        }
      });

      it('inflates the head of a truncated gzip, bounded by max', async () => {
        const good = gzipSync(raw);
        const head = gz.gunzipHead(good.subarray(0, 2000), 4096);
        expect(same(head, raw.subarray(0, 4096))).toBe(true);
        expect(same(await gz.inflateHead(good.subarray(0, 2000), 100), raw.subarray(0, 100))).toBe(true);
        expect(gz.gunzipHead(new Uint8Array([0x1f, 0x8b, 1, 2, 3])).length).toBe(0);
      });
    });
  }
});

describe('pako gunzipChunks', () => {
  it('inflates a large input chunk in slices, so a gzip bomb in one chunk is not inflated whole before the first output', async () => {
    const bomb = gzipSync(new Uint8Array(64 << 20)); // 64 MiB of zeros in ~64 KiB
    async function* oneChunk(): AsyncGenerator<Uint8Array> {
      yield bomb;
    }
    const push = vi.spyOn(Inflate.prototype, 'push');
    try {
      for await (const piece of browserGzip.gunzipChunks(oneChunk(), 'bomb.gz')) {
        expect(piece.length).toBeGreaterThan(0);
        break;
      }
      const pushed = push.mock.calls.reduce((n, [data]) => n + (data as Uint8Array).length, 0);
      // Before: the whole chunk went in at once (and all 64 MiB came out) before the first output.
      expect(pushed).toBeLessThan(bomb.length / 2);
    } finally {
      push.mockRestore();
    }
  });
});

describe('a registry of the main entry (no file access)', () => {
  const seen: string[] = [];
  const adapter = defineAdapter({
    name: 'lines',
    formats: [{ id: 'lines', extensions: ['.lines'], binary: false, read: true, write: true }],
    sniff: (head) => (new TextDecoder().decode(head).startsWith('lines\n') ? 1 : 0),
    async read(input) {
      let n = 0;
      for await (const c of input.chunks()) n += c.length;
      seen.push(`${input.fileName} ${n} ${input.gzipped}`);
      return { profile: createProfile(), warnings: [] };
    },
    async write() {
      return { data: new TextEncoder().encode('lines\n'), warnings: [] };
    },
  });
  const body = new TextEncoder().encode(`lines\n${'x'.repeat(100_000)}`);

  it('reads a Blob, a ReadableStream and an AsyncIterable, gzip or not', async () => {
    const registry = createNeutralRegistry([adapter]);
    expect(registry.files).toBeUndefined();
    seen.length = 0;
    await registry.read(new File([body], 'a.lines'));
    await registry.read(new Blob([gzipSync(body)]));
    await registry.read(new Blob([gzipSync(body)]).stream(), { fileName: 'piped' });
    async function* chunks(): AsyncGenerator<Uint8Array> {
      for (let at = 0; at < body.length; at += 4096) yield body.subarray(at, at + 4096);
    }
    await registry.read(chunks());
    expect(seen).toEqual([`a.lines ${body.length} false`, `<blob> ${body.length} true`, `piped ${body.length} true`, `<stream> ${body.length} false`]);
  });

  it('applies maxInputBytes to a Blob and maxDecompressedBytes to a gzip stream', async () => {
    const registry = createNeutralRegistry([adapter]);
    const big = await registry.read(new Blob([body]), { limits: { maxInputBytes: 1000 } }).catch((e: unknown) => e);
    expect(isProfkitError(big) && big.detail.option).toBe('maxInputBytes');
    const bomb = await registry.read(new Blob([gzipSync(body)]).stream(), { limits: { maxDecompressedBytes: 1000 } }).catch((e: unknown) => e);
    expect(isProfkitError(bomb) && bomb.detail.option).toBe('maxDecompressedBytes');
  });

  it('refuses file paths with a usage error that names @profkit/core/node', async () => {
    const registry = createNeutralRegistry([adapter]);
    for (const p of [registry.read('x.lines'), registry.write(createProfile(), 'y.lines')]) {
      const e = await p.catch((err: unknown) => err);
      expect(isProfkitError(e) && e.code).toBe(ErrorCodes.USAGE);
      expect(String((e as Error).message)).toContain('@profkit/core/node');
    }
  });
});
