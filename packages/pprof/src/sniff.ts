/**
 * Cheap structural detection of profile.proto: the (gunzipped) head must parse as protobuf wire
 * format whose top-level fields are Profile's field numbers with their wire types, and whose
 * first message fields parse as the expected sub-messages. Never "decoding did not throw".
 */

import { gunzipHead, isGzip, type SniffHints, type SniffResult } from '@profkit/core';

/** Wire type each Profile field must have (13 accepts packed 2 or varint 0). */
const PROFILE_WIRE: Record<number, number> = { 1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 7: 0, 8: 0, 9: 0, 10: 0, 11: 2, 12: 0, 13: -1, 14: 0, 15: 0 };
/** Highest field number of each sub-message, by Profile field. */
const SUB_MAX: Record<number, number> = { 1: 2, 2: 3, 3: 10, 4: 5, 5: 5, 11: 2 };

function varint(b: Uint8Array, p: number, end: number): [number, number] | undefined {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (p >= end) return undefined;
    const x = b[p++]!;
    v += (x & 0x7f) * mul;
    mul *= 128;
    if (x < 0x80) return [v, p];
  }
  return undefined;
}

/** Checks a complete sub-message's fields are within 1..max with varint/length wire types. */
function plausibleSub(b: Uint8Array, p: number, end: number, max: number): boolean {
  while (p < end) {
    const t = varint(b, p, end);
    if (!t) return false;
    const f = Math.floor(t[0] / 8);
    const w = t[0] % 8;
    if (f < 1 || f > max) return false;
    p = t[1];
    if (w === 0) {
      const v = varint(b, p, end);
      if (!v) return false;
      p = v[1];
    } else if (w === 2) {
      const n = varint(b, p, end);
      if (!n || n[1] + n[0] > end) return false;
      p = n[1] + n[0];
    } else return false;
  }
  return true;
}

/** Scores a head of bytes (possibly gzip) as a profile.proto message. */
export function sniffPprof(head: Uint8Array, hints: SniffHints = {}): SniffResult {
  let b = head;
  if (isGzip(b)) b = gunzipHead(b, 4096);
  if (b.length === 0) return 0;
  const truncated = hints.size === undefined ? true : b.length < hints.size || hints.encoding === 'gzip' || isGzip(head);
  const end = b.length;
  let p = 0;
  let fields = 0;
  let messagesChecked = 0;
  let sawString0 = false;
  while (p < end && fields < 64) {
    const t = varint(b, p, end);
    if (!t) return truncated && fields >= 2 ? 0.5 : 0;
    const f = Math.floor(t[0] / 8);
    const w = t[0] % 8;
    const want = PROFILE_WIRE[f];
    if (want === undefined) return 0;
    if (want === -1 ? w !== 0 && w !== 2 : w !== want) return 0;
    p = t[1];
    if (w === 0) {
      const v = varint(b, p, end);
      if (!v) return truncated && fields >= 2 ? 0.5 : 0;
      p = v[1];
    } else {
      const n = varint(b, p, end);
      if (!n) return truncated && fields >= 2 ? 0.5 : 0;
      const e = n[1] + n[0];
      if (e > end) {
        // The head ends inside this field: acceptable only for a truncated head.
        if (!truncated) return 0;
        p = end;
        fields++;
        break;
      }
      const max = SUB_MAX[f];
      if (max !== undefined) {
        if (!plausibleSub(b, n[1], e, max)) return 0;
        messagesChecked++;
      }
      if (f === 6 && !sawString0) {
        if (n[0] !== 0) return 0; // string_table[0] must be ''
        sawString0 = true;
      }
      p = e;
    }
    fields++;
  }
  if (fields === 0) return 0;
  if (messagesChecked >= 1 && fields >= 2) return { score: 0.9, format: 'pprof', reason: `${fields} profile.proto fields, ${messagesChecked} sub-messages well-formed` };
  if (fields >= 3) return { score: 0.8, format: 'pprof', reason: `${fields} profile.proto fields` };
  return { score: 0.3, format: 'pprof', reason: 'few bytes of plausible profile.proto' };
}

/** The adapter's `sniff`: `sniffPprof`, with an exception (a malformed head) scoring 0. */
export function sniff(head: Uint8Array, hints: SniffHints): SniffResult {
  try {
    return sniffPprof(head, hints);
  } catch {
    return 0;
  }
}
