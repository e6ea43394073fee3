/**
 * A hand-written profile.proto decoder straight into profkit's columnar model.
 *
 * Two passes over the raw (gunzipped) bytes, either one buffer (`decodeProfile`) or a stream read
 * twice, one window at a time (`decodeProfileStream`: the whole input is never in memory):
 * 1. an indexing pass that walks the top-level fields, reads the string table, counts every
 *    message (samples, location ids, labels, locations, lines, ...) and checks the wire format
 *    of the Profile message and of its samples and locations;
 * 2. a filling pass that decodes every field into exactly sized typed arrays.
 *
 * No per-message JS objects are created. Varints are decoded into two uint32 halves (`lo`,
 * `hi`); 64-bit values are stored into `BigInt64Array`/`BigUint64Array` columns through uint32
 * views of their buffers, so no BigInt is allocated per value. The decoder rules are those of
 * google/pprof's `profile/proto.go` and `profile/encode.go` (spec section 1.3), with Go's error
 * strings in the `rule` of each `ProfkitError`.
 */

import {
  ErrorCodes,
  IdIndex,
  limitError,
  limitValue,
  type LimitName,
  type ReadLimits,
  MAX_ID,
  ProfkitError,
  createProfile,
  crc32,
  recordReaderProof,
  type ProvableRule,
  utf8Decoder,
  type ErrorCode,
  type Profile,
  type Warning,
} from '@profkit/core';
import { ABSENT, GAVE_UP, SampleTable, finishHash, grown32, hashSeed, mixWord } from './sample-table.js';

/** Error strings of google/pprof's decoder (kept verbatim: users search for them). */
export const GoErrors = {
  badVarint: 'bad varint',
  notEnoughData: 'not enough data',
  tooMuchData: 'too much data',
  typeMismatch: 'type mismatch',
  stringTable0: "string_table[0] must be ''",
  malformed: 'malformed profile format',
  concatenated: 'concatenated profiles detected',
  empty: 'empty input file',
} as const;

export interface DecodeOptions {
  /** File name for error messages. */
  file?: string;
  /**
   * `maxFramesPerStack` (also the lines of one location: its inlined frames), `maxStringLength`,
   * `maxSamples`, `maxTotalFrames`, `maxTableEntries`, `maxSampleTypes`, `maxSampleValues`, `maxLabelsPerSample` (core's
   * `READ_LIMITS` by default).
   */
  limits?: ReadLimits;
  /**
   * Samples with equal location ids and equal labels (google/pprof's sample key in
   * `profile/merge.go`) are one sample whose values are the sums, in the order of their first
   * appearance: the sample columns then grow with the distinct samples, not with the input's.
   * Sums wrap at 64 bits as Go's `int64` additions do. Samples whose values, or sums, are all
   * zero are left out, as Go's `Merge` leaves them out (so the samples, and their order, are
   * those of the merged profile `go tool pprof` builds its reports from). Limits count the samples of the input.
   *
   * `'if-repeating'`: the same, unless the first samples hardly repeat (at least 90 % of the
   * first 4,096 are distinct): the rest is then read as it is, sample for sample, without the
   * hashing (for a caller that only sums the samples' values, whatever
   * their number: a profile whose stacks do not repeat pays nothing for it). Equal samples are
   * then merged only where no value changes sign and no sum wraps or is -2^63: reports sum
   * |value| per sample, flame graphs leave negative samples out, and a base is negated (core's
   * `scale`), so their output is that of every sample.
   */
  aggregate?: boolean | 'if-repeating';
}

/** The effective limits of one decode. */
interface DecodeLimits {
  maxFrames: number;
  maxString: number;
  maxSamples: number;
  maxTotalFrames: number;
  maxTable: number;
  maxSampleTypes: number;
  maxSampleValues: number;
  maxLabels: number;
  maxMessage: number;
}

function decodeLimits(limits: ReadLimits | undefined): DecodeLimits {
  return {
    maxFrames: limitValue(limits, 'maxFramesPerStack'),
    maxString: limitValue(limits, 'maxStringLength'),
    maxSamples: limitValue(limits, 'maxSamples'),
    maxTotalFrames: limitValue(limits, 'maxTotalFrames'),
    maxTable: limitValue(limits, 'maxTableEntries'),
    maxSampleTypes: limitValue(limits, 'maxSampleTypes'),
    maxSampleValues: limitValue(limits, 'maxSampleValues'),
    maxLabels: limitValue(limits, 'maxLabelsPerSample'),
    maxMessage: limitValue(limits, 'maxMessageBytes'),
  };
}

/** The limits of the decode in progress. */
let limits: DecodeLimits = decodeLimits(undefined);

/**
 * The `PROFKIT_E_LIMIT` error of pass 1 when a count outgrows its limit at the field at
 * `windowOffset`: checked as each entry is counted, so that no column is allocated for it.
 */
function overLimit(option: LimitName, what: string, max: number, windowOffset: number, extra: Record<string, unknown> = {}): never {
  throw limitError(option, what, max, { file: fileName, offset: base + windowOffset, ...extra });
}

export interface DecodeResult {
  profile: Profile;
  warnings: Warning[];
}

/**
 * What an empty function name or system name reads as: the R package `profile`'s placeholder
 * (its `read_pprof` does the same); the writer turns it back into "".
 */
export const EMPTY_NAME = '<?>';

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const TWO32 = 4294967296;

// Decoder state (module-level: monomorphic and fast; the decoder is synchronous and not
// re-entrant).
let buf: Uint8Array = new Uint8Array(0);
let pos = 0;
let lo = 0;
let hi = 0;
let fileName: string | undefined;
/** The decode in progress merges equal samples (`DecodeOptions.aggregate`). */
let aggregating: NonNullable<DecodeOptions['aggregate']> = false;

/**
 * Offset of `buf[0]` in the whole input: 0 for a buffer decode, the window's start when streaming
 * (error offsets are always offsets in the whole decompressed input).
 */
let base = 0;

function fail(rule: string, windowOffset: number, code: ErrorCode = ErrorCodes.PARSE, extra: Record<string, unknown> = {}): never {
  const offset = base + windowOffset;
  const where = fileName ? `${fileName}@${offset}` : `offset ${offset}`;
  throw new ProfkitError(code, `pprof: ${rule} (${where})`, { file: fileName, offset, rule, ...extra });
}

function invalid(rule: string, extra: Record<string, unknown> = {}): never {
  const where = fileName ? `${fileName}: ` : '';
  if (typeof extra.offset === 'number') extra = { ...extra, offset: base + extra.offset };
  throw new ProfkitError(ErrorCodes.INVALID_PROFILE, `${where}malformed profile: ${rule}`, {
    file: fileName,
    rule: `pprof.CheckValid: ${rule}`,
    ...extra,
  });
}

/** Reads a varint ending before `end` into `lo`/`hi`. Go's rule: at most 10 bytes. */
function varint(end: number): void {
  const start = pos;
  if (pos >= end) fail(GoErrors.badVarint, start);
  let b = buf[pos++]!;
  if (b < 0x80) {
    lo = b;
    hi = 0;
    return;
  }
  let l = b & 0x7f;
  for (let shift = 7; shift < 28; shift += 7) {
    if (pos >= end) fail(GoErrors.badVarint, start);
    b = buf[pos++]!;
    l |= (b & 0x7f) << shift;
    if (b < 0x80) {
      lo = l >>> 0;
      hi = 0;
      return;
    }
  }
  if (pos >= end) fail(GoErrors.badVarint, start);
  b = buf[pos++]!;
  l |= (b & 0x0f) << 28;
  let h = (b & 0x7f) >> 4;
  if (b < 0x80) {
    lo = l >>> 0;
    hi = h;
    return;
  }
  for (let shift = 3; shift <= 31; shift += 7) {
    if (pos >= end) fail(GoErrors.badVarint, start);
    b = buf[pos++]!;
    h |= (b & 0x7f) << shift;
    if (b < 0x80) {
      lo = l >>> 0;
      hi = h >>> 0;
      return;
    }
  }
  fail(GoErrors.badVarint, start);
}

/** Reads a varint that must fit a JS number (lengths; tags go through `tagVarint`). */
function smallVarint(end: number): number {
  varint(end);
  return hi === 0 ? lo : hi * TWO32 + lo;
}

/**
 * Reads a field tag. A tag of 2^32 or more (Go reads tags as uint64) has a field number no
 * message of profile.proto has: it comes back as field 2^29 - 1 with its exact wire type (a
 * double of hi * 2^32 + lo would round away the low bits that hold the wire type).
 */
function tagVarint(end: number): number {
  varint(end);
  return hi === 0 ? lo : 0xfffffff8 + (lo & 7);
}

/** Skips a field's payload of wire type `wt`; returns false for an unknown wire type. */
function skip(wt: number, end: number, tagPos: number): void {
  switch (wt) {
    case 0:
      varint(end);
      return;
    case 1:
      if (end - pos < 8) fail(GoErrors.notEnoughData, tagPos);
      pos += 8;
      return;
    case 2: {
      const n = smallVarint(end);
      if (n > end - pos) fail(GoErrors.tooMuchData, tagPos);
      pos += n;
      return;
    }
    case 5:
      if (end - pos < 4) fail(GoErrors.notEnoughData, tagPos);
      pos += 4;
      return;
    default:
      fail(`unknown wire type: ${wt}`, tagPos);
  }
}

/** Reads the length of a wire-type-2 field; returns its end. */
function lengthEnd(end: number, tagPos: number): number {
  const n = pos < end && buf[pos]! < 0x80 ? buf[pos++]! : smallVarint(end);
  if (n > end - pos) fail(GoErrors.tooMuchData, tagPos);
  return pos + n;
}

function expectType(wt: number, want: number, tagPos: number, field: string): void {
  if (wt !== want) {
    if (wt !== 0 && wt !== 1 && wt !== 2 && wt !== 5) fail(`unknown wire type: ${wt}`, tagPos);
    fail(GoErrors.typeMismatch, tagPos, ErrorCodes.PARSE, { field });
  }
}

/** int64 in lo/hi as a JS number, which must be a safe integer (lines, columns). */
function safeNumber(what: string, at: number): number {
  if (hi === 0) return lo;
  const n = (hi | 0) * TWO32 + lo;
  if (!Number.isSafeInteger(n)) fail(`${what} ${BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo))} is beyond 2^53`, at, ErrorCodes.RANGE);
  return n;
}

/** UTF-8 slices of the input (no copy; Node's native `Buffer` slicing on Node, `TextDecoder` elsewhere). */
let decodeUtf8: ((start: number, end: number) => string) | undefined;

function decodeString(start: number, end: number): string {
  if (end === start) return '';
  // Invalid UTF-8 becomes U+FFFD (Go keeps raw bytes; documented).
  return decodeUtf8!(start, end);
}

interface Counts {
  sampleTypes: number;
  samples: number;
  locIds: number;
  labels: number;
  mappings: number;
  locations: number;
  inlineLines: number;
  functions: number;
  /** Entries of all tables, for `maxTableEntries`. */
  entries: number;
  /** Sample values of all samples (the value columns are allocated only when it is `samples × sampleTypes`). */
  values: number;
  /** The string table, decoded in pass 1 (pass 2 resolves indices into it). */
  strs: string[];
  /** Go refuses a second time_nanos after a non-zero one. */
  timeNonZero: boolean;
}

function newCounts(): Counts {
  return { sampleTypes: 0, samples: 0, locIds: 0, labels: 0, mappings: 0, locations: 0, inlineLines: 0, functions: 0, entries: 0, values: 0, strs: [], timeNonZero: false };
}

// Field names for error details (constants: no allocation in the hot loops).
const LABEL_FIELDS = ['', 'label.key', 'label.str', 'label.num', 'label.num_unit'];
const LOCATION_FIELDS = ['', 'location.id', 'location.mapping_id', 'location.address', 'location.line', 'location.is_folded'];
const FUNCTION_FIELDS = ['', 'function.id', 'function.name', 'function.system_name', 'function.filename', 'function.start_line'];
const LINE_FIELDS = ['', 'line.function_id', 'line.line', 'line.column'];
const MAPPING_FIELDS = ['', 'mapping.id', 'mapping.memory_start', 'mapping.memory_limit', 'mapping.file_offset', 'mapping.filename', 'mapping.build_id', 'mapping.has_functions', 'mapping.has_filenames', 'mapping.has_line_numbers', 'mapping.has_inline_frames'];

/** The string table of the profile being decoded. */
let strings: string[] = [];

/** The string whose int64 index is in lo/hi (google/pprof's range check). */
function str(at: number, field: string): string {
  if (hi !== 0 || lo >= strings.length) fail(GoErrors.malformed, at, ErrorCodes.PARSE, { field, index: hi === 0 ? lo : bigKey().toString() });
  return strings[lo]!;
}

/** `buf` as aligned 32-bit words (`words[k]` = bytes `wordBase + 4k ..`), for `countPacked`. */
let words: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
let wordBase = 0;

/** Sets `buf` (and its word view): every assignment of `buf` goes through here. */
function setBuf(b: Uint8Array): void {
  buf = b;
  const skew = (4 - (b.byteOffset & 3)) & 3;
  if (b.length < skew + 4) {
    // Too short for one aligned word: `countPacked` then counts byte by byte.
    wordBase = 0;
    words = EMPTY_WORDS;
    return;
  }
  wordBase = skew;
  words = new Uint32Array(b.buffer, b.byteOffset + skew, (b.length - skew) >>> 2);
}
const EMPTY_WORDS = new Uint32Array(0);

/** Counts varints in a packed region: every byte without the continuation bit ends one. */
function countPacked(start: number, end: number, tagPos: number): number {
  const c = countVarintEnds(start, end);
  if (end > start && buf[end - 1]! >= 0x80) fail(GoErrors.badVarint, tagPos);
  return c;
}

/** The bytes without the continuation bit in `buf[start, end)`: the varints that end there. */
function countVarintEnds(start: number, end: number): number {
  let c = 0;
  const b = buf;
  // Branch-free: continuation bits are unpredictable, so a branch here mispredicts often.
  // Whole aligned words count 4 bytes at once: their high bits, moved to bits 0, 8, 16, 24 and
  // summed by a multiplication into the top byte.
  let i = start;
  const firstWord = Math.max(0, Math.ceil((start - wordBase) / 4));
  const lastWord = Math.min(words.length, Math.floor((end - wordBase) / 4));
  if (lastWord - firstWord > 2) {
    const wordStart = wordBase + 4 * firstWord;
    for (; i < wordStart; i++) c += (b[i]! >> 7) ^ 1;
    const w = words;
    let high = 0;
    for (let k = firstWord; k < lastWord; k++) high += Math.imul((w[k]! >>> 7) & 0x01010101, 0x01010101) >>> 24;
    c += 4 * (lastWord - firstWord) - high;
    i = wordBase + 4 * lastWord;
  }
  for (; i < end; i++) c += (b[i]! >> 7) ^ 1;
  return c;
}

/** What `maxTableEntries` counts (the tables' names are `detail.table` of its error). */
type TableName = 'string_table' | 'mapping' | 'location' | 'line' | 'function' | 'label' | 'comment';

/**
 * Counts `n` entries of `table` (the field at `windowOffset`) against `maxTableEntries`, which
 * bounds the entries of all tables together: every entry costs columns (up to ~50 bytes for a
 * mapping) even when it takes 2 bytes of input, so the sum is what bounds the memory.
 */
function countEntries(c: Counts, n: number, table: TableName, windowOffset: number): void {
  c.entries += n;
  if (c.entries > limits.maxTable) {
    const what = `the number of table entries (string-table entries, mappings, locations, lines, functions, labels and comments together: ${c.entries}, the last in ${table})`;
    overLimit('maxTableEntries', what, limits.maxTable, windowOffset, { table });
  }
}

/**
 * Pass 1 over the top-level fields from `pos` to `end`. With `partial` (streaming), stops before
 * the first field that is not whole in the window (the caller brings more bytes and calls again).
 */
function indexFields(c: Counts, end: number, partial: boolean): void {
  while (pos < end) {
    if (partial && !fieldComplete(end)) return;
    const tagPos = pos;
    const tag = tagVarint(end);
    const field = Math.floor(tag / 8);
    const wt = tag & 7;
    switch (field) {
      case 1:
      case 3:
      case 5:
      case 11: {
        expectType(wt, 2, tagPos, fieldName(field));
        const e = boundedEnd(end, tagPos, field);
        if (field === 1) {
          if (++c.sampleTypes > limits.maxSampleTypes) overLimit('maxSampleTypes', 'the number of sample types', limits.maxSampleTypes, tagPos);
        } else if (field === 3) {
          c.mappings++;
          countEntries(c, 1, 'mapping', tagPos);
        } else if (field === 5) {
          c.functions++;
          countEntries(c, 1, 'function', tagPos);
        }
        pos = e;
        break;
      }
      case 2: {
        expectType(wt, 2, tagPos, 'sample');
        const e = boundedEnd(end, tagPos, field);
        if (++c.samples > limits.maxSamples) overLimit('maxSamples', 'the number of samples', limits.maxSamples, tagPos);
        const locIdsBefore = c.locIds;
        let labels = 0;
        while (pos < e) {
          const tp = pos;
          // One-byte tags (every known field) skip the general varint reader.
          const t = buf[pos]! < 0x80 ? buf[pos++]! : tagVarint(e);
          const f = Math.floor(t / 8);
          const w = t & 7;
          if (f === 1) {
            if (w === 2) {
              const pe = lengthEnd(e, tp);
              c.locIds += countPacked(pos, pe, tp);
              pos = pe;
            } else {
              expectType(w, 0, tp, 'sample.location_id');
              varint(e);
              c.locIds++;
            }
          } else if (f === 2) {
            if (w === 2) {
              const pe = lengthEnd(e, tp);
              c.values += countPacked(pos, pe, tp);
              pos = pe;
            } else {
              expectType(w, 0, tp, 'sample.value');
              varint(e);
              c.values++;
            }
          } else if (f === 3) {
            expectType(w, 2, tp, 'sample.label');
            pos = lengthEnd(e, tp);
            if (++labels > limits.maxLabels) overLimit('maxLabelsPerSample', 'the number of labels of one sample', limits.maxLabels, tp, { sample: c.samples - 1 });
            c.labels++;
            countEntries(c, 1, 'label', tp);
          } else skip(w, e, tp);
        }
        if (c.locIds - locIdsBefore > limits.maxFrames) overLimit('maxFramesPerStack', `a sample with ${c.locIds - locIdsBefore} frames`, limits.maxFrames, tagPos);
        // 4 bytes each in the profile, for as little as one byte of input that compresses to nothing.
        if (c.locIds > limits.maxTotalFrames) overLimit('maxTotalFrames', `the location ids of samples 1 to ${c.samples} (${c.locIds})`, limits.maxTotalFrames, tagPos);
        // 8 bytes each in the value columns, for one byte of input: a gzip of 400 KB inflates to 400M.
        if (c.values > limits.maxSampleValues) overLimit('maxSampleValues', `the values of samples 1 to ${c.samples} (${c.values})`, limits.maxSampleValues, tagPos);
        break;
      }
      case 4: {
        expectType(wt, 2, tagPos, 'location');
        const e = boundedEnd(end, tagPos, field);
        c.locations++;
        countEntries(c, 1, 'location', tagPos);
        let lines = 0;
        while (pos < e) {
          const tp = pos;
          const t = tagVarint(e);
          const f = Math.floor(t / 8);
          const w = t & 7;
          if (f === 4) {
            expectType(w, 2, tp, 'location.line');
            pos = lengthEnd(e, tp);
            // The lines of a location are frames (inlined calls): its stack is at least that deep.
            if (++lines > limits.maxFrames) overLimit('maxFramesPerStack', 'the number of lines (inlined frames) of one location', limits.maxFrames, tp, { location: c.locations - 1 });
            if (lines > 1) c.inlineLines++;
            countEntries(c, 1, 'line', tp);
          } else skip(w, e, tp);
        }
        break;
      }
      case 6: {
        expectType(wt, 2, tagPos, 'string_table');
        const e = boundedEnd(end, tagPos, field);
        if (c.strs.length === 0 && e !== pos) fail(GoErrors.stringTable0, tagPos);
        countEntries(c, 1, 'string_table', tagPos);
        c.strs.push(decodeString(pos, e));
        pos = e;
        break;
      }
      case 13:
        if (wt === 2) {
          const e = boundedEnd(end, tagPos, field);
          // A malformed varint in there is pass 2's error (its offset is that of the varint).
          countEntries(c, countVarintEnds(pos, e), 'comment', tagPos);
          pos = e;
        } else {
          expectType(wt, 0, tagPos, 'comment');
          varint(end);
          countEntries(c, 1, 'comment', tagPos);
        }
        break;
      case 9:
        // Go fails as soon as a second time_nanos arrives after a non-zero one.
        expectType(wt, 0, tagPos, 'time_nanos');
        varint(end);
        if (c.timeNonZero) fail(GoErrors.concatenated, tagPos);
        c.timeNonZero = lo !== 0 || hi !== 0;
        break;
      case 7:
      case 8:
      case 10:
      case 12:
      case 14:
      case 15:
        expectType(wt, 0, tagPos, fieldName(field));
        varint(end);
        break;
      default:
        if (wt === 2) pos = boundedEnd(end, tagPos, field);
        else skip(wt, end, tagPos);
    }
  }
}

/** The limit on the length of top-level field `field`: `maxStringLength` for the string table. */
function fieldLimit(field: number): number {
  return field === 6 ? limits.maxString : limits.maxMessage;
}

/**
 * Reads the length of top-level field `field` (wire type 2) and returns its end, after checking
 * the length against the field's limit (before what is left, so that the streamed decoder can
 * report it from the length alone, without holding the field: see `fieldComplete`).
 */
function boundedEnd(end: number, tagPos: number, field: number): number {
  const n = pos < end && buf[pos]! < 0x80 ? buf[pos++]! : smallVarint(end);
  const max = fieldLimit(field);
  if (n > max) {
    const bytes = Number.isSafeInteger(n) ? String(n) : bigKey().toString(); // lo/hi: smallVarint's
    if (field === 6) overLimit('maxStringLength', `a string of ${bytes} bytes`, max, tagPos);
    overLimit('maxMessageBytes', `a ${fieldName(field)} field of ${bytes} bytes`, max, tagPos);
  }
  if (n > end - pos) fail(GoErrors.tooMuchData, tagPos);
  return pos + n;
}

/**
 * Whether the top-level field at `pos` lies whole before `end` (streaming: otherwise wait for
 * more bytes). A malformed tag or length counts as whole: decoding it then reports the error.
 */
function fieldComplete(end: number): boolean {
  let p = pos;
  if (p >= end) return false;
  const wt = buf[p]! & 7;
  let tag = 0;
  for (let n = 0, scale = 1; ; n++, scale *= 128) {
    if (n === 10) return true;
    if (p >= end) return false;
    const b = buf[p++]!;
    tag += (b & 0x7f) * scale;
    if (b < 0x80) break;
  }
  switch (wt) {
    case 0:
      for (let n = 0; ; n++) {
        if (n === 10) return true;
        if (p >= end) return false;
        if (buf[p++]! < 0x80) return true;
      }
    case 1:
      return p + 8 <= end;
    case 5:
      return p + 4 <= end;
    case 2: {
      let len = 0;
      let scale = 1;
      for (let n = 0; ; n++) {
        if (n === 10) return true;
        if (p >= end) return false;
        const b = buf[p++]!;
        len += (b & 0x7f) * scale;
        scale *= 128;
        if (b < 0x80) break;
      }
      // A length over the field's limit is an error whatever follows: decode it now rather than
      // wait for (and hold) the whole field.
      return p + len <= end || len > fieldLimit(Math.floor(tag / 8));
    }
    default:
      return true;
  }
}

function fieldName(f: number): string {
  return (
    ['', 'sample_type', 'sample', 'mapping', 'location', 'function', 'string_table', 'drop_frames', 'keep_frames', 'time_nanos', 'duration_nanos', 'period_type', 'period', 'comment', 'default_sample_type', 'doc_url'][f] ??
    `field ${f}`
  );
}

/** A reference to an id above 2^32-1, fixed up after decoding (rare). */
interface BigRef {
  arr: Uint32Array;
  idx: number;
  key: bigint;
  at: number;
}

/**
 * A field read again replaces its value (Go keeps the last): forgets the id above 2^32-1 that row
 * `idx` read before in this field of `list` (only the row being decoded pushes to it, so last).
 */
function forgetBig(list: BigRef[], idx: number): void {
  while (list.length > 0 && list[list.length - 1]!.idx === idx) list.pop();
}

function bigKey(): bigint {
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/**
 * Decodes an uncompressed profile.proto message into a profile.
 * Throws `ProfkitError` (PARSE/EMPTY_INPUT/INVALID_PROFILE/RANGE) on bad input.
 */
export function decodeProfile(bytes: Uint8Array, options: DecodeOptions = {}): DecodeResult {
  fileName = options.file;
  limits = decodeLimits(options.limits);
  aggregating = options.aggregate ?? false;
  setBuf(bytes);
  decodeUtf8 = utf8Decoder(bytes);
  base = 0;
  try {
    return decodeInner();
  } finally {
    releaseState();
  }
}

/** Drops the module-level references of the decode in progress. */
function releaseState(): void {
  setBuf(new Uint8Array(0));
  decodeUtf8 = undefined;
  base = 0;
  strings = [];
  C = EMPTY_COLS;
  F = undefined;
  lineWithoutFunction = [];
  fileName = undefined;
  aggregating = false;
}

/** The state of a streamed decode between its windows (another decode may run meanwhile). */
interface StreamState {
  fileName: string | undefined;
  limits: DecodeLimits;
  aggregate: NonNullable<DecodeOptions['aggregate']>;
  strings: string[];
  cols: Cols;
  fill: Fill | undefined;
  lineWithoutFunction: number[];
  unresolvedMappings: number;
}

/** The state of a decode that runs in steps, before its first step. */
function newStreamState(options: DecodeOptions): StreamState {
  return {
    fileName: options.file,
    limits: decodeLimits(options.limits),
    aggregate: options.aggregate ?? false,
    strings: [],
    cols: EMPTY_COLS,
    fill: undefined,
    lineWithoutFunction: [],
    unresolvedMappings: 0,
  };
}

function enter(st: StreamState, window: Uint8Array, start: number): void {
  setBuf(window);
  decodeUtf8 = utf8Decoder(window);
  base = start;
  pos = 0;
  fileName = st.fileName;
  limits = st.limits;
  aggregating = st.aggregate;
  strings = st.strings;
  C = st.cols;
  F = st.fill;
  lineWithoutFunction = st.lineWithoutFunction;
  unresolvedMappings = st.unresolvedMappings;
}

function leave(st: StreamState): void {
  st.strings = strings;
  st.cols = C;
  st.fill = F;
  st.lineWithoutFunction = lineWithoutFunction;
  st.unresolvedMappings = unresolvedMappings;
  releaseState();
}

/**
 * Runs `step` over a stream of decompressed chunks, one window at a time: a window is the bytes
 * left over from the previous chunk (the start of a field not yet whole) followed by the next
 * chunk. `step(end, partial)` consumes whole fields from `pos`; the last call (`partial` false)
 * gets what is left at the end, so a truncated field is reported as the buffer decoder reports
 * it. Returns the number of bytes streamed. Memory: the window, which grows only to hold the
 * largest single field.
 */
async function streamWindows(open: () => AsyncIterable<Uint8Array>, st: StreamState, step: (end: number, partial: boolean) => void): Promise<StreamDigest> {
  let win = new Uint8Array(0);
  let have = 0; // win[0, have) holds the pending start of a field
  let start = 0; // offset of that pending start in the whole input
  let crc = 0;
  const source = open()[Symbol.asyncIterator]();
  for (;;) {
    const next = await source.next();
    if (next.done) break;
    const chunk = next.value;
    if (chunk.length === 0) continue;
    crc = crc32(chunk, crc);
    let view: Uint8Array;
    if (have === 0) view = chunk; // nothing pending: decode the chunk where it is
    else {
      if (have + chunk.length > win.length) {
        const grown = new Uint8Array(Math.max(have + chunk.length, 2 * win.length));
        grown.set(win.subarray(0, have));
        win = grown;
      }
      win.set(chunk, have);
      view = win.subarray(0, have + chunk.length);
    }
    let consumed: number;
    enter(st, view, start);
    try {
      step(view.length, true);
      consumed = pos;
    } catch (e) {
      // Report the rest of the stream too: the caller tells a bad input from one that changed.
      let length = start + view.length;
      for (;;) {
        const more = await source.next();
        if (more.done) break;
        crc = crc32(more.value, crc);
        length += more.value.length;
      }
      throw new StreamError(e, { length, crc });
    } finally {
      leave(st);
    }
    const rest = view.length - consumed;
    if (rest > 0) {
      if (view === chunk) {
        if (rest > win.length) win = new Uint8Array(Math.max(rest, 2 * win.length, 1 << 16));
        win.set(chunk.subarray(consumed));
      } else win.copyWithin(0, consumed, view.length);
    }
    have = rest;
    start += consumed;
  }
  const digest = { length: start + have, crc };
  if (have > 0) {
    enter(st, win.subarray(0, have), start);
    try {
      step(have, false);
    } catch (e) {
      throw new StreamError(e, digest);
    } finally {
      leave(st);
    }
  }
  return digest;
}

/** Length and CRC-32 of a whole stream: what tells that the second read saw the same bytes. */
interface StreamDigest {
  length: number;
  crc: number;
}

/** An error of a streamed pass, with the digest of the whole stream. */
class StreamError {
  constructor(
    readonly error: unknown,
    readonly digest: StreamDigest,
  ) {}
}

function changedInput(file: string | undefined): ProfkitError {
  return new ProfkitError(ErrorCodes.PARSE, `pprof: the input changed between the two reads of a streamed decode${file ? ` (${file})` : ''}`, {
    file,
    rule: 'streamed input must read the same twice',
  });
}

/**
 * Decodes a profile from a stream of decompressed chunks without ever holding the whole input:
 * `open()` is called twice (pass 1 counts and reads the string table, pass 2 fills the exactly
 * sized columns), so it must yield the same bytes each time (a file read twice, or bytes in
 * memory inflated twice). Same result and same errors (offsets included) as `decodeProfile`;
 * peak memory is the profile plus one window of the stream.
 */
export async function decodeProfileStream(open: () => AsyncIterable<Uint8Array>, options: DecodeOptions = {}): Promise<DecodeResult> {
  const st = newStreamState(options);
  const c = newCounts();
  // `'if-repeating'` judges before pass 2 from the keys of the first samples, hashed as pass 1
  // goes by them (the windows are gone afterwards).
  const keys = st.aggregate === 'if-repeating' ? newFirstSampleKeys() : undefined;
  let first: StreamDigest;
  try {
    first = await streamWindows(open, st, (end, partial) => {
      const from = pos;
      indexFields(c, end, partial);
      if (keys === undefined || keys.samples === SAMPLES_BEFORE_JUDGING) return;
      const indexed = pos;
      pos = from;
      hashSampleKeys(keys, indexed);
      pos = indexed;
    });
  } catch (e) {
    throw e instanceof StreamError ? e.error : e;
  }
  enter(st, new Uint8Array(0), 0);
  try {
    if (first.length === 0) emptyInput();
    judgeFirstSamples(c, keys);
    beginFill(c);
  } finally {
    leave(st);
  }
  let second: StreamDigest;
  try {
    second = await streamWindows(open, st, (end, partial) => fillFields(end, partial));
  } catch (e) {
    if (!(e instanceof StreamError)) throw e;
    // Pass 2 checks more than pass 1 (string indices, value counts): its error stands unless the
    // bytes were not those that pass 1 read.
    if (e.digest.length !== first.length || e.digest.crc !== first.crc) throw changedInput(st.fileName);
    throw e.error;
  }
  enter(st, new Uint8Array(0), 0);
  try {
    if (second.length !== first.length || second.crc !== first.crc) throw changedInput(st.fileName);
    return endFill(c, true);
  } finally {
    leave(st);
  }
}

/**
 * `decodeProfile` in steps, for bytes that arrive over time (a download being inflated):
 * `index(bytes)` runs pass 1 over the whole top-level fields that arrived since its last call, so
 * that it is done while the rest is still on its way; `finish(bytes)` indexes what is left and
 * runs pass 2. The bytes stay the caller's, in one buffer that grows: each call's `bytes` must
 * begin with the bytes of the call before (the same values, in the same or a larger buffer).
 * `finish(bytes, options)` gives the result and the errors (offsets included) of
 * `decodeProfile(bytes, options)`; with other options than the decoder's, it is that call.
 */
export class ProfileDecoder {
  private readonly state: StreamState;
  private readonly counts = newCounts();
  /** Pass 1 has read the fields before this offset. */
  private indexed = 0;
  /** Pass 1's error, which `finish` throws: `decodeProfile` stops at it in its own pass 1. */
  private failure: { error: unknown } | undefined;
  /** `finish` has used the counts (their string table went into the profile). */
  private finished = false;

  constructor(private readonly options: DecodeOptions = {}) {
    this.state = newStreamState(options);
  }

  /** Runs pass 1 over the top-level fields of `bytes` (the input so far) that lie whole after those already read. */
  index(bytes: Uint8Array): void {
    if (this.failure || this.finished || bytes.length <= this.indexed) return;
    enter(this.state, bytes, 0);
    pos = this.indexed;
    try {
      indexFields(this.counts, bytes.length, true);
      this.indexed = pos;
    } catch (error) {
      this.failure = { error };
    } finally {
      leave(this.state);
    }
  }

  /** The profile of `bytes`, the whole input: `decodeProfile(bytes, options)`, without pass 1 over what `index` read. */
  finish(bytes: Uint8Array, options: DecodeOptions = this.options): DecodeResult {
    if (this.finished || bytes.length < this.indexed || !sameDecodeOptions(options, this.options)) return decodeProfile(bytes, options);
    this.finished = true;
    if (this.failure) throw this.failure.error;
    const c = this.counts;
    enter(this.state, bytes, 0);
    pos = this.indexed;
    try {
      indexFields(c, bytes.length, false);
      if (bytes.length === 0) emptyInput();
      judgeBeforeFill(c, bytes.length);
      beginFill(c);
      pos = 0;
      fillFields(bytes.length, false);
      return endFill(c, false);
    } finally {
      leave(this.state);
      // The string table is the profile's now; the decoder keeps nothing of it.
      this.state.strings = [];
      this.state.cols = EMPTY_COLS;
      this.state.fill = undefined;
    }
  }
}

/** Whether two decodes name the same file and apply the same limits (their errors are then the same). */
function sameDecodeOptions(a: DecodeOptions, b: DecodeOptions): boolean {
  if (a.file !== b.file || (a.aggregate ?? false) !== (b.aggregate ?? false)) return false;
  const x = decodeLimits(a.limits);
  const y = decodeLimits(b.limits);
  return (Object.keys(x) as (keyof DecodeLimits)[]).every((k) => x[k] === y[k]);
}

/** The columns pass 2 fills, shared with the per-message decoders. */
interface Cols {
  nT: number;
  offsets: Uint32Array;
  locIds: Uint32Array;
  vviews: Uint32Array[];
  labelOffsets: Uint32Array | undefined;
  labKey: string[];
  labStr: string[];
  labNumView: Uint32Array;
  labUnit: string[];
  labIsNum: Uint8Array;
  bigRefs: { location: BigRef[]; function: BigRef[]; mapping: BigRef[] };
  bigDefs: { location: BigRef[]; function: BigRef[]; mapping: BigRef[] };
  nLocId: number;
  nLabOut: number;
  lId: Uint32Array;
  lFn: Uint32Array;
  lLine: Float64Array;
  lCol: Float64Array;
  lAddrV: Uint32Array;
  lMap: Uint32Array;
  lFold: Uint8Array;
  lInlOff: Uint32Array;
  iFn: Uint32Array;
  iLine: Float64Array;
  iCol: Float64Array;
  iIn: number;
  /** With `aggregate`: the distinct samples so far (undefined again once `'if-repeating'` stops merging). */
  merge: Merging | undefined;
  /** Read with `aggregate`: the columns are cut to the rows used at the end. */
  aggregated: boolean;
  /** Samples, location ids and labels of the input that took no row (merged into another, or all zero). */
  rowsDropped: number;
  locIdsDropped: number;
  labelsDropped: number;
  /** Location ids of the samples left out for being all zero, checked as the others (`keepDroppedLocIds`). */
  zeroSampleLocIds: Uint32Array;
  nZeroSampleLocIds: number;
  /** Their ids above 2^32-1 (places in `zeroSampleLocIds`), renumbered and checked as the others. */
  zeroSampleBigRefs: BigRef[];
}
const u32 = new Uint32Array(0);
const f64 = new Float64Array(0);
const EMPTY_COLS: Cols = {
  nT: 0, offsets: u32, locIds: u32, vviews: [], labelOffsets: undefined, labKey: [], labStr: [], labNumView: u32, labUnit: [], labIsNum: new Uint8Array(0),
  bigRefs: { location: [], function: [], mapping: [] }, bigDefs: { location: [], function: [], mapping: [] },
  nLocId: 0, nLabOut: 0, lId: u32, lFn: u32, lLine: f64, lCol: f64, lAddrV: u32, lMap: u32, lFold: new Uint8Array(0), lInlOff: u32, iFn: u32, iLine: f64, iCol: f64, iIn: 0, merge: undefined, aggregated: false, rowsDropped: 0, locIdsDropped: 0, labelsDropped: 0, zeroSampleLocIds: u32, nZeroSampleLocIds: 0, zeroSampleBigRefs: [],
};
let C: Cols = EMPTY_COLS;

/** Decodes one Sample message (pass 2) into the columns of `C`. */
function decodeSample(end: number, tagPos: number, s: number): void {
  const e = lengthEnd(end, tagPos);
  // With `aggregate` the sample is decoded into the row after the distinct ones, then kept or
  // added to its equal (`mergeSample`).
  const merging = C.merge;
  const row = s - C.rowsDropped;
  if (merging !== undefined) makeSampleRoom(merging, row, e - pos);
  const { nT, locIds, vviews, labelOffsets, bigRefs } = C;
  const bigLocationsBefore = bigRefs.location.length;
  let nLocId = C.nLocId;
  let nLabOut = C.nLabOut;
  let nv = 0;
  const twoS = 2 * row;
  while (pos < e) {
    const tp = pos;
    const tg = buf[pos]! < 0x80 ? buf[pos++]! : tagVarint(e);
    const f = tg >>> 3;
    const w = tg & 7;
    if (f === 1) {
      if (w === 2) {
        const pe = lengthEnd(e, tp);
        // The hottest loop of the decoder (most of a profile's bytes are location ids): the
        // module-level `buf`/`pos` are copied into locals, which V8 keeps in registers.
        const b0 = buf;
        let p = pos;
        while (p < pe) {
          const b = b0[p]!;
          let b1 = 0;
          let b2 = 0;
          if (b < 0x80) {
            if (b === 0) fail('sample has nil location', p, ErrorCodes.INVALID_PROFILE, { rule: 'pprof.CheckValid: sample has nil location' });
            p++;
            locIds[nLocId++] = b;
          } else if (p + 1 < pe && (b1 = b0[p + 1]!) < 0x80) {
            p += 2;
            locIds[nLocId++] = (b & 0x7f) | (b1 << 7);
          } else if (p + 2 < pe && (b2 = b0[p + 2]!) < 0x80) {
            p += 3;
            locIds[nLocId++] = (b & 0x7f) | ((b1 & 0x7f) << 7) | (b2 << 14);
          } else {
            const vp = p;
            pos = p;
            varint(pe);
            p = pos;
            if (hi !== 0) bigRefs.location.push({ arr: locIds, idx: nLocId, key: bigKey(), at: base + vp });
            else if (lo === 0) fail('sample has nil location', vp, ErrorCodes.INVALID_PROFILE, { rule: 'pprof.CheckValid: sample has nil location' });
            locIds[nLocId++] = lo;
          }
        }
        pos = p;
      } else {
        varint(e);
        if (hi !== 0) bigRefs.location.push({ arr: locIds, idx: nLocId, key: bigKey(), at: base + tp });
        else if (lo === 0) fail('sample has nil location', tp, ErrorCodes.INVALID_PROFILE, { rule: 'pprof.CheckValid: sample has nil location' });
        locIds[nLocId++] = lo;
      }
    } else if (f === 2) {
      if (w === 2) {
        const pe = lengthEnd(e, tp);
        while (pos < pe) {
          varint(pe);
          if (nv < nT) {
            const vv = vviews[nv]!;
            vv[twoS] = lo;
            vv[twoS + 1] = hi;
          }
          nv++;
        }
      } else {
        varint(e);
        if (nv < nT) {
          const vv = vviews[nv]!;
          vv[twoS] = lo;
          vv[twoS + 1] = hi;
        }
        nv++;
      }
    } else if (f === 3) {
      // Labels in a function of their own: a smaller decodeSample is optimized sooner.
      if (decodeLabel(lengthEnd(e, tp), nLabOut)) nLabOut++;
    } else skip(w, e, tp);
  }
  if (nT === 0) invalid('missing sample type information', { offset: tagPos });
  if (nv !== nT) invalid(`mismatch: sample has ${nv} values vs. ${nT} types`, { offset: tagPos, sample: s });
  if (merging !== undefined) {
    mergeSample(merging, s, row, nLocId, nLabOut, bigRefs.location.length === bigLocationsBefore);
    return;
  }
  if (labelOffsets) labelOffsets[row + 1] = nLabOut;
  C.nLocId = nLocId;
  C.nLabOut = nLabOut;
  C.offsets[row + 1] = nLocId;
}

/**
 * Decodes one Label message ending at `le` into label row `row` of `C`; returns whether it
 * holds anything (labels with neither a string nor a number are dropped, as google/pprof does).
 */
function decodeLabel(le: number, row: number): boolean {
  const { labKey, labStr, labUnit, labNumView, labIsNum } = C;
  let key = '';
  let keyIdx = 0;
  let strIdx = 0;
  let sv = '';
  let nLo = 0;
  let nHi = 0;
  let unitIdx = 0;
  let unit = '';
  while (pos < le) {
    const lp = pos;
    const lt = tagVarint(le);
    const lf = lt >>> 3;
    if (lf >= 1 && lf <= 4) {
      expectType(lt & 7, 0, lp, LABEL_FIELDS[lf]!);
      varint(le);
      if (lf === 1) {
        key = str(lp, 'label.key');
        keyIdx = lo;
      } else if (lf === 2) {
        sv = str(lp, 'label.str');
        strIdx = lo;
      } else if (lf === 3) {
        nLo = lo;
        nHi = hi;
      } else {
        unit = str(lp, 'label.num_unit');
        unitIdx = lo;
      }
    } else skip(lt & 7, le, lp);
  }
  if (strIdx !== 0) {
    labKey.push(key);
    labStr.push(sv);
    labUnit.push('');
    if (C.merge !== undefined) noteLabel(C.merge, 0, keyIdx, strIdx, 0, 0);
    return true;
  }
  if (nLo !== 0 || nHi !== 0 || unitIdx !== 0) {
    if (C.merge !== undefined) noteLabel(C.merge, 1, keyIdx, nLo, nHi, unitIdx);
    labKey.push(key);
    labStr.push('');
    labUnit.push(unit);
    labNumView[2 * row] = nLo;
    labNumView[2 * row + 1] = nHi;
    labIsNum[row] = 1;
    return true;
  }
  return false;
}

/** Decodes one Location message (pass 2) into the columns of `C`. */
function decodeLocation(end: number, tagPos: number, l: number): void {
  const { lId, lFn, lLine, lCol, lAddrV, lMap, lFold, lInlOff, iFn, iLine, iCol, bigRefs, bigDefs } = C;
  let iIn = C.iIn;
  const e = lengthEnd(end, tagPos);
  let lines = 0;
  lInlOff[l] = iIn;
  while (pos < e) {
    const tp = pos;
    const tg = buf[pos]! < 0x80 ? buf[pos++]! : tagVarint(e);
    const f = tg >>> 3;
    const w = tg & 7;
    if (f === 4) {
      const le = lengthEnd(e, tp);
      let fn = 0;
      let line = 0;
      let col = 0;
      let fnBig: bigint | undefined;
      while (pos < le) {
        const lp = pos;
        const lt = buf[pos]! < 0x80 ? buf[pos++]! : tagVarint(le);
        const lf = lt >>> 3;
        if (lf >= 1 && lf <= 3) {
          expectType(lt & 7, 0, lp, LINE_FIELDS[lf]!);
          varint(le);
          if (lf === 1) {
            fn = lo;
            fnBig = hi !== 0 ? bigKey() : undefined;
          } else if (lf === 2) line = safeNumber('line', lp);
          else col = safeNumber('column', lp);
        } else skip(lt & 7, le, lp);
      }
      if (lines === 0) {
        if (fnBig !== undefined) bigRefs.function.push({ arr: lFn, idx: l, key: fnBig, at: base + tp });
        lFn[l] = fn;
        lLine[l] = line;
        lCol[l] = col;
      } else {
        if (fnBig !== undefined) bigRefs.function.push({ arr: iFn, idx: iIn, key: fnBig, at: base + tp });
        iFn[iIn] = fn;
        iLine[iIn] = line;
        iCol[iIn] = col;
        iIn++;
      }
      if (fn === 0 && fnBig === undefined) lineWithoutFunction.push(l);
      lines++;
    } else if (f >= 1 && f <= 5) {
      expectType(w, 0, tp, LOCATION_FIELDS[f]!);
      varint(e);
      if (f === 1) {
        forgetBig(bigDefs.location, l);
        if (hi !== 0) bigDefs.location.push({ arr: lId, idx: l, key: bigKey(), at: base + tp });
        lId[l] = lo;
      } else if (f === 2) {
        forgetBig(bigRefs.mapping, l);
        if (hi !== 0) bigRefs.mapping.push({ arr: lMap, idx: l, key: bigKey(), at: base + tp });
        lMap[l] = lo;
      } else if (f === 3) {
        lAddrV[2 * l] = lo;
        lAddrV[2 * l + 1] = hi;
      } else lFold[l] = lo !== 0 || hi !== 0 ? 1 : 0;
    } else skip(w, e, tp);
  }
  C.iIn = iIn;
}

/** The input must not be empty (Go: "empty input file"). */
function emptyInput(): never {
  throw new ProfkitError(ErrorCodes.EMPTY_INPUT, `pprof: ${GoErrors.empty}${fileName ? ` (${fileName})` : ''}`, {
    file: fileName,
    offset: 0,
    rule: GoErrors.empty,
  });
}

function decodeInner(): DecodeResult {
  const end = buf.length;
  if (end === 0) emptyInput();
  const c = newCounts();
  pos = 0;
  indexFields(c, end, false);
  judgeBeforeFill(c, end);
  beginFill(c);
  pos = 0;
  fillFields(end, false);
  return endFill(c, false);
}

/** What pass 2 fills besides the sample and location columns of `C`. */
interface Fill {
  nS: number;
  nT: number;
  nM: number;
  nL: number;
  nF: number;
  nLab: number;
  values: BigInt64Array[];
  labNum: BigInt64Array;
  stType: string[];
  stUnit: string[];
  periodType: { type: string; unit: string } | undefined;
  mId: Uint32Array;
  mStart: BigUint64Array;
  mLimit: BigUint64Array;
  mOffset: BigUint64Array;
  mStartV: Uint32Array;
  mLimitV: Uint32Array;
  mOffsetV: Uint32Array;
  mFile: string[];
  mBuild: string[];
  mHasF: Uint8Array;
  mHasFl: Uint8Array;
  mHasLn: Uint8Array;
  mHasIn: Uint8Array;
  lAddr: BigUint64Array;
  fId: Uint32Array;
  fName: string[];
  fSys: string[];
  fFile: string[];
  fStart: Float64Array;
  dropFrames: string;
  keepFrames: string;
  timeLo: number;
  timeHi: number;
  durLo: number;
  durHi: number;
  periodLo: number;
  periodHi: number;
  // String-table indices of the comments (small integers: pushing strings into a fresh array
  // changes its elements kind, which deoptimized the pass-2 loop on every decode).
  commentIdx: number[];
  defaultSampleType: string;
  docUrl: string;
  iS: number;
  iLoc: number;
  iM: number;
  iF: number;
}
let F: Fill | undefined = undefined;

/** After pass 1: the string table, and every column allocated at its exact size. */
function beginFill(c: Counts): void {
  const judgedPlain = plainAfterJudging;
  plainAfterJudging = false;
  if (c.strs.length === 0) {
    fail(`${GoErrors.malformed}: no string table (google/pprof then reports "unrecognized profile format")`, -base);
  }
  strings = c.strs;
  lineWithoutFunction = [];
  unresolvedMappings = 0;
  const nT = c.sampleTypes;
  const nS = c.samples;
  const values: BigInt64Array[] = [];
  const vviews: Uint32Array[] = [];
  // Every sample must have one value per sample type: when the values counted are not
  // samples × types, pass 2 fails at the first sample that differs ("mismatch: sample has X
  // values vs. Y types"), so the columns (samples × types, which many empty samples and types
  // would make huge) stay empty; writes past their end are dropped. Otherwise they hold the
  // values of the input, 8 bytes for each of its varints.
  // With `aggregate`, the sample columns start small and grow with the distinct samples
  // (`makeSampleRoom`), never beyond what pass 1 counted.
  const rowCapacity = aggregating ? Math.min(nS, FIRST_ROWS) : nS;
  const columnLength = c.values === nT * nS ? rowCapacity : 0;
  for (let j = 0; j < nT; j++) {
    const col = new BigInt64Array(columnLength);
    values.push(col);
    vviews.push(new Uint32Array(col.buffer));
  }
  const nLab = c.labels;
  const labNum = new BigInt64Array(aggregating ? Math.min(nLab, FIRST_ROWS) : nLab);
  const nM = c.mappings;
  const mStart = new BigUint64Array(nM);
  const mLimit = new BigUint64Array(nM);
  const mOffset = new BigUint64Array(nM);
  const nL = c.locations;
  const lAddr = new BigUint64Array(nL);
  const nIn = c.inlineLines;
  const nF = c.functions;
  C = {
    nT,
    offsets: new Uint32Array(rowCapacity + 1),
    locIds: new Uint32Array(aggregating ? Math.min(c.locIds, 16 * FIRST_ROWS) : c.locIds),
    vviews,
    labelOffsets: nLab > 0 ? new Uint32Array(rowCapacity + 1) : undefined,
    labKey: [],
    labStr: [],
    labNumView: new Uint32Array(labNum.buffer),
    labUnit: [],
    labIsNum: new Uint8Array(labNum.length),
    bigRefs: { location: [], function: [], mapping: [] },
    bigDefs: { location: [], function: [], mapping: [] },
    nLocId: 0,
    nLabOut: 0,
    lId: new Uint32Array(nL),
    lFn: new Uint32Array(nL),
    lLine: new Float64Array(nL),
    lCol: new Float64Array(nL),
    lAddrV: new Uint32Array(lAddr.buffer),
    lMap: new Uint32Array(nL),
    lFold: new Uint8Array(nL),
    lInlOff: new Uint32Array(nL + 1),
    iFn: new Uint32Array(nIn),
    iLine: new Float64Array(nIn),
    iCol: new Float64Array(nIn),
    iIn: 0,
    merge: aggregating ? newMerging(c, aggregating === 'if-repeating') : undefined,
    // Judged plain, the zero samples are still left out (as `judgeRepeats` and a streamed decode do).
    aggregated: aggregating !== false || judgedPlain,
    rowsDropped: 0,
    locIdsDropped: 0,
    labelsDropped: 0,
    zeroSampleLocIds: u32,
    nZeroSampleLocIds: 0,
    zeroSampleBigRefs: [],
  };
  F = {
    nS, nT, nM, nL, nF, nLab, values, labNum,
    stType: [], stUnit: [], periodType: undefined,
    mId: new Uint32Array(nM), mStart, mLimit, mOffset,
    mStartV: new Uint32Array(mStart.buffer), mLimitV: new Uint32Array(mLimit.buffer), mOffsetV: new Uint32Array(mOffset.buffer),
    mFile: new Array(nM), mBuild: new Array(nM),
    mHasF: new Uint8Array(nM), mHasFl: new Uint8Array(nM), mHasLn: new Uint8Array(nM), mHasIn: new Uint8Array(nM),
    lAddr,
    fId: new Uint32Array(nF), fName: new Array(nF), fSys: new Array(nF), fFile: new Array(nF), fStart: new Float64Array(nF),
    dropFrames: '', keepFrames: '', timeLo: 0, timeHi: 0, durLo: 0, durHi: 0, periodLo: 0, periodHi: 0,
    commentIdx: [], defaultSampleType: '', docUrl: '',
    iS: 0, iLoc: 0, iM: 0, iF: 0,
  };
}

/** Pass 2 over the top-level fields from `pos` to `end` (`partial`: as in `indexFields`). */
function fillFields(end: number, partial: boolean): void {
  const f0 = F!;
  while (pos < end) {
    if (partial && !fieldComplete(end)) return;
    const tagPos = pos;
    const tag = tagVarint(end);
    const field = tag >>> 3;
    const wt = tag & 7;
    switch (field) {
      case 1:
      case 11: {
        const e = lengthEnd(end, tagPos);
        let t = '';
        let u = '';
        while (pos < e) {
          const tp = pos;
          const tg = tagVarint(e);
          const f = tg >>> 3;
          if (f === 1 || f === 2) {
            expectType(tg & 7, 0, tp, f === 1 ? 'value_type.type' : 'value_type.unit');
            varint(e);
            if (f === 1) t = str(tp, 'value_type.type');
            else u = str(tp, 'value_type.unit');
          } else skip(tg & 7, e, tp);
        }
        if (field === 1) {
          f0.stType.push(t);
          f0.stUnit.push(u);
        } else f0.periodType = { type: t, unit: u };
        break;
      }
      case 2: {
        decodeSample(end, tagPos, f0.iS++);
        break;
      }
      case 3:
        decodeMapping(end, tagPos, f0.iM++);
        break;
      case 4: {
        decodeLocation(end, tagPos, f0.iLoc++);
        break;
      }
      case 5:
        decodeFunction(end, tagPos, f0.iF++);
        break;
      case 6:
        pos = lengthEnd(end, tagPos);
        break;
      case 7:
        varint(end);
        f0.dropFrames = str(tagPos, 'drop_frames');
        break;
      case 8:
        varint(end);
        f0.keepFrames = str(tagPos, 'keep_frames');
        break;
      case 9:
        varint(end); // a second non-zero-preceded time_nanos was refused by pass 1
        f0.timeLo = lo;
        f0.timeHi = hi;
        break;
      case 10:
        varint(end);
        f0.durLo = lo;
        f0.durHi = hi;
        break;
      case 12:
        varint(end);
        f0.periodLo = lo;
        f0.periodHi = hi;
        break;
      case 13:
        if (wt === 2) {
          const pe = lengthEnd(end, tagPos);
          while (pos < pe) {
            const vp = pos;
            varint(pe);
            str(vp, 'comment');
            f0.commentIdx.push(lo);
          }
        } else {
          varint(end);
          str(tagPos, 'comment');
          f0.commentIdx.push(lo);
        }
        break;
      case 14:
        varint(end);
        f0.defaultSampleType = str(tagPos, 'default_sample_type');
        break;
      case 15:
        varint(end);
        f0.docUrl = str(tagPos, 'doc_url');
        break;
      default:
        skip(wt, end, tagPos);
    }
  }
}

/** Decodes one Mapping message (pass 2). */
function decodeMapping(end: number, tagPos: number, m: number): void {
  const { mId, mStartV, mLimitV, mOffsetV, mHasF, mHasFl, mHasLn, mHasIn } = F!;
  const e = lengthEnd(end, tagPos);
  let file = '';
  let build = '';
  while (pos < e) {
    const tp = pos;
    const tg = tagVarint(e);
    const f = tg >>> 3;
    if (f >= 1 && f <= 10) {
      expectType(tg & 7, 0, tp, MAPPING_FIELDS[f]!);
      varint(e);
      switch (f) {
        case 1:
          forgetBig(C.bigDefs.mapping, m);
          if (hi !== 0) C.bigDefs.mapping.push({ arr: mId, idx: m, key: bigKey(), at: base + tp });
          mId[m] = lo;
          break;
        case 2:
          mStartV[2 * m] = lo;
          mStartV[2 * m + 1] = hi;
          break;
        case 3:
          mLimitV[2 * m] = lo;
          mLimitV[2 * m + 1] = hi;
          break;
        case 4:
          mOffsetV[2 * m] = lo;
          mOffsetV[2 * m + 1] = hi;
          break;
        case 5:
          file = str(tp, 'mapping.filename');
          break;
        case 6:
          build = str(tp, 'mapping.build_id');
          break;
        case 7:
          mHasF[m] = lo !== 0 || hi !== 0 ? 1 : 0;
          break;
        case 8:
          mHasFl[m] = lo !== 0 || hi !== 0 ? 1 : 0;
          break;
        case 9:
          mHasLn[m] = lo !== 0 || hi !== 0 ? 1 : 0;
          break;
        case 10:
          mHasIn[m] = lo !== 0 || hi !== 0 ? 1 : 0;
          break;
      }
    } else skip(tg & 7, e, tp);
  }
  F!.mFile[m] = file;
  F!.mBuild[m] = build;
}

/** Decodes one Function message (pass 2). */
function decodeFunction(end: number, tagPos: number, fi: number): void {
  const { fId, fStart } = F!;
  const e = lengthEnd(end, tagPos);
  let name = '';
  let sys = '';
  let file = '';
  while (pos < e) {
    const tp = pos;
    const tg = tagVarint(e);
    const f = tg >>> 3;
    if (f >= 1 && f <= 5) {
      expectType(tg & 7, 0, tp, FUNCTION_FIELDS[f]!);
      varint(e);
      if (f === 1) {
        forgetBig(C.bigDefs.function, fi);
        if (hi !== 0) C.bigDefs.function.push({ arr: fId, idx: fi, key: bigKey(), at: base + tp });
        fId[fi] = lo;
      } else if (f === 2) name = str(tp, 'function.name');
      else if (f === 3) sys = str(tp, 'function.system_name');
      else if (f === 4) file = str(tp, 'function.filename');
      else fStart[fi] = safeNumber('start_line', tp);
    } else skip(tg & 7, e, tp);
  }
  // The model forbids empty names: R's placeholder `<?>` stands for "" (the writer maps back).
  F!.fName[fi] = name === '' ? EMPTY_NAME : name;
  F!.fSys[fi] = sys === '' ? EMPTY_NAME : sys;
  F!.fFile[fi] = file;
}

/**
 * After pass 2: the checks and the profile. `recount` (streaming, where the input was read twice)
 * checks that pass 2 saw what pass 1 counted.
 */
function endFill(c: Counts, recount: boolean): DecodeResult {
  const f = F!;
  const cols = C;
  C = EMPTY_COLS;
  F = undefined;
  // Same bytes (length and CRC-32 checked) give the same counts; this guards the columns anyway.
  if (recount && (f.iS !== c.samples || cols.nLocId + cols.locIdsDropped !== c.locIds || f.iLoc !== c.locations || f.iM !== c.mappings || f.iF !== c.functions || cols.iIn !== c.inlineLines || cols.nLabOut > c.labels || f.stType.length !== c.sampleTypes)) {
    throw changedInput(fileName);
  }
  base = 0;
  cols.lInlOff[f.nL] = cols.iIn;
  if (cols.aggregated) keepDistinctRows(f, cols, f.iS - cols.rowsDropped);
  return finishDecode(f, cols);
}

/** The strings of the string table at the given (checked) indices. */
function stringsAt(idx: number[]): string[] {
  const out: string[] = new Array(idx.length);
  for (let i = 0; i < idx.length; i++) out[i] = strings[idx[i]!]!;
  return out;
}

let unresolvedMappings = 0;
/**
 * Renumbering, pprof's CheckValid, reference resolution and assembly of the profile (a function
 * of its own, so that V8 does not deoptimize the pass-2 loop when it first reaches this code).
 */
function finishDecode(f: Fill, cols: Cols): DecodeResult {
  const { nS, nT, nM, nL, nF, values, labNum, nLab, mId, mStart, mLimit, mOffset, mFile, mBuild, mHasF, mHasFl, mHasLn, mHasIn, lAddr, fId, fName, fSys, fFile, fStart, dropFrames, keepFrames, timeLo, timeHi, durLo, durHi, periodLo, periodHi, periodType, defaultSampleType, docUrl, stType, stUnit } = f;
  const { locIds, nLocId, offsets, labelOffsets, labKey, labStr, labUnit, labIsNum, nLabOut, lId, lFn, lLine, lCol, lMap, lFold, lInlOff, iFn, iLine, iCol, bigRefs, bigDefs } = cols;
  const warnings: Warning[] = [];
  const comments = stringsAt(f.commentIdx);
  // Ids above 2^32-1: renumber (meaning is kept; ids are not meaning).
  if (bigDefs.location.length + bigDefs.function.length + bigDefs.mapping.length + bigRefs.location.length + bigRefs.function.length + bigRefs.mapping.length > 0) {
    renumberBig('location', lId, bigDefs.location, bigRefs.location, warnings, true);
    renumberBig('function', fId, bigDefs.function, bigRefs.function, warnings, true);
    renumberBig('mapping', mId, bigDefs.mapping, bigRefs.mapping, warnings, false);
  }

  // pprof's CheckValid (profile.go), in Go's order, with Go's messages.
  const fIdx = new IdIndex(fId);
  const lIdx = new IdIndex(lId);
  const mIdx = new IdIndex(mId);
  if (nS > 0 && nT === 0) invalid('missing sample type information');
  checkSampleLocations(locIds, nLocId, lId, lIdx);
  for (let i = 0; i < cols.nZeroSampleLocIds; i++) {
    const id = cols.zeroSampleLocIds[i]!;
    if (lIdx.get(id) < 0) invalid('sample has nil location', { locationId: id });
  }
  for (let i = 0; i < nM; i++) if (mId[i] === 0) invalid('found mapping with reserved ID=0', { mapping: i });
  if (mIdx.duplicates.length) invalid(`multiple mappings with same id: ${mIdx.duplicates[0]}`);
  for (let i = 0; i < nF; i++) if (fId[i] === 0) invalid('found function with reserved ID=0', { function: i });
  if (fIdx.duplicates.length) invalid(`multiple functions with same id: ${fIdx.duplicates[0]}`);
  for (let i = 0; i < nL; i++) if (lId[i] === 0) invalid('found location with reserved id=0', { location: i });
  if (lIdx.duplicates.length) invalid(`multiple locations with same id: ${lIdx.duplicates[0]}`);
  // Lines whose function id is 0 or matches no function: Go resolves them to nil.
  for (const l of lineWithoutFunction) invalid(`location id: ${lId[l]} has a line with nil function`, { locationId: lId[l] });
  for (let l = 0; l < nL; l++) {
    if (lFn[l] !== 0 && fIdx.get(lFn[l]!) < 0) invalid(`location id: ${lId[l]} has a line with nil function`, { locationId: lId[l] });
    for (let k = lInlOff[l]!; k < lInlOff[l + 1]!; k++) {
      if (fIdx.get(iFn[k]!) < 0) invalid(`location id: ${lId[l]} has a line with nil function`, { locationId: lId[l] });
    }
  }
  // A mapping id matching no mapping makes the location unmapped (Go, silently; we warn).
  let unmapped = unresolvedMappings;
  for (let l = 0; l < nL; l++) {
    if (lMap[l] !== 0 && mIdx.get(lMap[l]!) < 0) {
      lMap[l] = 0;
      unmapped++;
    }
  }
  if (unmapped > 0) {
    warnings.push({
      code: 'PROFKIT_W_PPROF_UNKNOWN_MAPPING',
      message: `${unmapped} location(s) refer to a mapping id that no mapping has; they were read as unmapped (as google/pprof does)`,
      detail: { file: fileName, count: unmapped },
    });
  }

  const toBig = (l: number, h: number): bigint => (h === 0 ? BigInt(l) : BigInt.asIntN(64, (BigInt(h) << 32n) | BigInt(l)));
  if (!LITTLE_ENDIAN) byteSwapColumns([...values, labNum, mStart, mLimit, mOffset, lAddr]);

  const labelsUsed = nLabOut;
  const profile = createProfile({
    sample_types: { type: stType, unit: stUnit },
    samples: {
      value: values[0] ?? new BigInt64Array(nS),
      locations: { offsets, location_id: nLocId === locIds.length ? locIds : locIds.slice(0, nLocId) },
      '.values': values,
      ...(labelOffsets && labelsUsed > 0 ? { '.label_offsets': labelOffsets } : {}),
    },
    locations: {
      location_id: lId,
      function_id: lFn,
      line: lLine,
      '.column': lCol,
      '.address': lAddr,
      '.mapping_id': lMap,
      '.is_folded': lFold,
      '.inline_offsets': lInlOff,
    },
    functions: { function_id: fId, name: fName, system_name: fSys, filename: fFile, start_line: fStart },
    '.inline_lines': { function_id: iFn, line: iLine, column: iCol },
    '.mappings': {
      mapping_id: mId,
      memory_start: mStart,
      memory_limit: mLimit,
      file_offset: mOffset,
      filename: mFile,
      build_id: mBuild,
      has_functions: mHasF,
      has_filenames: mHasFl,
      has_line_numbers: mHasLn,
      has_inline_frames: mHasIn,
    },
    '.labels': {
      key: labKey,
      str: labStr,
      num: labelsUsed === nLab ? labNum : labNum.slice(0, labelsUsed),
      num_unit: labUnit,
      is_num: labelsUsed === nLab ? labIsNum : labIsNum.slice(0, labelsUsed),
    },
    '.profile': {
      ...(periodType ? { period_type: periodType } : {}),
      period: toBig(periodLo, periodHi),
      time_nanos: toBig(timeLo, timeHi),
      duration_nanos: toBig(durLo, durHi),
      comments,
      drop_frames: dropFrames,
      keep_frames: keepFrames,
      default_sample_type: defaultSampleType,
      doc_url: docUrl,
    },
  });
  if (values.length === 0) profile.samples.value = new BigInt64Array(nS);
  lineWithoutFunction.length = 0;
  recordReaderProof(profile, 'pprof', DECODER_PROOFS);
  return { profile, warnings };
}

/**
 * What the decoder has proven of every profile it returns, so that the registry's read does not
 * check it again (core's `recordReaderProof`): `samples.stacks` by `checkSampleLocations` and
 * the nil-location failures of `decodeSample` (offsets only grow); `locations.ids`,
 * `functions.ids`, `locations.functions` and `inline_lines.functions` by pprof's CheckValid in
 * `finishDecode` (a line's function 0 is "a line with nil function", so a location with inline
 * lines has an innermost function: `locations.inline`); `functions.names` because "" is read as
 * `EMPTY_NAME`; `samples.label_offsets`, `labels.kind` and `flags` by how they are filled (a
 * label is a string or a number; flags are 0 or 1). Left to the validator: lines and start
 * lines (they may be negative here), addresses outside their mapping and empty label keys (not
 * checked here), and mapping ids (checked here, but few: the validator checks them anyway).
 */
const DECODER_PROOFS: readonly ProvableRule[] = [
  'samples.stacks',
  'samples.label_offsets',
  'locations.ids',
  'locations.functions',
  'locations.inline',
  'inline_lines.functions',
  'functions.ids',
  'functions.names',
  'labels.kind',
  'flags',
];

// Locations whose lines have function id 0 (collected during pass 2, checked after).
let lineWithoutFunction: number[] = [];

function renumberBig(kind: 'location' | 'function' | 'mapping', ids: Uint32Array, defs: BigRef[], refs: BigRef[], warnings: Warning[], refsMustResolve: boolean): void {
  if (defs.length === 0 && refs.length === 0) return;
  let max = 0;
  const big = new Set<number>(defs.map((d) => d.idx));
  for (let i = 0; i < ids.length; i++) if (!big.has(i) && ids[i]! > max) max = ids[i]!;
  const assigned = new Map<bigint, number>();
  for (const d of defs) {
    let id = assigned.get(d.key);
    if (id === undefined) {
      if (max >= MAX_ID) fail(`too many ${kind} ids to renumber ids above 2^32-1`, d.at, ErrorCodes.RANGE);
      id = ++max;
      assigned.set(d.key, id);
    }
    d.arr[d.idx] = id;
  }
  for (const r of refs) {
    const id = assigned.get(r.key);
    if (id === undefined) {
      if (refsMustResolve) {
        if (kind === 'location') invalid('sample has nil location', { offset: r.at, locationId: r.key.toString() });
        invalid(`a line refers to function id ${r.key} that no function has (nil function)`, { offset: r.at });
      }
      r.arr[r.idx] = 0; // no mapping has this id: the location is unmapped, as in google/pprof
      unresolvedMappings++;
    } else r.arr[r.idx] = id;
  }
  warnings.push({
    code: 'PROFKIT_W_PPROF_RENUMBERED',
    message: `${assigned.size} ${kind} id(s) above 2^32-1 were renumbered (to ${max - assigned.size + 1}..${max}); references follow`,
    detail: { file: fileName, kind, count: assigned.size },
  });
}

function byteSwapColumns(cols: (BigInt64Array | BigUint64Array)[]): void {
  // The uint32 views were filled as little-endian halves; on a big-endian host rebuild values.
  for (const col of cols) {
    const v = new Uint32Array(col.buffer, col.byteOffset, col.length * 2);
    const dv = new DataView(col.buffer, col.byteOffset, col.byteLength);
    for (let i = 0; i < col.length; i++) {
      const l = v[2 * i]!;
      const h = v[2 * i + 1]!;
      dv.setUint32(8 * i, h, false);
      dv.setUint32(8 * i + 4, l, false);
    }
  }
}

/** Every sample location id must name a location (Go: "sample has nil location"). */
function checkSampleLocations(locIds: Uint32Array, n: number, lId: Uint32Array, lIdx: IdIndex): void {
  let max = 0;
  for (let i = 0; i < lId.length; i++) if (lId[i]! > max) max = lId[i]!;
  if (max <= 4 * lId.length + 1024) {
    const known = new Uint8Array(max + 1);
    for (let i = 0; i < lId.length; i++) known[lId[i]!] = 1;
    for (let i = 0; i < n; i++) {
      const id = locIds[i]!;
      if (id > max || known[id] === 0) invalid('sample has nil location', { locationId: id });
    }
    return;
  }
  for (let i = 0; i < n; i++) if (lIdx.get(locIds[i]!) < 0) invalid('sample has nil location', { locationId: locIds[i] });
}

// ---------------------------------------------------------------------------------------------
// `aggregate`: equal samples merged while pass 2 decodes them.

/** Rows the sample columns start with under `aggregate` (they double as distinct samples appear). */
const FIRST_ROWS = 1024;

/** The state of `aggregate` in pass 2. */
interface Merging {
  table: SampleTable;
  /** `'if-repeating'`: the input sample at which to judge whether samples repeat (`judgeRepeats`). */
  judgeAt: number;
  /** What the columns may grow to: pass 1's counts of samples, location ids and labels. */
  maxRows: number;
  maxLocIds: number;
  maxLabels: number;
  /**
   * Labels hash by string-table index, equal strings by one index (google/pprof compares label
   * strings, not indices): of each index a label used, that index + 1 (0: not seen yet), and the
   * index of each string seen.
   */
  canonical: Uint32Array | undefined;
  firstIndexOf: Map<string, number>;
  /** The labels of the sample being decoded, `LABEL_WORDS` words each, as they are hashed. */
  labelWords: number[];
  /**
   * `'if-repeating'` (the caller only sums): two equal samples merge only where no value changes
   * sign and no sum wraps (`sumKeepsSigns`), since the reports sum |value| per sample (pprof's
   * total) and flame graphs leave negative samples out: the output must not depend on the merge.
   */
  signsKept: boolean;
}

/** A label as hashed: kind (0 string, 1 number), key, value (string index, or number lo and hi), unit. */
const LABEL_WORDS = 5;

function newMerging(c: Counts, ifRepeating: boolean): Merging {
  return {
    table: new SampleTable(),
    judgeAt: ifRepeating ? SAMPLES_BEFORE_JUDGING : Infinity,
    maxRows: c.samples,
    maxLocIds: c.locIds,
    maxLabels: c.labels,
    canonical: undefined,
    firstIndexOf: new Map(),
    labelWords: [],
    signsKept: ifRepeating,
  };
}

/** `'if-repeating'` judges whether samples repeat after this many (a CPU profile's hot stacks recur much sooner). */
const SAMPLES_BEFORE_JUDGING = 4096;

/** Samples whose counts were taken by the last judging before pass 2 (for tests: 0 when it did not judge). */
export let judgedBeforeFill = { samples: 0, distinct: 0, merging: false };

/**
 * `'if-repeating'` on the whole input (one buffer, after pass 1, before pass 2): when at least
 * 90 % of the first `SAMPLES_BEFORE_JUDGING` samples have distinct keys (`hashSampleKeys`), the
 * decode goes on as a plain one (`aggregating` off), so that a profile whose stacks do not repeat
 * runs pass 2 as without the option: no merging code runs, and none is left to deoptimize
 * `decodeSample` when merging stops. Otherwise pass 2 merges (and judges again, `judgeRepeats`).
 * Equal samples encoded differently count as distinct: that only leaves them unmerged, which
 * the callers of `'if-repeating'` sum alike. The streamed decode hashes the keys during pass 1
 * (its windows are gone by pass 2) and judges with `judgeFirstSamples`.
 */
function judgeBeforeFill(c: Counts, end: number): void {
  let keys: FirstSampleKeys | undefined;
  if (aggregating === 'if-repeating' && c.samples > SAMPLES_BEFORE_JUDGING) {
    keys = newFirstSampleKeys();
    pos = 0;
    hashSampleKeys(keys, end);
  }
  judgeFirstSamples(c, keys);
}

/**
 * Turns merging off (`aggregating`, for the `beginFill` that follows) when `'if-repeating'` finds
 * the first samples' keys (pass 1 counted more samples than were hashed) at least 90 % distinct.
 */
function judgeFirstSamples(c: Counts, keys: FirstSampleKeys | undefined): void {
  judgedBeforeFill = { samples: 0, distinct: 0, merging: aggregating !== false };
  if (aggregating !== 'if-repeating' || c.samples <= SAMPLES_BEFORE_JUDGING || keys === undefined) return;
  const repeating = keys.distinct < 0.9 * SAMPLES_BEFORE_JUDGING;
  judgedBeforeFill = { samples: keys.samples, distinct: keys.distinct, merging: repeating };
  if (!repeating) {
    aggregating = false;
    plainAfterJudging = true;
  }
}

/** Set by `judgeFirstSamples` when it turned merging off, taken (and cleared) by the next `beginFill`. */
let plainAfterJudging = false;

/** Hash slots of `hashSampleKeys`: a power of two, twice the samples judged. */
const JUDGE_SLOTS = 2 * SAMPLES_BEFORE_JUDGING;

/** The keys of the first samples, hashed (`hashSampleKeys`), and how many of them are distinct. */
interface FirstSampleKeys {
  /** Hash slots, each hash | 1 (0: empty). */
  seen: Int32Array;
  seed: number;
  samples: number;
  distinct: number;
}

function newFirstSampleKeys(): FirstSampleKeys {
  return { seen: new Int32Array(JUDGE_SLOTS), seed: hashSeed(), samples: 0, distinct: 0 };
}

/**
 * Hashes the keys of the samples among the top-level fields from `pos` to `end` (whole fields
 * that pass 1 checked) until `SAMPLES_BEFORE_JUDGING` are hashed, counting the distinct ones: a
 * sample's key is the bytes of its fields but the values (those of its location ids and labels,
 * as encoded), so its hash does not depend on where a stream's windows cut the input.
 * Counted by seeded 32-bit hash: a collision or a full probe run (a crafted input, at worst) only
 * counts a sample as a repeat, which changes how the samples are read, never the output.
 */
function hashSampleKeys(keys: FirstSampleKeys, end: number): void {
  const { seen } = keys;
  const mask = JUDGE_SLOTS - 1;
  while (keys.samples < SAMPLES_BEFORE_JUDGING && pos < end) {
    const tagPos = pos;
    const tag = tagVarint(end);
    if (tag !== 0x12) {
      skip(tag & 7, end, tagPos);
      continue;
    }
    const e = lengthEnd(end, tagPos);
    let h = keys.seed;
    let keyBytes = 0;
    while (pos < e) {
      const fieldPos = pos;
      const t = tagVarint(e);
      skip(t & 7, e, fieldPos);
      if (t >>> 3 === 2) continue; // sample.value: not part of the key
      h = hashBytes(h, fieldPos, pos);
      keyBytes += pos - fieldPos;
    }
    // A slot holds hash | 1 (0: empty): halving the hash space costs only collisions.
    const key = finishHash(h, keyBytes) | 1;
    for (let slot = key & mask, probes = 0; probes < 64; slot = (slot + 1) & mask, probes++) {
      if (seen[slot] === key) break;
      if (seen[slot] === 0) {
        seen[slot] = key;
        keys.distinct++;
        break;
      }
    }
    keys.samples++;
  }
}

/** `buf[start, end)` into the running hash `h`, four bytes a word (the last word zero-padded). */
function hashBytes(h: number, start: number, end: number): number {
  const b = buf;
  let i = start;
  for (; i + 4 <= end; i += 4) h = mixWord(h, b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24));
  if (i === end) return h;
  let tail = 0;
  for (let k = 0; i < end; i++, k += 8) tail |= b[i]! << k;
  return mixWord(h, tail);
}

/**
 * `'if-repeating'`, after `judgeAt` samples (`inputSamples`): when at least 90 % of them took a
 * row, the rest is read as it is, without `mergeSample`, into columns grown once to what the
 * rest of the input can hold.
 */
function judgeRepeats(m: Merging, inputSamples: number): void {
  m.judgeAt = Infinity;
  const rows = inputSamples - C.rowsDropped;
  if (rows < 0.9 * inputSamples) return;
  C.merge = undefined;
  const f = F!;
  growRows(f, rows + (m.maxRows - inputSamples));
  C.locIds = grown32(C.locIds, m.maxLocIds - C.locIdsDropped);
  growLabels(f, m.maxLabels - C.labelsDropped);
}

/** Records a label of the sample being decoded for its hash (string indices made canonical). */
function noteLabel(m: Merging, kind: number, keyIdx: number, valueLo: number, valueHi: number, unitIdx: number): void {
  m.labelWords.push(kind, canonicalIndex(m, keyIdx), kind === 0 ? canonicalIndex(m, valueLo) : valueLo, valueHi, canonicalIndex(m, unitIdx));
}

/** The index by which the string at (checked) index `i` hashes: that of the first equal string a label used. */
function canonicalIndex(m: Merging, i: number): number {
  const canonical = (m.canonical ??= new Uint32Array(strings.length));
  const known = canonical[i]!;
  if (known !== 0) return known - 1;
  const s = strings[i]!;
  let first = m.firstIndexOf.get(s);
  if (first === undefined) m.firstIndexOf.set(s, (first = i));
  canonical[i] = first + 1;
  return first;
}

/**
 * Room in the columns for sample row `row` and a sample message of `messageBytes` (each of its
 * location ids takes a byte or more, each label two or more): the columns double, up to pass 1's
 * counts.
 */
function makeSampleRoom(m: Merging, row: number, messageBytes: number): void {
  const f = F!;
  // What the rest of the input can add at most (pass 1 counted it).
  const maxRows = m.maxRows - C.rowsDropped;
  const maxLocIds = m.maxLocIds - C.locIdsDropped;
  const maxLabels = m.maxLabels - C.labelsDropped;
  if (row + 1 >= C.offsets.length) growRows(f, Math.min(maxRows, Math.max(2 * (C.offsets.length - 1), row + 1)));
  const locIds = Math.min(maxLocIds, C.nLocId + messageBytes);
  if (locIds > C.locIds.length) C.locIds = grown32(C.locIds, Math.min(maxLocIds, Math.max(locIds, 2 * C.locIds.length)));
  const labels = Math.min(maxLabels, C.nLabOut + (messageBytes >>> 1));
  if (labels > f.labNum.length) growLabels(f, Math.min(maxLabels, Math.max(labels, 2 * f.labNum.length)));
}

/** The sample columns (offsets, label offsets, values) grown to `rows` rows. */
function growRows(f: Fill, rows: number): void {
  C.offsets = grown32(C.offsets, rows + 1);
  if (C.labelOffsets) C.labelOffsets = grown32(C.labelOffsets, rows + 1);
  // Value columns left empty by beginFill (a value count that fails pass 2) stay empty.
  for (let j = 0; j < f.values.length; j++) {
    if (f.values[j]!.length === 0) continue;
    const col = new BigInt64Array(rows);
    col.set(f.values[j]!.subarray(0, rows));
    f.values[j] = col;
    C.vviews[j] = new Uint32Array(col.buffer);
  }
}

/** The label columns grown to `n` rows. */
function growLabels(f: Fill, n: number): void {
  const num = new BigInt64Array(n);
  num.set(f.labNum.subarray(0, n));
  f.labNum = num;
  C.labNumView = new Uint32Array(num.buffer);
  const isNum = new Uint8Array(n);
  isNum.set(C.labIsNum.subarray(0, n));
  C.labIsNum = isNum;
}

// The sample being merged, decoded after the distinct rows: its location ids and label rows.
let candidateStart = 0;
let candidateEnd = 0;
let candidateLabelStart = 0;
let candidateLabelEnd = 0;

/**
 * The sample just decoded into row `row` (location ids up to `nLocId`, label rows up to
 * `nLabOut`) stays a row of its own, or its values go to the equal row before it. A sample with a
 * location id above 2^32-1 (its ids are fixed up after decoding) stays a row of its own, and so
 * does (outside the table) one whose sums would change a sign under `signsKept`.
 */
function mergeSample(m: Merging, s: number, row: number, nLocId: number, nLabOut: number, hashable: boolean): void {
  candidateStart = C.offsets[row]!;
  candidateEnd = nLocId;
  candidateLabelStart = C.labelOffsets ? C.labelOffsets[row]! : 0;
  candidateLabelEnd = nLabOut;
  if (allValuesZero(row)) {
    m.labelWords.length = 0;
    const refs = C.bigRefs.location;
    let ref = refs.length;
    while (ref > 0 && refs[ref - 1]!.idx >= candidateStart) ref--;
    keepDroppedLocIds(C, candidateStart, candidateEnd, ref);
    dropCandidate(nLabOut);
    return;
  }
  const hash = hashable ? sampleHash(m) : 0;
  m.labelWords.length = 0;
  const equal = hashable ? m.table.lookup(hash, sameAsCandidate) : GAVE_UP;
  if (equal >= 0 && addValues(equal, row, m.signsKept)) {
    dropCandidate(nLabOut);
    return;
  }
  m.table.add(hash, equal === ABSENT);
  C.offsets[row + 1] = nLocId;
  if (C.labelOffsets) C.labelOffsets[row + 1] = nLabOut;
  C.nLocId = nLocId;
  C.nLabOut = nLabOut;
  if (s + 1 >= m.judgeAt) judgeRepeats(m, s + 1);
}

/**
 * Keeps location ids `start..end` of a sample left out for being all zero: Go checks every
 * sample's locations ("sample has nil location") before `Merge` leaves it out, and so does
 * `finishDecode`. Its ids above 2^32-1 (big refs from `ref` on) are renumbered with the others.
 */
function keepDroppedLocIds(cols: Cols, start: number, end: number, ref: number): void {
  const n = cols.nZeroSampleLocIds;
  const need = n + end - start;
  if (need > cols.zeroSampleLocIds.length) cols.zeroSampleLocIds = grown32(cols.zeroSampleLocIds, Math.max(need, 2 * cols.zeroSampleLocIds.length));
  cols.zeroSampleLocIds.set(cols.locIds.subarray(start, end), n);
  const refs = cols.bigRefs.location;
  for (; ref < refs.length && refs[ref]!.idx < end; ref++) cols.zeroSampleBigRefs.push({ ...refs[ref]!, idx: n + refs[ref]!.idx - start });
  cols.nZeroSampleLocIds = need;
}

/** Whether the values of row `row` are all zero (google/pprof's `isZeroSample`). */
function allValuesZero(row: number): boolean {
  for (const v of C.vviews) if (v[2 * row] !== 0 || v[2 * row + 1] !== 0) return false;
  return true;
}

/** Gives the candidate's rows (up to label row `nLabOut`) back to the next sample. */
function dropCandidate(nLabOut: number): void {
  C.rowsDropped++;
  C.locIdsDropped += candidateEnd - candidateStart;
  C.labelsDropped += nLabOut - candidateLabelStart;
  C.nLocId = candidateStart;
  // A location id above 2^32-1 of the candidate is fixed up nowhere: its place goes to the next sample.
  const bigLocations = C.bigRefs.location;
  while (bigLocations.length > 0 && bigLocations[bigLocations.length - 1]!.idx >= candidateStart) bigLocations.pop();
  // Label rows are written in part (a string label sets no number): they must not leave flags behind.
  const { labKey, labStr, labUnit, labIsNum, labNumView } = C;
  labKey.length = labStr.length = labUnit.length = candidateLabelStart;
  labIsNum.fill(0, candidateLabelStart, nLabOut);
  labNumView.fill(0, 2 * candidateLabelStart, 2 * nLabOut);
  C.nLabOut = candidateLabelStart;
}

/** Whether adding row `from` to row `to` keeps the sign of every nonzero value (no opposite signs, no wrapping, no -2^63). */
function sumKeepsSigns(vviews: Uint32Array[], to: number, from: number): boolean {
  for (let j = 0; j < vviews.length; j++) {
    const v = vviews[j]!;
    const aLo = v[2 * to]!;
    const aHi = v[2 * to + 1]!;
    const bLo = v[2 * from]!;
    const bHi = v[2 * from + 1]!;
    if ((aLo | aHi) === 0 || (bLo | bHi) === 0) continue;
    const sign = aHi >>> 31;
    if (bHi >>> 31 !== sign) return false;
    const sumLo = aLo + bLo;
    const sumHi = (aHi + bHi + (sumLo > 0xffffffff ? 1 : 0)) >>> 0;
    if (sumHi >>> 31 !== sign) return false;
    // Nor a sum of -2^63: negated (the base of --base, core's `scale`) it would not fit, where
    // the samples apart would (their negations summed with the other profile's may).
    if (sumHi === 0x80000000 && sumLo >>> 0 === 0) return false;
  }
  return true;
}

/**
 * Adds the values of row `from` to row `to`, wrapping at 64 bits as Go's int64 addition; with
 * `keepSigns`, only where `sumKeepsSigns` (else nothing is added: returns false).
 */
function addValues(to: number, from: number, keepSigns: boolean): boolean {
  const vviews = C.vviews;
  if (keepSigns && !sumKeepsSigns(vviews, to, from)) return false;
  for (let j = 0; j < vviews.length; j++) {
    const v = vviews[j]!;
    const low = v[2 * to]! + v[2 * from]!;
    const carry = low > 0xffffffff ? 1 : 0;
    v[2 * to] = low; // Uint32Array stores it modulo 2^32
    v[2 * to + 1] = v[2 * to + 1]! + v[2 * from + 1]! + carry;
  }
  return true;
}

/**
 * The candidate's hash: its location ids in order, then its labels in google/pprof's key order
 * (string labels before numeric ones, by key; the values of one key in their order).
 */
function sampleHash(m: Merging): number {
  let h = m.table.seed;
  const locIds = C.locIds;
  for (let i = candidateStart; i < candidateEnd; i++) h = mixWord(h, locIds[i]!);
  const w = m.labelWords;
  const n = w.length / LABEL_WORDS;
  if (n === 1) for (let k = 0; k < LABEL_WORDS; k++) h = mixWord(h, w[k]!);
  else if (n > 1) {
    const order = Array.from({ length: n }, (_, i) => i);
    order.sort((a, b) => w[a * LABEL_WORDS]! - w[b * LABEL_WORDS]! || w[a * LABEL_WORDS + 1]! - w[b * LABEL_WORDS + 1]! || a - b);
    for (const i of order) for (let k = 0; k < LABEL_WORDS; k++) h = mixWord(h, w[i * LABEL_WORDS + k]!);
  }
  return finishHash(h, candidateEnd - candidateStart + w.length);
}

/** Whether row `r` has the candidate's location ids and labels (pprof's sample key). */
function sameAsCandidate(r: number): boolean {
  const { offsets, locIds, labelOffsets } = C;
  const start = offsets[r]!;
  if (offsets[r + 1]! - start !== candidateEnd - candidateStart) return false;
  for (let i = 0; i < candidateEnd - candidateStart; i++) if (locIds[start + i] !== locIds[candidateStart + i]) return false;
  if (!labelOffsets) return true;
  const labelStart = labelOffsets[r]!;
  const n = labelOffsets[r + 1]! - labelStart;
  if (n !== candidateLabelEnd - candidateLabelStart) return false;
  let inOrder = true;
  for (let i = 0; i < n && inOrder; i++) inOrder = sameLabel(labelStart + i, candidateLabelStart + i);
  return inOrder || sameLabelsByKey(labelStart, candidateLabelStart, n);
}

function sameLabel(a: number, b: number): boolean {
  const { labKey, labStr, labUnit, labIsNum, labNumView } = C;
  if (labKey[a] !== labKey[b] || labIsNum[a] !== labIsNum[b]) return false;
  if (labIsNum[a] === 0) return labStr[a] === labStr[b];
  return labNumView[2 * a] === labNumView[2 * b] && labNumView[2 * a + 1] === labNumView[2 * b + 1] && labUnit[a] === labUnit[b];
}

/** Label rows `a..a+n` and `b..b+n` hold the same values per key and kind, in the same order per key (Go's maps of labels). */
function sameLabelsByKey(a: number, b: number, n: number): boolean {
  const { labKey, labIsNum } = C;
  const byKey = (start: number): number[] =>
    Array.from({ length: n }, (_, i) => start + i).sort((x, y) => labIsNum[x]! - labIsNum[y]! || (labKey[x]! < labKey[y]! ? -1 : labKey[x]! > labKey[y]! ? 1 : 0) || x - y);
  const ka = byKey(a);
  const kb = byKey(b);
  for (let i = 0; i < n; i++) if (!sameLabel(ka[i]!, kb[i]!)) return false;
  return true;
}

/**
 * Leaves out the rows (of `rows`) whose sums are all zero, as Go's `Merge` does after merging (it
 * merges again when a merged sample is all zero), moving the rest down in place; returns the
 * rows kept.
 */
function dropZeroSums(cols: Cols, rows: number): number {
  const { vviews, offsets, labelOffsets, locIds, labKey, labStr, labUnit, labIsNum, labNumView } = cols;
  const refs = cols.bigRefs.location; // in the order of their places in locIds
  let ref = 0;
  let refsKept = 0;
  let kept = 0;
  let locOut = 0;
  let labelOut = 0;
  for (let row = 0; row < rows; row++) {
    const start = offsets[row]!;
    const end = offsets[row + 1]!;
    let zero = true;
    for (let j = 0; j < vviews.length && zero; j++) zero = vviews[j]![2 * row] === 0 && vviews[j]![2 * row + 1] === 0;
    if (zero) {
      keepDroppedLocIds(cols, start, end, ref);
      while (ref < refs.length && refs[ref]!.idx < end) ref++;
      continue;
    }
    for (; ref < refs.length && refs[ref]!.idx < end; ref++) {
      refs[ref]!.idx -= start - locOut;
      refs[refsKept++] = refs[ref]!;
    }
    if (kept !== row) {
      for (const v of vviews) {
        v[2 * kept] = v[2 * row]!;
        v[2 * kept + 1] = v[2 * row + 1]!;
      }
      locIds.copyWithin(locOut, start, end);
    }
    locOut += end - start;
    offsets[kept + 1] = locOut;
    if (labelOffsets) {
      const labelStart = labelOffsets[row]!;
      const labelEnd = labelOffsets[row + 1]!;
      if (kept !== row) {
        for (let i = labelStart; i < labelEnd; i++, labelOut++) {
          labKey[labelOut] = labKey[i]!;
          labStr[labelOut] = labStr[i]!;
          labUnit[labelOut] = labUnit[i]!;
          labIsNum[labelOut] = labIsNum[i]!;
          labNumView[2 * labelOut] = labNumView[2 * i]!;
          labNumView[2 * labelOut + 1] = labNumView[2 * i + 1]!;
        }
      } else labelOut = labelEnd;
      labelOffsets[kept + 1] = labelOut;
    }
    kept++;
  }
  if (kept === rows) return rows;
  refs.length = refsKept;
  cols.nLocId = locOut;
  if (labelOffsets) {
    labKey.length = labStr.length = labUnit.length = labelOut;
    labIsNum.fill(0, labelOut, cols.nLabOut);
    cols.nLabOut = labelOut;
  }
  return kept;
}

/** After pass 2 with `aggregate`: the columns cut to the distinct samples. */
function keepDistinctRows(f: Fill, cols: Cols, rows: number): void {
  rows = dropZeroSums(cols, rows);
  f.nS = rows;
  f.values = f.values.map((v) => (v.length === rows ? v : v.slice(0, rows)));
  cols.offsets = cols.offsets.slice(0, rows + 1);
  if (cols.labelOffsets) cols.labelOffsets = cols.labelOffsets.slice(0, rows + 1);
  // finishDecode cuts the label and location id columns to what was used.
  f.nLab = f.labNum.length;
  // Ids above 2^32-1 are fixed up in the column as it is now (it grew since they were read).
  for (const r of cols.bigRefs.location) r.arr = cols.locIds;
  // Those of the samples left out for being zero must name a location too (renumbered, then checked).
  for (const r of cols.zeroSampleBigRefs) cols.bigRefs.location.push({ ...r, arr: cols.zeroSampleLocIds });
}
