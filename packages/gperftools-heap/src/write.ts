/**
 * Writers for the formats gperftools itself writes: heap profiles (`heapprofile`, the heap
 * profiler's dump), tcmalloc heap samples (`heap_v2/R`), heap growth stacks (`growth`) and the
 * binary CPU profile, each followed by its memory map in gperftools' `/proc/self/maps` layout.
 * Used by `write` and by the remote-protocol server.
 */

import { ErrorCodes, ProfkitError, type Profile, type Warning, stackOf, ProfileIndex } from '@profkit/core';
import { ADAPTER_NAME } from './read.js';
import { scaleHeapSample } from './heap.js';

const UINT64_MAX = (1n << 64n) - 1n;

function unsupported(message: string, rule: string): ProfkitError {
  return new ProfkitError(ErrorCodes.UNSUPPORTED, message, { rule });
}

function padStart(s: string, n: number): string {
  return s.length >= n ? s : ' '.repeat(n - s.length) + s;
}

/** C's `%6d: %8d [%6d: %8d] @`. */
export function formatCountsAndSizes(inuseCount: bigint, inuseBytes: bigint, allocCount: bigint, allocBytes: bigint): string {
  return `${padStart(String(inuseCount), 6)}: ${padStart(String(inuseBytes), 8)} [${padStart(String(allocCount), 6)}: ${padStart(String(allocBytes), 8)}] @`;
}

/** gperftools' `ProcMapsIterator::FormatLine`: `%08x-%08x rwxp %08x 00:00 %-11d name`. */
export function formatMapsLine(start: bigint, limit: bigint, offset: bigint, filename: string, perms = 'r-xp', inode = 0): string {
  const hex8 = (v: bigint) => v.toString(16).padStart(8, '0');
  return `${hex8(start)}-${hex8(limit)} ${perms} ${hex8(offset)} 00:00 ${String(inode).padEnd(11, ' ')} ${filename}\n`;
}

/** True for the `[0, 2^64-1)` placeholder mapping readers add for unmapped addresses. */
function isFakeMapping(p: Profile, row: number): boolean {
  const m = p['.mappings'];
  return m.memory_start[row] === 0n && m.memory_limit[row] === UINT64_MAX && m.filename[row] === '' && m.file_offset[row] === 0n;
}

/** The profile's mappings as gperftools maps lines (placeholder mappings left out). */
export function formatMappedLibraries(p: Profile): string {
  const m = p['.mappings'];
  let out = '';
  for (let i = 0; i < m.mapping_id.length; i++) {
    if (isFakeMapping(p, i)) continue;
    out += formatMapsLine(m.memory_start[i]!, m.memory_limit[i]!, m.file_offset[i]!, m.filename[i]!);
  }
  return out;
}

/**
 * The address each location is written with (the "program counter" as recorded, before the
 * readers' −1 adjustment is undone). Locations without an address (profiles converted from
 * symbol-only formats) get synthetic, distinct addresses above every real one; `synthesized`
 * counts them. The remote server uses the same numbering to answer symbol lookups.
 */
export function locationAddresses(p: Profile): { addresses: BigUint64Array; synthesized: number } {
  const a = p.locations['.address'];
  const out = new BigUint64Array(a.length);
  let max = 0n;
  for (let i = 0; i < a.length; i++) if (a[i]! > max) max = a[i]!;
  let next = ((max + 0xfffn) & ~0xfffn) + 0x100000n;
  let synthesized = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== 0n) out[i] = a[i]!;
    else {
      out[i] = next;
      next += 0x10n;
      synthesized++;
    }
  }
  return { addresses: out, synthesized };
}

/** Warnings for what the legacy formats have no place for (said, not silently dropped). */
export function lossWarnings(p: Profile, kind: 'heap' | 'cpu'): Warning[] {
  const out: Warning[] = [];
  const add = (code: string, message: string) => out.push({ code, message });
  if (p.functions.function_id.length > 0) {
    add('PROFKIT_W_GPERFTOOLS_SYMBOLS_DROPPED', `${p.functions.function_id.length} functions (names, files, lines) were not written: the format holds addresses only`);
  }
  const labels = p['.labels'];
  const other = labels.key.filter((k) => !(kind === 'heap' && k === 'bytes')).length;
  if (other > 0) add('PROFKIT_W_GPERFTOOLS_LABELS_DROPPED', `${other} sample labels were not written`);
  const f = p['.profile'];
  if (f.comments.length > 0 || f.time_nanos !== 0n || f.duration_nanos !== 0n || f.doc_url !== '') {
    add('PROFKIT_W_GPERFTOOLS_FACTS_DROPPED', 'comments, collection time, duration and doc URL have no place in this format and were not written');
  }
  const m = p['.mappings'];
  if (m.build_id.some((b) => b !== '')) add('PROFKIT_W_GPERFTOOLS_BUILD_IDS_DROPPED', 'mapping build ids were not written');
  return out;
}

function extensionFacts(p: Profile): Record<string, unknown> {
  return (p['.extensions'][ADAPTER_NAME]?.facts ?? {}) as Record<string, unknown>;
}

function typeIndex(p: Profile, names: string[]): number {
  for (const n of names) {
    const i = p.sample_types.type.indexOf(n);
    if (i >= 0) return i;
  }
  return -1;
}

export type HeapKind = 'heapprofile' | 'heap_v2' | 'growth' | 'heap';

export interface HeapWriteOptions {
  /**
   * `heapprofile` (the heap profiler's dump: in-use and allocated pairs, ` 0x%08x` frames),
   * `heap_v2` (tcmalloc's heap sample: one pair, `%p` frames, `heap_v2/<samplePeriod>`) or
   * `growth` (tcmalloc's growth stacks) or `heap` (Go's legacy `heap/<2R>` text, unpadded).
   * Default: the kind the profile was read from, else `heapprofile`.
   */
  kind?: HeapKind;
  /** For `heap_v2` and `heap`: the number written after `/` in the header. */
  samplePeriod?: number | bigint;
}

interface RawColumns {
  inuseCount: BigInt64Array;
  inuseBytes: BigInt64Array;
  allocCount: BigInt64Array;
  allocBytes: BigInt64Array;
}

function rawColumns(p: Profile): RawColumns | undefined {
  const s = p['.extensions'][ADAPTER_NAME]?.samples;
  const n = p.samples.value.length;
  const get = (k: string) => {
    const c = s?.[k];
    return c instanceof BigInt64Array && c.length === n ? c : undefined;
  };
  const inuseCount = get('raw_inuse_count');
  const inuseBytes = get('raw_inuse_bytes');
  const allocCount = get('raw_alloc_count');
  const allocBytes = get('raw_alloc_bytes');
  return inuseCount && inuseBytes && allocCount && allocBytes ? { inuseCount, inuseBytes, allocCount, allocBytes } : undefined;
}

/** Whether every row's raw numbers, unsampled at `rate`, give the profile's current values. */
function rawMatchesValues(raw: RawColumns, vals: BigInt64Array[], idx: [number, number, number, number], rate: bigint): boolean {
  const [iac, iab, iic, iib] = idx;
  const hasAlloc = iac !== iic;
  for (let i = 0; i < raw.inuseCount.length; i++) {
    const scale = (c: bigint, s: bigint) => (c === 0n || rate <= 1n ? [c, s] : scaleHeapSample(c, s, rate));
    const [ic, ib] = scale(raw.inuseCount[i]!, raw.inuseBytes[i]!);
    if (vals[iic]![i] !== ic || vals[iib]![i] !== ib) return false;
    if (hasAlloc) {
      const [ac, ab] = scale(raw.allocCount[i]!, raw.allocBytes[i]!);
      if (vals[iac]![i] !== ac || vals[iab]![i] !== ab) return false;
    }
  }
  return true;
}

/** Writes a heap text profile exactly as gperftools lays it out. */
export function writeHeapText(p: Profile, options: HeapWriteOptions = {}): { text: string; warnings: Warning[] } {
  const warnings: Warning[] = lossWarnings(p, 'heap');
  const facts = extensionFacts(p);
  const srcKind = typeof facts.heap_kind === 'string' ? facts.heap_kind : '';
  const srcSampled = facts.sampling === 'poisson';
  const srcFamily: HeapKind =
    srcKind === 'heap_v2' || srcKind === 'heapz_v2' ? 'heap_v2' : srcKind === 'growth' || srcKind === 'growthz' ? 'growth' : srcKind === 'heap' ? 'heap' : 'heapprofile';
  const kind: HeapKind = options.kind ?? srcFamily;
  const iInuseCount = typeIndex(p, ['inuse_objects', 'objects', 'allocations']);
  const iInuseBytes = typeIndex(p, ['inuse_space', 'space', 'size']);
  if (iInuseCount < 0 || iInuseBytes < 0) {
    throw unsupported(
      `a gperftools heap profile needs object-count and byte sample types (inuse_objects/inuse_space or objects/space); this profile has ${p.sample_types.type.join(', ') || 'none'}`,
      'heap profiles hold counts and sizes',
    );
  }
  let iAllocCount = typeIndex(p, ['alloc_objects']);
  let iAllocBytes = typeIndex(p, ['alloc_space']);
  if (iAllocCount < 0 || iAllocBytes < 0) [iAllocCount, iAllocBytes] = [iInuseCount, iInuseBytes];
  const vals = p.samples['.values'];
  const n = p.samples.value.length;

  let samplePeriod = 0n;
  let useRaw: RawColumns | undefined;
  // The rows as read are used only while the values still are what reading them gave (an
  // operation that changed values but carried the per-sample columns must not be undone).
  const rate = typeof facts.sampling_rate === 'bigint' ? facts.sampling_rate : 0n;
  const raw0 = rawColumns(p);
  const raw = raw0 && rawMatchesValues(raw0, vals, [iAllocCount, iAllocBytes, iInuseCount, iInuseBytes], srcSampled ? rate : 1n) ? raw0 : undefined;
  if (kind === 'heap_v2' || kind === 'heap') {
    const requested = options.samplePeriod !== undefined ? BigInt(options.samplePeriod) : undefined;
    const srcHeader = typeof facts.header_period === 'string' && /^[0-9]+$/.test(facts.header_period) ? BigInt(facts.header_period) : undefined;
    if (raw && srcSampled && srcFamily === kind && srcHeader !== undefined && (requested === undefined || requested === srcHeader)) {
      useRaw = raw;
      samplePeriod = srcHeader;
    } else {
      samplePeriod = 0n;
      if (requested !== undefined && requested !== 0n) {
        warnings.push({
          code: 'PROFKIT_W_GPERFTOOLS_UNSAMPLED',
          message: `values are already unsampled; wrote ${kind}/0 (no sampling) instead of ${kind}/${requested} so readers do not scale them again`,
        });
      }
    }
    if (kind === 'heap_v2' && iAllocCount !== iInuseCount) {
      warnings.push({ code: 'PROFKIT_W_GPERFTOOLS_ALLOC_DROPPED', message: 'heap_v2 holds one count/size pair per row: allocation totals were not written' });
    }
  } else if (raw && !srcSampled && srcKind !== '') {
    useRaw = raw;
  }

  const rows: [bigint, bigint, bigint, bigint][] = new Array(n);
  for (let i = 0; i < n; i++) {
    if (useRaw) {
      rows[i] = [useRaw.inuseCount[i]!, useRaw.inuseBytes[i]!, useRaw.allocCount[i]!, useRaw.allocBytes[i]!];
      if (kind === 'heap_v2' || kind === 'growth') rows[i] = [rows[i]![0], rows[i]![1], rows[i]![0], rows[i]![1]];
    } else {
      const ic = vals[iInuseCount]![i]!;
      const ib = vals[iInuseBytes]![i]!;
      rows[i] = kind === 'heapprofile' || kind === 'heap' ? [ic, ib, vals[iAllocCount]![i]!, vals[iAllocBytes]![i]!] : [ic, ib, ic, ib];
    }
  }
  const t: [bigint, bigint, bigint, bigint] = [0n, 0n, 0n, 0n];
  for (const r of rows) for (let k = 0; k < 4; k++) t[k] = t[k]! + r[k]!;

  const { addresses, synthesized } = locationAddresses(p);
  if (synthesized > 0) {
    warnings.push({ code: 'PROFKIT_W_GPERFTOOLS_SYNTHETIC_ADDRESSES', message: `${synthesized} locations had no address; wrote synthetic addresses (names are not representable in this format)` });
  }
  const index = new ProfileIndex(p);
  const label = kind === 'heapprofile' ? 'heapprofile' : kind === 'growth' ? 'growth' : `${kind}/${samplePeriod}`;
  // Go's runtime writes its legacy heap text without padding.
  const counts = kind === 'heap' ? (a: bigint, b: bigint, c: bigint, d: bigint) => `${a}: ${b} [${c}: ${d}] @` : formatCountsAndSizes;
  const parts: string[] = [`heap profile: ${counts(t[0], t[1], t[2], t[3])} ${label}\n`];
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    let line = counts(r[0], r[1], r[2], r[3]);
    for (const id of stackOf(p, i)) {
      const row = index.locations.get(id);
      const pc = ((row >= 0 ? addresses[row]! : 0n) + 1n) & UINT64_MAX;
      line += kind === 'heapprofile' ? ' 0x' + pc.toString(16).padStart(8, '0') : ' 0x' + pc.toString(16);
    }
    parts.push(line + '\n');
  }
  parts.push('\nMAPPED_LIBRARIES:\n', formatMappedLibraries(p));
  return { text: parts.join(''), warnings };
}

export interface CpuWriteOptions {
  /** Slot size in bytes (default 8). */
  wordSize?: 4 | 8;
  /** Byte order (default little-endian). */
  littleEndian?: boolean;
  /** Sampling period in µs (default: the profile's period, else 10000 = 100 Hz). */
  periodMicros?: number | bigint;
}

/** Writes the legacy binary CPU profile (header, one record per sample, trailer, maps text). */
export function writeCpuProfile(p: Profile, options: CpuWriteOptions = {}): { bytes: Uint8Array; warnings: Warning[] } {
  const warnings: Warning[] = lossWarnings(p, 'cpu');
  const size = options.wordSize ?? 8;
  const le = options.littleEndian ?? true;
  const facts = extensionFacts(p);
  const pt = p['.profile'].period_type;
  let periodUs: bigint;
  if (options.periodMicros !== undefined) periodUs = BigInt(options.periodMicros);
  else if (pt && pt.type === 'cpu' && pt.unit === 'nanoseconds' && p['.profile'].period >= 1000n) periodUs = p['.profile'].period / 1000n;
  else if (typeof facts.period_us === 'bigint' && facts.period_us > 0n) periodUs = facts.period_us;
  else {
    periodUs = 10000n;
    warnings.push({ code: 'PROFKIT_W_GPERFTOOLS_DEFAULT_PERIOD', message: 'the profile has no CPU sampling period; wrote 10000 µs (100 Hz)' });
  }
  if (periodUs <= 0n) throw unsupported(`the sampling period must be positive, got ${periodUs} µs`, 'header slot 3 is the period in µs (> 0)');
  const iCount = typeIndex(p, ['samples']);
  const iCpu = p.sample_types.type.findIndex((t, i) => t === 'cpu' && p.sample_types.unit[i] === 'nanoseconds');
  if (iCount < 0 && iCpu < 0) {
    throw unsupported(`a CPU profile needs a samples/count or cpu/nanoseconds sample type; this profile has ${p.sample_types.type.join(', ') || 'none'}`, 'CPU records hold sample counts');
  }
  const n = p.samples.value.length;
  const maxWord = size === 4 ? 0xffffffffn : UINT64_MAX;
  const { addresses, synthesized } = locationAddresses(p);
  if (synthesized > 0) {
    warnings.push({ code: 'PROFKIT_W_GPERFTOOLS_SYNTHETIC_ADDRESSES', message: `${synthesized} locations had no address; wrote synthetic addresses (names are not representable in this format)` });
  }
  const index = new ProfileIndex(p);
  const words: bigint[] = [0n, 3n, 0n, periodUs, 0n];
  const periodNs = periodUs * 1000n;
  let skipped = 0;
  for (let i = 0; i < n; i++) {
    const count = iCount >= 0 ? p.samples['.values'][iCount]![i]! : p.samples['.values'][iCpu]![i]! / periodNs;
    if (count < 0n) throw unsupported(`sample ${i} has a negative count ${count}`, 'CPU record counts are unsigned');
    const stack = stackOf(p, i);
    if (count === 0n && stack.length === 1) {
      const row = index.locations.get(stack[0]!);
      if (row >= 0 && addresses[row] === 0n) {
        skipped++;
        continue;
      }
    }
    words.push(count, BigInt(stack.length));
    stack.forEach((id, k) => {
      const row = index.locations.get(id);
      const a = row >= 0 ? addresses[row]! : 0n;
      words.push(k === 0 ? a : (a + 1n) & UINT64_MAX);
    });
  }
  words.push(0n, 1n, 0n);
  if (skipped > 0) {
    warnings.push({ code: 'PROFKIT_W_GPERFTOOLS_DROPPED_RECORDS', message: `${skipped} zero-count samples at address 0 were left out (they would read as the end marker)` });
  }
  for (const w of words) {
    if (w > maxWord) throw unsupported(`value 0x${w.toString(16)} does not fit a ${size * 8}-bit slot; write with wordSize 8`, 'slots are native words');
  }
  const maps = new TextEncoder().encode(formatMappedLibraries(p));
  const out = new Uint8Array(words.length * size + maps.length);
  const view = new DataView(out.buffer);
  words.forEach((w, k) => (size === 4 ? view.setUint32(k * size, Number(w), le) : view.setBigUint64(k * size, w, le)));
  out.set(maps, words.length * size);
  return { bytes: out, warnings };
}
