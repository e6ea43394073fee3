/** The adapter's read/write implementation (loaded lazily by the adapter's `load`). */

import { ErrorCodes, ProfkitError, limitError, type AdapterCodec, type Profile, type ReadInput, type ReadOptions, type ReadResult, type WriteOptions, type WriteResult } from '@profkit/core';
import { ADAPTER_NAME, FORMAT_CONTENTION, FORMAT_CPU, FORMAT_HEAP, FORMAT_THREAD, readLegacy } from './read.js';
import { type HeapKind, writeCpuProfile, writeHeapText } from './write.js';
import { writeContentionText } from './contention.js';
import { type ThreadWriteKind, writeThreadText } from './thread.js';

function numberOption(o: Record<string, unknown> | undefined, key: string): number | undefined {
  const v = o?.[key];
  if (v === undefined) return undefined;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) {
    throw new ProfkitError(ErrorCodes.USAGE, `option ${key} must be an integer, got ${String(v)}`, { option: key });
  }
  return n;
}

function boolOption(o: Record<string, unknown> | undefined, key: string): boolean {
  const v = o?.[key];
  return v === true || v === 'true' || v === '1';
}

/**
 * Bytes a gzipped input may inflate to when the caller set no `maxDecompressedBytes` (core's
 * default is 4 GiB): this reader holds the whole input, then its text and its lines (about 3
 * times the bytes), so a gzip bomb of a few megabytes must stop long before that. Real gperftools,
 * Go and Java legacy profiles are a few megabytes; `--limit maxDecompressedBytes=N` raises it.
 */
export const DEFAULT_MAX_INFLATED_BYTES = 32 * 1024 ** 2;

/** The whole (inflated) input; a gzipped one is inflated as a stream and stopped at the limit. */
async function wholeInput(input: ReadInput, limits: ReadOptions['limits']): Promise<Uint8Array> {
  if (!input.gzipped || limits?.maxDecompressedBytes !== undefined) return input.bytes();
  const max = DEFAULT_MAX_INFLATED_BYTES;
  const parts: Uint8Array[] = [];
  let n = 0;
  for await (const c of input.chunks()) {
    n += c.length;
    if (n > max) throw limitError('maxDecompressedBytes', `the decompressed input (${n} bytes so far)`, max, { file: input.fileName, rule: 'decompressed size limit of whole-input readers' });
    parts.push(c);
  }
  const out = new Uint8Array(n);
  let o = 0;
  for (const c of parts) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

export async function read(input: ReadInput, options: ReadOptions): Promise<ReadResult> {
  const bytes = await wholeInput(input, options.limits);
  const r = readLegacy(bytes, {
    format: options.format,
    fileName: input.fileName,
    sumSameStacks: boolOption(options.options, 'sumSameStacks'),
    keepSignalFrames: boolOption(options.options, 'keepSignalFrames'),
    maxRecords: options.limits?.maxRecords,
    limits: options.limits,
  });
  return { profile: r.profile, warnings: r.warnings, format: r.format };
}

/** Picks the format to write when the caller did not say. */
export function defaultWriteFormat(p: Profile): string {
  const f = p['.extensions'][ADAPTER_NAME]?.facts?.format;
  if (f === FORMAT_HEAP || f === FORMAT_CPU || f === FORMAT_CONTENTION || f === FORMAT_THREAD) return f;
  const types = p.sample_types.type;
  if (types.includes('inuse_space') || types.includes('space')) return FORMAT_HEAP;
  return FORMAT_CPU;
}

export async function write(p: Profile, options: WriteOptions): Promise<WriteResult> {
  const format = options.format ?? defaultWriteFormat(p);
  const o = options.options;
  if (format === FORMAT_HEAP) {
    const kind = o?.kind;
    if (kind !== undefined && kind !== 'heapprofile' && kind !== 'heap_v2' && kind !== 'growth' && kind !== 'heap') {
      throw new ProfkitError(ErrorCodes.USAGE, `option kind must be heapprofile, heap_v2, growth or heap, got ${String(kind)}`, { option: 'kind' });
    }
    const sp = numberOption(o, 'samplePeriod');
    const r = writeHeapText(p, { kind: kind as HeapKind | undefined, samplePeriod: sp });
    return { data: new TextEncoder().encode(r.text), warnings: r.warnings };
  }
  if (format === FORMAT_CPU) {
    const ws = numberOption(o, 'wordSize');
    if (ws !== undefined && ws !== 4 && ws !== 8) throw new ProfkitError(ErrorCodes.USAGE, `option wordSize must be 4 or 8, got ${ws}`, { option: 'wordSize' });
    const be = boolOption(o, 'bigEndian');
    const r = writeCpuProfile(p, { wordSize: ws as 4 | 8 | undefined, littleEndian: !be, periodMicros: numberOption(o, 'periodMicros') });
    return { data: r.bytes, warnings: r.warnings };
  }
  if (format === FORMAT_CONTENTION) {
    const r = writeContentionText(p);
    return { data: new TextEncoder().encode(r.text), warnings: r.warnings };
  }
  if (format === FORMAT_THREAD) {
    const kind = o?.kind;
    if (kind !== undefined && kind !== 'threadz' && kind !== 'count') {
      throw new ProfkitError(ErrorCodes.USAGE, `option kind must be threadz or count, got ${String(kind)}`, { option: 'kind' });
    }
    const r = writeThreadText(p, { kind: kind as ThreadWriteKind | undefined });
    return { data: new TextEncoder().encode(r.text), warnings: r.warnings };
  }
  throw new ProfkitError(ErrorCodes.NO_ADAPTER, `the gperftools-heap adapter has no format ${format}`, { rule: 'known formats' });
}

export const codec: AdapterCodec = { read, write };
