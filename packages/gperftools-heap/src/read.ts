/**
 * Reading legacy gperftools/Go/Java profiles: detects the variant the way google/pprof's
 * `parseLegacy` does (binary CPU, heap, Go count, threadz, contention, Java), then builds the
 * profile, attaches google/pprof's default drop/keep frames and records what the file said in
 * `profile['.extensions']['gperftools-heap']`.
 */

import { ErrorCodes, ProfkitError, limitError, limitValue, type FactValue, type FormatExtension, type Profile, type ReadLimits, type Warning } from '@profkit/core';
import { type LProfile, toProfile } from './legacy-model.js';
import { parseCpu } from './cpu.js';
import { parseHeap } from './heap.js';
import { parseContention } from './contention.js';
import { parseGoCount, parseThread } from './thread.js';
import { type JavaKind, parseJavaProfile } from './java.js';
import { addLegacyFrameInfo } from './frameinfo.js';
import { Unrecognized, splitLines } from './text.js';
import type { RecordLimits } from './limits.js';

export const ADAPTER_NAME = 'gperftools-heap';

/** V8's longest string (2^29 - 24 characters): text decoded whole cannot be longer. */
const MAX_TEXT_BYTES = 0x1fffffe8;

export const FORMAT_HEAP = 'gperftools-heap';
export const FORMAT_CPU = 'gperftools-cpu';
export const FORMAT_CONTENTION = 'gperftools-contention';
export const FORMAT_THREAD = 'gperftools-thread';
export type LegacyFormat = typeof FORMAT_HEAP | typeof FORMAT_CPU | typeof FORMAT_CONTENTION | typeof FORMAT_THREAD;
export const LEGACY_FORMATS: readonly LegacyFormat[] = [FORMAT_HEAP, FORMAT_CPU, FORMAT_CONTENTION, FORMAT_THREAD];

export interface LegacyReadOptions {
  /** Only accept this format (default: any of the adapter's formats). */
  format?: string;
  /** For error messages. */
  fileName?: string;
  /**
   * Sum samples with the same stack (and labels) into one, as the old Perl pprof did and as a
   * CPU profile's evicted records need. Default false (google/pprof keeps them separate).
   */
  sumSameStacks?: boolean;
  /** Largest number of CPU records accepted (default 2^31). */
  maxRecords?: number;
  /** `maxFramesPerStack`, `maxStringLength` (names and mapping paths) and `maxSamples` (core's `READ_LIMITS` by default). */
  limits?: ReadLimits;
  /**
   * Binary CPU profiles: do not apply google/pprof's signal-frame heuristic (which removes the
   * frame at stack position 1 when nearly every sample has the same one). Default false.
   */
  keepSignalFrames?: boolean;
}

export interface LegacyReadResult {
  profile: Profile;
  warnings: Warning[];
  format: LegacyFormat;
  /** The variant: heap kind (`heapz_v2`…), `cpp`/`java` CPU, contention header, `threadz`/`count`. */
  variant: string;
}

interface Parsed {
  p: LProfile;
  format: LegacyFormat;
  variant: string;
  facts: Record<string, FactValue>;
  samples?: Record<string, BigInt64Array>;
}

function column(rows: bigint[][], k: number): BigInt64Array {
  return BigInt64Array.from(rows, (r) => BigInt.asIntN(64, r[k]!));
}

/**
 * A text parser: `lines` (line-based formats) or `text` (Java), `lineBase` lines after the start
 * of the file; it stops at the first record over `limits`; `only` is the format asked for, if any.
 */
type TextParser = (lines: string[], text: string, lineBase: number, limits: RecordLimits, only: string | undefined) => Parsed;

/** The Java kind of a requested format (undefined: either). */
function javaKindOf(format: string | undefined): JavaKind | undefined {
  return format === FORMAT_HEAP ? 'heap' : format === FORMAT_CONTENTION ? 'contention' : undefined;
}

const textParsers: { formats: LegacyFormat[]; parse: TextParser }[] = [
  {
    formats: [FORMAT_HEAP],
    parse: (lines, _t, base, lim) => {
      const h = parseHeap(lines, base, lim);
      return {
        p: h.profile,
        format: FORMAT_HEAP,
        variant: h.header.kind,
        facts: {
          heap_kind: h.header.kind,
          header_period: h.header.rawPeriod,
          sampling: h.header.sampling === 'v2' ? 'poisson' : 'none',
          sampling_rate: h.profile.period,
          header_totals: h.header.totals.slice(),
        },
        samples: {
          raw_inuse_count: h.raw[0],
          raw_inuse_bytes: h.raw[1],
          raw_alloc_count: h.raw[2],
          raw_alloc_bytes: h.raw[3],
        },
      };
    },
  },
  {
    formats: [FORMAT_THREAD],
    parse: (lines, _t, base, lim) => ({ p: parseGoCount(lines, base, lim), format: FORMAT_THREAD, variant: 'count', facts: {} }),
  },
  {
    formats: [FORMAT_THREAD],
    parse: (lines, _t, base, lim) => ({ p: parseThread(lines, base, lim), format: FORMAT_THREAD, variant: 'threadz', facts: {} }),
  },
  {
    formats: [FORMAT_CONTENTION],
    parse: (lines, _t, base, lim) => {
      const c = parseContention(lines, base, lim);
      return {
        p: c.profile,
        format: FORMAT_CONTENTION,
        variant: c.kind,
        facts: { contention_header: c.kind, cycles_per_second: c.cyclesPerSecond, sampling_period: c.profile.period },
        samples: { raw_delay_cycles: column(c.raw, 0), raw_count: column(c.raw, 1) },
      };
    },
  },
  {
    formats: [FORMAT_HEAP, FORMAT_CONTENTION],
    // Asked for one format, the parser passes on a Java profile of the other kind at its header.
    parse: (_l, text, base, lim, only) => {
      const j = parseJavaProfile(text, base, lim, javaKindOf(only));
      const format = j.kind === 'heap' ? FORMAT_HEAP : FORMAT_CONTENTION;
      return { p: j.profile, format, variant: j.kind === 'heap' ? 'java-heapz' : 'java-contentionz', facts: {} };
    },
  },
];

/** Reads one legacy profile from its (decompressed) bytes. */
export function readLegacy(bytes: Uint8Array, options: LegacyReadOptions = {}): LegacyReadResult {
  const file = options.fileName;
  try {
    return readLegacyInner(bytes, options);
  } catch (e) {
    if (e instanceof ProfkitError) throw file !== undefined ? e.withDetail({ file }) : e;
    throw e;
  }
}

function accepts(options: LegacyReadOptions, f: LegacyFormat): boolean {
  return options.format === undefined || options.format === f;
}

function readLegacyInner(bytes: Uint8Array, options: LegacyReadOptions): LegacyReadResult {
  if (bytes.length === 0) throw new ProfkitError(ErrorCodes.EMPTY_INPUT, 'empty input file', { rule: 'a profile has at least a header' });
  if (options.format !== undefined && !(LEGACY_FORMATS as readonly string[]).includes(options.format)) {
    throw new ProfkitError(ErrorCodes.NO_ADAPTER, `the gperftools-heap adapter does not read format ${options.format}`, { rule: 'known formats' });
  }
  const warnings: Warning[] = [];
  let parsed: Parsed | undefined;
  let warnLines: string[] = [];
  const early: Required<RecordLimits> = {
    maxSamples: limitValue(options.limits, 'maxSamples'),
    maxFramesPerStack: limitValue(options.limits, 'maxFramesPerStack'),
    maxTotalFrames: limitValue(options.limits, 'maxTotalFrames'),
    maxTableEntries: limitValue(options.limits, 'maxTableEntries'),
  };
  try {
    const cpu = parseCpuWithinLimits(bytes, options, early.maxSamples);
    if (!accepts(options, FORMAT_CPU)) {
      throw new ProfkitError(ErrorCodes.PARSE, `input is a legacy binary CPU profile, not ${options.format}`, { offset: 0, rule: 'requested format' });
    }
    const h = cpu.header;
    parsed = {
      p: cpu.profile,
      format: FORMAT_CPU,
      variant: h.java ? 'java' : 'cpp',
      facts: {
        word_size: h.word.size,
        byte_order: h.word.littleEndian ? 'little' : 'big',
        period_us: h.periodMicros,
        java: h.java,
        trailer: cpu.trailer,
        records: cpu.records,
      },
    };
    if (!cpu.trailer) {
      warnings.push({ code: 'PROFKIT_W_GPERFTOOLS_NO_TRAILER', message: 'the CPU profile has no 0,1,0 end marker (truncated?); no memory map was read', detail: { offset: cpu.textOffset } });
    }
  } catch (e) {
    if (!(e instanceof Unrecognized)) throw e;
  }
  if (!parsed) {
    if (bytes.length > MAX_TEXT_BYTES) {
      throw new ProfkitError(ErrorCodes.UNSUPPORTED, `a ${bytes.length}-byte text profile is longer than the longest string JavaScript can hold (${MAX_TEXT_BYTES} characters)`, {
        rule: 'text profiles are decoded whole',
      });
    }
    const text = new TextDecoder('utf-8').decode(bytes);
    let lines = splitLines(text);
    // Perl pprof skipped `%warn …` (and other `%…`) lines before the header; tcmalloc writes them
    // when sampling is off. google/pprof refuses such files; we keep the lines as warnings.
    let skip = 0;
    while (skip < lines.length && lines[skip]!.trimStart().startsWith('%')) skip++;
    let body = text;
    if (skip > 0) {
      warnLines = lines.slice(0, skip);
      lines = lines.slice(skip);
      let cut = 0;
      for (let k = 0; k < skip; k++) cut = text.indexOf('\n', cut) + 1;
      body = text.slice(cut);
      warnLines.forEach((l, k) =>
        warnings.push({ code: 'PROFKIT_W_GPERFTOOLS_WARN_LINE', message: `line before the header: ${l}`, detail: { line: k + 1, rule: '%warn lines precede the header' } }),
      );
    }
    for (const tp of textParsers) {
      if (!tp.formats.some((f) => accepts(options, f))) continue;
      try {
        // A parser throws Unrecognized (try the next one) only before its first record; from
        // there on, a malformed record or one over a limit is this format's error.
        parsed = tp.parse(lines, body, skip, early, options.format);
        break;
      } catch (e) {
        if (!(e instanceof Unrecognized)) throw e;
      }
    }
    if (!parsed) {
      const first = (lines[0] ?? '').slice(0, 80);
      throw new ProfkitError(ErrorCodes.PARSE, `unrecognized profile format: not a gperftools heap, CPU, contention or thread profile (first line "${first}")`, {
        line: skip + 1,
        rule: 'legacy profiles start with a "heap profile:", "--- contention", "--- threadz", "<name> profile: total" or binary CPU header',
      });
    }
  }
  const { p } = parsed;
  checkLegacyLimits(p, options.limits);
  addLegacyFrameInfo(p);
  let samples = parsed.samples;
  if (options.sumSameStacks) {
    if (sumSameStacks(p)) samples = undefined;
  }
  const facts: Record<string, FactValue> = { format: parsed.format, variant: parsed.variant, ...parsed.facts };
  if (warnLines.length > 0) facts.warn_lines = warnLines;
  const ext: FormatExtension = { facts };
  if (samples) ext.samples = samples;
  const profile = toProfile(p, ext, ADAPTER_NAME);
  return { profile, warnings, format: parsed.format, variant: parsed.variant };
}

/**
 * The binary CPU reader stops at record `maxSamples + 1` (every record but the end marker is a
 * sample) through its record limit, reported as the `maxSamples` limit when that is the lower one.
 */
function parseCpuWithinLimits(bytes: Uint8Array, options: LegacyReadOptions, maxSamples: number): ReturnType<typeof parseCpu> {
  const maxRecords = options.maxRecords ?? 2 ** 31;
  try {
    return parseCpu(bytes, { maxRecords: Math.min(maxRecords, maxSamples), keepSignalFrames: options.keepSignalFrames });
  } catch (e) {
    if (maxSamples < maxRecords && e instanceof ProfkitError && e.code === ErrorCodes.LIMIT && e.detail.option === 'maxRecords') {
      throw limitError('maxSamples', `more than ${maxSamples} samples`, maxSamples, { offset: e.detail.offset });
    }
    throw e;
  }
}

/**
 * The read limits, checked on the parsed profile before the columnar profile is built. The text
 * parsers (limits.ts) and the CPU record limit already stopped any input with more than
 * `maxSamples` samples, or (text formats) with a record whose kept frames are over
 * `maxFramesPerStack`, while reading; what remains for this check: frame counts the CPU reader's
 * signal-frame and duplicate-leaf heuristics decide over the whole profile, and the string
 * lengths (substrings of the input, bounded by its size).
 */
function checkLegacyLimits(p: LProfile, limits: ReadLimits | undefined): void {
  const maxSamples = limitValue(limits, 'maxSamples');
  if (p.samples.length > maxSamples) throw limitError('maxSamples', `${p.samples.length} samples`, maxSamples);
  const maxFrames = limitValue(limits, 'maxFramesPerStack');
  for (let i = 0; i < p.samples.length; i++) {
    const n = p.samples[i]!.locs.length;
    if (n > maxFrames) throw limitError('maxFramesPerStack', `sample ${i + 1} with ${n} frames`, maxFrames);
  }
  const maxString = limitValue(limits, 'maxStringLength');
  for (const m of p.mappings) if (m.file.length > maxString) throw limitError('maxStringLength', `a mapping path of ${m.file.length} characters`, maxString);
  for (const f of p.functions) if (f.name.length > maxString) throw limitError('maxStringLength', `a function name of ${f.name.length} characters`, maxString);
}

/** Sums samples with identical stacks and labels (first occurrence keeps its place). */
function sumSameStacks(p: LProfile): boolean {
  const byKey = new Map<string, number>();
  const out: LProfile['samples'] = [];
  for (const s of p.samples) {
    const key = s.locs.map((l) => l.id).join(',') + '|' + (s.bytes ?? '');
    const j = byKey.get(key);
    if (j === undefined) {
      byKey.set(key, out.length);
      out.push({ ...s, values: s.values.slice() });
    } else {
      const t = out[j]!;
      for (let k = 0; k < t.values.length; k++) t.values[k] = BigInt.asIntN(64, t.values[k]! + s.values[k]!);
    }
  }
  const changed = out.length !== p.samples.length;
  p.samples = out;
  return changed;
}
