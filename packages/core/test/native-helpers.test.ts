/** The `#native` seam: the portable byte helpers give exactly what the Node ones give. */
import { describe, expect, it } from 'vitest';
import * as portable from '../src/native-browser.js';
import * as native from '../src/native-node.js';

const samples = ['', 'ascii', 'é', '€uro', '😀 emoji', 'lone \ud800 high', 'lone \udc00 low', 'end \ud83d', 'x'.repeat(10_000) + 'ü'];

describe('native helpers', () => {
  it('utf8Length counts as Buffer.byteLength does (lone surrogates as 3 bytes)', () => {
    for (const s of samples) expect([s, portable.utf8Length(s)]).toEqual([s, native.utf8Length(s)]);
  });

  it('utf8Decoder slices decode the same, invalid UTF-8 included', () => {
    const bytes = new Uint8Array([0x61, 0xc3, 0xa9, 0xff, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xc3]);
    const a = portable.utf8Decoder(bytes);
    const b = native.utf8Decoder(bytes);
    for (let s = 0; s <= bytes.length; s++) for (let e = s; e <= bytes.length; e++) expect(a(s, e)).toBe(b(s, e));
  });

  it('utf8Decoder slices decode the same on both sides of the short-ASCII path (ASCII, NUL, a BOM, bytes >= 0x80 at either end)', () => {
    const ascii = Uint8Array.from({ length: 600 }, (_v, i) => (i * 37) % 128);
    const mixed = ascii.slice();
    mixed.set([0xef, 0xbb, 0xbf], 60);
    mixed[256] = 0x80;
    mixed[130] = 0xc3;
    mixed[131] = 0xa9;
    for (const bytes of [ascii, mixed]) {
      const a = portable.utf8Decoder(bytes);
      const b = native.utf8Decoder(bytes);
      for (let s = 0; s < bytes.length; s += 3) for (let e = s; e <= Math.min(bytes.length, s + 270); e += e - s < 250 ? 1 : 3) expect(a(s, e)).toBe(b(s, e));
    }
  });

  it('crc32 continues across chunks and equals zlib', () => {
    const data = new Uint8Array(100_000).map((_, i) => (i * 7919) & 0xff);
    expect(portable.crc32(data)).toBe(native.crc32(data));
    expect(portable.crc32(data.subarray(5000), portable.crc32(data.subarray(0, 5000)))).toBe(native.crc32(data));
    expect(portable.crc32(new Uint8Array(0))).toBe(0);
  });

  it('latin1String maps every byte of a typed array to one character', () => {
    const bytes = new Uint8Array(20_000).map((_, i) => i & 0xff);
    expect(portable.latin1String(bytes)).toBe(native.latin1String(bytes));
    const wide = new BigUint64Array([1n, 2n ** 63n]);
    expect(portable.latin1String(wide)).toBe(native.latin1String(wide));
  });
});
