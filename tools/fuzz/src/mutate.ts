/**
 * Mutations of the fuzzer: byte-level (flips, interesting values, insert/delete/duplicate
 * chunks, splices with other corpus entries), protobuf/varint-aware (length prefixes set to
 * huge or off-by-one values) and text-aware (numbers replaced by extremes, lines duplicated or
 * dropped, separators inserted). Deterministic for a given PRNG.
 */

import { seededRandom } from '@profkit/test-utils';

export type Rng = () => number;

/** mulberry32 (test-utils' `seededRandom`): small, fast, deterministic; failures reproduce from the seed. */
export const rng: (seed: number) => Rng = seededRandom;

const int = (r: Rng, n: number) => Math.floor(r() * n);

const INTERESTING_BYTES = [0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x20, 0x0a, 0x22, 0x3a, 0x40, 0x2d];
const INTERESTING_NUMBERS = [
  '0', '-1', '1', '18446744073709551615', '18446744073709551616', '9223372036854775807', '-9223372036854775808',
  '4294967295', '4294967296', '2147483648', '1e308', 'NaN', '0x', '0xffffffffffffffff', '99999999999999999999999999',
  '1000000000', '', '-0', '3.5',
];
const TEXT_TOKENS = ['\n', '"', ' ', '#', ':', '@', '[', ']', '{', '}', ',', '=', '\r\n', '\t', '0x', '/', '\\', '\0', '\u00ff', 'sample.interval=', 'MAPPED_LIBRARIES:\n', '--- '];

/** A protobuf/LEB128 varint encoding `v`. */
export function varint(v: bigint): number[] {
  const out: number[] = [];
  let x = BigInt.asUintN(64, v);
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x > 0n) b |= 0x80;
    out.push(b);
  } while (x > 0n);
  return out;
}

export function concat(...parts: ArrayLike<number>[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p as ArrayLike<number>, o);
    o += p.length;
  }
  return out;
}

function isMostlyText(b: Uint8Array): boolean {
  const n = Math.min(b.length, 512);
  let printable = 0;
  for (let i = 0; i < n; i++) {
    const c = b[i]!;
    if (c === 9 || c === 10 || c === 13 || (c >= 32 && c < 127)) printable++;
  }
  return n > 0 && printable / n > 0.9;
}

/** Replaces a run of digits in a text input by an extreme number. */
function mutateNumber(b: Uint8Array, r: Rng): Uint8Array | undefined {
  for (let tries = 0; tries < 8; tries++) {
    let i = int(r, b.length);
    while (i < b.length && !(b[i]! >= 0x30 && b[i]! <= 0x39)) i++;
    if (i >= b.length) continue;
    let j = i;
    while (j < b.length && ((b[j]! >= 0x30 && b[j]! <= 0x39) || (b[j]! | 0x20) >= 0x61 && (b[j]! | 0x20) <= 0x66)) j++;
    const repl = new TextEncoder().encode(INTERESTING_NUMBERS[int(r, INTERESTING_NUMBERS.length)]!);
    return concat(b.subarray(0, i), repl, b.subarray(j));
  }
  return undefined;
}

function lineBounds(b: Uint8Array, r: Rng): [number, number] {
  let s = int(r, b.length);
  while (s > 0 && b[s - 1] !== 0x0a) s--;
  let e = s;
  while (e < b.length && b[e] !== 0x0a) e++;
  return [s, Math.min(b.length, e + 1)];
}

/** Finds a varint at a random position and replaces it by a huge or off-by-one value. */
function mutateVarint(b: Uint8Array, r: Rng): Uint8Array {
  const at = int(r, b.length);
  let end = at;
  while (end < b.length && end - at < 10 && (b[end]! & 0x80) !== 0) end++;
  end = Math.min(b.length, end + 1);
  let v = 0n;
  for (let k = end - 1; k >= at; k--) v = (v << 7n) | BigInt(b[k]! & 0x7f);
  const choices = [v + 1n, v - 1n, v * 2n, 0n, 0xffffffffn, 0x7fffffffn, (1n << 63n) - 1n, (1n << 64n) - 1n, 1n << 31n, BigInt(b.length)];
  return concat(b.subarray(0, at), varint(choices[int(r, choices.length)]!), b.subarray(end));
}

/** One to four stacked mutations of `input`; `others` feeds splices. */
export function mutate(input: Uint8Array, r: Rng, others: readonly Uint8Array[] = [], maxLen = 1 << 20): Uint8Array {
  let b: Uint8Array = input.length === 0 ? Uint8Array.of(int(r, 256)) : input.slice();
  const text = isMostlyText(b);
  const rounds = 1 + int(r, 4);
  for (let k = 0; k < rounds && b.length > 0; k++) {
    const at = int(r, b.length);
    const op = int(r, text ? 14 : 11);
    switch (op) {
      case 0:
        b[at] = b[at]! ^ (1 << int(r, 8));
        break;
      case 1:
        b[at] = int(r, 256);
        break;
      case 2:
        b[at] = INTERESTING_BYTES[int(r, INTERESTING_BYTES.length)]!;
        break;
      case 3: {
        // delete a chunk
        const n = 1 + int(r, Math.min(64, b.length - at));
        b = concat(b.subarray(0, at), b.subarray(at + n));
        break;
      }
      case 4: {
        // duplicate a chunk (repeats grow structures: more frames, more samples)
        const n = 1 + int(r, Math.min(256, b.length - at));
        const times = 1 + int(r, 8);
        const chunk = b.subarray(at, at + n);
        b = concat(b.subarray(0, at + n), ...Array.from({ length: times }, () => chunk), b.subarray(at + n));
        break;
      }
      case 5:
        b = b.subarray(0, at);
        break;
      case 6: {
        // splice with another corpus entry
        const o = others.length ? others[int(r, others.length)]! : b;
        const from = int(r, o.length + 1);
        b = concat(b.subarray(0, at), o.subarray(from, from + 1 + int(r, 512)));
        break;
      }
      case 7:
        b = mutateVarint(b, r);
        break;
      case 8: {
        // 32/64-bit little-endian extremes (binary headers: gperftools CPU, FIDL)
        const w = int(r, 2) ? 4 : 8;
        const vals = [0xff, 0x00, 0x7f, 0x80];
        const fill = vals[int(r, vals.length)]!;
        for (let i = 0; i < w && at + i < b.length; i++) b[at + i] = i === w - 1 && fill === 0x7f ? 0x7f : fill === 0x7f ? 0xff : fill;
        break;
      }
      case 9: {
        // insert random bytes
        const n = 1 + int(r, 16);
        b = concat(b.subarray(0, at), Array.from({ length: n }, () => int(r, 256)), b.subarray(at));
        break;
      }
      case 10: {
        // swap two chunks
        const n = 1 + int(r, 32);
        const at2 = int(r, b.length);
        const a1 = b.slice(at, at + n);
        const a2 = b.slice(at2, at2 + n);
        if (at + a2.length <= b.length && at2 + a1.length <= b.length && a1.length === a2.length) {
          b.set(a2, at);
          b.set(a1, at2);
        }
        break;
      }
      case 11:
        b = mutateNumber(b, r) ?? b;
        break;
      case 12: {
        // duplicate or drop a whole line
        const [s, e] = lineBounds(b, r);
        b = int(r, 2) ? concat(b.subarray(0, e), b.subarray(s, e), b.subarray(e)) : concat(b.subarray(0, s), b.subarray(e));
        break;
      }
      default: {
        const tok = new TextEncoder().encode(TEXT_TOKENS[int(r, TEXT_TOKENS.length)]!);
        b = concat(b.subarray(0, at), tok, b.subarray(at));
      }
    }
    if (b.length > maxLen) b = b.subarray(0, maxLen);
  }
  return b;
}
