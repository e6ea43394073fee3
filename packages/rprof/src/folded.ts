/**
 * Brendan Gregg's folded ("collapsed") stacks: one line per distinct stack, frames root first
 * separated by `;`, then a space and the value: `main;f;g 12`. Input of flamegraph.pl,
 * speedscope, inferno and others (the R package's issue #8).
 */

import {
  ErrorCodes,
  GrowableBigInt64,
  GrowableUint32,
  ProfileIndex,
  ProfkitError,
  createProfile,
  defaultSampleTypeIndex,
  findSampleType,
  locationFrames,
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

function frameLabel(name: string): { label: string; changed: boolean } {
  const label = name.replace(/[;\r\n]/g, (c) => (c === ';' ? ':' : ' '));
  return { label, changed: label !== name };
}

/** Writes a profile as folded stacks (identical stacks merged, in order of first appearance). */
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
  const values = p.samples['.values'][k];
  const n = p.samples.value.length;
  const index = new ProfileIndex(p);
  const labels: string[][] = new Array(p.locations.location_id.length);
  const gcCol = options.gcFrame === false ? undefined : p['.extensions'][ADAPTER_NAME]?.samples?.gc;
  let changed = 0;
  let empty = 0;
  const order: string[] = [];
  const sums = new Map<string, bigint>();
  const { offsets, location_id } = p.samples.locations;
  for (let i = 0; i < n; i++) {
    const v = values ? values[i]! : 1n;
    if (v === 0n) continue;
    const frames: string[] = [];
    for (let j = offsets[i]!; j < offsets[i + 1]!; j++) {
      const row = index.locations.get(location_id[j]!);
      if (row < 0) continue;
      let l = labels[row];
      if (!l) {
        l = [];
        for (const f of locationFrames(p, index, row)) {
          const name = f.name || f.systemName || '[unknown]';
          const { label, changed: c } = frameLabel(name);
          if (c) changed++;
          l.push(label);
        }
        labels[row] = l;
      }
      for (const s of l) frames.push(s);
    }
    if (gcCol && Number((gcCol as ArrayLike<number>)[i]) !== 0) frames.unshift('<GC>');
    if (frames.length === 0) {
      empty++;
      continue;
    }
    frames.reverse();
    const key = frames.join(';');
    const prev = sums.get(key);
    if (prev === undefined) {
      order.push(key);
      sums.set(key, v);
    } else sums.set(key, prev + v);
  }
  if (changed > 0) warnings.push({ code: 'PROFKIT_W_FOLDED_NAME_CHANGED', message: `${changed} frame name(s) contained ';' or line breaks, written as ':' / space` });
  if (empty > 0) warnings.push({ code: 'PROFKIT_W_FOLDED_EMPTY_STACK', message: `${empty} sample(s) with an empty stack not written (folded lines need at least one frame)` });
  let text = '';
  const parts: string[] = [];
  for (const key of order) parts.push(`${key} ${sums.get(key)!}\n`);
  text = parts.join('');
  return { text, warnings };
}

/**
 * Reads folded stacks: each non-empty line `frame;frame;... value`, root first. One sample per
 * line, sample type `samples/count`; functions are identified by name.
 */
export async function readFoldedChunks(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: { fileName?: string; sampleType?: { type: string; unit: string } } = {}): Promise<{ profile: Profile; warnings: Warning[] }> {
  const file = options.fileName;
  const fnIndex = new Map<string, number>();
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
        stack.length = 0;
        for (let f = frames.length - 1; f >= 0; f--) {
          const name = frames[f]!;
          if (name === '') throw new ProfkitError(ErrorCodes.PARSE, `line ${lineNo}: empty frame name`, { file, line: lineNo, rule: 'frames are non-empty' });
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
