/**
 * Rprof lines indexed in WebAssembly: the reader's line splitter when WebAssembly is available.
 *
 * Why: an Rprof file repeats few distinct lines many times (the 166k-line benchmark file has
 * 1,427), and the reader parses each distinct line once per run's file table anyway (its stack
 * cache). What remained per line, decoding it to a string and looking that string up, costs
 * JavaScript most in a short process, before the JIT has warmed up. The module of
 * line-index.wat does the splitting and the lookup over the bytes (its baseline code needs no
 * warm-up) and gives each line an id; a repeated line whose stack the parser recorded in the
 * current epoch (see `RprofParser.epoch`) is then just recorded again, without a string: the
 * module hands over runs of such lines' stacks, which the parser records in one call. Other
 * lines (first occurrences, lines without an id) are parsed by the module when they are ordinary
 * trace lines (`parsedByModule`), else decoded and given to `line()`, exactly as with core's
 * `LineSplitter`, whose semantics this class keeps: LF, CRLF and CR line ends (also a
 * CR that ends one chunk and a LF that starts the next), a BOM dropped from the first line only,
 * invalid UTF-8 decoded to U+FFFD, 1-based line numbers, the last line without terminator, and
 * `maxLineLength` in UTF-16 code units.
 *
 * Bounded by construction: the window the module reads is 1 MiB (a longer line is collected here
 * and goes the text path), the module keeps at most 65,536 keys of at most 256 KiB each and
 * 16 MiB in all, and a key that probes more than 64 slots of its seeded hash table, or that meets
 * another key of the same hash and length, gets no id (the seed does not stop crafted collisions:
 * a word's top bit passes the multiply whatever the seed; these two rules bound the work a
 * colliding line costs to one comparison and 64 probes).
 */

import { DEFAULT_MAX_LINE_LENGTH, compileInlineWasm, instantiateWasm, lineTooLongError, type LineSink, type WasmMemory, type WasmModule } from '@profkit/core';
import { newTraceLine, type TraceLine } from './grammar.js';
import { LINE_INDEX_WASM_BASE64 } from './line-index-wasm.js';

/** What the indexed splitter needs of its sink (implemented by `RprofParser`). */
export interface IndexedLineSink extends LineSink {
  /** Changes whenever the entries of earlier lines stop being valid (below 2^32). */
  readonly epoch: number;
  /** The entry the last `line()` recorded that a repeat of the same key may record again, or -1. */
  readonly lineEntry: number;
  /** Whether the keys of lines are the text after a `:small:big:nodes:dups:` prefix. */
  readonly memoryRun: boolean;
  /**
   * Records `count` consecutive lines from `firstLineNo` as repeats of `entries[0..count)`, whose
   * stacks have `frames` frames together (the `stackFrameCount`s of the entries, summed).
   */
  repeatLines(entries: Uint32Array, count: number, firstLineNo: number, frames: number): void;
  /** The frames of the stack `entry` (a `lineEntry`). */
  stackFrameCount(entry: number): number;
  /**
   * Records line `lineNo`, a trace line the module parsed into `trace` as `parseTraceLine` would
   * (nothing cut off; in a memory run with its memory prefix, in other runs starting with a
   * quote or a digit, so that `line()` would have taken it as a trace line); sets `lineEntry`
   * as `line()` does. False when the sink cannot take it so (the line is then given as text).
   */
  parsedTraceLine(trace: TraceLine, lineNo: number): boolean;
  /** The same in a memory run, with each line's four memory numbers in `numbers[4i..4i+4)`. */
  repeatMemoryLines(entries: Uint32Array, numbers: Float64Array, count: number, firstLineNo: number): void;
}

export interface IndexedLineSplitterOptions {
  file?: string;
  /** Largest accepted line, in UTF-16 code units of decoded text (default `DEFAULT_MAX_LINE_LENGTH`). */
  maxLineLength?: number;
}

// The module's memory layout (line-index.wat has the same constants and explains them).
const ENTRIES = 0x80000;
const KNOWN = 0x140000;
const REPEATS = 0x240000;
/** Repeated lines one `scan` call takes at most. */
const REPEAT_CAPACITY = 16384;
/** In LINE's f64 fields: the frames of the repeats `scan` handed over, together. */
const REPEATED_FRAMES = 3;
/** Frames of a line `frames` parses at most. */
const FRAME_CAPACITY = 4096;
const NUMBERS = 0x250000;
const LINE = 0x2d0000;
const FRAMES = 0x2e0000;
const WINDOW = 0x2f0000;
const WINDOW_BYTES = 0x100000;
/**
 * Epochs are u32 in the module, and 0 is every id's before it is known; from this one on (never
 * in practice: each epoch is a header or #File line) no line is remembered.
 */
const NO_REPEAT_EPOCH = 0xffffffff;
/** Why `scan` stopped. */
const STOPPED_AT_INCOMPLETE_LINE = 0;
const STOPPED_AT_LINE_TO_PARSE = 1;

/** See LineSplitter: a UTF-16 code unit is at most 3 bytes of UTF-8 (invalid bytes: 1 unit each). */
const MAX_UTF8_BYTES_PER_UNIT = 3;
const LF = 10;
const CR = 13;
const QUOTE = 34;

interface LineIndexExports {
  memory: WasmMemory;
  init(seed: number, maxRepeatBytes: number): void;
  setState(epoch: number, memoryRun: number): void;
  scan(start: number, end: number): number;
  frames(keyStart: number, end: number): number;
}

export type LinePath = 'auto' | 'index' | 'text';
let forcedPath: LinePath = 'auto';

/**
 * Testing and measuring: `'index'` makes the reader use the line index (failing when WebAssembly
 * is unavailable), `'text'` core's `LineSplitter`; `'auto'` (the default) the index when it
 * compiles. Returns the previous setting.
 */
export function setLinePath(path: LinePath): LinePath {
  const previous = forcedPath;
  forcedPath = path;
  return previous;
}

/**
 * The compiled module, once per process (core's `compileInlineWasm`); null without WebAssembly or
 * where compiling is refused (e.g. a Content-Security-Policy without 'wasm-unsafe-eval').
 */
function lineIndexModule(): WasmModule | null {
  return compileInlineWasm(LINE_INDEX_WASM_BASE64);
}

/** An indexed splitter feeding `sink`, or undefined when the text path is to be used. */
export function newIndexedLineSplitter(sink: IndexedLineSink, options: IndexedLineSplitterOptions): IndexedLineSplitter | undefined {
  if (forcedPath === 'text') return undefined;
  const module = lineIndexModule();
  if (module === null) {
    if (forcedPath === 'index') throw new Error('the Rprof line index needs WebAssembly, which is unavailable here');
    return undefined;
  }
  try {
    return new IndexedLineSplitter(sink, module, options);
  } catch (e) {
    // Instantiating allocates the module's memory (3.9 MiB), which an engine may refuse.
    if (forcedPath === 'index') throw e;
    return undefined;
  }
}

/** The index of the first LF or CR in `bytes`, or -1 (native searches, fast also before the JIT). */
function firstLineEnd(bytes: Uint8Array): number {
  const lf = bytes.indexOf(LF);
  const cr = lf === -1 ? bytes.indexOf(CR) : bytes.subarray(0, lf).indexOf(CR);
  return cr === -1 ? lf : cr;
}

/** Feed `push(chunk)` any number of times, then `end()` (like core's `LineSplitter`). */
export class IndexedLineSplitter {
  private readonly exports: LineIndexExports;
  private readonly memory: WasmMemory;
  /** Views of the module's memory, made again when it grows (growing detaches the old buffer). */
  private bytes!: Uint8Array;
  private words!: Uint32Array;
  private numbers!: Float64Array;
  private frameLines!: Float64Array;
  /** The f64 fields of LINE (`REPEATED_FRAMES`). */
  private lineNumbers!: Float64Array;
  /** The frames of a line the module parsed, handed to the sink (reused). */
  private readonly trace: TraceLine = newTraceLine();
  /** Frame names by their id in the module, decoded once each. */
  private readonly names: string[] = [];
  // ignoreBOM: a U+FEFF is dropped from the file's first line only (in `emit`).
  private readonly decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
  /** Bytes of an incomplete line at the start of the window. */
  private carry = 0;
  /** A line longer than the window, collected (copies) until its end; then not indexed. */
  private longLine: Uint8Array[] | undefined;
  private longLength = 0;
  private pendingCR = false;
  private lineNo = 0;
  /** What `setState` last told the module (-1: nothing yet). */
  private stateEpoch = -1;
  private stateMemoryRun = -1;
  private first = true;
  private readonly maxLineLength: number;

  constructor(
    private readonly sink: IndexedLineSink,
    module: WasmModule,
    private readonly options: IndexedLineSplitterOptions = {},
  ) {
    this.exports = instantiateWasm(module) as LineIndexExports;
    this.maxLineLength = options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
    // A random seed per parse (spreads ordinary keys; crafted collisions are bounded by the
    // module's probe cap and its one comparison per hash and length, see the file comment).
    // A line of more bytes than `maxLineLength` is never taken as a repeat: it may have more
    // UTF-16 units than allowed (its memory prefix may be longer than the first occurrence's),
    // so it is decoded and checked.
    this.exports.init((Math.random() * 4294967296) >>> 0, Math.min(this.maxLineLength, 0xffffffff));
    this.memory = this.exports.memory;
    this.refreshViews();
    this.setState();
  }

  push(chunk: Uint8Array): void {
    while (chunk.length > 0) {
      if (this.pendingCR) {
        this.pendingCR = false;
        if (chunk[0] === LF) {
          chunk = chunk.subarray(1);
          continue;
        }
      }
      if (this.longLine !== undefined) {
        chunk = this.continueLongLine(chunk);
        continue;
      }
      const take = Math.min(WINDOW_BYTES - this.carry, chunk.length);
      const piece = chunk.subarray(0, take);
      this.bytes.set(piece, WINDOW + this.carry);
      // Bytes that do not end the carried line are not scanned again and again (small chunks of a
      // long line would make that quadratic): the line is scanned once its end has come.
      if (this.carry > 0 && firstLineEnd(piece) === -1) this.keepIncomplete(WINDOW, WINDOW + this.carry + take);
      else this.scanWindow(WINDOW + this.carry + take);
      chunk = chunk.subarray(take);
    }
  }

  end(): void {
    if (this.longLine !== undefined) {
      this.emit(this.decoder.decode(this.takeLongLine()), this.lineNo + 1);
    } else if (this.carry > 0) {
      const rest = this.bytes.subarray(WINDOW, WINDOW + this.carry);
      this.carry = 0;
      this.emit(this.decoder.decode(rest), this.lineNo + 1);
    }
  }

  /** Views of the module's memory (made again when memory.grow detaches the old ones). */
  private refreshViews(): void {
    this.bytes = new Uint8Array(this.memory.buffer);
    this.words = new Uint32Array(this.memory.buffer);
    this.numbers = new Float64Array(this.memory.buffer, NUMBERS, REPEAT_CAPACITY * 4);
    this.frameLines = new Float64Array(this.memory.buffer, FRAMES, FRAME_CAPACITY * 2);
    this.lineNumbers = new Float64Array(this.memory.buffer, LINE, 4);
  }

  /** Bytes of the module's memory (tables, window and keys: at most 319 × 64 KiB, its declared maximum). */
  get memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** Takes the complete lines of the window's bytes up to `end`; carries the rest. */
  private scanWindow(end: number): void {
    const sink = this.sink;
    let start = WINDOW;
    for (;;) {
      const repeats = this.exports.scan(start, end);
      // The key store grew, which detaches the views (they are then empty).
      if (this.bytes.length === 0) this.refreshViews();
      if (repeats > 0) {
        const entries = this.words.subarray(REPEATS / 4, REPEATS / 4 + repeats);
        if (sink.memoryRun) sink.repeatMemoryLines(entries, this.numbers, repeats, this.lineNo + 1);
        else sink.repeatLines(entries, repeats, this.lineNo + 1, this.lineNumbers[REPEATED_FRAMES]!);
        this.lineNo += repeats;
      }
      const stopped = this.words[LINE / 4 + 4]!;
      start = this.words[LINE / 4 + 5]!;
      if (stopped === STOPPED_AT_INCOMPLETE_LINE) break;
      if (stopped === STOPPED_AT_LINE_TO_PARSE) this.parseLine(repeats);
    }
    this.keepIncomplete(start, end);
  }

  /**
   * The line at LINE (after `repeats` repeats: its memory numbers are theirs' next), parsed by
   * the module or else decoded through the sink's `line()`; remembered when it may repeat.
   */
  private parseLine(repeats: number): void {
    const words = this.words;
    const id = words[LINE / 4]!;
    const start = words[LINE / 4 + 1]!;
    const end = words[LINE / 4 + 3]!;
    if (!this.parsedByModule(start, words[LINE / 4 + 2]!, end, repeats)) this.emit(this.decoder.decode(this.bytes.subarray(start, end)), this.lineNo + 1);
    const sink = this.sink;
    if (id !== 0 && sink.lineEntry >= 0 && sink.epoch < NO_REPEAT_EPOCH) {
      // this.words, not words: interning the line's names may have grown the memory (new views).
      const known = this.words;
      known[KNOWN / 4 + (id - 1) * 4] = sink.epoch;
      known[KNOWN / 4 + (id - 1) * 4 + 1] = sink.lineEntry;
      known[KNOWN / 4 + (id - 1) * 4 + 2] = sink.stackFrameCount(sink.lineEntry);
    }
    this.setState();
  }

  /**
   * Whether the module parsed the trace line [start, end) (key from `keyStart`) and the sink
   * recorded it: a line that `line()` would take as a trace line (not the first, within
   * `maxLineLength` bytes, in a memory run with its prefix, in others starting with a quote or a
   * digit), which the module parses completely (see `frames` in line-index.wat). Saves decoding
   * the line and parsing its text, the most of a distinct line's cost while the JIT is cold.
   */
  private parsedByModule(start: number, keyStart: number, end: number, repeats: number): boolean {
    const sink = this.sink;
    const memoryRun = sink.memoryRun;
    if (this.first || end - start > this.maxLineLength || keyStart !== start !== memoryRun) return false;
    if (!memoryRun) {
      const c = this.bytes[start]!;
      if (end === start || (c !== QUOTE && (c < 48 || c > 57))) return false;
    }
    const count = this.exports.frames(keyStart, end);
    // Interning a name may grow the key store, which detaches the views.
    if (this.bytes.length === 0) this.refreshViews();
    if (count < 0) return false;
    const words = this.words;
    const frameLines = this.frameLines;
    const t = this.trace;
    // Written in place, then cut to length: emptying an array frees its storage, and pushing
    // then allocated it again for every line.
    for (let k = 0; k < count; k++) {
      const id = words[FRAMES / 4 + k * 4]!;
      t.names[k] = this.names[id] ?? this.decodeName(id);
      t.fileNos[k] = words[FRAMES / 4 + k * 4 + 1]!;
      t.lineNos[k] = frameLines[k * 2 + 1]!;
    }
    t.names.length = count;
    t.fileNos.length = count;
    t.lineNos.length = count;
    t.gc = words[(LINE + 32) / 4] === 1;
    t.hasMemory = memoryRun;
    if (memoryRun) {
      t.small = this.numbers[repeats * 4]!;
      t.big = this.numbers[repeats * 4 + 1]!;
      t.nodes = this.numbers[repeats * 4 + 2]!;
      t.dups = this.numbers[repeats * 4 + 3]!;
    }
    t.truncated = undefined;
    if (!sink.parsedTraceLine(t, this.lineNo + 1)) return false;
    this.lineNo++;
    return true;
  }

  /** The name of id `id` in the module (its key's bytes, decoded), remembered. */
  private decodeName(id: number): string {
    const entry = ENTRIES / 4 + (id - 1) * 3;
    const offset = this.words[entry]!;
    return (this.names[id] = this.decoder.decode(this.bytes.subarray(offset, offset + this.words[entry + 1]!)));
  }

  /** Tells the module the sink's epoch and whether the run has memory prefixes. */
  private setState(): void {
    const epoch = Math.min(this.sink.epoch, NO_REPEAT_EPOCH);
    const memoryRun = this.sink.memoryRun ? 1 : 0;
    // Most parsed lines change neither (a call into the module less per line).
    if (epoch === this.stateEpoch && memoryRun === this.stateMemoryRun) return;
    this.stateEpoch = epoch;
    this.stateMemoryRun = memoryRun;
    this.exports.setState(epoch, memoryRun);
  }

  /** Keeps the bytes of an incomplete line, [start, end) of the window, for the next bytes. */
  private keepIncomplete(start: number, end: number): void {
    const rest = end - start;
    if (rest === 0) {
      this.carry = 0;
      this.pendingCR = this.bytes[end - 1] === CR;
    } else if (rest === WINDOW_BYTES) {
      this.carry = 0;
      this.longLine = [this.bytes.slice(start, end)];
      this.longLength = rest;
      this.checkIncomplete(rest);
    } else {
      this.bytes.copyWithin(WINDOW, start, end);
      this.carry = rest;
      this.checkIncomplete(rest);
    }
  }

  /** Adds the bytes of `chunk` up to its first line end to the long line; returns what follows. */
  private continueLongLine(chunk: Uint8Array): Uint8Array {
    let i = firstLineEnd(chunk);
    if (i === -1) i = chunk.length;
    this.longLine!.push(chunk.slice(0, i));
    this.longLength += i;
    if (i === chunk.length) {
      this.checkIncomplete(this.longLength);
      return chunk.subarray(i);
    }
    this.emit(this.decoder.decode(this.takeLongLine()), this.lineNo + 1);
    if (chunk[i] === CR) {
      if (i + 1 === chunk.length) this.pendingCR = true;
      else if (chunk[i + 1] === LF) i++;
    }
    return chunk.subarray(i + 1);
  }

  private takeLongLine(): Uint8Array {
    const joined = new Uint8Array(this.longLength);
    let o = 0;
    for (const part of this.longLine!) {
      joined.set(part, o);
      o += part.length;
    }
    this.longLine = undefined;
    this.longLength = 0;
    return joined;
  }

  /** A line whose bytes so far could not fit `maxLineLength` whatever follows is refused now. */
  private checkIncomplete(bytes: number): void {
    if (bytes > this.maxLineLength * MAX_UTF8_BYTES_PER_UNIT) this.tooLong(this.lineNo + 1);
  }

  /** A decoded line, numbered `lineNo` (the next one), through the sink's `line()`. */
  private emit(text: string, lineNo: number): void {
    this.lineNo = lineNo;
    if (this.first) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (text.length > this.maxLineLength) this.tooLong(lineNo);
    this.sink.line(text, lineNo);
  }

  /** The error core's `LineSplitter` gives for a line over the limit. */
  private tooLong(line: number): never {
    throw lineTooLongError(line, this.maxLineLength, this.options.file);
  }
}
