import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, ProfkitError, gunzipBounded, gunzipHead, gzipAnnouncedSize, isGzip, writeFileAtomic } from '../src/node/index.js';

describe('gunzipHead', () => {
  it('returns exactly the requested head of highly compressible data', () => {
    const big = Buffer.from('abcd'.repeat(262144));
    const head = gunzipHead(gzipSync(big), 4096);
    expect(head.length).toBe(4096);
    expect(Buffer.from(head).equals(big.subarray(0, 4096))).toBe(true);
  });
  it('returns what a truncated stream holds, and nothing for garbage', () => {
    const data = Buffer.from(Array.from({ length: 5000 }, (_, i) => `line ${i}\n`).join(''));
    const gz = gzipSync(data);
    const head = gunzipHead(gz.subarray(0, Math.floor(gz.length / 2)), 1 << 20);
    expect(head.length).toBeGreaterThan(0);
    expect(Buffer.from(head).equals(data.subarray(0, head.length))).toBe(true);
    expect(gunzipHead(Buffer.from([0x1f, 0x8b, 1, 2, 3]), 10).length).toBe(0);
  });
});

describe('gunzipBounded', () => {
  it('refuses output above the limit with the option that raises it', () => {
    const bomb = gzipSync(Buffer.alloc(1 << 20));
    try {
      gunzipBounded(bomb, { maxDecompressedBytes: 1000 }, 'bomb.gz');
      expect.unreachable();
    } catch (e) {
      expect((e as ProfkitError).code).toBe(ErrorCodes.LIMIT);
      expect((e as ProfkitError).detail.option).toBe('maxDecompressedBytes');
    }
    expect(isGzip(bomb)).toBe(true);
    expect(gunzipBounded(bomb).length).toBe(1 << 20);
  });
  it('inflates every member of a multi-member stream, whatever the last trailer announces', () => {
    const a = Buffer.from('first member '.repeat(1000));
    const b = Buffer.from('second');
    const both = Buffer.concat([gzipSync(a), gzipSync(b)]);
    expect(gzipAnnouncedSize(gzipSync(a))).toBe(a.length);
    expect(gzipAnnouncedSize(both)).toBe(b.length);
    expect(Buffer.from(gunzipBounded(both)).equals(Buffer.concat([a, b]))).toBe(true);
  });
  it('ignores an implausible announced size', () => {
    const gz = gzipSync(Buffer.from('abc'));
    gz.writeUInt32LE(0xffffffff, gz.length - 4);
    expect(gzipAnnouncedSize(gz)).toBeUndefined();
  });
  it('reports corrupt data as PROFKIT_E_DECOMPRESS', () => {
    const gz = gzipSync(Buffer.from('hello world'));
    gz[12] ^= 0xff;
    expect(() => gunzipBounded(gz, {}, 'x.gz')).toThrow(expect.objectContaining({ code: ErrorCodes.DECOMPRESS }));
  });
});

describe('writeFileAtomic', () => {
  it('replaces the target, leaves no temp file, and refuses to overwrite an input', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'profkit-io-'));
    const out = join(dir, 'out.bin');
    writeFileSync(out, 'old');
    await writeFileAtomic(out, new Uint8Array([1, 2, 3]));
    expect([...readFileSync(out)]).toEqual([1, 2, 3]);
    expect(readdirSync(dir)).toEqual(['out.bin']);
    await expect(writeFileAtomic(out, new Uint8Array([9]), { inputs: [out] })).rejects.toMatchObject({ code: ErrorCodes.CLOBBER });
    expect([...readFileSync(out)]).toEqual([1, 2, 3]);
  });
  it('cleans up its temp file when the data source fails midway', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'profkit-io-'));
    const out = join(dir, 'out.bin');
    async function* failing() {
      yield new Uint8Array([1]);
      throw new Error('source broke');
    }
    await expect(writeFileAtomic(out, failing())).rejects.toBeInstanceOf(ProfkitError);
    expect(readdirSync(dir)).toEqual([]);
  });
});
