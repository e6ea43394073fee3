/**
 * Byte helpers without Node (browsers, workers): the portable versions of `native-node.ts`, with
 * the same results. Picked by the `#native` imports map wherever the `node` condition does not apply.
 */

// ignoreBOM: a slice that starts with EF BB BF keeps its U+FEFF, as Buffer.toString keeps it (the default drops it).
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
const encoder = new TextEncoder();

/**
 * Slices of at most this many bytes (C++ names are long) that are all ASCII become strings by
 * `String.fromCharCode`: `TextDecoder.decode` costs about 2 µs a call in Chromium, and its strings
 * compare several times slower (a pprof string table of 100,000 names: 250 -> 140-175 ms to
 * decode, and sorting 47,000 of them 490-920 -> 150-190 ms).
 */
const SHORT_ASCII_BYTES = 256;

/** A decoder of UTF-8 slices of `bytes` (no copy of the input); invalid UTF-8 becomes U+FFFD. */
export function utf8Decoder(bytes: Uint8Array): (start: number, end: number) => string {
  return (start, end) => {
    if (end - start <= SHORT_ASCII_BYTES) {
      let high = 0;
      for (let i = start; i < end; i++) high |= bytes[i]!;
      if (high < 0x80) return String.fromCharCode.apply(null, bytes.subarray(start, end) as unknown as number[]);
    }
    return utf8.decode(bytes.subarray(start, end));
  };
}

/** The UTF-8 length of a string (lone surrogates count as U+FFFD, 3 bytes, as TextEncoder writes them). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

let crcTable: Int32Array | undefined;

/** CRC-32 (IEEE, as gzip's), continuing from `value`. */
export function crc32(data: Uint8Array, value = 0): number {
  if (!crcTable) {
    crcTable = new Int32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c;
    }
  }
  const t = crcTable;
  let crc = ~value;
  for (let i = 0; i < data.length; i++) crc = t[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}

/** A byte array for the caller to fill (zeroed: the platform has no uninitialized allocation). */
export function allocUninitialized(n: number): Uint8Array {
  return new Uint8Array(n);
}

/** The bytes of a typed array as a string of one character per byte (a compact map key). */
export function latin1String(view: ArrayBufferView): string {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  let s = '';
  for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode(...bytes.subarray(i, Math.min(bytes.length, i + 8192)));
  return s;
}
