/**
 * The legacy binary CPU profile (gperftools `ProfileData`, old Go runtimes, Java agents), read as
 * google/pprof `parseCPU` reads it: word size and byte order from the header, records until the
 * `0, 1, 0` trailer, then the maps text (or Java location lines).
 */

import { ErrorCodes } from '@profkit/core';
import { type LLocation, type LProfile, dec, newLProfile } from './legacy-model.js';
import { parseMemoryMap } from './mappings.js';
import { parseJavaLocations } from './java.js';
import { Unrecognized, parseError } from './text.js';

import { type CpuHeader, detectCpuHeader } from './cpu-header.js';
export { type CpuHeader, type WordFormat, WORD_FORMATS, detectCpuHeader } from './cpu-header.js';

export interface CpuParse {
  profile: LProfile;
  header: CpuHeader;
  /** Whether the `0, 1, 0` trailer was found (without it no maps text is parsed). */
  trailer: boolean;
  /** Byte offset where the text after the trailer starts. */
  textOffset: number;
  /** Number of records read (before any heuristics). */
  records: number;
}

export interface CpuOptions {
  /** Largest number of records accepted (memory bound); default 2^31. */
  maxRecords?: number;
  /** Skip the signal-frame heuristic. */
  keepSignalFrames?: boolean;
}

/** Parses a legacy CPU profile (C++ or Java flavour). */
export function parseCpu(bytes: Uint8Array, options: CpuOptions = {}): CpuParse {
  const header = detectCpuHeader(bytes);
  if (!header) throw new Unrecognized('no legacy CPU header');
  const f = header.word;
  const int64 = (v: bigint) => BigInt.asIntN(64, v);
  const period = int64(header.periodMicros);
  const p = newLProfile(
    [
      { type: 'samples', unit: 'count' },
      { type: 'cpu', unit: 'nanoseconds' },
    ],
    { type: 'cpu', unit: 'nanoseconds' },
    int64(period * 1000n),
  );
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const le = f.littleEndian;
  const word = (o: number): bigint => (f.size === 4 ? BigInt(view.getUint32(o, le)) : view.getBigUint64(o, le));
  // A slot as a JS number when it is below 2^53 (the common case), else -1: this keeps the hot
  // loop free of BigInt allocations; BigInt is made once per distinct address.
  const small = (o: number): number => {
    if (f.size === 4) return view.getUint32(o, le);
    const lo = view.getUint32(le ? o : o + 4, le);
    const hi = view.getUint32(le ? o + 4 : o, le);
    return hi < 0x200000 ? hi * 4294967296 + lo : -1;
  };
  const adjust = !header.java;
  // Keys: the (adjusted) address as a number when below 2^53, else as a bigint.
  const locs = new Map<number | bigint, LLocation>();
  const intern = (key: number | bigint, addr: () => bigint): LLocation => {
    let loc = locs.get(key);
    if (!loc) {
      loc = { id: 0, address: addr(), mapping: undefined, line: undefined };
      locs.set(key, loc);
      p.locations.push(loc);
    }
    return loc;
  };
  let off = 5 * f.size;
  let trailer = false;
  let records = 0;
  const maxRecords = options.maxRecords ?? 2 ** 31;
  while (off < bytes.length) {
    if (bytes.length - off < 2 * f.size) {
      throw parseError(`record header at byte ${off} is cut short: ${bytes.length - off} bytes left, ${2 * f.size} needed`, { offset: off, rule: 'records are count, depth, pcs…' }, ErrorCodes.TRUNCATED);
    }
    const recordStart = off;
    const nSmall = small(off + f.size);
    const left = bytes.length - off - 2 * f.size;
    if (nSmall < 0 || nSmall * f.size > left) {
      throw parseError(`record at byte ${recordStart} has depth ${word(off + f.size)} but only ${left} bytes remain`, { offset: recordStart, rule: 'a record holds depth pcs' }, ErrorCodes.TRUNCATED);
    }
    const n = nSmall;
    const countSmall = small(off);
    off += 2 * f.size;
    if (countSmall === 0 && n === 1 && small(off) === 0) {
      off += f.size;
      trailer = true;
      break;
    }
    if (++records > maxRecords) {
      throw parseError(`more than ${maxRecords} records (raise it with the option limits.maxRecords)`, { offset: recordStart, rule: 'record limit', option: 'maxRecords' }, ErrorCodes.LIMIT);
    }
    const sloc: LLocation[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const o = off + i * f.size;
      const a = small(o);
      if (adjust && i > 0) {
        sloc[i] = a > 0 ? intern(a - 1, () => BigInt(a - 1)) : intern(canon(dec(word(o))), () => dec(word(o)));
      } else {
        sloc[i] = a >= 0 ? intern(a, () => BigInt(a)) : intern(canon(word(o)), () => word(o));
      }
    }
    off += n * f.size;
    const c = BigInt.asIntN(64, countSmall >= 0 ? BigInt(countSmall) : word(recordStart));
    p.samples.push({ values: [c, BigInt.asIntN(64, c * p.period)], locs: sloc });
  }
  const textOffset = off;
  const text = trailer ? new TextDecoder().decode(bytes.subarray(off)) : '';
  if (header.java) {
    parseJavaLocations(text, new Map(p.locations.map((l) => [l.address, l])), p);
    for (const l of p.locations) l.address = 0n;
  } else {
    if (!options.keepSignalFrames) removeSignalFrames(p);
    parseMemoryMap(p, text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)));
    cleanupDuplicateLocations(p);
  }
  return { profile: p, header, trailer, textOffset, records };
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** The map key of an address: a number below 2^53, else the bigint. */
function canon(a: bigint): number | bigint {
  return a <= MAX_SAFE ? Number(a) : a;
}

/**
 * If most samples share the frame at stack position 1, it is the signal handler's frame: remove
 * it (up to two passes; one differing sample allowed per 32).
 */
export function removeSignalFrames(p: LProfile): void {
  const margin = Math.floor(p.samples.length / 32);
  for (let iter = 0; iter < 2; iter++) {
    const addr1 = new Map<bigint, number>();
    for (const s of p.samples) {
      if (s.locs.length > 1) {
        const a = s.locs[1]!.address;
        addr1.set(a, (addr1.get(a) ?? 0) + 1);
      }
    }
    for (const [id1, count] of addr1) {
      if (count >= p.samples.length - margin) {
        for (const s of p.samples) {
          if (s.locs.length > 1 && s.locs[1]!.address === id1) s.locs.splice(1, 1);
        }
        break;
      }
    }
  }
}

/** The unwinder reported the leaf twice (once decremented): drop the duplicate. */
export function cleanupDuplicateLocations(p: LProfile): void {
  for (const s of p.samples) {
    if (hasDuplicateLeaf(s.locs)) s.locs.splice(1, 1);
  }
}

/** Whether `cleanupDuplicateLocations` drops the second frame of `locs`. */
export function hasDuplicateLeaf(locs: readonly LLocation[]): boolean {
  return locs.length > 1 && locs[0]!.address === ((locs[1]!.address + 1n) & ((1n << 64n) - 1n));
}
