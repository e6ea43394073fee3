/**
 * The pprof encoder's Sample messages written by WebAssembly, for mid-sized label-free profiles.
 *
 * Why: encoding a profile is usually the only time a short process (`profkit convert`) runs the
 * sample loops; in JavaScript they run cold, in the interpreter and baseline code, before the
 * optimizing compiler has taken them. The module of sample-writer.wat writes the same bytes, and
 * WebAssembly's baseline code is fast from its first iteration (the 166k-sample Rprof benchmark
 * convert: about 8 ms less main-thread CPU; docs/performance.md). Its hot paths are inlined by
 * hand (baseline code does not inline calls) and a sample whose values are the previous
 * sample's reuses their encoding. Samples with labels, few samples, many ids (where the JS loops,
 * once optimized, are faster), or no WebAssembly: encode.ts's JS loops.
 *
 * Bounded: the module's memory (the columns copied in, plus room for the largest possible
 * encoding of the samples) is at most `MAX_MEMORY_BYTES`; larger profiles take the JS loops.
 */

import { compileInlineWasm, instantiateWasm, type WasmMemory, type WasmModule } from '@profkit/core';
import { SAMPLE_WRITER_WASM_BASE64 } from './sample-writer-wasm.js';

/** Fewer samples than this are written by the JS loops (compiling and copying would not pay). */
export const MIN_WASM_SAMPLES = 4096;
/**
 * More location ids than this are written by the JS loops: on large profiles the optimizing
 * compiler takes the JS loops early and they run faster than the module's baseline code, which
 * also first copies the columns into fresh (page-faulted) memory. Measured in fresh processes
 * (encodeProfileChunks of generated profiles, load 3–6, so only roughly): 250k–1.2M ids the
 * module 15–30 ms faster, 2.5M ids 9 ms slower; the 200,000-sample bench profile (4.7M ids)
 * encoded in 254 ms instead of 67 ms.
 */
export const MAX_WASM_LOCATION_IDS = 1 << 20;
/** The most memory the module may use for one encoding (inputs and output). */
export const MAX_MEMORY_BYTES = 64 * 1024 * 1024;

const PAGE = 65536;

interface SampleWriterExports {
  memory: WasmMemory;
  writeSamples(nS: number, nT: number, offsets: number, ids: number, values: number, sampleStride: number, valueStride: number, out: number): number;
  largest(): number;
}

export type SamplePath = 'auto' | 'wasm' | 'js';
let forcedPath: SamplePath = 'auto';

/**
 * Testing and measuring: `'wasm'` makes the encoder write every label-free profile's samples in
 * WebAssembly whatever their number (within `MAX_MEMORY_BYTES`; failing when WebAssembly is
 * unavailable), `'js'` never; `'auto'` (the default) from `MIN_WASM_SAMPLES` samples on, up to
 * `MAX_WASM_LOCATION_IDS` ids, when the module compiles. Returns the previous setting.
 */
export function setSamplePath(path: SamplePath): SamplePath {
  const previous = forcedPath;
  forcedPath = path;
  return previous;
}

/** The compiled module, once per process (core's `compileInlineWasm`); null without WebAssembly or where compiling is refused. */
function sampleWriterModule(): WasmModule | null {
  return compileInlineWasm(SAMPLE_WRITER_WASM_BASE64);
}

/** The Sample messages, and the largest one's size (without its tag and length). */
export interface WrittenSamples {
  bytes: Uint8Array;
  largest: number;
}

/**
 * The Sample messages of `nS` label-free samples (location ids `ids[offsets[s]..offsets[s+1])`,
 * `nT` values each) as encode.ts's `writeSamples` writes them, or undefined when the JS loops are
 * to write them. Values are (lo, hi) uint32 halves: for `nT` ≤ 2 one array per sample type
 * (`v0`, `v1`), else `vh`, sample-major.
 */
export function writeSamplesInWasm(nS: number, nT: number, offsets: Uint32Array, ids: Uint32Array, vh: Uint32Array, v0: Uint32Array, v1: Uint32Array): WrittenSamples | undefined {
  if (forcedPath === 'js' || (forcedPath === 'auto' && nS < MIN_WASM_SAMPLES)) return undefined;
  const module = sampleWriterModule();
  if (module === null) {
    if (forcedPath === 'wasm') throw new Error('the pprof sample writer needs WebAssembly, which is unavailable here');
    return undefined;
  }
  const nIds = offsets[nS]!;
  // The largest encoding: per sample a tag and a 5-byte length, a tag and length for packed ids
  // and values, per id 6 bytes (tag and varint), per value 11.
  const outBound = nS * (12 + 11 * nT) + 6 * nIds + 16;
  const valueBytes = 8 * nS * nT;
  const offsetsAt = 0;
  const idsAt = 4 * (nS + 1);
  const valuesAt = idsAt + 4 * nIds;
  const outAt = valuesAt + valueBytes;
  const needed = outAt + outBound;
  if ((forcedPath === 'auto' && nIds > MAX_WASM_LOCATION_IDS) || needed > MAX_MEMORY_BYTES || offsets.length < nS + 1 || ids.length < nIds) return undefined;
  // A fresh instance per encoding: its memory is garbage once the encoding is written (a wasm
  // memory never shrinks, so a kept instance would hold the largest encoding's memory).
  let exports: SampleWriterExports;
  try {
    exports = instantiateWasm(module) as SampleWriterExports;
    exports.memory.grow(Math.ceil(needed / PAGE));
  } catch (e) {
    // The host refuses the memory (a RangeError under memory pressure, a browser's cap on wasm
    // memory): the JS loops need none of it.
    if (forcedPath === 'wasm') throw e;
    return undefined;
  }
  const memory = exports.memory.buffer;
  new Uint32Array(memory, offsetsAt, nS + 1).set(offsets.subarray(0, nS + 1));
  new Uint32Array(memory, idsAt, nIds).set(ids.subarray(0, nIds));
  let sampleStride: number;
  let valueStride: number;
  if (nT > 2) {
    new Uint32Array(memory, valuesAt, 2 * nS * nT).set(vh.subarray(0, 2 * nS * nT));
    sampleStride = 8 * nT;
    valueStride = 8;
  } else {
    if (nT > 0) new Uint32Array(memory, valuesAt, 2 * nS).set(v0.subarray(0, 2 * nS));
    if (nT > 1) new Uint32Array(memory, valuesAt + 8 * nS, 2 * nS).set(v1.subarray(0, 2 * nS));
    sampleStride = 8;
    valueStride = 8 * nS;
  }
  const end = exports.writeSamples(nS, nT, offsetsAt, idsAt, valuesAt, sampleStride, valueStride, outAt);
  // 0: offsets that decrease or end past the ids (a profile built by hand); the JS loops answer it.
  if (end === 0) return undefined;
  // A view, not a copy: the encoding holds the instance (and its memory) until it is written.
  return { bytes: new Uint8Array(memory, outAt, end - outAt), largest: exports.largest() };
}
