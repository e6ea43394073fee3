/**
 * The Rprof reader: turns R's `Rprof()` output into a profkit profile, line by line, so that it
 * works the same on a whole buffer and on a stream of chunks of any size.
 *
 * Model mapping (see docs/formats/rprof.md):
 * - sample types `samples/count` (1 per trace line), `time/nanoseconds` (the run's interval),
 *   and with memory profiling `memory/bytes` (summaryRprof's formula, see `memoryDelta`).
 * - functions: name = R's name verbatim, system_name the same except for names pprof would rewrite
 *   (`<Anonymous>`: empty, see `rSystemName`); filename = path of the srcrefs that point into the
 *   function; a frame without srcref gets the file of its name when that name was seen with
 *   srcrefs into exactly one file (fixes the R package's bug #10), unless the name is one R gives
 *   to calls rather than functions (`<Anonymous>`, `FUN`, `.local`: `CALL_NAMES`).
 * - locations: (function, line); line = the srcref preceding the name, 0 without one.
 * - `"<GC>"` is a per-sample flag, not a function; memory columns, GC flag and run index are
 *   per-sample columns of `profile['.extensions'].rprof`.
 */

import {
  ErrorCodes,
  GrowableBigInt64,
  GrowableFloat64,
  GrowableUint32,
  GrowableUint8,
  ProfkitError,
  StringKeyedMap,
  createProfile,
  gunzipBounded,
  isGzip,
  limitError,
  limitValue,
  recordReaderProof,
  type ProvableRule,
  type ReadLimits,
  type Column,
  type FactValue,
  type Profile,
  type ReadInput,
  type Warning,
} from '@profkit/core';
import { FILE_RE, newTraceLine, parseHeader, parseTraceLine, type Header, type TraceLine } from './grammar.js';
import { newIndexedLineSplitter } from './line-index.js';
import { LineSplitter } from './lines.js';
import { CALL_NAMES, rSystemName } from './names.js';

export const ADAPTER_NAME = 'rprof';

export interface RprofReadOptions {
  /** File name for messages. */
  fileName?: string;
  /**
   * Merge samples with identical stacks (and GC flag), across runs, into one sample whose values
   * are summed. Memory then grows with the number of distinct stacks, not with the file; the
   * per-sample memory and run columns are dropped (the `memory/bytes` and time values are summed;
   * `facts.runs` is kept).
   * Default false: one sample per trace line, so counts and order are exact.
   */
  aggregate?: boolean;
  /**
   * Give a frame without srcref the file of its function when the name was seen with srcrefs
   * into exactly one file (default true; never for `<Anonymous>`, `FUN` and `.local`, which name
   * calls, not functions). False reproduces the R package's identity (name, file).
   */
  resolveFiles?: boolean;
  /** Longest accepted line in characters (default 64 Mi). */
  maxLineLength?: number;
  /** `maxFramesPerStack`, `maxStringLength` (one frame name) and `maxSamples` (core's `READ_LIMITS` by default). */
  limits?: ReadLimits;
}

export interface RprofRun {
  header: string;
  interval_us: number;
  memory_profiling: boolean;
  gc_profiling: boolean;
  line_profiling: boolean;
  /** 1-based line of the header in the file. */
  line: number;
}

/**
 * A copy of `s` that does not keep its parent alive: V8 represents `slice()` results as views
 * of the sliced string, so a name sliced from a 1 MiB chunk would retain the whole chunk.
 */
function detach(s: string): string {
  return (' ' + s).slice(1);
}

/** Distinct stack texts remembered per run (bounds the cache's memory). */
const MAX_CACHED_STACKS = 65536;

interface RawFrameKey {
  name: number; // index into names
  path: number; // index into paths + 1, 0 = no srcref
  line: number;
}

/**
 * Incremental parser state. `line()` consumes one text line; `finish()` builds the profile.
 */
export class RprofParser {
  readonly warnings: Warning[] = [];
  private readonly file: string | undefined;
  private readonly aggregate: boolean;
  private readonly resolveFiles: boolean;
  private readonly maxFrames: number;
  private readonly maxString: number;
  private readonly maxSamples: number;
  private readonly maxTotalFrames: number;
  private readonly maxRunLines: number;
  /** Header and #File lines so far (each an entry of facts.runs or facts.files). */
  private runLines = 0;

  private readonly runs: RprofRun[] = [];
  private header: Header | undefined;
  private fileTable = new Map<number, number>(); // #File number -> path index (current run)
  private readonly filesFact: { run: number; number: number; path: string }[] = [];

  private readonly names: string[] = [];
  private readonly nameIndex = new StringKeyedMap<number>();
  private readonly paths: string[] = [];
  private readonly pathIndex = new StringKeyedMap<number>();
  private readonly rawKeys: RawFrameKey[] = [];
  /** Per name index: (path·2^32 + line) → raw frame id. */
  private readonly rawIndex: Map<number, number>[] = [];
  private runTime = 0n;
  /** For each name index, the set of path indices seen with a srcref (first two suffice). */
  private readonly namePaths = new Map<number, number[]>();

  // Distinct stacks (raw frame ids, remapped in finish()) with their GC flag, interned by
  // `stackKey`: a sample then costs the 4 bytes of its stack number while reading (plus its
  // memory columns with memory profiling), however deep its stack and however often repeated;
  // its count, time, run and GC columns are made in finish() from the runs and the stack.
  private readonly stackOffsets = new GrowableUint32(1024);
  private readonly stackFrames = new GrowableUint32(8192);
  private readonly stackGc = new GrowableUint8(1024);
  private readonly stackIndex = new StringKeyedMap<number>();
  /** Stack number of each sample. */
  private readonly sampleStack = new GrowableUint32(1024);
  /** Frames of all samples' stacks together: the length of the profile's location column. */
  private totalFrames = 0;
  /** The first sample of each run (without `aggregate`). */
  private readonly runStarts: number[] = [];
  // Summed values, only with `aggregate` (otherwise made in finish(): the memory value from the
  // memory columns, which exist once a run has memory profiling).
  private readonly counts = new GrowableBigInt64(1024);
  private readonly times = new GrowableBigInt64(1024);
  private readonly mems = new GrowableBigInt64(1024);
  private readonly colSmall = new GrowableFloat64(1024);
  private readonly colBig = new GrowableFloat64(1024);
  private readonly colNodes = new GrowableFloat64(1024);
  private readonly colDups = new GrowableFloat64(1024);
  /** With `aggregate`: stack number → its sample. */
  private readonly aggIndex = new Map<number, number>();
  private anyMemory = false;
  private anyGc = false;

  private prevMem: { small: number; big: number; nodes: number } | undefined;
  private readonly trace: TraceLine = newTraceLine();
  /** The raw frame ids of the line being recorded (reused: written in place, cut to length). */
  private readonly frameIds: number[] = [];
  /** Trace text (after the memory prefix) → stack number, for the current run's file table. */
  private readonly cache = new StringKeyedMap<number>();
  /**
   * For the line index (line-index.ts), which remembers the entry of each distinct line itself:
   * `epoch` changes whenever `cache` is cleared (the entries it remembered are then stale), and
   * `lineEntry` is the stack the last `line()` recorded through `cache` (-1 when it did not, so a
   * repeat of the line must be parsed again). @internal
   */
  epoch = 1;
  lineEntry = -1;
  private lastKey: string | undefined;
  private lastEntry = 0;
  private memSmall = 0;
  private memBig = 0;
  private memNodes = 0;
  private memDups = 0;
  private truncatedLines = 0;
  private firstTruncated: { line: number; why: string } | undefined;
  private lineCount = 0;

  constructor(options: RprofReadOptions = {}) {
    this.file = options.fileName;
    this.aggregate = options.aggregate ?? false;
    this.resolveFiles = options.resolveFiles ?? true;
    this.maxFrames = limitValue(options.limits, 'maxFramesPerStack');
    this.maxString = limitValue(options.limits, 'maxStringLength');
    this.maxSamples = limitValue(options.limits, 'maxSamples');
    this.maxTotalFrames = limitValue(options.limits, 'maxTotalFrames');
    this.maxRunLines = limitValue(options.limits, 'maxRunLines');
    this.stackOffsets.push(0);
  }

  line(text: string, lineNo: number): void {
    this.lineCount = lineNo;
    this.lineEntry = -1;
    if (this.header === undefined) {
      const h = parseHeader(text);
      if (!h) {
        throw new ProfkitError(ErrorCodes.PARSE, `line ${lineNo}: not an Rprof header (expected [memory profiling: ][GC profiling: ][line profiling: ]sample.interval=N)`, {
          file: this.file,
          line: lineNo,
          rule: 'Rprof files start with a header line',
        });
      }
      this.startRun(h, lineNo);
      return;
    }
    if (text.length === 0) return; // R never writes empty lines; editors do.
    const c = text.charCodeAt(0);
    if (c === 35 /* # */) {
      const m = FILE_RE.exec(text);
      if (!m) throw new ProfkitError(ErrorCodes.PARSE, `line ${lineNo}: malformed #File line`, { file: this.file, line: lineNo, rule: '#File N: path' });
      const num = Number(m[1]!);
      if (!Number.isSafeInteger(num) || num < 1) {
        throw new ProfkitError(ErrorCodes.PARSE, `line ${lineNo}: #File number ${m[1]} is not a positive integer`, { file: this.file, line: lineNo, rule: '#File N: path' });
      }
      const path = m[2]!;
      this.countRunLine(lineNo);
      this.fileTable.set(num, this.internPath(path));
      this.clearCache();
      this.filesFact.push({ run: this.runs.length - 1, number: num, path: this.paths[this.pathIndex.get(path)!]! });
      return;
    }
    if (c !== 58 && c !== 34 && !(c >= 48 && c <= 57)) {
      const h = parseHeader(text);
      if (h) {
        this.startRun(h, lineNo);
        return;
      }
    }
    this.traceLine(text, lineNo);
  }

  /** Whether the current run's trace lines carry the `:small:big:nodes:dups:` memory prefix. */
  get memoryRun(): boolean {
    return this.header?.memory ?? false;
  }

  /**
   * Records lines as repeats of lines whose `lineEntry` was their stack in this epoch (what
   * `traceLine` does on a cache hit, without the text): `count` consecutive lines from
   * `firstLineNo`, whose stacks have `frames` frames together (summed by the line index from
   * `stackFrameCount`: a loop over the lines here ran mostly before the JIT had optimized it);
   * in a memory run with each line's four memory numbers. @internal (the stacks must be
   * `lineEntry` values of this epoch)
   */
  repeatLines(stacks: Uint32Array, count: number, firstLineNo: number, frames: number): void {
    if (!this.aggregate && !this.anyMemory && this.sampleStack.length + count <= this.maxSamples && this.totalFrames + frames <= this.maxTotalFrames) {
      // What record() does for each, at once. Past a limit, record() below throws at the exact line.
      this.totalFrames += frames;
      this.sampleStack.pushAll(stacks.subarray(0, count));
      this.lineCount = firstLineNo + count - 1;
      return;
    }
    for (let i = 0; i < count; i++) {
      this.lineCount = firstLineNo + i;
      this.record(stacks[i]!, false);
    }
  }

  /** The frames of stack `stack` (a `lineEntry`). @internal */
  stackFrameCount(stack: number): number {
    return this.stackOffsets.get(stack + 1) - this.stackOffsets.get(stack);
  }

  /**
   * Records line `lineNo`, a trace line the line index parsed into `t` (as `parseTraceLine`
   * would: nothing cut off, a memory prefix exactly in memory runs), as `line()` records it.
   * False before the first header and for more than `maxFramesPerStack` frames (the line must
   * then go through `line()`, whose parser reports the limit at its frame). @internal
   */
  parsedTraceLine(t: TraceLine, lineNo: number): boolean {
    if (this.header === undefined || t.names.length > this.maxFrames) return false;
    this.lineCount = lineNo;
    this.lineEntry = this.recordTrace(t, lineNo);
    return true;
  }

  repeatMemoryLines(stacks: Uint32Array, numbers: Float64Array, count: number, firstLineNo: number): void {
    for (let i = 0; i < count; i++) {
      this.lineCount = firstLineNo + i;
      this.memSmall = numbers[4 * i]!;
      this.memBig = numbers[4 * i + 1]!;
      this.memNodes = numbers[4 * i + 2]!;
      this.memDups = numbers[4 * i + 3]!;
      this.record(stacks[i]!, true);
    }
  }

  private clearCache(): void {
    this.cache.clear();
    this.lastKey = undefined;
    this.epoch++;
  }

  private countRunLine(lineNo: number): void {
    if (++this.runLines > this.maxRunLines) {
      throw limitError('maxRunLines', `line ${lineNo}: header and #File line ${this.runLines}`, this.maxRunLines, { file: this.file, line: lineNo });
    }
  }

  private startRun(h: Header, lineNo: number): void {
    if (h.intervalUs <= 0) {
      throw new ProfkitError(ErrorCodes.PARSE, `line ${lineNo}: sample.interval must be a positive number of microseconds`, {
        file: this.file,
        line: lineNo,
        rule: 'sample.interval > 0',
      });
    }
    this.countRunLine(lineNo);
    this.header = h;
    this.runTime = BigInt(h.intervalUs) * 1000n;
    this.runs.push({ header: detach(h.text), interval_us: h.intervalUs, memory_profiling: h.memory, gc_profiling: h.gc, line_profiling: h.line, line: lineNo });
    this.fileTable = new Map();
    this.clearCache();
    this.prevMem = undefined;
    if (!this.aggregate) this.runStarts.push(this.sampleStack.length);
    // Memory columns exist only once a run has memory profiling; earlier samples get zeros
    // (with `aggregate`, every sample has its summed memory value).
    if (h.memory && !this.anyMemory && !this.aggregate) {
      for (const c of [this.colSmall, this.colBig, this.colNodes, this.colDups]) for (let i = c.length; i < this.sampleStack.length; i++) c.push(0);
    }
    if (h.memory) this.anyMemory = true;
    if (h.gc) this.anyGc = true;
  }

  private internPath(path: string): number {
    let i = this.pathIndex.get(path);
    if (i === undefined) {
      path = detach(path);
      i = this.paths.length;
      this.paths.push(path);
      this.pathIndex.set(path, i);
    }
    return i;
  }

  private internName(name: string): number {
    let i = this.nameIndex.get(name);
    if (i === undefined) {
      name = detach(name);
      i = this.names.length;
      this.names.push(name);
      this.nameIndex.set(name, i);
    }
    return i;
  }

  /**
   * Fast path: R repeats the same stack text many times. The parsed stack of each distinct text
   * (after the memory prefix) is cached until the next #File or header line changes what file
   * numbers mean; only the memory numbers are parsed for a repeated line.
   */
  private traceLine(text: string, lineNo: number): void {
    const h = this.header!;
    const c0 = text.charCodeAt(0);
    let memEnd = 0;
    if (h.memory) memEnd = c0 === 58 ? this.memoryPrefix(text) : -1;
    else if (c0 === 58) memEnd = -1;
    if (memEnd >= 0) {
      const key = memEnd > 0 ? text.slice(memEnd) : text;
      // R repeats a line while the program stays put: compare with the previous one first.
      const hit = key === this.lastKey ? this.lastEntry : this.cache.get(key);
      if (hit !== undefined) {
        this.lastKey = key;
        this.lastEntry = hit;
        this.lineEntry = hit;
        this.record(hit, memEnd > 0);
        return;
      }
    }
    const t = this.trace;
    parseTraceLine(text, t, this.file, lineNo, this.maxFrames);
    const entry = this.recordTrace(t, lineNo);
    if (entry >= 0 && t.truncated === undefined && memEnd >= 0 && this.cache.size < MAX_CACHED_STACKS) {
      this.cache.set(detach(memEnd > 0 ? text.slice(memEnd) : text), entry);
      this.lineEntry = entry;
    }
  }

  /**
   * Interns the stack of the parsed trace line `t` (line `lineNo`) and records its sample;
   * returns the stack, or -1 for a line that records nothing (what is left of a cut-off line).
   */
  private recordTrace(t: TraceLine, lineNo: number): number {
    const h = this.header!;
    // An indexed loop: for-of made an iterator result per name (a quarter of the read's garbage).
    for (let k = 0; k < t.names.length; k++) {
      const name = t.names[k]!;
      if (name.length > this.maxString) throw limitError('maxStringLength', `line ${lineNo}: a function name of ${name.length} characters`, this.maxString, { file: this.file, line: lineNo });
    }
    if (t.truncated !== undefined) {
      this.truncatedLines++;
      this.firstTruncated ??= { line: lineNo, why: t.truncated };
    }
    if (t.hasMemory && !h.memory) {
      throw new ProfkitError(ErrorCodes.PARSE, `line ${lineNo}: memory prefix in a run whose header has no "memory profiling:"`, {
        file: this.file,
        line: lineNo,
        rule: 'memory prefix only with memory profiling',
      });
    }
    if (!t.hasMemory && h.memory) {
      if (t.truncated !== undefined && t.names.length === 0 && !t.gc) return -1; // cut-off memory prefix
      throw new ProfkitError(ErrorCodes.PARSE, `line ${lineNo}: missing :small:big:nodes:dups: memory prefix (the header says memory profiling)`, {
        file: this.file,
        line: lineNo,
        rule: 'memory profiling lines start with the memory prefix',
      });
    }
    if (t.names.length === 0 && !t.hasMemory && !t.gc) return -1; // nothing left of a cut-off line
    const ids = this.frameIds;
    for (let k = 0; k < t.names.length; k++) {
      const name = this.internName(t.names[k]!);
      let path = 0;
      const fno = t.fileNos[k]!;
      if (fno !== 0) {
        const p = this.fileTable.get(fno);
        if (p === undefined) {
          throw new ProfkitError(ErrorCodes.PARSE, `line ${lineNo}: source reference ${fno}#${t.lineNos[k]} names file ${fno}, which no earlier #File line of this run declares`, {
            file: this.file,
            line: lineNo,
            rule: '#File N precedes srcrefs to N',
          });
        }
        path = p + 1;
        const seen = this.namePaths.get(name);
        if (!seen) this.namePaths.set(name, [p]);
        else if (seen.length < 2 && seen[0] !== p) seen.push(p);
      }
      const line = fno !== 0 ? t.lineNos[k]! : 0;
      // path < 2^21 (one #File line each) and line < 2^32 keep the key an exact integer.
      const key = path * 4294967296 + (line < 4294967296 ? line : 4294967295);
      const byName = (this.rawIndex[name] ??= new Map());
      let id = byName.get(key);
      if (id === undefined || (line >= 4294967295 && this.rawKeys[id - 1]!.line !== line)) {
        id = this.rawKeys.length + 1;
        this.rawKeys.push({ name, path, line });
        if (line < 4294967295) byName.set(key, id);
      }
      ids[k] = id;
    }
    ids.length = t.names.length;
    const entry = this.internStack(ids, t.gc);
    if (t.hasMemory) {
      this.memSmall = t.small;
      this.memBig = t.big;
      this.memNodes = t.nodes;
      this.memDups = t.dups;
    }
    this.record(entry, t.hasMemory);
    return entry;
  }

  /** The number of the distinct stack (frames `ids`, GC flag `gc`). */
  private internStack(ids: number[], gc: boolean): number {
    const key = ids.join(',') + (gc ? '|g' : '|');
    let stack = this.stackIndex.get(key);
    if (stack === undefined) {
      stack = this.stackGc.length;
      this.stackIndex.set(key, stack);
      this.stackFrames.pushAll(ids);
      this.stackOffsets.push(this.stackFrames.length);
      this.stackGc.push(gc ? 1 : 0);
    }
    return stack;
  }

  /**
   * Parses `:small:big:nodes:dups:` at the start of `text` into the mem* fields; returns the
   * index after it, or -1 when it is not a well-formed prefix of safe integers (the slow path
   * then reports the error).
   */
  private memoryPrefix(text: string): number {
    let i = 1;
    const n = text.length;
    for (let g = 0; g < 4; g++) {
      let v = 0;
      const start = i;
      while (i < n) {
        const c = text.charCodeAt(i);
        if (c < 48 || c > 57) break;
        v = v * 10 + (c - 48);
        i++;
      }
      if (i === start || i - start > 15 || i >= n || text.charCodeAt(i) !== 58) return -1;
      i++;
      if (g === 0) this.memSmall = v;
      else if (g === 1) this.memBig = v;
      else if (g === 2) this.memNodes = v;
      else this.memDups = v;
    }
    return i;
  }

  private record(stack: number, hasMemory: boolean): void {
    let mem = 0n;
    if (hasMemory && this.aggregate) {
      const cur = { small: this.memSmall, big: this.memBig, nodes: this.memNodes };
      mem = memoryDelta(this.prevMem, cur);
      this.prevMem = cur;
    }
    const time = this.runTime;
    if (this.aggregate) {
      // Merged across runs: memory stays proportional to the distinct stacks however many
      // Rprof(append = TRUE) sessions the file holds.
      const at = this.aggIndex.get(stack);
      if (at !== undefined) {
        this.add(this.counts, at, 1n);
        this.add(this.times, at, time);
        this.add(this.mems, at, mem);
        return;
      }
      this.aggIndex.set(stack, this.sampleStack.length);
    }
    const n = this.sampleStack.length;
    if (n >= this.maxSamples) throw limitError('maxSamples', `sample ${n + 1}`, this.maxSamples, { file: this.file, line: this.lineCount });
    this.totalFrames += this.stackOffsets.get(stack + 1) - this.stackOffsets.get(stack);
    if (this.totalFrames > this.maxTotalFrames) {
      throw limitError('maxTotalFrames', `the stacks of samples 1 to ${n + 1} together have ${this.totalFrames} frames, which`, this.maxTotalFrames, { file: this.file, line: this.lineCount });
    }
    this.sampleStack.push(stack);
    if (this.aggregate) {
      this.counts.push(1n);
      this.times.push(time);
      this.mems.push(mem);
    } else if (this.anyMemory) {
      this.colSmall.push(hasMemory ? this.memSmall : 0);
      this.colBig.push(hasMemory ? this.memBig : 0);
      this.colNodes.push(hasMemory ? this.memNodes : 0);
      this.colDups.push(hasMemory ? this.memDups : 0);
    }
  }

  /**
   * The samples' stacks as the profile's list column (raw frames mapped through `rawToLoc`), and
   * each sample's GC flag: made once, at their final size, from the distinct stacks.
   */
  private sampleStacks(rawToLoc: Uint32Array): { offsets: Uint32Array; locationIds: Uint32Array; gc: Uint8Array } {
    const frames = this.stackFrames.view();
    for (let i = 0; i < frames.length; i++) frames[i] = rawToLoc[frames[i]!]!;
    const stackOffsets = this.stackOffsets.view();
    const stackGc = this.stackGc.view();
    const samples = this.sampleStack.view();
    const offsets = new Uint32Array(samples.length + 1);
    const locationIds = new Uint32Array(this.totalFrames);
    const gc = new Uint8Array(this.anyGc ? samples.length : 0);
    let o = 0;
    const n = samples.length;
    // The GC flags get a loop of their own: this one (630k location ids for the 166k samples of
    // the benchmark file, most of them copied before the JIT has optimized it) reads no property.
    for (let s = 0; s < n; s++) {
      const stack = samples[s]!;
      const end = stackOffsets[stack + 1]!;
      for (let k = stackOffsets[stack]!; k < end; k++) locationIds[o++] = frames[k]!;
      offsets[s + 1] = o;
    }
    if (gc.length > 0) for (let s = 0; s < n; s++) gc[s] = stackGc[samples[s]!]!;
    return { offsets, locationIds, gc };
  }

  /** Each sample's run (0-based) and time (its run's interval), from the runs' first samples. */
  private runColumns(): { run: Uint32Array; time: BigInt64Array } {
    const n = this.sampleStack.length;
    const run = new Uint32Array(n);
    const time = new BigInt64Array(n);
    for (let r = 0; r < this.runStarts.length; r++) {
      const start = this.runStarts[r]!;
      const end = r + 1 < this.runStarts.length ? this.runStarts[r + 1]! : n;
      run.fill(r, start, end);
      time.fill(BigInt(this.runs[r]!.interval_us) * 1000n, start, end);
    }
    return { run, time };
  }

  /**
   * Each sample's `memory/bytes` value (see `memoryDelta`) from the memory columns: the change
   * since the previous sample of its run; 0 for a run's first sample and in runs without memory
   * profiling (every sample of a memory run has the memory prefix: the parser refuses others).
   */
  private memoryColumn(): BigInt64Array {
    const n = this.sampleStack.length;
    const out = new BigInt64Array(n);
    const small = this.colSmall.view();
    const big = this.colBig.view();
    const nodes = this.colNodes.view();
    for (let r = 0; r < this.runStarts.length; r++) {
      if (!this.runs[r]!.memory_profiling) continue;
      const end = r + 1 < this.runStarts.length ? this.runStarts[r + 1]! : n;
      for (let s = this.runStarts[r]! + 1; s < end; s++) {
        out[s] = memoryDelta({ small: small[s - 1]!, big: big[s - 1]!, nodes: nodes[s - 1]! }, { small: small[s]!, big: big[s]!, nodes: nodes[s]! });
      }
    }
    return out;
  }

  private add(col: GrowableBigInt64, i: number, v: bigint): void {
    const view = col.view();
    view[i] = view[i]! + v;
  }

  /** Builds the profile. */
  finish(): Profile {
    if (this.header === undefined) {
      throw new ProfkitError(ErrorCodes.EMPTY_INPUT, 'empty Rprof file: no header line', { file: this.file, line: 1, rule: 'Rprof files start with a header line' });
    }
    if (this.truncatedLines > 0) {
      const f = this.firstTruncated!;
      this.warnings.push({
        code: 'PROFKIT_W_RPROF_TRUNCATED',
        message: `${this.truncatedLines} trace line(s) end in a cut-off frame (first: line ${f.line}, ${f.why}); the cut-off part was dropped, the rest of each stack kept`,
        detail: { file: this.file, line: f.line, lines: this.truncatedLines },
      });
    }
    // Resolve raw frames to (function, line) in order of first appearance.
    const fnKey = new Map<string, number>();
    const fnName: string[] = [];
    const fnFile: string[] = [];
    const locKey = new Map<string, number>();
    const locFn = new GrowableUint32();
    const locLine = new GrowableFloat64();
    const rawToLoc = new Uint32Array(this.rawKeys.length + 1);
    for (let r = 0; r < this.rawKeys.length; r++) {
      const k = this.rawKeys[r]!;
      let pathIdx = k.path - 1;
      if (pathIdx < 0 && this.resolveFiles && !CALL_NAMES.has(this.names[k.name]!)) {
        const seen = this.namePaths.get(k.name);
        if (seen && seen.length === 1) pathIdx = seen[0]!;
      }
      const fk = k.name + ',' + pathIdx;
      let fid = fnKey.get(fk);
      if (fid === undefined) {
        fid = fnName.length + 1;
        fnKey.set(fk, fid);
        fnName.push(this.names[k.name]!);
        fnFile.push(pathIdx >= 0 ? this.paths[pathIdx]! : '');
      }
      const lk = fid + ',' + k.line;
      let lid = locKey.get(lk);
      if (lid === undefined) {
        lid = locFn.length + 1;
        locKey.set(lk, lid);
        locFn.push(fid);
        locLine.push(k.line);
      }
      rawToLoc[r + 1] = lid;
    }
    const { offsets, locationIds, gc } = this.sampleStacks(rawToLoc);
    const nLoc = locFn.length;
    const nFn = fnName.length;
    const sampleTypes = { type: ['samples', 'time'], unit: ['count', 'nanoseconds'] };
    const extSamples: Record<string, Column> = {};
    let values: BigInt64Array[];
    if (this.aggregate) {
      values = [this.counts.finish(), this.times.finish()];
    } else {
      const { run, time } = this.runColumns();
      values = [new BigInt64Array(run.length).fill(1n), time];
      extSamples.run = run;
    }
    if (this.anyMemory) {
      sampleTypes.type.push('memory');
      sampleTypes.unit.push('bytes');
      values.push(this.aggregate ? this.mems.finish() : this.memoryColumn());
    }
    if (this.anyGc) extSamples.gc = gc;
    if (this.anyMemory && !this.aggregate) {
      extSamples.small = this.colSmall.finish();
      extSamples.big = this.colBig.finish();
      extSamples.nodes = this.colNodes.finish();
      extSamples.dups = this.colDups.finish();
    }
    const facts: Record<string, FactValue> = {
      runs: this.runs.map((r) => ({ ...r })),
      files: this.filesFact.map((f) => ({ ...f })),
      aggregated: this.aggregate,
    };
    const first = this.runs[0]!;
    const comments: string[] = [];
    if (this.runs.some((r) => r.interval_us !== first.interval_us)) {
      comments.push(`Rprof runs with different intervals: ${this.runs.map((r) => r.interval_us).join(', ')} microseconds`);
    }
    const profile = createProfile({
      sample_types: sampleTypes,
      samples: {
        value: values[0]!,
        locations: { offsets, location_id: locationIds },
        '.values': values,
      },
      locations: {
        location_id: Uint32Array.from({ length: nLoc }, (_, i) => i + 1),
        function_id: locFn.finish(),
        line: locLine.finish(),
      },
      functions: {
        function_id: Uint32Array.from({ length: nFn }, (_, i) => i + 1),
        name: fnName,
        system_name: fnName.map(rSystemName),
        filename: fnFile,
        start_line: new Float64Array(nFn),
      },
      '.profile': {
        period_type: { type: 'cpu', unit: 'nanoseconds' },
        period: BigInt(first.interval_us) * 1000n,
        default_sample_type: 'time',
        comments,
      },
      '.extensions': { [ADAPTER_NAME]: { facts, samples: extSamples } },
    });
    recordReaderProof(profile, ADAPTER_NAME, PARSER_PROOFS);
    return profile;
  }
}

/**
 * What `finish()` proves of every profile it builds, so that the registry's read does not check
 * it again (core's `recordReaderProof`; on the 166k-line benchmark the stacks' check was ~4 ms of
 * the convert): `samples.stacks` because offsets are made growing and every stack entry is a
 * location id `rawToLoc` gave out (1 to the number of locations, the ids the locations table
 * has); `locations.ids` and `functions.ids` because ids are 1..n; `locations.functions` because
 * a location's function is one `finish()` numbered; `locations.inline`, `inline_lines.functions`
 * and `flags` because Rprof has no inline lines, mappings or folded locations (createProfile's
 * zeros). Left to the validator: function names (`rSystemName` may give an empty system name)
 * and everything else.
 */
const PARSER_PROOFS: readonly ProvableRule[] = ['samples.stacks', 'locations.ids', 'locations.functions', 'locations.inline', 'inline_lines.functions', 'functions.ids', 'flags'];

/**
 * Memory allocated between the previous sample of the same run and this one, in bytes, exactly
 * as R's `summaryRprof(memory = "both")` computes it: `8·max(0, Δsmall) + 8·max(0, Δbig) +
 * max(0, Δnodes)` (vector cells are 8 bytes; R adds the node count as is). 0 for a run's first
 * sample.
 */
export function memoryDelta(prev: { small: number; big: number; nodes: number } | undefined, cur: { small: number; big: number; nodes: number }): bigint {
  if (!prev) return 0n;
  const ds = Math.max(0, cur.small - prev.small);
  const db = Math.max(0, cur.big - prev.big);
  const dn = Math.max(0, cur.nodes - prev.nodes);
  return BigInt(ds) * 8n + BigInt(db) * 8n + BigInt(dn);
}

export interface RprofReadResult {
  profile: Profile;
  warnings: Warning[];
}

/**
 * The splitter that feeds `parser` its lines: the line index (line-index.ts) where WebAssembly is
 * available, otherwise core's `LineSplitter`; both give the same lines, numbers and errors.
 */
function lineSplitter(parser: RprofParser, options: RprofReadOptions): { push(chunk: Uint8Array): void; end(): void } {
  const splitOptions = { file: options.fileName, maxLineLength: options.maxLineLength };
  return newIndexedLineSplitter(parser, splitOptions) ?? new LineSplitter(parser, splitOptions);
}

/** Reads Rprof text from a stream of (already decompressed) chunks. */
export async function readRprofChunks(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: RprofReadOptions = {}): Promise<RprofReadResult> {
  const parser = new RprofParser(options);
  const splitter = lineSplitter(parser, options);
  for await (const chunk of chunks as AsyncIterable<Uint8Array>) splitter.push(chunk);
  splitter.end();
  return { profile: parser.finish(), warnings: parser.warnings };
}

/**
 * Reads a whole Rprof file from memory (gzip-compressed or not). A gzip input is inflated whole,
 * bounded by `limits.maxDecompressedBytes`; `readRprofChunks` keeps only a chunk of it at a time.
 */
export function readRprofBytes(bytes: Uint8Array, options: RprofReadOptions = {}): RprofReadResult {
  const data = isGzip(bytes) ? gunzipBounded(bytes, options.limits ?? {}, options.fileName) : bytes;
  const parser = new RprofParser(options);
  const splitter = lineSplitter(parser, options);
  splitter.push(data);
  splitter.end();
  return { profile: parser.finish(), warnings: parser.warnings };
}

/** Reads Rprof through the adapter contract's `ReadInput` (streaming). */
export async function readRprofInput(input: ReadInput, options: RprofReadOptions = {}): Promise<RprofReadResult> {
  return readRprofChunks(input.chunks(), { fileName: input.fileName, ...options });
}

