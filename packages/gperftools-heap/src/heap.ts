/**
 * Heap text profiles (google/pprof `parseHeap`): `heapprofile`, `heap_v2/R`, `heapz_v2/R`,
 * `heap/2R` (old v1 and Go's legacy heap), `growth`/`growthz`, `fragmentation[z]`.
 */

import { GrowableBigInt64 } from '@profkit/core';
import { HexLocationTable, type LProfile, newLProfile } from './legacy-model.js';
import { isMemoryMapSentinel, parseMemoryMap } from './mappings.js';
import { type RecordLimits, checkRecord } from './limits.js';
import { MAX_CACHED_ROWS, RowStacks, Unrecognized, hasLongDigitRun, isSpaceOrComment, parseError, parseInt10, truncToInt64 } from './text.js';

const heapHeaderRE = /heap profile: *(\d+): *(\d+) *\[ *(\d+): *(\d+) *\] *@ *(heap[_a-z0-9]*)\/?(\d*)/;
const heapSampleRE = /(-?\d+): *(-?\d+) *\[ *(\d+): *(\d+) *] @([ x0-9a-f]*)/;
const heapSampleAnchoredRE = /^(-?\d+): *(-?\d+) *\[ *(\d+): *(\d+) *] @([ x0-9a-f]*)/;

/**
 * Runs a row regexp in linear time: first anchored at the line start (how every producer writes
 * rows), then, for short lines only, unanchored as google/pprof does (RE2 is linear; a
 * backtracking engine is not, so long junk lines are not searched).
 */
export function matchRow(line: string, anchored: RegExp, unanchored: RegExp): RegExpExecArray | null {
  return anchored.exec(line) ?? (line.length <= MAX_SEARCH_LINE ? unanchored.exec(line) : null);
}
export const MAX_SEARCH_LINE = 4096;

/** Numbers in these formats have at most 20 digits; longer digit runs are refused up front. */
export function checkDigitRuns(line: string, lineNo: number): void {
  if (hasLongDigitRun(line)) {
    throw parseError(`a number of 64 or more digits on this line cannot be an int64 or an address`, { line: lineNo, rule: 'numbers fit in 64 bits' });
  }
}
const growthHeaderRE = /heap profile: *(\d+): *(\d+) *\[ *(\d+): *(\d+) *\] @ growthz?/;
const fragmentationHeaderRE = /heap profile: *(\d+): *(\d+) *\[ *(\d+): *(\d+) *\] @ fragmentationz?/;

/** What the header said, kept in the extension facts and used by the writer. */
export interface HeapHeaderInfo {
  /** `heapprofile`, `heap_v2`, `heapz_v2`, `heap`, `growth`, `growthz`, `fragmentation`, `fragmentationz`. */
  kind: string;
  /** The number after `/` in the header (`''` when absent). */
  rawPeriod: string;
  /** `v2` when values were unsampled (Poisson), `''` otherwise. */
  sampling: '' | 'v2';
  hasAlloc: boolean;
  /** The header's totals as written. */
  totals: [bigint, bigint, bigint, bigint];
}

export interface HeapParse {
  profile: LProfile;
  header: HeapHeaderInfo;
  /** The numbers of each sample's row as written, one column each: inuse count, inuse bytes, alloc count, alloc bytes. */
  raw: [BigInt64Array, BigInt64Array, BigInt64Array, BigInt64Array];
}

/** google/pprof `scaleHeapSample`: the Poisson unsampling of one (count, size) pair. */
export function scaleHeapSample(count: bigint, size: bigint, rate: bigint): [bigint, bigint] {
  if (count === 0n || size === 0n) return [0n, 0n];
  if (rate <= 1n) return [count, size];
  const avgSize = Number(size) / Number(count);
  const scale = 1 / (1 - Math.exp(-avgSize / Number(rate)));
  return [truncToInt64(Number(count) * scale), truncToInt64(Number(size) * scale)];
}

function parseHeapHeader(line: string): { sampling: '' | 'v2'; period: bigint; hasAlloc: boolean; kind: string; raw: string; totals: [bigint, bigint, bigint, bigint] } {
  const h = heapHeaderRE.exec(line)!;
  let period = 0n;
  if (h[6]!.length > 0) {
    const p = parseInt10(h[6]!);
    if (p === undefined) throw new Unrecognized('heap header sampling period overflows int64');
    period = p;
  }
  const hasAlloc = (h[3] !== h[1] && h[3] !== '0') || (h[4] !== h[2] && h[4] !== '0');
  const totals = [h[1], h[2], h[3], h[4]].map((x) => parseInt10(x!) ?? 0n) as [bigint, bigint, bigint, bigint];
  const kind = h[5]!;
  switch (kind) {
    case 'heapz_v2':
    case 'heap_v2':
      return { sampling: 'v2', period, hasAlloc, kind, raw: h[6]!, totals };
    case 'heapprofile':
      return { sampling: '', period: 1n, hasAlloc, kind, raw: h[6]!, totals };
    case 'heap':
      return { sampling: 'v2', period: period / 2n, hasAlloc, kind, raw: h[6]!, totals };
    default:
      throw new Unrecognized(`unknown heap profile kind ${kind}`);
  }
}

/**
 * Parses heap text. `lines` are the input lines (the header first); `lineBase` is the number of
 * lines before them in the file (for error line numbers); `limits` stop it at the first record
 * over `maxSamples` or `maxFramesPerStack` (limits.ts).
 */
export function parseHeap(lines: string[], lineBase = 0, limits?: RecordLimits): HeapParse {
  if (lines.length === 0) throw new Unrecognized('empty');
  const first = lines[0]!;
  const p = newLProfile([], { type: 'space', unit: 'bytes' }, 0n);
  let sampling: '' | 'v2' = '';
  let hasAlloc = false;
  let header: HeapHeaderInfo;
  const toBig = (m: RegExpExecArray) => [m[1], m[2], m[3], m[4]].map((x) => parseInt10(x!) ?? 0n) as [bigint, bigint, bigint, bigint];
  let m: RegExpExecArray | null;
  if (heapHeaderRE.test(first)) {
    const h = parseHeapHeader(first);
    sampling = h.sampling;
    p.period = h.period;
    hasAlloc = h.hasAlloc;
    header = { kind: h.kind, rawPeriod: h.raw, sampling, hasAlloc, totals: h.totals };
  } else if ((m = growthHeaderRE.exec(first))) {
    p.period = 1n;
    header = { kind: /@ growthz/.test(first) ? 'growthz' : 'growth', rawPeriod: '', sampling: '', hasAlloc: false, totals: toBig(m) };
  } else if ((m = fragmentationHeaderRE.exec(first))) {
    p.period = 1n;
    header = { kind: /@ fragmentationz/.test(first) ? 'fragmentationz' : 'fragmentation', rawPeriod: '', sampling: '', hasAlloc: false, totals: toBig(m) };
  } else {
    throw new Unrecognized('no heap profile header');
  }
  p.sampleTypes = hasAlloc
    ? [
        { type: 'alloc_objects', unit: 'count' },
        { type: 'alloc_space', unit: 'bytes' },
        { type: 'inuse_objects', unit: 'count' },
        { type: 'inuse_space', unit: 'bytes' },
      ]
    : [
        { type: 'objects', unit: 'count' },
        { type: 'space', unit: 'bytes' },
      ];

  const stacks = new RowStacks(new HexLocationTable(p, limits?.maxTableEntries));
  // Columns, not a tuple per row: 32 bytes a row rather than about 150.
  const raw = [new GrowableBigInt64(1024), new GrowableBigInt64(1024), new GrowableBigInt64(1024), new GrowableBigInt64(1024)] as const;
  const pushRaw = (nums: readonly bigint[]) => nums.forEach((v, k) => raw[k]!.push(v));
  // The values of a row's numbers, by their text: repeated rows share them (values are bigints,
  // a dozen heap objects a row), so a row repeated a million times costs its sample object only.
  const valuesByText = new Map<string, { values: bigint[]; bytes: bigint; nums: bigint[] }>();
  let totalFrames = 0;
  let i = 1;
  for (; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (isSpaceOrComment(line)) continue;
    if (isMemoryMapSentinel(line)) break;
    const lineNo = lineBase + i + 1;
    checkDigitRuns(line, lineNo);
    const sd = matchRow(line, heapSampleAnchoredRE, heapSampleRE);
    if (!sd) {
      throw parseError(`unexpected number of sample values: got 0, want 6 (heap row "${clip(line)}")`, {
        line: lineNo,
        rule: 'heap rows are "<inuse_count>: <inuse_bytes> [<alloc_count>: <alloc_bytes>] @ <addresses>"',
      });
    }
    const sloc = stacks.get(sd[5]!, { line: lineNo });
    totalFrames += sloc.length;
    const numbers = `${sd[1]} ${sd[2]} ${sd[3]} ${sd[4]}`;
    const known = valuesByText.get(numbers);
    if (known) {
      checkRecord(limits, p.samples.length, sloc.length, lineNo, totalFrames);
      p.samples.push({ values: known.values, locs: sloc, bytes: known.bytes });
      pushRaw(known.nums);
      continue;
    }
    const values: bigint[] = [];
    let blocksize = 0n;
    const nums: bigint[] = [];
    for (const j of [1, 2, 3, 4]) {
      const v = parseInt10(sd[j]!);
      if (v === undefined) throw parseError(`malformed sample: ${clip(line)}: value ${sd[j]} out of int64 range`, { line: lineNo, rule: 'heap values fit in int64' });
      nums.push(v);
    }
    const addValues = (count: bigint, size: bigint, label: string) => {
      if (count === 0n && size !== 0n) {
        throw parseError(`${label} count was 0 but ${label} bytes was ${size}`, { line: lineNo, rule: 'a zero count has zero bytes' });
      }
      if (count !== 0n) {
        blocksize = size / count;
        if (sampling === 'v2') [count, size] = scaleHeapSample(count, size, p.period);
      }
      values.push(count, size);
    };
    if (hasAlloc) addValues(nums[2]!, nums[3]!, 'allocation');
    addValues(nums[0]!, nums[1]!, 'inuse');
    checkRecord(limits, p.samples.length, sloc.length, lineNo, totalFrames);
    if (valuesByText.size < MAX_CACHED_ROWS) valuesByText.set(numbers, { values, bytes: blocksize, nums });
    p.samples.push({ values, locs: sloc, bytes: blocksize });
    pushRaw(nums);
  }
  // parseAdditionalSections: skip to the memory map sentinel, then parse the rest as mappings.
  while (i < lines.length && !isMemoryMapSentinel(lines[i]!)) i++;
  parseMemoryMap(p, lines.slice(i + 1));
  return { profile: p, header, raw: [raw[0].finish(), raw[1].finish(), raw[2].finish(), raw[3].finish()] };
}

export function clip(s: string, n = 120): string {
  return s.length > n ? s.slice(0, n) + '…' : s;
}
