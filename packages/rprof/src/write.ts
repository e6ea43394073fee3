/**
 * The Rprof writer: a profile as the text R's profiler writes, so that R's own `summaryRprof()`
 * (and our reader) read it back with the same self/total numbers per function and per line.
 *
 * - one header per run (the real interval and flags from `.extensions.rprof.facts.runs`, or the
 *   interval from `.profile.period` when the profile comes from elsewhere);
 * - `#File N: path` lines right before the first trace line that uses them, numbered from 1 in
 *   order of first use, restarting after every header (as R does);
 * - one trace line per unit of the count sample type (`samples/count`), innermost frame first,
 *   each frame `[file#line ]"name" ` (the srcref precedes the function it is a line of);
 * - memory prefix and `"<GC>"` from the per-sample extension columns when present.
 *
 * What cannot be represented is dropped and reported as a warning, never written unreadably.
 */

import {
  ErrorCodes,
  ProfileIndex,
  ProfkitError,
  StringKeyedMap,
  locationFrames,
  type Profile,
  type Warning,
} from '@profkit/core';
import { newTraceLine, parseTraceLine } from './grammar.js';
import { ADAPTER_NAME } from './read.js';

export interface RprofWriteOptions {
  /** Sample type (`type` or `type/unit`) whose value is the number of lines per sample. */
  countType?: string;
  /** Interval in microseconds when the profile does not say. */
  intervalUs?: number;
  /** Refuse to write more trace lines than this (default 100,000,000). */
  maxLines?: number;
  /** Bytes per output chunk (default 1 MiB). */
  chunkSize?: number;
}

interface RunInfo {
  intervalUs: number;
  memory: boolean;
  gc: boolean;
  line: boolean;
}

interface FrameText {
  /** `"name" ` */
  quoted: string;
  path: string | undefined;
  /** The path's number among the profile's distinct paths (-1: no path). */
  pathId: number;
  line: number;
}

type NumCol = ArrayLike<number | bigint>;

function numCol(c: unknown, n: number): NumCol | undefined {
  if (c && (ArrayBuffer.isView(c) || Array.isArray(c)) && (c as ArrayLike<unknown>).length === n) return c as NumCol;
  return undefined;
}

function asRuns(v: unknown): RunInfo[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: RunInfo[] = [];
  for (const r of v) {
    if (!r || typeof r !== 'object') return undefined;
    const o = r as Record<string, unknown>;
    const iv = Number(o.interval_us);
    if (!Number.isSafeInteger(iv) || iv <= 0) return undefined;
    out.push({ intervalUs: iv, memory: o.memory_profiling === true, gc: o.gc_profiling === true, line: o.line_profiling === true });
  }
  return out.length > 0 ? out : undefined;
}

const probe = newTraceLine();

/** True when `"name" ` followed by another frame parses back to `name`. */
function nameRoundTrips(name: string): boolean {
  if (/[\r\n]/.test(name)) return false;
  try {
    parseTraceLine(`"${name}" "x" `, probe, undefined, 1);
    return probe.names.length === 2 && probe.names[0] === name && probe.truncated === undefined;
  } catch {
    return false;
  }
}

/** Chooses how many trace lines each sample becomes. */
function lineCounter(p: Profile, options: RprofWriteOptions, intervalNs: (i: number) => bigint, warnings: Warning[]): (i: number) => bigint {
  const { type, unit } = p.sample_types;
  const vals = p.samples['.values'];
  const find = (name: string) => type.findIndex((t, i) => t === name || `${t}/${unit[i]}` === name);
  if (options.countType !== undefined) {
    const k = find(options.countType);
    if (k < 0) throw new ProfkitError(ErrorCodes.USAGE, `no sample type ${options.countType} (have ${type.map((t, i) => `${t}/${unit[i]}`).join(', ')})`, { option: 'countType' });
    if (unit[k] === 'nanoseconds') return (i) => roundDiv(vals[k]![i]!, intervalNs(i));
    return (i) => vals[k]![i]!;
  }
  let k = type.findIndex((t, i) => t === 'samples' && unit[i] === 'count');
  if (k < 0) k = unit.indexOf('count');
  if (k >= 0) return (i) => vals[k]![i]!;
  k = unit.indexOf('nanoseconds');
  if (k >= 0) {
    warnings.push({ code: 'PROFKIT_W_RPROF_DERIVED_COUNT', message: `no count sample type: lines per sample = ${type[k]}/nanoseconds ÷ interval, rounded` });
    return (i) => roundDiv(vals[k]![i]!, intervalNs(i));
  }
  if (vals.length === 0) return () => 1n;
  warnings.push({ code: 'PROFKIT_W_RPROF_DERIVED_COUNT', message: `no count sample type: writing ${type[0]}/${unit[0]} values as numbers of lines` });
  return (i) => vals[0]![i]!;
}

function roundDiv(v: bigint, d: bigint): bigint {
  if (d <= 0n) return v;
  return (v + d / 2n) / d;
}

/** Writes `p` as Rprof text. Warnings are complete when this returns; the text is produced lazily. */
export function writeRprof(p: Profile, options: RprofWriteOptions = {}): { data: AsyncIterable<Uint8Array>; warnings: Warning[] } {
  const warnings: Warning[] = [];
  const n = p.samples.value.length;
  const ext = p['.extensions'][ADAPTER_NAME];
  const es = ext?.samples ?? {};
  let runs = asRuns(ext?.facts?.runs);
  let runCol = numCol(es.run, n);
  if (runs && runCol) {
    for (let i = 0; i < n; i++) {
      const r = Number(runCol[i]);
      if (!(r >= 0 && r < runs.length)) {
        warnings.push({ code: 'PROFKIT_W_RPROF_EXTENSION', message: `ignoring .extensions.rprof run column: sample ${i} names run ${r} of ${runs.length}` });
        runs = undefined;
        runCol = undefined;
        break;
      }
    }
  } else if (es.run !== undefined) {
    warnings.push({ code: 'PROFKIT_W_RPROF_EXTENSION', message: 'ignoring .extensions.rprof samples.run: it does not fit the profile or facts.runs' });
    runs = undefined;
    runCol = undefined;
  } else if (runs && runs.length > 1) {
    // e.g. read with aggregate: samples of several runs were merged; one header for all.
    runs = [runs[0]!];
  }
  if (!runs) {
    let iv = options.intervalUs;
    const pt = p['.profile'].period_type;
    if (iv === undefined && pt && pt.unit === 'nanoseconds' && p['.profile'].period > 0n) {
      iv = Math.max(1, Number((p['.profile'].period + 500n) / 1000n));
    }
    if (iv === undefined && pt && pt.unit === 'microseconds' && p['.profile'].period > 0n) iv = Number(p['.profile'].period);
    if (iv === undefined) {
      iv = 20000;
      warnings.push({ code: 'PROFKIT_W_RPROF_INTERVAL', message: 'the profile has no period in (nano/micro)seconds: wrote sample.interval=20000 (R’s default)' });
    }
    runs = [{ intervalUs: iv, memory: false, gc: false, line: false }];
    runCol = undefined;
  }
  const runOf = (i: number): number => (runCol ? Number(runCol[i]) : 0);
  const small = numCol(es.small, n);
  const big = numCol(es.big, n);
  const nodes = numCol(es.nodes, n);
  const dups = numCol(es.dups, n);
  const hasMemCols = !!(small && big && nodes && dups);
  const gcCol = numCol(es.gc, n);
  const memType = p.sample_types.type.findIndex((t, i) => t === 'memory' && p.sample_types.unit[i] === 'bytes');
  if (!hasMemCols && runs.some((r) => r.memory)) {
    warnings.push({
      code: 'PROFKIT_W_RPROF_MEMORY_DROPPED',
      message: 'the per-sample memory columns (.extensions.rprof.samples small/big/nodes/dups) are absent (e.g. after aggregation): written without memory profiling',
    });
  } else if (!hasMemCols && memType >= 0) {
    warnings.push({ code: 'PROFKIT_W_RPROF_MEMORY_DROPPED', message: 'sample type memory/bytes cannot be written without the per-sample memory columns: dropped' });
  }
  const runInfo: RunInfo[] = runs.map((r) => ({ ...r, memory: r.memory && hasMemCols, gc: r.gc }));
  // Any GC flag set in a run forces its GC header flag; any srcref forces line profiling.
  const index = new ProfileIndex(p);
  const nLoc = p.locations.location_id.length;
  const locText: (FrameText[] | undefined)[] = new Array(nLoc);
  let droppedFrames = 0;
  let droppedLines = 0;
  const renamed = new StringKeyedMap<string>();
  // Paths numbered once per location row, through StringKeyedMap (a Map hashes a path longer than
  // 16,383 units by its length alone); each run's `#File` numbers are then kept by path number.
  const pathIds = new StringKeyedMap<number>();
  const pathIdOf = (path: string): number => {
    let id = pathIds.get(path);
    if (id === undefined) pathIds.set(path, (id = pathIds.size));
    return id;
  };
  const textOf = (row: number): FrameText[] => {
    let t = locText[row];
    if (t) return t;
    t = [];
    for (const fr of locationFrames(p, index, row)) {
      let name = fr.name || fr.systemName;
      if (!name) {
        droppedFrames++;
        continue;
      }
      if (!nameRoundTrips(name)) {
        const fixed = name.replace(/[\r\n]/g, ' ').replace(/"/g, "'");
        renamed.set(name, name);
        name = fixed;
      }
      const hasLine = fr.line > 0 && fr.symbolized;
      if (fr.line > 0 && !fr.symbolized) droppedLines++;
      t.push({ quoted: `"${name}" `, path: hasLine ? fr.filename : undefined, pathId: hasLine ? pathIdOf(fr.filename) : -1, line: hasLine ? fr.line : 0 });
    }
    locText[row] = t;
    return t;
  };
  // Pre-pass: warnings and line counts.
  const ivNs = (i: number) => BigInt(runs![runOf(i)]!.intervalUs) * 1000n;
  const countOf = lineCounter(p, options, ivNs, warnings);
  const maxLines = BigInt(options.maxLines ?? 100_000_000);
  let total = 0n;
  let nonPositive = 0;
  let emptyDropped = 0;
  const { offsets, location_id } = p.samples.locations;
  const usesLines = new Uint8Array(runs.length);
  const usesGc = new Uint8Array(runs.length);
  for (let i = 0; i < n; i++) {
    const c = countOf(i);
    if (c <= 0n) {
      nonPositive++;
      continue;
    }
    const r = runOf(i);
    let frames = 0;
    for (let j = offsets[i]!; j < offsets[i + 1]!; j++) {
      const row = index.locations.get(location_id[j]!);
      if (row < 0) continue;
      for (const f of textOf(row)) {
        frames++;
        if (f.path !== undefined) usesLines[r] = 1;
      }
    }
    const gc = gcCol ? Number(gcCol[i]) !== 0 : false;
    if (gc) usesGc[r] = 1;
    if (frames === 0 && !gc && !runInfo[r]!.memory) {
      emptyDropped++;
      continue;
    }
    total += c;
    if (total > maxLines) {
      throw new ProfkitError(ErrorCodes.LIMIT, `writing would produce more than ${maxLines} Rprof lines (a sample value of ${c})`, { option: 'maxLines' });
    }
  }
  runs.forEach((_, r) => {
    if (usesLines[r]) runInfo[r]!.line = true;
    if (usesGc[r]) runInfo[r]!.gc = true;
  });
  if (droppedFrames > 0) warnings.push({ code: 'PROFKIT_W_RPROF_FRAME_DROPPED', message: `${droppedFrames} frame(s) without function name or address dropped (Rprof frames are names)` });
  if (droppedLines > 0) warnings.push({ code: 'PROFKIT_W_RPROF_LINE_DROPPED', message: `${droppedLines} line number(s) of locations without function dropped` });
  if (renamed.size > 0) {
    warnings.push({
      code: 'PROFKIT_W_RPROF_NAME_CHANGED',
      message: `${renamed.size} function name(s) would not read back unambiguously (line breaks, or '" ' followed by a frame); written with ' for " and spaces for line breaks: ${[...renamed.values()].slice(0, 3).map((s) => JSON.stringify(s)).join(', ')}`,
    });
  }
  if (nonPositive > 0) warnings.push({ code: 'PROFKIT_W_RPROF_SAMPLE_DROPPED', message: `${nonPositive} sample(s) with a count ≤ 0 not written` });
  if (emptyDropped > 0) {
    warnings.push({
      code: 'PROFKIT_W_RPROF_SAMPLE_DROPPED',
      message: `${emptyDropped} sample(s) with an empty stack not written (R writes empty-stack samples only with memory profiling)`,
    });
  }
  const chunkSize = options.chunkSize ?? 1 << 20;
  async function* generate(): AsyncGenerator<Uint8Array> {
    const enc = new TextEncoder();
    let buf: string[] = [];
    let len = 0;
    const out = (s: string): Uint8Array | undefined => {
      buf.push(s);
      len += s.length;
      if (len >= chunkSize) {
        const b = enc.encode(buf.join(''));
        buf = [];
        len = 0;
        return b;
      }
      return undefined;
    };
    let curRun = -1;
    // `#File` number of each path number in the current run (0: none yet).
    let fileNo: number[] = [];
    let fileCount = 0;
    const parts: string[] = [];
    for (let i = 0; i < n; i++) {
      const c = countOf(i);
      if (c <= 0n) continue;
      const r = runOf(i);
      const info = runInfo[r]!;
      const gc = gcCol ? Number(gcCol[i]) !== 0 : false;
      parts.length = 0;
      let fileLines = '';
      let frames = 0;
      for (let j = offsets[i]!; j < offsets[i + 1]!; j++) {
        const row = index.locations.get(location_id[j]!);
        if (row < 0) continue;
        for (const f of textOf(row)) {
          frames++;
          if (f.path !== undefined) {
            let no = fileNo[f.pathId];
            if (no === undefined && r === curRun) {
              no = ++fileCount;
              fileNo[f.pathId] = no;
              fileLines += `#File ${no}: ${f.path}\n`;
            }
            if (no !== undefined) parts.push(`${no}#${f.line} `);
          }
          parts.push(f.quoted);
        }
      }
      if (frames === 0 && !gc && !info.memory) continue;
      if (r !== curRun) {
        // New run: header first, then recompute the #File lines with fresh numbering.
        curRun = r;
        fileNo = [];
        fileCount = 0;
        const h = `${info.memory ? 'memory profiling: ' : ''}${info.gc ? 'GC profiling: ' : ''}${info.line ? 'line profiling: ' : ''}sample.interval=${info.intervalUs}\n`;
        const b = out(h);
        if (b) yield b;
        i--; // redo this sample within the new run
        continue;
      }
      let prefix = '';
      if (info.memory) prefix = `:${Number(small![i])}:${Number(big![i])}:${Number(nodes![i])}:${Number(dups![i])}:`;
      if (gc && info.gc) prefix += '"<GC>" ';
      const body = parts.join('');
      let b = out(fileLines + prefix + body + '\n');
      if (b) yield b;
      if (c > 1n) {
        const repeatPrefix = info.memory ? `:${Number(small![i])}:${Number(big![i])}:${Number(nodes![i])}:0:` + (gc && info.gc ? '"<GC>" ' : '') : prefix;
        const line = repeatPrefix + body + '\n';
        for (let k = 1n; k < c; k++) {
          b = out(line);
          if (b) yield b;
        }
      }
    }
    if (curRun === -1) {
      const info = runInfo[0]!;
      const b = out(`${info.memory ? 'memory profiling: ' : ''}${info.gc ? 'GC profiling: ' : ''}${info.line ? 'line profiling: ' : ''}sample.interval=${info.intervalUs}\n`);
      if (b) yield b;
    }
    if (len > 0) yield enc.encode(buf.join(''));
  }
  return { data: generate(), warnings };
}

/** Writes `p` as Rprof text into one string (convenience for tests and small profiles). */
export async function writeRprofText(p: Profile, options: RprofWriteOptions = {}): Promise<{ text: string; warnings: Warning[] }> {
  const { data, warnings } = writeRprof(p, options);
  const dec = new TextDecoder();
  let text = '';
  for await (const c of data) text += dec.decode(c, { stream: true });
  text += dec.decode();
  return { text, warnings };
}
