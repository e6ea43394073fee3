/** `toFolded`: Brendan Gregg's collapsed-stack format (`root;caller;leaf value`). */

import { ErrorCodes, ProfkitError } from '../errors.js';
import type { Profile } from '../model.js';
import { ProfileIndex, defaultSampleTypeIndex, locationFrames } from '../views.js';
import { buildStackTable, grown, sparseSelf, sparseSlot, stackChildren, type SparseSelf, type StackTable } from './stack-table.js';
import { ReportTextBudget, joinReportText, type ReportLimits } from '../report-text.js';
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
  for (const line of walk.lines()) {
    let units = line.depth - 1;
    for (let i = 0; i < line.depth; i++) units += textOf(line.path[i]!).length;
    budget.reserve(units);
    let text = textOf(line.path[0]!);
    for (let i = 1; i < line.depth; i++) text += ';' + textOf(line.path[i]!);
    yield budget.take(`${text} ${line.sum}\n`);
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
 * joined, once each): they share one buffer with the longest line, indexed by 32-bit offsets.
 */
export const MAX_FOLDED_SEGMENT_BYTES = 2 ** 31 - 1 - MAX_FOLDED_LINE_BYTES - (1 << 12);

/**
 * The text of `foldedLines` as UTF-8, in chunks of about 1 MiB: what a command writes. Each name
 * is encoded once, and a line is copied from the bytes of its stack's path, of which only the
 * frames below those it shares with the previous line are rewritten; no string is made per line.
 * Counted against `maxReportBytes` line by line, before the line is copied.
 */
export function* foldedChunks(p: Profile, sampleTypeIndex: number = defaultSampleTypeIndex(p), limits?: ReportLimits): Generator<Uint8Array> {
  const budget = new ReportTextBudget('folded', limits, false);
  const walk = new FoldedWalk(p, sampleTypeIndex);
  // Every segment's UTF-8 text (`a`, or `a;b` for a location's names), one after another, then the
  // path's text (`a;b;c`) in the same buffer: a segment is copied into the path with
  // `copyWithin`, a call with no view to make.
  const encoder = new TextEncoder();
  const encoded = walk.names.map((name) => encoder.encode(name));
  const nameStart = new Int32Array(walk.segments + 1);
  let segmentBytes = 0;
  for (let id = 0; id < walk.segments; id++) {
    const names = walk.segmentNames(id);
    let length = names.length === 0 ? 0 : names.length - 1;
    for (const name of names) length += encoded[name]!.length;
    // The offsets are 32-bit and the path's text follows the segments' in one buffer: past this
    // they would wrap (a silently corrupt report), so stop before anything is allocated.
    segmentBytes += length;
    if (segmentBytes > MAX_FOLDED_SEGMENT_BYTES) {
      throw new ProfkitError(ErrorCodes.LIMIT, `the distinct frame texts of the folded report exceed ${MAX_FOLDED_SEGMENT_BYTES} bytes`, {
        rule: 'folded frame texts',
        option: 'maxReportBytes',
        limit: MAX_FOLDED_SEGMENT_BYTES,
      });
    }
    nameStart[id + 1] = segmentBytes;
  }
  const pathStart = nameStart[walk.segments]!;
  let text = new Uint8Array(pathStart + (1 << 12));
  for (let id = 0; id < walk.segments; id++) {
    let at = nameStart[id]!;
    for (const name of walk.segmentNames(id)) {
      if (at > nameStart[id]!) text[at++] = SEPARATOR;
      text.set(encoded[name]!, at);
      at += encoded[name]!.length;
    }
  }
  // `ends[i]` is where the name at depth i ends in the path's text.
  let ends = new Int32Array(64);
  let chunk = new Uint8Array(CHUNK_BYTES);
  let used = 0;
  for (const line of walk.lines()) {
    const { path, depth, unchanged } = line;
    // The length first: a line over the budget is refused before its bytes are copied.
    let pathLength = unchanged === 0 ? -1 : ends[unchanged - 1]! - pathStart;
    for (let i = unchanged; i < depth; i++) pathLength += 1 + nameStart[path[i]! + 1]! - nameStart[path[i]!]!;
    const value = String(line.sum);
    const lineBytes = pathLength + value.length + 2;
    budget.count(lineBytes);
    if (lineBytes > MAX_FOLDED_LINE_BYTES) {
      throw new ProfkitError(ErrorCodes.LIMIT, `one line of the folded report (${lineBytes} bytes) exceeds the longest folded line (${MAX_FOLDED_LINE_BYTES} bytes)`, {
        rule: 'longest folded line',
        option: 'maxReportBytes',
        limit: MAX_FOLDED_LINE_BYTES,
      });
    }
    if (depth > ends.length) ends = grown(ends, depth);
    if (pathStart + pathLength > text.length) text = grown(text, pathStart + pathLength);
    for (let i = unchanged, at = unchanged === 0 ? pathStart : ends[unchanged - 1]!; i < depth; i++) {
      if (i > 0) text[at++] = SEPARATOR;
      const name = path[i]!;
      text.copyWithin(at, nameStart[name]!, nameStart[name + 1]!);
      ends[i] = at += nameStart[name + 1]! - nameStart[name]!;
    }
    if (used + lineBytes > chunk.length) {
      if (used > 0) yield chunk.subarray(0, used);
      chunk = new Uint8Array(Math.max(CHUNK_BYTES, lineBytes));
      used = 0;
    }
    chunk.set(text.subarray(pathStart, pathStart + pathLength), used);
    used += pathLength;
    chunk[used++] = SPACE;
    for (let k = 0; k < value.length; k++) chunk[used++] = value.charCodeAt(k);
    chunk[used++] = NEWLINE;
  }
  if (used > 0) yield chunk.subarray(0, used);
}

/** One line of the walk: the frame names of its stack, root first, and its value. */
interface FoldedLine {
  /**
   * Segments (`FoldedWalk.segmentNames`: one name, or all the names of a location), root first,
   * joined by `;`; the first `depth` are this line's.
   */
  path: Int32Array;
  depth: number;
  /** How many leading segments are those of the previous line (0 for the first line). */
  unchanged: number;
  /** The sum of the values of the stacks that print as this line; never 0. */
  sum: bigint;
}

/**
 * The folded lines of a profile in text order, from its stack table without comparing stacks.
 *
 * Distinct stacks print alike when their frames have equal names (two locations of one function),
 * and a location prints one name per inline frame: the lines are the paths of the prefix tree of
 * the stacks' NAME sequences, in which each stack-table row ends at one node. That tree is walked
 * depth first without being built: a node is the set of positions (stack row, names of its
 * location printed so far) that reach it, and its children are found by advancing each position
 * by one name and grouping by name. A node with a single position (most of a tree of stacks that
 * share little) advances without grouping.
 *
 * Siblings are visited in the order of their texts. Names hold no `;`, so of two sibling nodes
 * the texts compare as `name` (the node's own line, which ends there and so sorts before any
 * longer text) and `name;` (the lines below it) compare: each node is two sort keys, ranked
 * once for all names. With `foo` and `foo2`: `foo` < `foo2` < `foo2;…` < `foo;…`, as `2` < `;`.
 */
class FoldedWalk {
  /** Frame names, by id. */
  readonly names: string[] = [];
  private readonly stacks: StackTable;
  /**
   * The self sums of the stack rows in the table's sparse form (a bit a row, set when its sum is
   * not 0): few rows of a table of stacks that share little have samples of their own.
   */
  private readonly selfSums: SparseSelf;
  /**
   * Name ids of the location rows' frames: those of row `r`, root-most (outermost inline frame)
   * first, are the `nameCount[r]` from `firstName[r]` on.
   */
  private readonly locNames: Int32Array;
  private readonly firstName: Int32Array;
  private readonly nameCount: Int32Array;
  /** Rank, among all names' two keys, of key `2 * id` (the name) and `2 * id + 1` (name and `;`). */
  private readonly rankOfKey: Int32Array;
  /** The key of each rank. */
  private readonly keyOfRank: Int32Array;

  constructor(p: Profile, sampleTypeIndex: number) {
    if (!p.samples['.values'][sampleTypeIndex]) {
      throw new ProfkitError(ErrorCodes.USAGE, `sample type index ${sampleTypeIndex} is out of range (the profile has ${p.sample_types.type.length} sample types)`, {
        option: 'sampleTypeIndex',
        rule: 'the sample type index must name an existing sample type',
      });
    }
    const index = new ProfileIndex(p);
    this.stacks = buildStackTable(p, index, sampleTypeIndex);
    this.selfSums = sparseSelf(this.stacks);
    const nameIds = new StringKeyedMap<number>();
    const nameIdOf = (f: { name: string }) => {
      const name = foldedName(f.name || '[unknown]');
      let id = nameIds.get(name);
      if (id === undefined) nameIds.set(name, (id = this.names.push(name) - 1));
      return id;
    };
    // Flat arrays rather than one array per location: the walk reads them once per frame.
    const { frame, length } = this.stacks;
    const locations = p.locations.location_id.length;
    const seen = new Uint8Array(locations);
    const locNames: number[] = [];
    const firstName = new Int32Array(locations);
    const nameCount = new Int32Array(locations);
    for (let s = 0; s < length; s++) {
      const r = frame[s]!;
      if (seen[r]) continue;
      seen[r] = 1;
      const frames = locationFrames(p, index, r);
      firstName[r] = locNames.length;
      nameCount[r] = frames.length;
      for (let i = frames.length - 1; i >= 0; i--) locNames.push(nameIdOf(frames[i]!));
    }
    this.locNames = Int32Array.from(locNames);
    this.firstName = firstName;
    this.nameCount = nameCount;
    const keyText = (key: number) => (key & 1 ? this.names[key >> 1]! + ';' : this.names[key >> 1]!);
    const keys = Array.from({ length: 2 * this.names.length }, (_, key) => keyText(key));
    this.keyOfRank = Int32Array.from(keys.keys()).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));
    this.rankOfKey = new Int32Array(keys.length);
    this.keyOfRank.forEach((key, rank) => (this.rankOfKey[key] = rank));
  }

  /** The self sum of stack row `s`, which has samples of its own (doubles hold exact sums only). */
  private selfOf(s: number): bigint {
    const sum = this.selfSums.sums[sparseSlot(this.selfSums, s)]!;
    return typeof sum === 'bigint' ? sum : BigInt(sum);
  }

  /**
   * Segment ids: a line's text is that of its segments joined by `;`. Segment `id` is the name
   * `id` when `id < names.length`, else all the names of location row `id - names.length` (which
   * a stack that alone reaches that location prints in one piece).
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

  /** The lines in text order. The line object is reused: read it before asking for the next. */
  *lines(): Generator<FoldedLine> {
    const { frame } = this.stacks;
    const { bits } = this.selfSums;
    const selfOf = (s: number) => this.selfOf(s);
    const { firstChild, nextSibling } = stackChildren(this.stacks);
    const { locNames, firstName, nameCount } = this;
    const line: FoldedLine = { path: new Int32Array(64), depth: 0, unchanged: 0, sum: 0n };
    // Positions (stack row, names printed of its location) of the nodes waiting to be visited,
    // in blocks of siblings; a block is dropped once a node of an older block is visited.
    let posStack = new Int32Array(1024);
    let posNames = new Int32Array(1024);
    let top = 0;
    // The nodes waiting, last to visit first: each the key of one sibling (its own line, with its
    // value, or the lines below it, with its positions), its depth, and the end of its block.
    const pending: { key: number; depth: number; start: number; end: number; blockEnd: number; sum: bigint }[] = [];
    // Grouping the next names of a node's positions (reused by every node).
    const names = this.names;
    const wholeLocation = names.length;
    const groupOfName = new Int32Array(names.length);
    const groupStamp = new Int32Array(names.length).fill(-1);
    let stamp = 0;
    let candStack = new Int32Array(256);
    let candPrinted = new Int32Array(256);
    let candNames = new Int32Array(256);
    let groupName = new Int32Array(16);
    let groupCount = new Int32Array(16);
    let groupFill = new Int32Array(16);
    let groupMore = new Uint8Array(16);
    let groupSum: bigint[] = [];
    let ranks = new Int32Array(32);


    const setName = (depth: number, name: number) => {
      if (depth >= line.path.length) line.path = grown(line.path, depth + 1);
      line.path[depth] = name;
      if (depth < line.unchanged) line.unchanged = depth;
    };

    /** Queues the children of the node at `depth` whose positions are `posStack/posNames[start, end)`. */
    const expand = (depth: number, start: number, end: number) => {
      // Each position advanced by one name: to the next inline frame, or to each callee row.
      let n = 0;
      const candidate = (s: number, printed: number, name: number) => {
        if (n === candStack.length) {
          candStack = grown(candStack, n + 1);
          candPrinted = grown(candPrinted, n + 1);
          candNames = grown(candNames, n + 1);
        }
        candStack[n] = s;
        candPrinted[n] = printed;
        candNames[n] = name;
        n++;
      };
      for (let k = start; k < end; k++) {
        const s = posStack[k]!;
        const printed = posNames[k]!;
        if (s >= 0 && printed < nameCount[frame[s]!]!) candidate(s, printed + 1, locNames[firstName[frame[s]!]! + printed]!);
        else for (let c = firstChild[s + 1]!; c >= 0; c = nextSibling[c]!) candidate(c, 1, locNames[firstName[frame[c]!]!]!);
      }
      // Grouped by name into a new block of positions.
      stamp++;
      let groups = 0;
      for (let k = 0; k < n; k++) {
        const name = candNames[k]!;
        if (groupStamp[name] !== stamp) {
          if (groups === groupName.length) {
            groupName = grown(groupName, groups + 1);
            groupCount = grown(groupCount, groups + 1);
            groupFill = grown(groupFill, groups + 1);
            groupMore = grown(groupMore, groups + 1);
          }
          groupStamp[name] = stamp;
          groupOfName[name] = groups;
          groupName[groups] = name;
          groupCount[groups] = 0;
          groupMore[groups] = 0;
          groupSum[groups] = 0n;
          groups++;
        }
        groupCount[groupOfName[name]!]!++;
      }
      const blockStart = top;
      const blockEnd = top + n;
      if (blockEnd > posStack.length) ((posStack = grown(posStack, blockEnd)), (posNames = grown(posNames, blockEnd)));
      for (let g = 0, at = blockStart; g < groups; at += groupCount[g]!, g++) groupFill[g] = at;
      for (let k = 0; k < n; k++) {
        const s = candStack[k]!;
        const printed = candPrinted[k]!;
        const g = groupOfName[candNames[k]!]!;
        const at = groupFill[g]!++;
        posStack[at] = s;
        posNames[at] = printed;
        const printable = nameCount[frame[s]!]!;
        // A position at the end of its location's names is its stack: its value is the node's own
        // line (`+` is exact on either representation of the values).
        if (printed === printable && (bits[s >>> 5]! >>> (s & 31)) & 1) groupSum[g] += selfOf(s);
        if (printed < printable || firstChild[s + 1]! >= 0) groupMore[g] = 1;
      }
      top = blockEnd;
      // Each group's keys, sorted, queued last first.
      if (2 * groups > ranks.length) ranks = grown(ranks, 2 * groups);
      let keys = 0;
      for (let g = 0; g < groups; g++) {
        const name = groupName[g]!;
        if (groupSum[g]) ranks[keys++] = this.rankOfKey[2 * name]!;
        if (groupMore[g]) ranks[keys++] = this.rankOfKey[2 * name + 1]!;
      }
      if (keys > 1) ranks.subarray(0, keys).sort();
      for (let k = keys - 1; k >= 0; k--) {
        const key = this.keyOfRank[ranks[k]!]!;
        const g = groupOfName[key >> 1]!;
        const groupEnd = groupFill[g]!;
        pending.push({ key, depth, start: groupEnd - groupCount[g]!, end: groupEnd, blockEnd, sum: groupSum[g]! });
      }
    };

    /**
     * Visits the lines below the node at `depth` - 1 that position (`s`, `printed`) alone reaches:
     * down the names of its location and through single callees, one name at a time (a location
     * reached at its start all at once).
     */
    function* descend(s: number, printed: number, depth: number): Generator<FoldedLine> {
      for (;;) {
        const r = frame[s]!;
        const count = nameCount[r]!;
        if (printed < count) {
          if (printed === 0 && count > 1) {
            setName(depth++, wholeLocation + r);
            printed = count;
          } else {
            setName(depth++, locNames[firstName[r]! + printed++]!);
          }
          if (printed === count && (bits[s >>> 5]! >>> (s & 31)) & 1 && selfOf(s)) {
            line.depth = depth;
            line.sum = selfOf(s);
            yield line;
            line.unchanged = depth;
          }
          continue;
        }
        const c = firstChild[s + 1]!;
        if (c < 0) return;
        if (nextSibling[c]! < 0) {
          s = c;
          printed = 0;
          continue;
        }
        if (top === posStack.length) ((posStack = grown(posStack, top + 1)), (posNames = grown(posNames, top + 1)));
        posStack[top] = s;
        posNames[top] = printed;
        top++;
        expand(depth, top - 1, top);
        return;
      }
    }

    // The root: a position before every root row.
    posStack[0] = -1;
    posNames[0] = 0;
    top = 1;
    expand(0, 0, 1);
    for (let next = pending.pop(); next; next = pending.pop()) {
      top = next.blockEnd;
      setName(next.depth, next.key >> 1);
      if ((next.key & 1) === 0) {
        line.depth = next.depth + 1;
        line.sum = next.sum;
        yield line;
        line.unchanged = line.depth;
      } else if (next.end - next.start === 1) {
        yield* descend(posStack[next.start]!, posNames[next.start]!, next.depth + 1);
      } else {
        expand(next.depth + 1, next.start, next.end);
      }
    }
  }
}

/** Bytes of the folded text. */
const SEPARATOR = 59; // ;
const SPACE = 32;
const NEWLINE = 10;
