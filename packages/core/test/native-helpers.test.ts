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
