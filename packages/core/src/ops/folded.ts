/** `toFolded`: Brendan Gregg's collapsed-stack format (`root;caller;leaf value`). */

import { ErrorCodes, ProfkitError } from '../errors.js';
import type { Profile } from '../model.js';
import { ProfileIndex, defaultSampleTypeIndex } from '../views.js';
import { locationNameIds } from '../flame/cut.js';
import { grown, sumsExactInDoubles } from './stack-table.js';
import { locationIdsHash, sameLocationIds } from './stack-hash.js';
import { MAX_STRING_LENGTH, ReportTextBudget, joinReportText, type ReportLimits } from '../report-text.js';
import { StringKeyedMap } from '../string-keys.js';

/** A frame name made safe for the folded format: `;` would split frames, line breaks lines. */
function foldedName(name: string): string {
  return name.replace(/;/g, ':').replace(/[\r\n]+/g, ' ');
}

/**
 * Folded stacks of one sample type: one line per distinct stack, `root;...;leaf value`, inline
 * frames expanded (outermost first), values of identical stacks summed. Frames are function
 * names (`0x<address>` for unsymbolized locations, `[unknown]` when nothing is known); `;` in a
 * name becomes `:`. Samples without frames and stacks whose sum is 0 are omitted (negative
 * sums, e.g. from `diff`, are kept). Lines are sorted by stack text (code-unit order) and end
 * with `\n`. The text of `foldedLines`, joined.
 */
export function toFolded(p: Profile, sampleTypeIndex: number = defaultSampleTypeIndex(p)): string {
  // Writers call this: the text is bounded only by what one string holds (a typed error past it).
  const unbounded = { maxReportBytes: Infinity };
  return joinReportText('folded', foldedLines(p, sampleTypeIndex, unbounded), unbounded);
}

/**
 * The lines of `toFolded` one at a time, in its order, so that a large profile's text (hundreds
 * of megabytes when stacks share little) is written as it is made instead of held whole.
 * `foldedChunks` gives the same text as UTF-8 bytes, without a string per line.
 */
export function* foldedLines(p: Profile, sampleTypeIndex: number = defaultSampleTypeIndex(p), limits?: ReportLimits): Generator<string> {
  // A line prints every inline frame of its locations, each a name that many frames can share:
  // the text is counted (`maxReportBytes`), and each line's length checked before it is made.
  const budget = new ReportTextBudget('folded', limits, false);
  const walk = new FoldedWalk(p, sampleTypeIndex);
  const texts: (string | undefined)[] = [];
  const textOf = (segment: number) => (texts[segment] ??= Array.from(walk.segmentNames(segment), (name) => walk.names[name]!).join(';'));
  // Offsets in UTF-16 code units, without making the texts of segments no line prints.
  const unitStart = new Float64Array(walk.segments + 1);
  for (let id = 0; id < walk.segments; id++) {
    const names = walk.segmentNames(id);
    let units = Math.max(0, names.length - 1);
    for (const name of names) units += walk.names[name]!.length;
    unitStart[id + 1] = unitStart[id]! + units;
  }
  // A line past what `reserve` allows is refused while the walk makes its path (see `begin`).
  walk.begin(unitStart, Math.min(budget.max, MAX_STRING_LENGTH), (units) => budget.reserve(units));
  while (walk.next()) {
    const { path, depth } = walk;
    budget.reserve(walk.length);
    let text = textOf(path[0]!);
    for (let i = 1; i < depth; i++) text += ';' + textOf(path[i]!);
    yield budget.take(`${text} ${walk.sum}\n`);
  }
}

/** Bytes of a chunk of `foldedChunks` (a line longer than this gets a chunk of its own). */
const CHUNK_BYTES = 1 << 20;

/**
 * The longest line `foldedChunks` makes, in bytes (1 GiB), whatever `maxReportBytes` allows: a
 * line is one buffer, and its offsets are 32-bit (past 2 GiB a typed array cannot be indexed by
 * them, and V8 makes none past 4 GiB). Longer lines stop with `PROFKIT_E_LIMIT` before any copy.
 */
export const MAX_FOLDED_LINE_BYTES = 2 ** 30;

/**
 * The most bytes the distinct frame texts of one folded report may take (every location's names,
 * joined, once each): they share one buffer with the lines being written, indexed by 32-bit
 * offsets.
 */
export const MAX_FOLDED_SEGMENT_BYTES = 2 ** 31 - 1 - MAX_FOLDED_LINE_BYTES - (1 << 12);

/** How `foldedChunks` hands out its chunks. */
export interface FoldedChunksOptions {
  /**
   * Each chunk a view of one buffer, valid only until the next chunk is asked for, instead of a
   * copy of its own: for a writer done with each chunk before it asks for the next (hundreds of
   * megabytes not copied a second time). Default false.
   */
  reuseBuffer?: boolean;
}

/**
 * The text of `foldedLines` as UTF-8, in chunks of about 1 MiB: what a command writes. Each
 * segment's text is encoded once; a line's bytes are written right after the previous line's,
 * the frames it shares with that line in one copy, each other segment in one copy; no string is
 * made per line. Counted against `maxReportBytes` line by line, before the line is copied.
 */
export function* foldedChunks(
  p: Profile,
  sampleTypeIndex: number = defaultSampleTypeIndex(p),
  limits?: ReportLimits,
  options: FoldedChunksOptions = {},
): Generator<Uint8Array> {
  const writer = new FoldedChunkWriter(new FoldedWalk(p, sampleTypeIndex), new ReportTextBudget('folded', limits, false), options.reuseBuffer === true);
  for (let chunk = writer.fill(); chunk; chunk = writer.fill()) yield chunk;
}

/**
 * Writes the lines of a `FoldedWalk` as UTF-8 into one buffer: first every segment's text (`a`,
 * or `a;b` for a location's names), then the area where lines are written one after another, so
 * that a segment or the prefix a line shares with the previous one is copied with `copyWithin`
 * (no view made per copy). A full area (about `CHUNK_BYTES`) is handed out as a copy (as a view of
 * the buffer with `reuseBuffer`).
 *
 * Plain methods, not a generator body: V8 optimizes these loops as it does any function.
 */
class FoldedChunkWriter {
  private text: Uint8Array;
  /** Where the line area starts: after the segments' texts. */
  private readonly areaStart: number;
  /** Where each segment's text starts in `text`, and (at `id + 1`) ends. */
  private readonly segmentStart: Int32Array;
  /** Where the next line goes, and where the previous one starts (its shared frames are copied from there). */
  private lineStart: number;
  private previousStart: number;
  /** The walk's current line, counted and checked but not yet written (it did not fit the chunk). */
  private lineWaiting = false;
  private lineBytes = 0;
  private value = '';
  private done = false;
  /** The bytes `writeLine` reads ahead, kept so that the reads are not optimized away. */
  private touched = 0;

  constructor(
    private readonly walk: FoldedWalk,
    private readonly budget: ReportTextBudget,
    /** `FoldedChunksOptions.reuseBuffer`. */
    private readonly reuseBuffer: boolean,
  ) {
    const encoder = new TextEncoder();
    const encoded = walk.names.map((name) => encoder.encode(name));
    const segmentStart = (this.segmentStart = new Int32Array(walk.segments + 1));
    let segmentBytes = 0;
    for (let id = 0; id < walk.segments; id++) {
      const names = walk.segmentNames(id);
      let length = names.length === 0 ? 0 : names.length - 1;
      for (const name of names) length += encoded[name]!.length;
      // The offsets are 32-bit and the lines follow the segments in one buffer: past this they
      // would wrap (a silently corrupt report), so stop before anything is allocated.
      segmentBytes += length;
      if (segmentBytes > MAX_FOLDED_SEGMENT_BYTES) {
        throw new ProfkitError(ErrorCodes.LIMIT, `the distinct frame texts of the folded report exceed ${MAX_FOLDED_SEGMENT_BYTES} bytes`, {
          rule: 'folded frame texts',
          option: 'maxReportBytes',
          limit: MAX_FOLDED_SEGMENT_BYTES,
        });
      }
      segmentStart[id + 1] = segmentBytes;
    }
    this.areaStart = this.lineStart = this.previousStart = segmentBytes;
    const text = (this.text = new Uint8Array(segmentBytes + CHUNK_BYTES));
    for (let id = 0; id < walk.segments; id++) {
      let at = segmentStart[id]!;
      for (const name of walk.segmentNames(id)) {
        if (at > segmentStart[id]!) text[at++] = SEPARATOR;
        text.set(encoded[name]!, at);
        at += encoded[name]!.length;
      }
    }
    walk.begin(Float64Array.from(segmentStart), Math.min(budget.max, MAX_FOLDED_LINE_BYTES), (lineBytes) => this.checkLine(lineBytes));
  }

  /** The next chunk: the lines that fit in about `CHUNK_BYTES` (or one longer line); undefined at the end. */
  fill(): Uint8Array | undefined {
    for (;;) {
      if (!this.lineWaiting) {
        if (this.done || !this.walk.next()) {
          this.done = true;
          return this.lineStart > this.areaStart ? this.takeChunk() : undefined;
        }
        this.measureLine();
      }
      if (this.lineStart > this.areaStart && this.lineStart - this.areaStart + this.lineBytes > CHUNK_BYTES) return this.takeChunk();
      this.writeLine();
    }
  }

  /** Counts the walk's line against the budget and the longest line, before any of it is copied. */
  private measureLine(): void {
    const { walk } = this;
    this.value = String(walk.sum);
    const lineBytes = walk.length + this.value.length + 2;
    this.checkLine(lineBytes);
    this.lineBytes = lineBytes;
    this.lineWaiting = true;
  }

  /** Counts a line of `lineBytes` against the budget, and refuses it past the longest folded line. */
  private checkLine(lineBytes: number): void {
    this.budget.count(lineBytes);
    if (lineBytes > MAX_FOLDED_LINE_BYTES) {
      throw new ProfkitError(ErrorCodes.LIMIT, `one line of the folded report (${lineBytes} bytes) exceeds the longest folded line (${MAX_FOLDED_LINE_BYTES} bytes)`, {
        rule: 'longest folded line',
        option: 'maxReportBytes',
        limit: MAX_FOLDED_LINE_BYTES,
      });
    }
  }

  /** The lines written so far (copied out unless `reuseBuffer`); the area is reused for the next ones. */
  private takeChunk(): Uint8Array {
    const chunk = this.reuseBuffer ? this.text.subarray(this.areaStart, this.lineStart) : this.text.slice(this.areaStart, this.lineStart);
    this.lineStart = this.areaStart;
    return chunk;
  }

  /** Writes the measured line at `lineStart`: its frames shared with the previous line, the others, ` value\n`. */
  private writeLine(): void {
    const { walk, value } = this;
    const { path, depth, unchanged, ends } = walk;
    const { segmentStart } = this;
    const sharedBytes = unchanged === 0 ? 0 : ends[unchanged - 1]!;
    if (this.lineStart + this.lineBytes > this.text.length) this.growArea(sharedBytes);
    const text = this.text;
    let at = this.lineStart;
    // The previous line starts with these bytes (it may overlap them after a chunk was taken:
    // `copyWithin` copies as if through a temporary buffer).
    if (sharedBytes > 0 && this.previousStart !== at) text.copyWithin(at, this.previousStart, this.previousStart + sharedBytes);
    at += sharedBytes;
    // Each segment's first and last byte read first: independent loads, which the processor sends
    // to memory together. The texts of a profile's locations are megabytes, mostly out of the
    // caches, and each copy waited for its own (one third of the time at 200k samples).
    let touched = 0;
    for (let i = unchanged; i < depth; i++) {
      const segment = path[i]!;
      touched += text[segmentStart[segment]!]! + text[segmentStart[segment + 1]! - 1]!;
    }
    this.touched = touched;
    for (let i = unchanged; i < depth; i++) {
      if (i > 0) text[at++] = SEPARATOR;
      const segment = path[i]!;
      const start = segmentStart[segment]!;
      const end = segmentStart[segment + 1]!;
      text.copyWithin(at, start, end);
      at += end - start;
    }
    text[at++] = SPACE;
    for (let k = 0; k < value.length; k++) text[at++] = value.charCodeAt(k);
    text[at++] = NEWLINE;
    this.previousStart = this.lineStart;
    this.lineStart = at;
    this.lineWaiting = false;
  }

  /** A buffer whose line area holds the measured line (a line longer than a chunk; written first in its chunk). */
  private growArea(sharedBytes: number): void {
    const { areaStart } = this;
    const text = new Uint8Array(areaStart + Math.max(CHUNK_BYTES, this.lineBytes));
    text.set(this.text.subarray(0, areaStart));
    text.set(this.text.subarray(this.previousStart, this.previousStart + sharedBytes), areaStart);
    this.text = text;
    this.previousStart = this.lineStart = areaStart;
  }
}

/** A line's sum: a double when every sum of the report is exact in one, else a bigint. */
type Sum = number | bigint;

function addSums(a: Sum, b: Sum): Sum {
  return typeof a === 'number' ? a + (b as number) : a + (b as bigint);
}

/**
 * The folded lines of a profile in text order, straight from its samples, without comparing
 * stacks and without a stack table.
 *
 * Distinct stacks print alike when their frames have equal names (two locations of one function),
 * and a location prints one name per inline frame: the lines are the paths of the prefix tree of
 * the samples' NAME sequences. That tree is walked depth first without being built: a node is
 * the range of positions (a sample, and how far its names are printed) that reach it, and its
 * children are found by advancing each position by one name and grouping the range by name in
 * place (`expand`, a most-significant-digit radix sort of the samples). A node reached by a
 * single sample (most of a tree of stacks that share little) prints the rest of that sample's
 * stack at once (`followSample`), a location's names in one segment. Samples with the same
 * location ids are merged first (`mergeEqualStacks`): a stack repeated in many samples is one
 * position.
 *
 * Siblings are visited in the order of their texts. Names hold no `;`, so of two sibling nodes
 * the texts compare as `name` (the node's own line, which ends there and so sorts before any
 * longer text) and `name;` (the lines below it) compare: each node is two sort keys, ranked
 * once for all names. With `foo` and `foo2`: `foo` < `foo2` < `foo2;…` < `foo;…`, as `2` < `;`.
 *
 * Memory follows the number of samples (a position is three integers), not the number of frames:
 * the walk keeps no per-frame table. The walk is a loop over explicit state (`next` stops at
 * each line), not a generator: the lines of a large profile are millions of frames, and V8 runs
 * plain methods' loops faster.
 */
class FoldedWalk {
  /** Frame names, by id. */
  readonly names: string[] = [];

  // The current line, valid after `next` returned true until it is called again.
  /**
   * Segments (`segmentNames`: one name, or all the names of a location), root first, joined by
   * `;`; the first `depth` are this line's.
   */
  path = new Int32Array(64);
  /**
   * `ends[i]`: the length of the text of `path[0..i]` joined, in the units of `begin`'s offsets,
   * for the entries the walk went through; not for the line's tail, the entries of a sample
   * alone (`followSample`), which are only in `path`: 4 bytes an entry, whose text is at least 2
   * (a name, never empty, and its `;`), so a tail's path is at most about twice the text it
   * prints (at 20 bytes an entry, a tail of 1-byte names held 10 times its line).
   */
  ends = new Float64Array(64);
  /** The length of this line's text (`ends` of its last entry), in the units of `begin`'s offsets. */
  length = 0;
  depth = 0;
  /** How many leading segments are those of the previous line (0 for the first line). */
  unchanged = 0;
  /** The sum of the values of the samples that print as this line; never 0. */
  sum: Sum = 0;

  /** The samples' location ids (leaf first, `offsets[i]..offsets[i + 1]`) and values. */
  private readonly offsets: Uint32Array;
  private readonly locationIds: Uint32Array;
  private readonly values: BigInt64Array;
  /** Sums are doubles when the absolute values of the kept samples add up to at most 2^53 (then every partial sum is exact). */
  private readonly exact: boolean;
  /** The sum of each kept sample and the samples merged into it (`mergeEqualStacks`), by sample. */
  private readonly sums: Float64Array | bigint[];
  private readonly zero: Sum;
  /** Location row of each location id (-1: none, a frame the views skip); `idRows` when the ids are dense. */
  private readonly idRows: Int32Array | undefined;
  private readonly index: ProfileIndex;
  /**
   * Name ids of the location rows' frames: those of row `r`, root-most (outermost inline frame)
   * first, are the `nameCount[r]` (at least 1) from `firstName[r]` on.
   */
  private readonly locNames: Int32Array;
  private readonly firstName: Int32Array;
  private readonly nameCount: Int32Array;
  /** Rank, among all names' two keys, of key `2 * id` (the name) and `2 * id + 1` (name and `;`). */
  private readonly rankOfKey: Int32Array;
  /** The key of each rank. */
  private readonly keyOfRank: Int32Array;

  /** Where each segment's text starts, and (at `id + 1`) ends (see `begin`). */
  private segmentStart: Float64Array = new Float64Array(1);
  /** The longest line text (`ends`) the consumer accepts, and what refuses a longer one (throws; see `begin`). */
  private maxLineLength = Infinity;
  private refuseLine: (length: number) => void = () => undefined;
  /**
   * What a sample prints for each location (`slotOf`), from `begin`: four integers a location,
   * read together (one memory access for a location, on profiles of hundreds of thousands of
   * locations whose lookups miss the caches): its segment when printed whole (-1: no location),
   * that segment's length (at most 2^31 - 1, see `begin`), its row, and one unused (16 bytes: an
   * entry never spans two cache lines).
   */
  private slotInfo: Int32Array = new Int32Array(0);
  /**
   * The positions: sample `posSample[k]`, at its location id `posFrame[k]` (an index into
   * `locationIds`, a known location) of which `posPrinted[k]` names are printed (fewer than all).
   * A node's positions are a range; its children's ranges are parts of it.
   */
  private readonly posSample: Int32Array;
  private readonly posFrame: Int32Array;
  private readonly posPrinted: Int32Array;
  /** Scratch for regrouping a range (`expand`). */
  private readonly nextSample: Int32Array;
  private readonly nextFrame: Int32Array;
  private readonly nextPrinted: Int32Array;
  private readonly groupOfPosition: Int32Array;
  private readonly positions: number;
  /**
   * The nodes waiting, last to visit first: each the key of one sibling (its own line, with its
   * value, or the lines below it, with its positions `[start, end)`) and its depth.
   */
  private pendingKey = new Int32Array(64);
  private pendingDepth = new Int32Array(64);
  private pendingStart = new Int32Array(64);
  private pendingEnd = new Int32Array(64);
  private pendingSum: Sum[] = [];
  private pending = 0;
  // Grouping the next names of a node's positions (`expand`; reused by every node).
  private readonly groupOfName: Int32Array;
  /**
   * The `expand` call that last grouped each name. Doubles: a walk can make more than 2^31 calls
   * (a node per name of the lines' prefix tree, billions in a report of gigabytes), and a 32-bit
   * stamp would wrap and group one name twice.
   */
  private readonly groupStamp: Float64Array;
  private stamp = 0;
  private groupName = new Int32Array(16);
  private groupCount = new Int32Array(16);
  private groupFill = new Int32Array(16);
  private groupMore = new Uint8Array(16);
  private groupSum: Sum[] = [];
  private ranks = new Int32Array(32);
  /** The range of the last `expand` call. */
  private expandedStart = -1;
  private expandedEnd = -1;

  constructor(p: Profile, sampleTypeIndex: number) {
    const values = p.samples['.values'][sampleTypeIndex];
    if (!values) {
      throw new ProfkitError(ErrorCodes.USAGE, `sample type index ${sampleTypeIndex} is out of range (the profile has ${p.sample_types.type.length} sample types)`, {
        option: 'sampleTypeIndex',
        rule: 'the sample type index must name an existing sample type',
      });
    }
    this.values = values;
    this.offsets = p.samples.locations.offsets;
    this.locationIds = p.samples.locations.location_id;
    this.index = new ProfileIndex(p);
    this.idRows = this.index.locations.denseRows;
    const keep = (v: bigint) => v !== 0n;
    this.exact = sumsExactInDoubles(values, keep);
    this.zero = this.exact ? 0 : 0n;
    // The kept samples (a nonzero value and a known location), each at its root-most known
    // location; and the location rows they use.
    const locations = p.locations.location_id.length;
    const used = new Uint8Array(locations);
    const rootFrame = new Int32Array(values.length);
    for (let i = 0; i < values.length; i++) {
      rootFrame[i] = -1;
      if (!keep(values[i]!)) continue;
      for (let k = this.offsets[i]!; k < this.offsets[i + 1]!; k++) {
        const r = this.rowOf(this.locationIds[k]!);
        if (r < 0) continue;
        used[r] = 1;
        rootFrame[i] = k;
      }
    }
    this.sums = this.exact ? new Float64Array(values.length) : new Array<bigint>(values.length).fill(0n);
    const kept = this.mergeEqualStacks(rootFrame);
    this.positions = kept;
    this.posSample = new Int32Array(kept);
    this.posFrame = new Int32Array(kept);
    this.posPrinted = new Int32Array(kept);
    for (let i = 0, k = 0; i < values.length; i++) {
      if (rootFrame[i]! < 0) continue;
      this.posSample[k] = i;
      this.posFrame[k++] = rootFrame[i]!;
    }
    this.nextSample = new Int32Array(kept);
    this.nextFrame = new Int32Array(kept);
    this.nextPrinted = new Int32Array(kept);
    this.groupOfPosition = new Int32Array(kept);

    // The names of `locationFrames`, each function row's looked up once and each distinct name made
    // safe and hashed once: per frame, a crafted profile's one 64 MiB name shared by thousands of
    // locations cost its length each time (2,200 locations of a 1 MiB name: 11 s).
    const located = locationNameIds(p, this.index);
    const nameIds = new StringKeyedMap<number>();
    const nameOfLocated = new Int32Array(located.names.length).fill(-1);
    const nameIdOf = (j: number) => {
      if (nameOfLocated[j]! < 0) {
        const name = foldedName(located.names[j]!);
        let id = nameIds.get(name);
        if (id === undefined) nameIds.set(name, (id = this.names.push(name) - 1));
        nameOfLocated[j] = id;
      }
      return nameOfLocated[j]!;
    };
    // Flat arrays rather than one array per location: the walk reads them once per frame.
    const locNames: number[] = [];
    const firstName = new Int32Array(locations);
    const nameCount = new Int32Array(locations);
    for (let r = 0; r < locations; r++) {
      if (!used[r]) continue;
      firstName[r] = locNames.length;
      nameCount[r] = located.start[r + 1]! - located.start[r]!;
      for (let j = located.start[r]!; j < located.start[r + 1]!; j++) locNames.push(nameIdOf(located.ids[j]!));
    }
    this.locNames = Int32Array.from(locNames);
    this.firstName = firstName;
    this.nameCount = nameCount;
    const keyText = (key: number) => (key & 1 ? this.names[key >> 1]! + ';' : this.names[key >> 1]!);
    const keys = Array.from({ length: 2 * this.names.length }, (_, key) => keyText(key));
    this.keyOfRank = Int32Array.from(keys.keys()).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));
    this.rankOfKey = new Int32Array(keys.length);
    this.keyOfRank.forEach((key, rank) => (this.rankOfKey[key] = rank));
    this.groupOfName = new Int32Array(this.names.length);
    this.groupStamp = new Float64Array(this.names.length).fill(-1);
  }

  /** The slot of location id `id` in `slotInfo`: the id itself when ids are dense, else its row; -1 for none. */
  private slotOf(id: number): number {
    const rows = this.idRows;
    if (rows) return id < rows.length ? id : -1;
    return this.index.locations.get(id);
  }

  /** The location row of location id `id`, or -1. */
  private rowOf(id: number): number {
    const rows = this.idRows;
    if (rows) return id < rows.length ? rows[id]! : -1;
    return this.index.locations.get(id);
  }

  /**
   * Segment ids: a line's text is that of its segments joined by `;`. Segment `id` is the name
   * `id` when `id < names.length`, else all the names of location row `id - names.length` (which
   * a sample that alone reaches that location prints in one piece).
   */
  get segments(): number {
    return this.names.length + this.nameCount.length;
  }

  /** The name ids of segment `id`, root-most first. */
  segmentNames(id: number): Int32Array {
    if (id < this.names.length) return Int32Array.of(id);
    const r = id - this.names.length;
    return this.locNames.subarray(this.firstName[r]!, this.firstName[r]! + this.nameCount[r]!);
  }

  /**
   * Starts the walk. `segmentStart[id]` is where the text of segment `id` starts in some layout of
   * them all, one after another (`segmentStart[id + 1]` where it ends): the walk reports lines'
   * lengths (`ends`, `length`, with 1 per `;`) in its units.
   *
   * A path whose text or walked entries (`WALKED_ENTRY_BYTES` each) pass `maxLineLength` is given
   * to `refuseLine` (that size), which must throw, as soon as it is that long: two samples that
   * print a long run of names alike (a location of many inline frames repeated along a deep
   * stack) are walked a name at a time, and a small profile can ask for billions of names in one
   * line. The path's memory is so bounded by the limit too (a tail's by its text, see `ends`).
   */
  begin(segmentStart: Float64Array, maxLineLength: number, refuseLine: (length: number) => void): void {
    this.segmentStart = segmentStart;
    this.maxLineLength = maxLineLength;
    this.refuseLine = refuseLine;
    const rows = this.nameCount.length;
    const slots = this.idRows ? this.idRows.length : rows;
    const info = (this.slotInfo = new Int32Array(4 * slots).fill(-1));
    for (let slot = 0; slot < slots; slot++) {
      const r = this.idRows ? this.idRows[slot]! : slot;
      if (r < 0 || this.nameCount[r] === 0) continue;
      const segment = this.nameCount[r]! > 1 ? this.names.length + r : this.locNames[this.firstName[r]!]!;
      // A segment of 2^31 - 1 units or more makes a line longer than any string (bytes are fewer:
      // MAX_FOLDED_SEGMENT_BYTES), refused all the same.
      info[4 * slot] = segment;
      info[4 * slot + 1] = Math.min(segmentStart[segment + 1]! - segmentStart[segment]!, MAX_INT32);
      info[4 * slot + 2] = r;
    }
    this.depth = this.unchanged = this.pending = 0;
    // The root: every kept sample, nothing printed.
    if (this.positions > 0) this.expand(0, 0, this.positions);
  }

  /** Advances to the next line in text order (`path`, `depth`, `unchanged`, `sum`); false at the end. */
  next(): boolean {
    this.unchanged = this.depth;
    for (;;) {
      if (this.pending === 0) return false;
      const k = --this.pending;
      const key = this.pendingKey[k]!;
      const depth = this.pendingDepth[k]!;
      const start = this.pendingStart[k]!;
      const end = this.pendingEnd[k]!;
      this.setSegment(depth, key >> 1);
      if ((key & 1) === 0) {
        this.depth = depth + 1;
        this.length = this.ends[depth]!;
        this.sum = this.pendingSum[k]!;
        return true;
      }
      if (end - start === 1) {
        this.followSample(start, depth + 1);
        return true;
      }
      this.expand(depth + 1, start, end);
    }
  }

  /** Sets `path[depth]` to name `name`. */
  private setSegment(depth: number, name: number): void {
    this.putSegment(depth, name, this.segmentStart[name + 1]! - this.segmentStart[name]!);
  }

  /** Sets `path[depth]`, an entry the walk goes through, to `segment`, whose text is `length` long. */
  private putSegment(depth: number, segment: number, length: number): void {
    if (depth >= this.ends.length || depth >= this.path.length) {
      // Never more walked entries than the limit pays for (see below): doubling past it would
      // allocate up to twice what the budget allows before the check refuses the line.
      const most = Math.floor(this.maxLineLength / WALKED_ENTRY_BYTES) + 1;
      if (depth >= this.ends.length) this.ends = grown(this.ends, depth + 1, most);
      if (depth >= this.path.length) this.path = grown(this.path, depth + 1, most);
      this.countPathBytes();
    }
    this.path[depth] = segment;
    const end = depth === 0 ? length : this.ends[depth - 1]! + 1 + length;
    this.ends[depth] = end;
    // The walked path costs its entries as well as its text: a name of a run of inline frames
    // two samples print alike is 2 bytes (`a;`) but an entry of 12 (charged 20), so both are held
    // to the limit (on its text alone, a 245 KB profile walked a 512 MiB line's 5 GB of entries
    // before being refused). Each on its own, not their sum, and a tail's entries only by their text
    // (`putTailSegment`): summed, a line whose text fits was refused for its depth (one sample
    // 1,000 frames deep of 1-byte names: 2 KB of text charged 22 KB).
    const charged = Math.max(end, (depth + 1) * WALKED_ENTRY_BYTES);
    if (charged > this.maxLineLength) this.refuseLine(charged);
    if (depth < this.unchanged) this.unchanged = depth;
  }

  /**
   * Sets `path[depth]`, an entry of a line's tail (`followSample`), to `segment`, whose text is
   * `length` long, after a text of `lineLength`; returns the text's length with it. Only in
   * `path`: an entry is 4 bytes, its text at least 2 (a name, never empty, and its `;`), so the
   * path grows to at most half the longest line's length in entries.
   */
  private putTailSegment(depth: number, segment: number, length: number, lineLength: number): number {
    if (depth >= this.path.length) {
      this.path = grown(this.path, depth + 1, Math.floor(this.maxLineLength / 2) + 2);
      this.countPathBytes();
    }
    this.path[depth] = segment;
    const end = lineLength + 1 + length;
    if (end > this.maxLineLength) this.refuseLine(end);
    return end;
  }

  /** Keeps `foldedWalkStats.largestPathBytes`. */
  private countPathBytes(): void {
    foldedWalkStats.largestPathBytes = Math.max(foldedWalkStats.largestPathBytes, this.path.byteLength + this.ends.byteLength);
  }

  /** The value of sample `i` as a sum. */
  private valueOf(i: number): Sum {
    return this.sums[i]!;
  }

  /**
   * Merges the kept samples (`rootFrame[i]` >= 0) whose location ids are the same: the first of
   * them gets their sum (`sums`), the others are no longer kept, nor are samples whose sum is 0
   * (they add nothing to any line). Returns how many are kept. Profiles repeat stacks (a CPU
   * profile's hot loop is one stack in thousands of samples): the walk then follows each once.
   */
  private mergeEqualStacks(rootFrame: Int32Array): number {
    const { offsets, locationIds, values } = this;
    const sums = this.sums as unknown as Sum[];
    const n = values.length;
    const hashes = new Int32Array(n);
    const mask = (1 << Math.min(30, Math.max(4, 32 - Math.clz32(2 * n)))) - 1;
    const slots = new Int32Array(mask + 1).fill(-1);
    // Seeded per walk: unseeded, an input could give its stacks location ids that all hash alike
    // (the last id of each solved for the hash: one multiplication), and the probes grew as the
    // square of the samples (40,000 samples: 4.7 s; the 5M allowed: a day).
    const seed = (Math.random() * 0x1_0000_0000) | 0;
    for (let i = 0; i < n; i++) {
      if (rootFrame[i]! < 0) continue;
      const start = offsets[i]!;
      const end = offsets[i + 1]!;
      const h = locationIdsHash(locationIds, start, end, seed);
      hashes[i] = h;
      const value = this.exact ? Number(values[i]!) : values[i]!;
      for (let slot = h & mask; ; slot = (slot + 1) & mask) {
        const j = slots[slot]!;
        if (j < 0) {
          slots[slot] = i;
          sums[i] = value;
          break;
        }
        if (hashes[j] === h && sameLocationIds(locationIds, offsets[i]!, offsets[i + 1]!, offsets[j]!, offsets[j + 1]!)) {
          sums[j] = addSums(sums[j]!, value);
          rootFrame[i] = -1;
          break;
        }
      }
    }
    let kept = 0;
    for (let i = 0; i < n; i++) {
      if (rootFrame[i]! < 0) continue;
      if (sums[i] === this.zero) rootFrame[i] = -1;
      else kept++;
    }
    return kept;
  }

  /** The next known location id of sample `i` after (toward the leaf of) its id at `frame`, or -1. */
  private nextFrameOf(i: number, frame: number): number {
    const first = this.offsets[i]!;
    for (let k = frame - 1; k >= first; k--) {
      const at = 4 * this.slotOf(this.locationIds[k]!);
      if (at >= 0 && this.slotInfo[at]! >= 0) return k;
    }
    return -1;
  }

  /**
   * The line of the only sample at position `k`, from `depth` on: the rest of its location's
   * names one by one, then each further location in one segment.
   */
  private followSample(k: number, depth: number): void {
    const { locationIds, segmentStart } = this;
    const i = this.posSample[k]!;
    const first = this.offsets[i]!;
    let frame = this.posFrame[k]!;
    const printed = this.posPrinted[k]!;
    // The path up to here is walked; the rest, this sample's alone, is its tail.
    let length = this.ends[depth - 1]!;
    if (printed > 0) {
      const r = this.rowOf(locationIds[frame]!);
      for (let n = printed; n < this.nameCount[r]!; n++) {
        const name = this.locNames[this.firstName[r]! + n]!;
        length = this.putTailSegment(depth++, name, segmentStart[name + 1]! - segmentStart[name]!, length);
      }
      frame--;
    }
    const info = this.slotInfo;
    for (; frame >= first; frame--) {
      const at = 4 * this.slotOf(locationIds[frame]!);
      // An unknown id (slot -1, or a dense id without a location) prints nothing.
      if (at < 0 || info[at]! < 0) continue;
      length = this.putTailSegment(depth++, info[at]!, info[at + 1]!, length);
    }
    this.depth = depth;
    this.length = length;
    this.sum = this.valueOf(i);
  }

  /**
   * Queues the children of the node at `depth` - 1 whose positions are `[start, end)`: each
   * position advanced by one name, the range regrouped by that name (the positions whose sample
   * ends there count toward the child's own line and leave the range).
   *
   * Each loop is a method of its own: the first call (the root, every sample) makes V8 compile a
   * loop while it runs, and code after such a loop that had not run yet made every later call
   * fall back to the interpreter there (hundreds of deoptimizations).
   */
  private expand(depth: number, start: number, end: number): void {
    // The same range as the last call: that node had one child, which every position reached (the
    // only way a range comes back whole). A run may follow; elsewhere looking for one costs its
    // misses for nothing (profiles whose stacks share little).
    if (start === this.expandedStart && end === this.expandedEnd && end - start > 1) depth = this.followSharedRun(depth, start, end);
    this.expandedStart = start;
    this.expandedEnd = end;
    foldedWalkStats.regroupedPositions += end - start;
    const groups = this.groupByNextName(start, end);
    const kept = this.placeGroups(groups);
    this.regroup(start, end);
    this.copyBack(start, kept);
    const keys = this.sortedKeys(groups);
    this.reservePending(this.pending + keys);
    this.queueKeys(depth, start, keys);
  }

  /**
   * Walks, in one step, the locations that every position of `[start, end)` has next, the same
   * ids one after another (stacks sharing a long prefix: a deep call path many samples go
   * through): puts their segments on the path at `depth` on, advances every position to the last
   * of them and returns the depth after them; returns `depth` when the positions differ there.
   * Name by name, `expand` regrouped every position once per name: 50,000 samples sharing 490
   * frames were 24.6M regrouped positions (2.3 s; 0.9 s for the stack-table walk before it).
   *
   * The positions share the run, so its nodes have a single child each and no line of their own
   * (no sample ends inside it): nothing there is sorted or summed. Its last location is left to
   * `groupByNextName`, where the samples part or end. Equal ids print equal names, so unknown
   * ids compare like the others; the run is measured `RUN_BLOCK` ids at a time, so that positions
   * which part soon cost a block, not their whole stacks.
   */
  private followSharedRun(depth: number, start: number, end: number): number {
    const { posSample, posFrame, posPrinted, locationIds, offsets } = this;
    const frame0 = posFrame[start]!;
    const printed0 = posPrinted[start]!;
    const id0 = locationIds[frame0]!;
    for (let k = start + 1; k < end; k++) if (locationIds[posFrame[k]!] !== id0 || posPrinted[k] !== printed0) return depth;
    // How many location ids from each position's on are those of the first position.
    const available0 = frame0 - offsets[posSample[start]!]! + 1;
    // Blocks of 1, 2, 4, … ids, at most RUN_BLOCK: a block the positions do not all share costs at
    // most twice what the blocks before it skipped (a crafted profile whose samples part one
    // frame in, over and over, paid RUN_BLOCK compares a position at each frame: 2.3x the walk).
    let run = 1;
    let compared = 0;
    for (let block = 1, blockFull = true; blockFull; block = Math.min(2 * block, RUN_BLOCK)) {
      const blockEnd = Math.min(run + block, available0);
      let shared = blockEnd;
      for (let k = start + 1; k < end && shared > run; k++) {
        const frame = posFrame[k]!;
        const most = Math.min(shared, frame - offsets[posSample[k]!]! + 1);
        let n = run;
        while (n < most && locationIds[frame - n] === locationIds[frame0 - n]) n++;
        compared += n - run + 1;
        shared = n;
      }
      blockFull = shared === run + block;
      run = shared;
    }
    foldedWalkStats.runComparedIds += compared;
    // The run's last location, left to the grouping, must print something.
    while (run > 1 && !this.isKnown(locationIds[frame0 - run + 1]!)) run--;
    if (run < 2) return depth;
    const info = this.slotInfo;
    if (printed0 > 0) {
      const r = this.rowOf(id0);
      for (let n = printed0; n < this.nameCount[r]!; n++) this.setSegment(depth++, this.locNames[this.firstName[r]! + n]!);
    } else {
      const at = 4 * this.slotOf(id0);
      this.putSegment(depth++, info[at]!, info[at + 1]!);
    }
    for (let frame = frame0 - 1; frame > frame0 - run + 1; frame--) {
      const at = 4 * this.slotOf(locationIds[frame]!);
      if (at >= 0 && info[at]! >= 0) this.putSegment(depth++, info[at]!, info[at + 1]!);
    }
    for (let k = start; k < end; k++) {
      posFrame[k] = posFrame[k]! - (run - 1);
      posPrinted[k] = 0;
    }
    return depth;
  }

  /** Whether location id `id` prints anything (a known location). */
  private isKnown(id: number): boolean {
    const at = 4 * this.slotOf(id);
    return at >= 0 && this.slotInfo[at]! >= 0;
  }

  /**
   * Advances each position of `[start, end)` by one name and groups the positions by that name
   * (`groupOfPosition`, -1 for a position whose sample ends there, its value then counted in its
   * group's sum). Returns the number of groups.
   */
  private groupByNextName(start: number, end: number): number {
    const { nameCount, firstName, locNames, locationIds, posSample, posFrame, posPrinted, groupOfName, groupStamp, groupOfPosition, slotInfo } = this;
    const wholeLocation = this.names.length;
    const stamp = ++this.stamp;
    let groups = 0;
    for (let k = start; k < end; k++) {
      const i = posSample[k]!;
      const frame = posFrame[k]!;
      const printed = posPrinted[k]! + 1;
      // A location of one name is that name (its record says so: no other table read).
      const at = 4 * this.slotOf(locationIds[frame]!);
      let name = slotInfo[at]!;
      let count = 1;
      if (name >= wholeLocation) {
        const r = slotInfo[at + 2]!;
        name = locNames[firstName[r]! + printed - 1]!;
        count = nameCount[r]!;
      }
      if (groupStamp[name] !== stamp) {
        if (groups === this.groupName.length) this.growGroups(groups + 1);
        groupStamp[name] = stamp;
        groupOfName[name] = groups;
        this.groupName[groups] = name;
        this.groupCount[groups] = 0;
        this.groupMore[groups] = 0;
        this.groupSum[groups] = this.zero;
        groups++;
      }
      const g = groupOfName[name]!;
      // Advanced: to the next name of the location, or to the next location; or the sample ends.
      if (printed < count) {
        posPrinted[k] = printed;
      } else {
        const next = this.nextFrameOf(i, frame);
        if (next < 0) {
          this.groupSum[g] = addSums(this.groupSum[g]!, this.valueOf(i));
          groupOfPosition[k - start] = -1;
          continue;
        }
        posFrame[k] = next;
        posPrinted[k] = 0;
      }
      groupOfPosition[k - start] = g;
      this.groupCount[g]!++;
      this.groupMore[g] = 1;
    }
    return groups;
  }

  /** Where each group's positions go (`groupFill`, from 0, in the order of the groups' first positions); returns how many go on. */
  private placeGroups(groups: number): number {
    const { groupCount, groupFill } = this;
    let kept = 0;
    for (let g = 0; g < groups; g++) {
      groupFill[g] = kept;
      kept += groupCount[g]!;
    }
    return kept;
  }

  /** The positions of `[start, end)` that go on, grouped, into `nextSample`/`nextFrame`/`nextPrinted` (`groupFill` then ends each group). */
  private regroup(start: number, end: number): void {
    const { groupFill, groupOfPosition, posSample, posFrame, posPrinted, nextSample, nextFrame, nextPrinted } = this;
    for (let k = start; k < end; k++) {
      const g = groupOfPosition[k - start]!;
      if (g < 0) continue;
      const at = groupFill[g]!++;
      nextSample[at] = posSample[k]!;
      nextFrame[at] = posFrame[k]!;
      nextPrinted[at] = posPrinted[k]!;
    }
  }

  /** The `kept` regrouped positions back into the range from `start` (a loop: most ranges are a few positions, each `set` made a view). */
  private copyBack(start: number, kept: number): void {
    const { posSample, posFrame, posPrinted, nextSample, nextFrame, nextPrinted } = this;
    for (let k = 0; k < kept; k++) {
      posSample[start + k] = nextSample[k]!;
      posFrame[start + k] = nextFrame[k]!;
      posPrinted[start + k] = nextPrinted[k]!;
    }
  }

  /** The ranks of the groups' keys (own line when its sum is not 0, lines below when any position goes on) in `ranks`, sorted; returns how many. */
  private sortedKeys(groups: number): number {
    if (2 * groups > this.ranks.length) this.ranks = grown(this.ranks, 2 * groups);
    const { ranks, rankOfKey, groupName, groupSum, groupMore, zero } = this;
    let keys = 0;
    for (let g = 0; g < groups; g++) {
      const name = groupName[g]!;
      if (groupSum[g] !== zero) ranks[keys++] = rankOfKey[2 * name]!;
      if (groupMore[g]) ranks[keys++] = rankOfKey[2 * name + 1]!;
    }
    sortInts(ranks, keys);
    return keys;
  }

  /** Queues the `keys` sorted keys of `ranks`, last first (`pending` has room). */
  private queueKeys(depth: number, start: number, keys: number): void {
    const { ranks, keyOfRank, groupOfName, groupFill, groupCount, groupSum, pendingKey, pendingDepth, pendingStart, pendingEnd, pendingSum } = this;
    for (let k = keys - 1; k >= 0; k--) {
      const key = keyOfRank[ranks[k]!]!;
      const g = groupOfName[key >> 1]!;
      const at = this.pending++;
      pendingKey[at] = key;
      pendingDepth[at] = depth;
      pendingStart[at] = start + groupFill[g]! - groupCount[g]!;
      pendingEnd[at] = start + groupFill[g]!;
      pendingSum[at] = groupSum[g]!;
    }
  }

  private growGroups(n: number): void {
    this.groupName = grown(this.groupName, n);
    this.groupCount = grown(this.groupCount, n);
    this.groupFill = grown(this.groupFill, n);
    this.groupMore = grown(this.groupMore, n);
  }

  private reservePending(n: number): void {
    if (n > this.pendingKey.length) {
      this.pendingKey = grown(this.pendingKey, n);
      this.pendingDepth = grown(this.pendingDepth, n);
      this.pendingStart = grown(this.pendingStart, n);
      this.pendingEnd = grown(this.pendingEnd, n);
    }
  }
}

/** Sorts the first `n` of `a` ascending: by insertion when few (most nodes have a few children), else by the built-in sort. */
function sortInts(a: Int32Array, n: number): void {
  if (n > 16) {
    a.subarray(0, n).sort();
    return;
  }
  for (let i = 1; i < n; i++) {
    const x = a[i]!;
    let j = i - 1;
    for (; j >= 0 && a[j]! > x; j--) a[j + 1] = a[j]!;
    a[j + 1] = x;
  }
}

const MAX_INT32 = 2 ** 31 - 1;

/** The most location ids compared per position in one pass of `followSharedRun`. */
const RUN_BLOCK = 16;

/**
 * Bytes charged for each entry the walk goes through: more than its 12 (`path`, Int32, and `ends`,
 * Float64), as when it also had its text's start (a line refused then is refused now).
 */
const WALKED_ENTRY_BYTES = 20;

/**
 * For tests: the largest path (the bytes of `path` and `ends`) any `FoldedWalk` of this
 * process allocated, the positions its `expand` calls regrouped (the walk's work) and the location
 * ids `followSharedRun` compared (about; the work of looking for runs). Reset them to 0 before a
 * walk to read that walk's.
 */
export const foldedWalkStats = { largestPathBytes: 0, regroupedPositions: 0, runComparedIds: 0 };

/** Bytes of the folded text. */
const SEPARATOR = 59; // ;
const SPACE = 32;
const NEWLINE = 10;
