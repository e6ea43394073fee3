/**
 * Brendan Gregg's folded ("collapsed") stacks: one line per distinct stack, frames root first
 * separated by `;`, then a space and the value: `main;f;g 12`. Input of flamegraph.pl,
 * speedscope, inferno and others (the R package's issue #8).
 */

import {
  ErrorCodes,
  GrowableBigInt64,
  GrowableUint32,
  limitError,
  limitValue,
  type ReadLimits,
  ProfkitError,
  StringKeyedMap,
  createProfile,
  defaultSampleTypeIndex,
  findSampleType,
  toFolded,
  type Profile,
  type Warning,
} from '@profkit/core';
import { LineSplitter } from './lines.js';
import { ADAPTER_NAME } from './read.js';

export interface FoldedWriteOptions {
  /** Sample type to write (`type`, `type/unit` or index); default `samples/count` if present, else the default sample type. */
  sampleType?: string;
  /** Add a `<GC>` leaf frame to samples flagged as garbage collection by the Rprof reader (default true). */
  gcFrame?: boolean;
}

/**
 * Writes a profile as folded stacks with core's `toFolded` (identical stacks merged, lines in
 * code-unit order of the stack text). Adds a `<GC>` leaf to the samples the Rprof reader
 * flagged as garbage collection, and warns about what the format cannot hold.
 */
export function writeFolded(p: Profile, options: FoldedWriteOptions = {}): { text: string; warnings: Warning[] } {
  const warnings: Warning[] = [];
  const { type, unit } = p.sample_types;
  let k: number;
  if (options.sampleType !== undefined) {
    k = findSampleType(p, options.sampleType);
    if (k < 0) throw new ProfkitError(ErrorCodes.USAGE, `no sample type ${options.sampleType} (have ${type.map((t, i) => `${t}/${unit[i]}`).join(', ')})`, { option: 'sampleType' });
  } else {
    k = type.findIndex((t, i) => t === 'samples' && unit[i] === 'count');
    if (k < 0) k = defaultSampleTypeIndex(p);
  }
  if (k < 0) return { text: '', warnings: [{ code: 'PROFKIT_W_FOLDED_NO_SAMPLE_TYPE', message: 'the profile has no sample types: nothing to write' }] };
  const gcCol = options.gcFrame === false ? undefined : (p['.extensions'][ADAPTER_NAME]?.samples?.gc as ArrayLike<number> | undefined);
  const withGc = gcCol && gcCol.length === p.samples.value.length && Array.prototype.some.call(gcCol, (g: number) => Number(g) !== 0) ? addGcLeaf(p, gcCol) : p;
  const values = withGc.samples['.values'][k]!;
  const { offsets } = withGc.samples.locations;
  let empty = 0;
  for (let i = 0; i < values.length; i++) if (values[i] !== 0n && offsets[i + 1] === offsets[i]) empty++;
  let changed = 0;
  for (const name of withGc.functions.name) if (/[;\r\n]/.test(name)) changed++;
  if (changed > 0) warnings.push({ code: 'PROFKIT_W_FOLDED_NAME_CHANGED', message: `${changed} function name(s) contain ';' or line breaks, written as ':' / space` });
  if (empty > 0) warnings.push({ code: 'PROFKIT_W_FOLDED_EMPTY_STACK', message: `${empty} sample(s) with an empty stack not written (folded lines need at least one frame)` });
  return { text: toFolded(withGc, k), warnings };
}

/** A copy of `p` whose GC-flagged samples get an innermost `<GC>` frame. */
function addGcLeaf(p: Profile, gc: ArrayLike<number>): Profile {
  const nLoc = p.locations.location_id.length;
  let maxFn = 0;
  for (const id of p.functions.function_id) if (id > maxFn) maxFn = id;
  let maxLoc = 0;
  for (const id of p.locations.location_id) if (id > maxLoc) maxLoc = id;
  const fnId = maxFn + 1;
  const locId = maxLoc + 1;
  const grow = <T extends Uint32Array | Float64Array | BigUint64Array | Uint8Array>(a: T, v: number | bigint): T => {
    const out = new (a.constructor as new (n: number) => T)(a.length + 1);
    out.set(a as never);
    (out as unknown as (number | bigint)[])[a.length] = v;
    return out;
  };
  const l = p.locations;
  const inl = l['.inline_offsets'];
  const { offsets, location_id } = p.samples.locations;
  const n = p.samples.value.length;
  const newOffsets = new Uint32Array(n + 1);
  const ids = new GrowableUint32(location_id.length + 16);
  for (let i = 0; i < n; i++) {
    if (Number(gc[i]) !== 0) ids.push(locId);
    ids.pushAll(location_id.subarray(offsets[i]!, offsets[i + 1]!));
    newOffsets[i + 1] = ids.length;
  }
  return createProfile({
    sample_types: p.sample_types,
    samples: { ...p.samples, locations: { offsets: newOffsets, location_id: ids.finish() } },
    locations: {
      location_id: grow(l.location_id, locId),
      function_id: grow(l.function_id, fnId),
      line: grow(l.line, 0),
      '.column': grow(l['.column'], 0),
      '.address': grow(l['.address'], 0n),
      '.mapping_id': grow(l['.mapping_id'], 0),
      '.is_folded': grow(l['.is_folded'], 0),
      '.inline_offsets': grow(inl, inl[nLoc]!),
    },
    functions: {
      function_id: grow(p.functions.function_id, fnId),
      name: [...p.functions.name, '<GC>'],
      system_name: [...p.functions.system_name, '<GC>'],
      filename: [...p.functions.filename, ''],
      start_line: grow(p.functions.start_line, 0),
    },
    '.inline_lines': p['.inline_lines'],
    '.mappings': p['.mappings'],
    '.labels': p['.labels'],
    '.profile': p['.profile'],
    '.extensions': p['.extensions'],
  });
}

/**
 * Reads folded stacks: each non-empty line `frame;frame;... value`, root first. One sample per
 * line, sample type `samples/count`; functions are identified by name.
 */
export async function readFoldedChunks(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: { fileName?: string; sampleType?: { type: string; unit: string }; limits?: ReadLimits } = {}): Promise<{ profile: Profile; warnings: Warning[] }> {
  const file = options.fileName;
  const maxFrames = limitValue(options.limits, 'maxFramesPerStack');
  const maxString = limitValue(options.limits, 'maxStringLength');
  const maxSamples = limitValue(options.limits, 'maxSamples');
  // Names can be long (V8 hashes those by length only): StringKeyedMap keeps lookups O(1).
  const fnIndex = new StringKeyedMap<number>();
  const fnName: string[] = [];
  const offsets = new GrowableUint32(1024);
  offsets.push(0);
  const ids = new GrowableUint32(4096);
  const vals = new GrowableBigInt64(1024);
  const stack: number[] = [];
  const splitter = new LineSplitter(
    {
      line(text, lineNo) {
        if (text.trim() === '') return;
        const m = /^(.*\S)[ \t]+(-?\d+)[ \t]*$/.exec(text);
        if (!m) {
          throw new ProfkitError(ErrorCodes.PARSE, `line ${lineNo}: expected "frame;frame;... count"`, { file, line: lineNo, rule: 'folded line := frames " " integer' });
        }
        let v: bigint;
        try {
          v = BigInt(m[2]!);
        } catch {
          throw new ProfkitError(ErrorCodes.PARSE, `line ${lineNo}: bad count ${m[2]}`, { file, line: lineNo, rule: 'integer count' });
        }
        if (v < -(1n << 63n) || v >= 1n << 63n) throw new ProfkitError(ErrorCodes.RANGE, `line ${lineNo}: count ${m[2]} does not fit in int64`, { file, line: lineNo, rule: 'int64 values' });
        const frames = m[1]!.split(';');
        if (frames.length > maxFrames) throw limitError('maxFramesPerStack', `line ${lineNo}: a stack of ${frames.length} frames`, maxFrames, { file, line: lineNo });
        if (vals.length >= maxSamples) throw limitError('maxSamples', `sample ${vals.length + 1}`, maxSamples, { file, line: lineNo });
        stack.length = 0;
        for (let f = frames.length - 1; f >= 0; f--) {
          const name = frames[f]!;
          if (name === '') throw new ProfkitError(ErrorCodes.PARSE, `line ${lineNo}: empty frame name`, { file, line: lineNo, rule: 'frames are non-empty' });
          if (name.length > maxString) throw limitError('maxStringLength', `line ${lineNo}: a frame name of ${name.length} characters`, maxString, { file, line: lineNo });
          let id = fnIndex.get(name);
          if (id === undefined) {
            id = fnName.length + 1;
            fnIndex.set(name, id);
            fnName.push(name);
          }
          stack.push(id);
        }
        ids.pushAll(stack);
        offsets.push(ids.length);
        vals.push(v);
      },
    },
    { file },
  );
  for await (const c of chunks as AsyncIterable<Uint8Array>) splitter.push(c);
  splitter.end();
  const nFn = fnName.length;
  const value = vals.finish();
  const st = options.sampleType ?? { type: 'samples', unit: 'count' };
  return {
    profile: createProfile({
      sample_types: { type: [st.type], unit: [st.unit] },
      samples: { value, locations: { offsets: offsets.finish(), location_id: ids.finish() }, '.values': [value] },
      // One location per function (line unknown): location id = function id.
      locations: { location_id: Uint32Array.from({ length: nFn }, (_, i) => i + 1), function_id: Uint32Array.from({ length: nFn }, (_, i) => i + 1) },
      functions: {
        function_id: Uint32Array.from({ length: nFn }, (_, i) => i + 1),
        name: fnName,
        system_name: fnName.slice(),
        filename: new Array<string>(nFn).fill(''),
        start_line: new Float64Array(nFn),
      },
    }),
    warnings: [],
  };
}
