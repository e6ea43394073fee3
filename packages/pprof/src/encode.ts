/**
 * The canonical profile.proto writer: the same bytes as google/pprof's encoder
 * (`profile/encode.go` `preEncode` + `encode`, spec section 1.2) for the same profile.
 *
 * - string table in Go's interning order (sample types; per sample its string labels by sorted
 *   key then its numeric labels by sorted key; mappings; functions; drop/keep frames; period
 *   type; comments; default sample type; doc_url);
 * - fields in Go's order, scalars with the "Opt" rule (zero omitted) except field 14, repeated
 *   integers packed only when there are more than 2 of them;
 * - sizes are computed first, then everything is written into one preallocated buffer.
 *
 * The profile's ids are written as they are (validated first: non-zero and unique).
 */

import { ErrorCodes, IdIndex, allocUninitialized, utf8Length, ProfkitError, type FunctionsTable, type InlineLinesTable, type LocationsTable, type MappingsTable, type Profile } from '@profkit/core';
import { EMPTY_NAME } from './decode.js';
import { writeSamplesInWasm } from './sample-writer.js';

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const TWO32 = 4294967296;

/** uint32 (lo, hi) pairs of a 64-bit column, little-endian order of halves. */
function halves(col: BigInt64Array | BigUint64Array): Uint32Array {
  if (LITTLE_ENDIAN) return new Uint32Array(col.buffer, col.byteOffset, col.length * 2);
  const out = new Uint32Array(col.length * 2);
  for (let i = 0; i < col.length; i++) {
    const u = BigInt.asUintN(64, col[i]!);
    out[2 * i] = Number(u & 0xffffffffn);
    out[2 * i + 1] = Number(u >> 32n);
  }
  return out;
}

function sizeU32(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

function size64(l: number, h: number): number {
  if (h === 0) return sizeU32(l);
  return h < 0x8 ? 5 : h < 0x400 ? 6 : h < 0x20000 ? 7 : h < 0x1000000 ? 8 : h < 0x80000000 ? 9 : 10;
}

// Scratch halves of the last number converted by `split`.
let sl = 0;
let sh = 0;
/** Splits an integer JS number (int64 range) into two's-complement halves. */
function split(n: number): void {
  if (n >= 0 && n < TWO32) {
    sl = n;
    sh = 0;
  } else if (n >= 0) {
    sl = n % TWO32 >>> 0;
    sh = Math.floor(n / TWO32) >>> 0;
  } else {
    const u = BigInt.asUintN(64, BigInt(n));
    sl = Number(u & 0xffffffffn);
    sh = Number(u >> 32n);
  }
}
function splitBig(v: bigint): void {
  const u = BigInt.asUintN(64, v);
  sl = Number(u & 0xffffffffn);
  sh = Number(u >> 32n);
}
function sizeNum(n: number): number {
  if (n >= 0 && n < TWO32) return sizeU32(n);
  split(n);
  return size64(sl, sh);
}

// Writer state: the window being written, the position in it, and where writing pauses.
let out: Uint8Array = new Uint8Array(0);
let w = 0;
let limit = Infinity;

// The hot loops keep the writer state in locals and write through `varU32`/`var64`, which take
// the array and position and return the new position: every access to a module-level `let` is a
// context load with a hole check, and every `w++` a store back into the context.

/** Writes `v` (uint32) as a varint at `o[p]`; returns the position after it. */
function varU32(o: Uint8Array, p: number, v: number): number {
  while (v >= 0x80) {
    o[p++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  o[p] = v;
  return p + 1;
}
/** Writes the uint64 with halves (`l`, `h`) as a varint at `o[p]`; returns the position after it. */
function var64(o: Uint8Array, p: number, l: number, h: number): number {
  if (h === 0) return varU32(o, p, l);
  // Low 28 bits.
  for (let i = 0; i < 4; i++) {
    o[p++] = (l & 0x7f) | 0x80;
    l >>>= 7;
  }
  // Bits 28..34: 4 bits of lo, 3 of hi.
  const b = (l & 0x0f) | ((h & 0x07) << 4);
  h >>>= 3;
  if (h === 0) {
    o[p] = b;
    return p + 1;
  }
  o[p++] = b | 0x80;
  return varU32(o, p, h);
}
function putU32(v: number): void {
  w = varU32(out, w, v);
}
function put64(l: number, h: number): void {
  w = var64(out, w, l, h);
}
/** Writes the integer `n` (int64 range) as a varint at `o[p]`; returns the position after it. */
function varNum(o: Uint8Array, p: number, n: number): number {
  if (n >= 0 && n < TWO32) return varU32(o, p, n);
  split(n);
  return var64(o, p, sl, sh);
}

const textEncoder = new TextEncoder();

export interface EncodeOptions {
  /** File name for error messages. */
  file?: string;
}

function usage(message: string, rule: string, file?: string): never {
  throw new ProfkitError(ErrorCodes.INVALID_PROFILE, `pprof writer: ${message}`, { file, rule });
}

/**
 * Encodes a profile as uncompressed profile.proto bytes, laid out exactly as google/pprof's
 * `Profile.Write` lays them out before gzip.
 */
export function encodeProfile(p: Profile, options: EncodeOptions = {}): Uint8Array {
  try {
    const plan = planEncoding(p, options.file);
    // Uninitialized: every byte is written (checked: the written size equals the computed one),
    // so zero-filling the buffer first would be wasted work.
    out = allocUninitialized(plan.total);
    w = 0;
    limit = Infinity;
    // With no limit the writer never pauses: one step writes everything.
    const done = writePlan(plan).next().done;
    if (!done) throw new ProfkitError(ErrorCodes.PARSE, 'pprof writer: internal error (paused without a limit)', { file: plan.file, rule: 'encoder' });
    return out;
  } finally {
    out = new Uint8Array(0);
    release();
  }
}

/**
 * Encodes a profile as a sequence of chunks of about `chunkSize` bytes (each at least one whole
 * message): the same bytes as `encodeProfile`, without ever holding the whole encoding. The
 * returned `total` is the encoded size. Chunks are fresh buffers (a consumer may keep them).
 * Iterations of several encodings may be interleaved.
 */
export function encodeProfileChunks(p: Profile, options: EncodeOptions & { chunkSize?: number } = {}): { total: number; chunks: Iterable<Uint8Array> } {
  let ctx: EncoderContext;
  try {
    const plan = planEncoding(p, options.file);
    ctx = saveContext(plan);
  } finally {
    out = new Uint8Array(0);
    release();
  }
  const chunkSize = Math.max(options.chunkSize ?? 1 << 20, 4096);
  return { total: ctx.plan.total, chunks: chunkIterator(ctx, chunkSize) };
}

function* chunkIterator(ctx: EncoderContext, chunkSize: number): Generator<Uint8Array> {
  const plan = ctx.plan;
  // A window holds at least one whole message beyond the flush threshold.
  const windowSize = chunkSize + plan.maxMessage;
  let emitted = 0;
  const gen = writePlan(plan);
  for (;;) {
    // Another encoding may have run since the last chunk: this one's tables come back first.
    restoreContext(ctx);
    out = new Uint8Array(windowSize);
    w = 0;
    limit = chunkSize;
    let done: boolean | undefined;
    let piece: Uint8Array;
    try {
      done = gen.next().done;
      piece = out.subarray(0, w);
    } finally {
      out = new Uint8Array(0);
      limit = Infinity;
      release();
    }
    emitted += piece.length;
    if (piece.length > 0) yield piece;
    if (done) {
      if (emitted !== plan.total) throw new ProfkitError(ErrorCodes.PARSE, `pprof writer: internal size mismatch (${emitted} written, ${plan.total} computed)`, { file: plan.file, rule: 'encoder sizes' });
      return;
    }
  }
}

/** Everything the writing phase needs, computed by `planEncoding`. */
interface Plan {
  file: string | undefined;
  total: number;
  maxMessage: number;
  nT: number;
  nS: number;
  nM: number;
  nF: number;
  stT: Uint32Array;
  stU: Uint32Array;
  offs: Uint32Array;
  ids: Uint32Array;
  /** With more than 2 sample types, value halves, sample-major: (lo, hi) of value j of sample
   * s at 2 * (s * nT + j). Empty otherwise. */
  vh: Uint32Array;
  /** With at most 2 sample types, the (lo, hi) halves of value columns 0 and 1 (or empty). */
  v0: Uint32Array;
  v1: Uint32Array;
  labOff: Uint32Array | undefined;
  /** The Sample messages when sample-writer.ts wrote them (then `sampleSize` and `locPayload` are unset). */
  samplesWritten: Uint8Array | undefined;
  perm: Uint32Array;
  /** Size of each label message, by label row. */
  labSize: Uint8Array;
  sampleSize: Uint32Array;
  locPayload: Uint32Array;
  maps: MappingsTable;
  fns: FunctionsTable;
  loc: LocationsTable;
  inl: InlineLinesTable;
  addrH: Uint32Array;
  locSize: Uint32Array;
  strLen: Uint32Array;
  strBytes: (Uint8Array | undefined)[];
  dropX: number;
  keepX: number;
  ptT: number;
  ptU: number;
  ptSize: number;
  commentX: number[];
  commentPayload: number;
  defaultX: number;
  docX: number;
  facts: Profile['.profile'];
}

/** The module-level tables of one planned encoding, saved so that its writing can resume later. */
interface EncoderContext {
  plan: Plan;
  strs: string[];
  labIsNum: Uint8Array;
  labKeyX: Uint32Array;
  labValX: Uint32Array;
  numH: Uint32Array;
  mp: MappingsTable | undefined;
  msH: Uint32Array;
  mlH: Uint32Array;
  moH: Uint32Array;
  mFileX: Uint32Array;
  mBuildX: Uint32Array;
  fnT: FunctionsTable | undefined;
  fNameX: Uint32Array;
  fSysX: Uint32Array;
  fFileX: Uint32Array;
  pending: Uint8Array | undefined;
}

function saveContext(plan: Plan): EncoderContext {
  return { plan, strs, labIsNum, labKeyX, labValX, numH, mp, msH, mlH, moH, mFileX, mBuildX, fnT, fNameX, fSysX, fFileX, pending: undefined };
}

function restoreContext(c: EncoderContext): void {
  strs = c.strs;
  labIsNum = c.labIsNum;
  labKeyX = c.labKeyX;
  labValX = c.labValX;
  numH = c.numH;
  mp = c.mp;
  msH = c.msH;
  mlH = c.mlH;
  moH = c.moH;
  mFileX = c.mFileX;
  mBuildX = c.mBuildX;
  fnT = c.fnT;
  fNameX = c.fNameX;
  fSysX = c.fSysX;
  fFileX = c.fFileX;
}

/** Validation, string table and sizes: everything but the bytes. */
function planEncoding(p: Profile, file: string | undefined): Plan {
  const nT = p.sample_types.type.length;
  const nS = p.samples.locations.offsets.length - 1;
  const values = p.samples['.values'];
  if (values.length !== nT) usage(`${values.length} value columns for ${nT} sample types`, 'one value column per sample type', file);
  for (const v of values) if (v.length !== nS) usage(`a value column has ${v.length} rows for ${nS} samples`, 'value columns as long as samples', file);
  if (nS > 0 && nT === 0) usage('missing sample type information', 'pprof.CheckValid: samples need sample types', file);

  const loc = p.locations;
  const fns = p.functions;
  const maps = p['.mappings'];
  const nL = loc.location_id.length;
  const nF = fns.function_id.length;
  const nM = maps.mapping_id.length;
  for (const [what, ids] of [
    ['location', loc.location_id],
    ['function', fns.function_id],
    ['mapping', maps.mapping_id],
  ] as const) {
    for (let i = 0; i < ids.length; i++) if (ids[i] === 0) usage(`found ${what} with reserved id=0 (row ${i})`, `pprof.CheckValid: ${what} ids are non-zero`, file);
    const idx = new IdIndex(ids);
    if (idx.duplicates.length) usage(`multiple ${what}s with same id: ${idx.duplicates[0]}`, `pprof.CheckValid: ${what} ids are unique`, file);
  }

  // String table, in google/pprof's order.
  resetStrings();
  add('');
  const stT = new Uint32Array(nT);
  const stU = new Uint32Array(nT);
  for (let j = 0; j < nT; j++) {
    stT[j] = add(p.sample_types.type[j]!);
    stU[j] = add(p.sample_types.unit[j]!);
  }

  // Labels: per sample, string labels by sorted key then numeric labels by sorted key (stable).
  const labels = p['.labels'];
  labIsNum = labels.is_num;
  const labOff = p.samples['.label_offsets'];
  // Checked before anything is sized by them: offsets of a profile built by hand that decrease or
  // end past the label rows would make the loops below run up to 2^32 steps (and `perm` that long).
  if (labOff) {
    const nRows = labels.key.length;
    if (labOff.length < nS + 1) usage(`samples['.label_offsets'] has ${labOff.length} entries for ${nS} samples`, 'profkit.csr: one label offset per sample, plus one', file);
    for (let s = 0; s < nS; s++) {
      const a = labOff[s]!;
      const b = labOff[s + 1]!;
      if (b < a || b > nRows) usage(`samples['.label_offsets'][${s + 1}] is ${b}, after ${a}, with ${nRows} label rows`, 'profkit.csr: label offsets never decrease and end within the label table', file);
    }
  }
  const nLab = labOff ? labOff[nS]! : 0;
  const perm = new Uint32Array(nLab);
  labKeyX = new Uint32Array(labels.key.length);
  labValX = new Uint32Array(labels.key.length);
  numH = halves(labels.num);
  if (labOff) internLabels(nS, labOff, labels, perm);
  mp = maps;
  mFileX = new Uint32Array(nM);
  mBuildX = new Uint32Array(nM);
  for (let m = 0; m < nM; m++) {
    mFileX[m] = add(maps.filename[m]!);
    mBuildX[m] = add(maps.build_id[m]!);
  }
  fnT = fns;
  fNameX = new Uint32Array(nF);
  fSysX = new Uint32Array(nF);
  fFileX = new Uint32Array(nF);
  for (let f = 0; f < nF; f++) {
    const name = fns.name[f]!;
    const sys = fns.system_name[f]!;
    fNameX[f] = add(name === EMPTY_NAME ? '' : name);
    // Usually the same string object as the name (Go's runtime/pprof sets both to the same name):
    // no second lookup.
    fSysX[f] = sys === name ? fNameX[f]! : add(sys === EMPTY_NAME ? '' : sys);
    fFileX[f] = add(fns.filename[f]!);
  }
  const facts = p['.profile'];
  const dropX = add(facts.drop_frames);
  const keepX = add(facts.keep_frames);
  const ptT = facts.period_type ? add(facts.period_type.type) : 0;
  const ptU = facts.period_type ? add(facts.period_type.unit) : 0;
  const commentX = facts.comments.map(add);
  const defaultX = add(facts.default_sample_type);
  const docX = add(facts.doc_url);

  // Sizes.
  const offs = p.samples.locations.offsets;
  const ids = p.samples.locations.location_id;
  // The hot loops index typed arrays passed to them, not a JS array of columns (that made V8
  // deoptimize, "wrong map"): the usual one or two columns are passed as they are (no copy),
  // more go into one flat sample-major array.
  const empty = new Uint32Array(0);
  const v0 = nT > 0 && nT <= 2 ? halves(values[0]!) : empty;
  const v1 = nT === 2 ? halves(values[1]!) : empty;
  const vh = nT > 2 ? new Uint32Array(nS * nT * 2) : empty;
  if (nT > 2) for (let j = 0; j < nT; j++) interleave(halves(values[j]!), vh, j, nT, nS);
  let total = 0;
  for (let j = 0; j < nT; j++) {
    const n = (stT[j] ? 1 + sizeU32(stT[j]!) : 0) + (stU[j] ? 1 + sizeU32(stU[j]!) : 0);
    total += 1 + sizeU32(n) + n;
  }
  // A Label message is at most 23 bytes (three tags, two uint32 varints, one uint64 varint).
  const labSize = new Uint8Array(labels.key.length);
  // Label-free samples, when there are many, are written here already, in WebAssembly (see
  // sample-writer.ts); writePlan then copies their bytes.
  const samplesWritten = nLab === 0 ? writeSamplesInWasm(nS, nT, offs, ids, vh, v0, v1) : undefined;
  const sampleSize = samplesWritten ? empty : new Uint32Array(nS);
  const locPayload = samplesWritten ? empty : new Uint32Array(nS);
  if (samplesWritten) {
    total += samplesWritten.bytes.length;
    largestSampleSize = samplesWritten.largest;
  } else total += sizeSamples(nS, nT, offs, ids, vh, v0, v1, labOff, sampleSize, locPayload, labSize, file);
  msH = halves(maps.memory_start);
  mlH = halves(maps.memory_limit);
  moH = halves(maps.file_offset);
  for (let m = 0; m < nM; m++) {
    const n = mappingSize(m);
    total += 1 + sizeU32(n) + n;
  }
  const inl = p['.inline_lines'];
  const inlOff = loc['.inline_offsets'];
  const addrH = halves(loc['.address']);
  const locSize = new Uint32Array(nL);
  total += sizeLocations(loc, inl, addrH, locSize);
  for (let f = 0; f < nF; f++) {
    const n = fnSize(f);
    total += 1 + sizeU32(n) + n;
  }
  // Strings: ASCII ones are written byte by byte, others through TextEncoder.
  const strBytes: (Uint8Array | undefined)[] = new Array(strs.length);
  const strLen = new Uint32Array(strs.length);
  total += measureStrings(strBytes, strLen);
  total += dropX ? 1 + sizeU32(dropX) : 0;
  total += keepX ? 1 + sizeU32(keepX) : 0;
  total += optBig(facts.time_nanos) + optBig(facts.duration_nanos);
  const ptSize = (ptT ? 1 + sizeU32(ptT) : 0) + (ptU ? 1 + sizeU32(ptU) : 0);
  if (ptT || ptU) total += 1 + sizeU32(ptSize) + ptSize;
  total += optBig(facts.period);
  let commentPayload = 0;
  for (const c of commentX) commentPayload += sizeU32(c);
  if (commentX.length > 2) total += 1 + sizeU32(commentPayload) + commentPayload;
  else total += commentX.length + commentPayload;
  total += 1 + sizeU32(defaultX);
  total += docX ? 1 + sizeU32(docX) : 0;

  // The largest message, or the small fields after the string table (written together).
  let maxMessage = 128 + commentPayload + ptSize;
  maxMessage = Math.max(maxMessage, largestSampleSize, maxOf(locSize), maxOf(strLen));
  for (let m = 0; m < nM; m++) maxMessage = Math.max(maxMessage, mappingSize(m));
  for (let f = 0; f < nF; f++) maxMessage = Math.max(maxMessage, fnSize(f));
  maxMessage += 16; // tag and length of the largest message

  return {
    file, total, maxMessage, nT, nS, nM, nF, stT, stU, offs, ids, vh, v0, v1, labOff, perm, labSize, sampleSize, locPayload, samplesWritten: samplesWritten?.bytes, maps, fns, loc, inl, addrH, locSize, strLen, strBytes,
    dropX, keepX, ptT, ptU, ptSize, commentX, commentPayload, defaultX, docX, facts,
  };
}

/**
 * Writes the planned encoding into `out` from `w`, in Go's order. Pauses (yields) between
 * messages once `w` reaches `limit`, for the caller to take the bytes and give a new window.
 */
function* writePlan(plan: Plan): Generator<void> {
  const { file, total, nT, nS, nM, nF, stT, stU, offs, ids, vh, v0, v1, labOff, perm, labSize, sampleSize, locPayload, samplesWritten, maps, fns, loc, inl, addrH, locSize, strLen, strBytes, dropX, keepX, ptT, ptU, ptSize, commentX, commentPayload, defaultX, docX, facts } = plan;
  let base = 0; // bytes handed out before the current window
  {
    for (let j = 0; j < nT; j++) {
      if (w >= limit) {
        base += w;
        yield;
      }
      const n = (stT[j] ? 1 + sizeU32(stT[j]!) : 0) + (stU[j] ? 1 + sizeU32(stU[j]!) : 0);
      out[w++] = 0x0a;
      putU32(n);
      if (stT[j]) {
        out[w++] = 0x08;
        putU32(stT[j]!);
      }
      if (stU[j]) {
        out[w++] = 0x10;
        putU32(stU[j]!);
      }
    }
    // Samples written in WebAssembly are copied, as much as fits below `limit` at a time.
    for (let at = 0; samplesWritten && at < samplesWritten.length; ) {
      if (w >= limit) {
        base += w;
        yield;
      }
      const n = Math.min(samplesWritten.length - at, limit - w);
      out.set(samplesWritten.subarray(at, at + n), w);
      w += n;
      at += n;
    }
    for (let s = samplesWritten ? nS : 0; s < nS; ) {
      s = writeSamples(s, nS, nT, offs, ids, vh, v0, v1, labOff, perm, sampleSize, locPayload, labSize);
      if (w >= limit) {
        base += w;
        yield;
      }
    }
    for (let m = 0; m < nM; ) {
      m = writeMappings(m, maps);
      if (w >= limit) {
        base += w;
        yield;
      }
    }
    for (let l = 0; l < loc.location_id.length; ) {
      l = writeLocations(l, loc, inl, addrH, locSize);
      if (w >= limit) {
        base += w;
        yield;
      }
    }
    for (let f = 0; f < nF; ) {
      f = writeFunctions(f, fns);
      if (w >= limit) {
        base += w;
        yield;
      }
    }
    for (let i = 0; i < strLen.length; ) {
      i = writeStrings(i, strLen, strBytes);
      if (w >= limit) {
        base += w;
        yield;
      }
    }
    if (limit !== Infinity && w > 0) {
      // The remaining small fields go into a fresh window (which has room for them).
      base += w;
      yield;
    }
    if (dropX) (out[w++] = 0x38), putU32(dropX);
    if (keepX) (out[w++] = 0x40), putU32(keepX);
    putOptBig(0x48, facts.time_nanos);
    putOptBig(0x50, facts.duration_nanos);
    if (ptT || ptU) {
      out[w++] = 0x5a;
      putU32(ptSize);
      if (ptT) (out[w++] = 0x08), putU32(ptT);
      if (ptU) (out[w++] = 0x10), putU32(ptU);
    }
    putOptBig(0x60, facts.period);
    if (commentX.length > 2) {
      out[w++] = 0x6a;
      putU32(commentPayload);
      for (const c of commentX) putU32(c);
    } else for (const c of commentX) (out[w++] = 0x68), putU32(c);
    out[w++] = 0x70;
    putU32(defaultX);
    if (docX) (out[w++] = 0x78), putU32(docX);
    if (limit === Infinity && base + w !== total) throw new ProfkitError(ErrorCodes.PARSE, `pprof writer: internal size mismatch (${base + w} written, ${total} computed)`, { file, rule: 'encoder sizes' });
  }
}


/** Copies a column's (lo, hi) halves into the sample-major value array at value index `j`. */
function interleave(col: Uint32Array, vh: Uint32Array, j: number, nT: number, nS: number): void {
  const step = 2 * nT;
  for (let s = 0, d = 2 * j; s < nS; s++, d += step) {
    vh[d] = col[2 * s]!;
    vh[d + 1] = col[2 * s + 1]!;
  }
}

/** UTF-8 lengths of the string table (ASCII strings are written byte by byte, others encoded
 * here once); returns the bytes the string_table entries take. */
function measureStrings(strBytes: (Uint8Array | undefined)[], strLen: Uint32Array): number {
  let total = 0;
  for (let i = 0; i < strs.length; i++) {
    const s = strs[i]!;
    // A string is ASCII exactly when its UTF-8 length equals its UTF-16 length (any other code
    // unit takes at least 2 bytes); the native count is faster than a charCodeAt loop.
    const n = utf8Length(s);
    if (n === s.length) strLen[i] = n;
    else {
      const bytes = textEncoder.encode(s);
      strBytes[i] = bytes;
      strLen[i] = bytes.length;
    }
    total += 1 + sizeU32(strLen[i]!) + strLen[i]!;
  }
  return total;
}

function maxOf(a: Uint32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) if (a[i]! > m) m = a[i]!;
  return m;
}

/** Orders each sample's labels as Go writes them (into `perm`) and interns their strings. */
function internLabels(nS: number, labOff: Uint32Array, labels: Profile['.labels'], perm: Uint32Array): void {
  const key = labels.key;
  const str = labels.str;
  const unit = labels.num_unit;
  const isNum = labels.is_num;
  const keyX = labKeyX;
  const valX = labValX;
  // Label keys and values repeat (a few keys, few values per key), usually as the same string
  // objects: a cache of the last key and value interned at each position of a sample's sorted
  // labels turns most `add` calls (which hash the whole string) into a `===` (a pointer
  // comparison for the same object). It cannot change the interning order: a cached string is
  // already in the table. '' is index 0.
  const lastKey: string[] = ['', '', '', ''];
  const lastKeyX = [0, 0, 0, 0];
  const lastVal: string[] = ['', '', '', ''];
  const lastValX = [0, 0, 0, 0];
  for (let s = 0; s < nS; s++) {
    const a = labOff[s]!;
    const b = labOff[s + 1]!;
    if (b === a) continue;
    if (b === a + 1) perm[a] = a;
    else if (b === a + 2) {
      // The common case of two labels: one comparison instead of a sort.
      const na = isNum[a]!;
      const nb = isNum[a + 1]!;
      const swap = na !== nb ? na > nb : key[a]! > key[a + 1]!;
      perm[a] = swap ? a + 1 : a;
      perm[a + 1] = swap ? a : a + 1;
    } else {
      const rows: number[] = [];
      for (let k = a; k < b; k++) rows.push(k);
      rows.sort((x, y) => {
        const nx = isNum[x]!;
        const ny = isNum[y]!;
        if (nx !== ny) return nx - ny;
        const kx = key[x]!;
        const ky = key[y]!;
        return kx < ky ? -1 : kx > ky ? 1 : x - y;
      });
      for (let k = a; k < b; k++) perm[k] = rows[k - a]!;
    }
    for (let k = a; k < b; k++) {
      const r = perm[k]!;
      const c = (k - a) & 3;
      const kStr = key[r]!;
      if (kStr === lastKey[c]) keyX[r] = lastKeyX[c]!;
      else keyX[r] = lastKeyX[c] = add((lastKey[c] = kStr));
      // An unset unit is '' (index 0, already interned), as Go interns a unit only when set.
      const vStr = isNum[r] ? unit[r] || '' : str[r]!;
      if (vStr === lastVal[c]) valX[r] = lastValX[c]!;
      else valX[r] = lastValX[c] = add((lastVal[c] = vStr));
    }
  }
}

/** Writes Mapping messages from `from` until done or `w` reaches `limit`; returns where it stopped. */
function writeMappings(from: number, maps: MappingsTable): number {
  const nM = maps.mapping_id.length;
  let m = from;
  for (; m < nM && w < limit; m++) {
    out[w++] = 0x1a;
    putU32(mappingSize(m));
    out[w++] = 0x08;
    putU32(maps.mapping_id[m]!);
    if (msH[2 * m] || msH[2 * m + 1]) {
      out[w++] = 0x10;
      put64(msH[2 * m]!, msH[2 * m + 1]!);
    }
    if (mlH[2 * m] || mlH[2 * m + 1]) {
      out[w++] = 0x18;
      put64(mlH[2 * m]!, mlH[2 * m + 1]!);
    }
    if (moH[2 * m] || moH[2 * m + 1]) {
      out[w++] = 0x20;
      put64(moH[2 * m]!, moH[2 * m + 1]!);
    }
    if (mFileX[m]) {
      out[w++] = 0x28;
      putU32(mFileX[m]!);
    }
    if (mBuildX[m]) {
      out[w++] = 0x30;
      putU32(mBuildX[m]!);
    }
    if (maps.has_functions[m]) (out[w++] = 0x38), (out[w++] = 1);
    if (maps.has_filenames[m]) (out[w++] = 0x40), (out[w++] = 1);
    if (maps.has_line_numbers[m]) (out[w++] = 0x48), (out[w++] = 1);
    if (maps.has_inline_frames[m]) (out[w++] = 0x50), (out[w++] = 1);
  }
  return m;
}

/** Writes Function messages from `from` until done or `w` reaches `limit`; returns where it stopped. */
function writeFunctions(from: number, fns: FunctionsTable): number {
  const nF = fns.function_id.length;
  let f = from;
  for (; f < nF && w < limit; f++) {
    out[w++] = 0x2a;
    putU32(fnSize(f));
    out[w++] = 0x08;
    putU32(fns.function_id[f]!);
    if (fNameX[f]) (out[w++] = 0x10), putU32(fNameX[f]!);
    if (fSysX[f]) (out[w++] = 0x18), putU32(fSysX[f]!);
    if (fFileX[f]) (out[w++] = 0x20), putU32(fFileX[f]!);
    if (fns.start_line[f]) (out[w++] = 0x28), (w = varNum(out, w, fns.start_line[f]!));
  }
  return f;
}

/** Writes string_table entries from `from` until done or `w` reaches `limit`; returns where it stopped. */
function writeStrings(from: number, strLen: Uint32Array, strBytes: (Uint8Array | undefined)[]): number {
  // Locals for the writer state and the table: see `varU32`.
  const o = out;
  const lim = limit;
  const table = strs;
  let p = w;
  let i = from;
  for (; i < strLen.length && p < lim; i++) {
    o[p++] = 0x32;
    const n = strLen[i]!;
    p = varU32(o, p, n);
    const bytes = strBytes[i];
    if (bytes) {
      o.set(bytes, p);
      p += n;
    } else {
      const str = table[i]!;
      for (let k = 0; k < n; k++) o[p + k] = str.charCodeAt(k);
      p += n;
    }
  }
  w = p;
  return i;
}

/** The largest `sampleSize` the last `sizeSamples` computed (found there: a second pass over the
 * samples only for it cost ~0.5 ms of a 166k-sample encoding, its loop not yet optimized). */
let largestSampleSize = 0;

/** Sizes of the Sample messages (and of their packed location ids, and of their labels, by label
 * row); returns the bytes they take, and sets `largestSampleSize`. */
function sizeSamples(nS: number, nT: number, offs: Uint32Array, ids: Uint32Array, vh: Uint32Array, v0: Uint32Array, v1: Uint32Array, labOff: Uint32Array | undefined, sampleSize: Uint32Array, locPayload: Uint32Array, labSize: Uint8Array, file: string | undefined): number {
  // Locals for the label tables: see `varU32`.
  const keyX = labKeyX;
  const valX = labValX;
  const isNum = labIsNum;
  const nh = numH;
  let total = 0;
  let largest = 0;
  for (let s = 0; s < nS; s++) {
    const a = offs[s]!;
    const b = offs[s + 1]!;
    // Readers make these right; a profile built by hand may not, and the loops here would then
    // read past the ids (up to 2^32 steps). The sample writer's module leaves such offsets here.
    if (b < a || b > ids.length) usage(`samples.locations.offsets[${s + 1}] is ${b}, after ${a}, with ${ids.length} location ids`, 'profkit.csr: stack offsets never decrease and end within location_id', file);
    let n = 0;
    let payload = 0;
    // Branch-free varint size, ceil(bits / 7) with bits = 32 - clz32(id | 1): ids of mixed
    // sizes make a comparison chain mispredict.
    for (let k = a; k < b; k++) payload += ((38 - Math.clz32(ids[k]! | 1)) * 9363) >>> 16;
    locPayload[s] = payload;
    if (b - a > 2) n += 1 + sizeU32(payload) + payload;
    else n += (b - a) + payload;
    if (nT > 2) {
      payload = 0;
      const s2 = 2 * s * nT;
      for (let j = 0; j < nT; j++) payload += size64(vh[s2 + 2 * j]!, vh[s2 + 2 * j + 1]!);
      n += 1 + sizeU32(payload) + payload;
    } else {
      if (nT > 0) n += 1 + size64(v0[2 * s]!, v0[2 * s + 1]!);
      if (nT > 1) n += 1 + size64(v1[2 * s]!, v1[2 * s + 1]!);
    }
    if (labOff) {
      for (let k = labOff[s]!; k < labOff[s + 1]!; k++) {
        const ls = labelSize(k, keyX, valX, isNum, nh);
        labSize[k] = ls;
        n += 1 + sizeU32(ls) + ls;
      }
    }
    sampleSize[s] = n;
    if (n > largest) largest = n;
    total += 1 + sizeU32(n) + n;
  }
  largestSampleSize = largest;
  return total;
}

/** Sizes of the Location messages; returns the bytes they take. */
function sizeLocations(loc: LocationsTable, inl: InlineLinesTable, addrH: Uint32Array, locSize: Uint32Array): number {
  const nL = loc.location_id.length;
  const inlOff = loc['.inline_offsets'];
  let total = 0;
  for (let l = 0; l < nL; l++) {
    let n = 1 + sizeU32(loc.location_id[l]!);
    const mid = loc['.mapping_id'][l]!;
    if (mid) n += 1 + sizeU32(mid);
    if (addrH[2 * l] || addrH[2 * l + 1]) n += 1 + size64(addrH[2 * l]!, addrH[2 * l + 1]!);
    const a = inlOff[l]!;
    const b = inlOff[l + 1]!;
    if (loc.function_id[l] || b > a) {
      const ls = lineSize(loc.function_id[l]!, loc.line[l]!, loc['.column'][l]!);
      n += 1 + sizeU32(ls) + ls;
    }
    for (let k = a; k < b; k++) {
      const ls = lineSize(inl.function_id[k]!, inl.line[k]!, inl.column[k]!);
      n += 1 + sizeU32(ls) + ls;
    }
    if (loc['.is_folded'][l]) n += 2;
    locSize[l] = n;
    total += 1 + sizeU32(n) + n;
  }
  return total;
}

/** Writes Sample messages from `from` until done or `w` reaches `limit`; returns where it stopped. */
function writeSamples(from: number, nS: number, nT: number, offs: Uint32Array, ids: Uint32Array, vh: Uint32Array, v0: Uint32Array, v1: Uint32Array, labOff: Uint32Array | undefined, perm: Uint32Array, sampleSize: Uint32Array, locPayload: Uint32Array, labSize: Uint8Array): number {
  // Locals for the writer state and the label tables: see `varU32`.
  const o = out;
  const lim = limit;
  const keyX = labKeyX;
  const valX = labValX;
  const isNum = labIsNum;
  const nh = numH;
  let p = w;
  let s = from;
  for (; s < nS && p < lim; s++) {
    o[p++] = 0x12;
    p = varU32(o, p, sampleSize[s]!);
    const a = offs[s]!;
    const b = offs[s + 1]!;
    if (b - a > 2) {
      o[p++] = 0x0a;
      p = varU32(o, p, locPayload[s]!);
      for (let k = a; k < b; k++) {
        const v = ids[k]!;
        if (v < 0x200000) {
          // 1 to 3 bytes without a branch on the length: location ids are typically a mix of
          // 2- and 3-byte varints, on which a length test mispredicts. All three bytes are
          // stored; those past the varint's end are overwritten by what follows (a message
          // always follows the samples, and a chunk window has room for the largest message).
          const c1 = (0x7f - v) >>> 31; // 1 if v needs a second byte
          const c2 = (0x3fff - v) >>> 31; // 1 if v needs a third byte
          o[p] = (v & 0x7f) | (c1 << 7);
          o[p + 1] = ((v >>> 7) & 0x7f) | (c2 << 7);
          o[p + 2] = v >>> 14;
          p += 1 + c1 + c2;
        } else p = varU32(o, p, v);
      }
    } else {
      for (let k = a; k < b; k++) {
        o[p++] = 0x08;
        p = varU32(o, p, ids[k]!);
      }
    }
    if (nT > 2) {
      const s2 = 2 * s * nT;
      let payload = 0;
      for (let j = 0; j < nT; j++) payload += size64(vh[s2 + 2 * j]!, vh[s2 + 2 * j + 1]!);
      o[p++] = 0x12;
      p = varU32(o, p, payload);
      for (let j = 0; j < nT; j++) p = var64(o, p, vh[s2 + 2 * j]!, vh[s2 + 2 * j + 1]!);
    } else {
      if (nT > 0) {
        o[p++] = 0x10;
        p = var64(o, p, v0[2 * s]!, v0[2 * s + 1]!);
      }
      if (nT > 1) {
        o[p++] = 0x10;
        p = var64(o, p, v1[2 * s]!, v1[2 * s + 1]!);
      }
    }
    if (labOff) {
      for (let k = labOff[s]!; k < labOff[s + 1]!; k++) {
        const r = perm[k]!;
        o[p++] = 0x1a;
        p = varU32(o, p, labSize[r]!);
        const kx = keyX[r]!;
        if (kx) {
          o[p++] = 0x08;
          p = varU32(o, p, kx);
        }
        if (isNum[r]) {
          const l = nh[2 * r]!;
          const h = nh[2 * r + 1]!;
          if (l !== 0 || h !== 0) {
            o[p++] = 0x18;
            p = var64(o, p, l, h);
          }
          if (valX[r]) {
            o[p++] = 0x20;
            p = varU32(o, p, valX[r]!);
          }
        } else if (valX[r]) {
          o[p++] = 0x10;
          p = varU32(o, p, valX[r]!);
        }
      }
    }
  }
  w = p;
  return s;
}

/** Writes Location messages from `from` until done or `w` reaches `limit`; returns where it stopped. */
function writeLocations(from: number, loc: LocationsTable, inl: InlineLinesTable, addrH: Uint32Array, locSize: Uint32Array): number {
  // Locals for the writer state and the columns: see `varU32`.
  const o = out;
  const lim = limit;
  const locId = loc.location_id;
  const nL = locId.length;
  const mapId = loc['.mapping_id'];
  const fnId = loc.function_id;
  const line = loc.line;
  const column = loc['.column'];
  const folded = loc['.is_folded'];
  const inlOff = loc['.inline_offsets'];
  const inlFn = inl.function_id;
  const inlLine = inl.line;
  const inlCol = inl.column;
  let p = w;
  let l = from;
  for (; l < nL && p < lim; l++) {
    o[p++] = 0x22;
    p = varU32(o, p, locSize[l]!);
    o[p++] = 0x08;
    p = varU32(o, p, locId[l]!);
    const mid = mapId[l]!;
    if (mid) {
      o[p++] = 0x10;
      p = varU32(o, p, mid);
    }
    if (addrH[2 * l] || addrH[2 * l + 1]) {
      o[p++] = 0x18;
      p = var64(o, p, addrH[2 * l]!, addrH[2 * l + 1]!);
    }
    const a = inlOff[l]!;
    const b = inlOff[l + 1]!;
    if (fnId[l] || b > a) p = varLine(o, p, fnId[l]!, line[l]!, column[l]!);
    for (let k = a; k < b; k++) p = varLine(o, p, inlFn[k]!, inlLine[k]!, inlCol[k]!);
    if (folded[l]) (o[p++] = 0x28), (o[p++] = 1);
  }
  w = p;
  return l;
}

// Encoder tables shared by the helpers below. Module-level (like the writer state) so that the
// helpers are plain functions: per-call closures make V8 deoptimize ("wrong call target").
let strs: string[] = [];
// The string table's hash index (see `add`): open addressing, slot = string index + 1 (0 = empty),
// at most half full; the hash of each string by index; the hash's per-encoding random basis.
let slots: Int32Array = new Int32Array(0);
let hashes: Int32Array = new Int32Array(0);
let hashBasis = 0;
let labIsNum: Uint8Array = new Uint8Array(0);
let labKeyX: Uint32Array = new Uint32Array(0);
let labValX: Uint32Array = new Uint32Array(0);
let numH: Uint32Array = new Uint32Array(0);
let mp: MappingsTable | undefined;
let msH: Uint32Array = new Uint32Array(0);
let mlH: Uint32Array = new Uint32Array(0);
let moH: Uint32Array = new Uint32Array(0);
let mFileX: Uint32Array = new Uint32Array(0);
let mBuildX: Uint32Array = new Uint32Array(0);
let fnT: FunctionsTable | undefined;
let fNameX: Uint32Array = new Uint32Array(0);
let fSysX: Uint32Array = new Uint32Array(0);
let fFileX: Uint32Array = new Uint32Array(0);

function release(): void {
  strs = [];
  // A valid empty index (a zero-length one would make `add` probe forever).
  slots = new Int32Array(2);
  hashes = new Int32Array(0);
  labIsNum = new Uint8Array(0);
  labKeyX = labValX = numH = msH = mlH = moH = mFileX = mBuildX = fNameX = fSysX = fFileX = new Uint32Array(0);
  mp = undefined;
  fnT = undefined;
}

function resetStrings(): void {
  strs = [];
  slots = new Int32Array(1024);
  hashes = new Int32Array(512);
  // A random basis: strings crafted to collide cannot make interning quadratic. The output does
  // not depend on it (indices are in first-use order).
  hashBasis = (Math.random() * TWO32) | 0;
}

/**
 * Interns a string in the table; returns its index.
 *
 * A hand-made hash index rather than a `Map<string, number>`: the strings of a freshly decoded
 * profile have no cached hash yet, and a Map also rehashes through the string objects each time
 * it grows. For the 41k function strings of a 200k-sample profile this took 5.6 ms instead of
 * 9 to 13 ms (CPU, min of 12 fresh profiles).
 */
function add(s: string): number {
  // FNV-1a, then a final mix: the index uses the low bits, which FNV-1a alone spreads poorly.
  let h = hashBasis;
  for (let k = 0; k < s.length; k++) h = Math.imul(h ^ s.charCodeAt(k), 0x01000193);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  const table = slots;
  const mask = table.length - 1;
  let b = h & mask;
  for (;;) {
    const x = table[b]!;
    if (x === 0) break;
    if (hashes[x - 1] === h && strs[x - 1] === s) return x - 1;
    b = (b + 1) & mask;
  }
  const i = strs.length;
  strs.push(s);
  if (i === hashes.length) {
    const grown = new Int32Array(Math.max(2 * i, 512));
    grown.set(hashes);
    hashes = grown;
  }
  hashes[i] = h;
  table[b] = i + 1;
  if (2 * (i + 1) > table.length) growSlots();
  return i;
}

/** Doubles the hash index (from the stored hashes: the strings are not read again). */
function growSlots(): void {
  const table = new Int32Array(2 * slots.length);
  const mask = table.length - 1;
  const hs = hashes;
  for (let k = 0; k < strs.length; k++) {
    let b = hs[k]! & mask;
    while (table[b] !== 0) b = (b + 1) & mask;
    table[b] = k + 1;
  }
  slots = table;
}

/** Size of the Label message of label row `r` (the tables passed in: see `varU32`). */
function labelSize(r: number, keyX: Uint32Array, valX: Uint32Array, isNum: Uint8Array, nh: Uint32Array): number {
  const kx = keyX[r]!;
  let n = kx ? 1 + sizeU32(kx) : 0;
  if (isNum[r]) {
    const l = nh[2 * r]!;
    const h = nh[2 * r + 1]!;
    if (l !== 0 || h !== 0) n += 1 + size64(l, h);
    const u = valX[r]!;
    if (u) n += 1 + sizeU32(u);
  } else {
    const sx = valX[r]!;
    if (sx) n += 1 + sizeU32(sx);
  }
  return n;
}

function mappingSize(m: number): number {
  const maps = mp!;
  let n = 1 + sizeU32(maps.mapping_id[m]!);
  if (msH[2 * m] || msH[2 * m + 1]) n += 1 + size64(msH[2 * m]!, msH[2 * m + 1]!);
  if (mlH[2 * m] || mlH[2 * m + 1]) n += 1 + size64(mlH[2 * m]!, mlH[2 * m + 1]!);
  if (moH[2 * m] || moH[2 * m + 1]) n += 1 + size64(moH[2 * m]!, moH[2 * m + 1]!);
  if (mFileX[m]) n += 1 + sizeU32(mFileX[m]!);
  if (mBuildX[m]) n += 1 + sizeU32(mBuildX[m]!);
  n += 2 * (maps.has_functions[m]! ? 1 : 0) + 2 * (maps.has_filenames[m]! ? 1 : 0) + 2 * (maps.has_line_numbers[m]! ? 1 : 0) + 2 * (maps.has_inline_frames[m]! ? 1 : 0);
  return n;
}

function fnSize(f: number): number {
  const fns = fnT!;
  return (
    1 +
    sizeU32(fns.function_id[f]!) +
    (fNameX[f] ? 1 + sizeU32(fNameX[f]!) : 0) +
    (fSysX[f] ? 1 + sizeU32(fSysX[f]!) : 0) +
    (fFileX[f] ? 1 + sizeU32(fFileX[f]!) : 0) +
    (fns.start_line[f] ? 1 + sizeNum(fns.start_line[f]!) : 0)
  );
}

function lineSize(fn: number, line: number, col: number): number {
  return (fn ? 1 + sizeU32(fn) : 0) + (line ? 1 + sizeNum(line) : 0) + (col ? 1 + sizeNum(col) : 0);
}

/** Writes a Line message at `o[p]`; returns the position after it. */
function varLine(o: Uint8Array, p: number, fn: number, line: number, col: number): number {
  o[p++] = 0x22;
  p = varU32(o, p, lineSize(fn, line, col));
  if (fn) {
    o[p++] = 0x08;
    p = varU32(o, p, fn);
  }
  if (line) {
    o[p++] = 0x10;
    p = varNum(o, p, line);
  }
  if (col) {
    o[p++] = 0x18;
    p = varNum(o, p, col);
  }
  return p;
}

function optBig(v: bigint): number {
  if (v === 0n) return 0;
  splitBig(v);
  return 1 + size64(sl, sh);
}

function putOptBig(tag: number, v: bigint): void {
  if (v === 0n) return;
  splitBig(v);
  out[w++] = tag;
  put64(sl, sh);
}
