/**
 * `cutFlameTree`: the frames of the flame graph at least `minWidth` of the total wide, found
 * from the samples without a stack table. `boundedFlameTree` builds the stack table first (one
 * row per distinct caller path and frame) and expands every frame to count those it leaves out;
 * on profiles whose stacks share little the table has nearly a row per frame of every sample (a
 * random 1M-sample profile: 47M rows, 12 s to build, while 48k frames are drawn). Here a frame's
 * members are the samples through it, at their position in the stack; only drawn frames are
 * expanded, so the walk costs the samples times the depth they are drawn to, and memory is a few
 * bytes a sample; where stacks repeat, the samples of equal location ids are one member
 * (`rootMembers`). `renderFlameGraph` (the CLI's `flame`) counts every frame left out too
 * (`countEveryFrame`): the frames left out are walked as well, where they are chains of one
 * member counted at once; at 200k random stacks that is 0.65x the CPU and 70-80 MiB less peak
 * RSS than `boundedFlameTree` (4.7M stack rows), and at 1M half the RSS.
 */

import { ErrorCodes, ProfkitError } from '../errors.js';
import { READ_LIMITS, limitError, limitValue, type ReadLimits } from '../limits.js';
import type { Profile } from '../model.js';
import { grown, sumsExactInDoubles } from '../ops/stack-table.js';
import { locationIdsHash, sameLocationIds } from '../ops/stack-hash.js';
import { ProfileIndex } from '../views.js';
import type { FlameNode } from './index.js';
import { StringKeyedMap } from '../string-keys.js';

/** A flame tree cut at a width, and how many frames were cut. */
export interface CutFlameTree {
  tree: FlameNode;
  /**
   * Frames left out: those narrower than the cut whose caller is drawn (their own callees are not
   * counted), or with `countEveryFrame` every frame of the complete tree that is not drawn.
   */
  elided: number;
  /** With `countEveryFrame`: the frames of the complete tree (the root included). */
  frames?: number;
  /**
   * With `countEveryFrame`: true when counting the frames left out stopped at its work budget
   * (`CutFlameTreeOptions.countBudget`): `frames` and `elided` are then lower bounds. The frames
   * drawn are the same either way.
   */
  countStopped?: boolean;
}

export interface CutFlameTreeOptions {
  /**
   * Count every frame the cut leaves out, the callees of the frames left out too (what
   * `boundedFlameTree` counts; the subtitle of `renderFlameGraph` says "N of M frames"): the
   * members of a frame left out are still walked, only counted, and a frame with a single member
   * (one sample: the common case where stacks no longer share callers) counts the rest of its
   * sample's stack at once. Default false: only the outermost frames left out are counted, and
   * their members are dropped.
   */
  countEveryFrame?: boolean;
  /**
   * With `countEveryFrame`: the steps counting the frames left out may take (a step is one member
   * moved one frame down, or one stack entry of a single member's rest counted), default
   * `flameCountBudget(p)`, proportional to the profile. A group of members standing in several
   * locations is walked a frame at a time (a run all of them share in one location is taken at
   * once), so many members under deep inline frames cost members × frames: 1,000 entries of two
   * 1,000-line locations of the same functions in the stacks of 200 samples were 200M steps (11 s)
   * for a subtitle. Past the budget the rest is not counted (`countStopped`); the drawing is
   * unchanged.
   */
  countBudget?: number;
  /**
   * `maxFlameFrames` bounds the frames drawn (a `PROFKIT_E_LIMIT` error past it, checked as each
   * is added): one stack entry draws a frame per inline line of its location. `maxFlameDepth`
   * bounds their levels, `maxFlameWalkSteps` the members visited by the frames drawn (default
   * `flameWalkBudget(p)`; the frames left out are bounded by `countBudget` instead).
   */
  limits?: ReadLimits;
}

/**
 * The frame names of every location row, outermost first: the names of row r are
 * `ids[start[r] .. start[r + 1]]`, indices into `names` (`[unknown]` for a frame without a name).
 * The names `locationFrames` gives, without making its frame objects: each function row's name is
 * looked up once (a 1M-sample profile has 100k functions behind 500k frames of its locations;
 * resolving every frame was half of its flame graph's time).
 */
export function locationNameIds(p: Profile, index: ProfileIndex): { names: string[]; start: Int32Array; ids: Int32Array } {
  const names: string[] = [];
  // Names can be long (see StringKeyedMap).
  const nameIds = new StringKeyedMap<number>();
  const idOf = (name: string): number => {
    let id = nameIds.get(name || '[unknown]');
    if (id === undefined) {
      id = names.length;
      names.push(name || '[unknown]');
      nameIds.set(name || '[unknown]', id);
    }
    return id;
  };
  const fnNames = p.functions.name;
  // Name id of each function row, -1 until first needed.
  const ofFunctionRow = new Int32Array(fnNames.length).fill(-1);
  // As locationFrames: an unknown function id is a frame named ''.
  const ofFunction = (functionId: number): number => {
    const fr = index.functions.get(functionId);
    if (fr < 0) return idOf('');
    if (ofFunctionRow[fr]! < 0) ofFunctionRow[fr] = idOf(fnNames[fr]!);
    return ofFunctionRow[fr]!;
  };
  const l = p.locations;
  const inl = p['.inline_lines'];
  const nLocations = l.location_id.length;
  const start = new Int32Array(nLocations + 1);
  // A frame per location and per inline line (grown if a profile's inline offsets overlap).
  let ids = new Int32Array(inl.function_id.length + nLocations);
  let n = 0;
  const push = (id: number) => {
    if (n === ids.length) ids = grown(ids, n + 1);
    ids[n++] = id;
  };
  for (let r = 0; r < nLocations; r++) {
    // locationFrames' order is the location's line, then its inline lines; outermost first is the reverse.
    const b = l['.inline_offsets'][r]!;
    for (let j = l['.inline_offsets'][r + 1]! - 1; j >= b; j--) push(ofFunction(inl.function_id[j]!));
    if (l.function_id[r] !== 0) push(ofFunction(l.function_id[r]!));
    if (n === start[r]) {
      const address = l['.address'][r]!;
      push(idOf(address !== 0n ? '0x' + address.toString(16) : ''));
    }
    start[r + 1] = n;
  }
  return { names, start, ids: ids.slice(0, n) };
}

/** Every node's callees in name order (how flame graphs lay them out), without recursion. */
export function sortChildrenByName(tree: FlameNode): void {
  const byName = (x: FlameNode, y: FlameNode) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0);
  const work: FlameNode[] = [tree];
  while (work.length) {
    const n = work.pop()!;
    n.children.sort(byName);
    for (const c of n.children) work.push(c);
  }
}

/**
 * One expansion's callees grouped by name (two locations of one function are one frame), for
 * the flame cut and the levelled flame graph: `begin()` starts an expansion, `groupOf(name)`
 * counts a callee into its group (numbered 0..size-1 by first appearance) and returns it.
 */
export class CalleeGroups {
  /** Per group: its name id, member count and value (bigints or doubles, as `zero`). */
  readonly name: number[] = [];
  readonly count: number[] = [];
  readonly value: number[] = [];
  size = 0;
  // groupOfName[name] is valid while stampOf[name] is the current expansion's stamp.
  private readonly groupOfName: Int32Array;
  private readonly stampOf: Int32Array;
  private stamp = 0;

  constructor(
    nameCount: number,
    private readonly zero: number,
  ) {
    this.groupOfName = new Int32Array(nameCount);
    this.stampOf = new Int32Array(nameCount).fill(-1);
  }

  begin(): void {
    this.stamp++;
    this.size = 0;
  }

  groupOf(name: number): number {
    if (this.stampOf[name] === this.stamp) {
      const g = this.groupOfName[name]!;
      this.count[g]!++;
      return g;
    }
    const g = this.size++;
    this.stampOf[name] = this.stamp;
    this.groupOfName[name] = g;
    this.name[g] = name;
    this.count[g] = 1;
    this.value[g] = this.zero;
    return g;
  }
}

/**
 * What a location id of the samples stands for in the cut: its row, its outermost frame's name id
 * and its number of frames (inline frames), in one table indexed by the id itself, three entries
 * an id, when the ids are dense (`IdIndex.denseRows`); a frame then costs one read here instead
 * of three dependent reads (id → row → frame range → name) in tables of megabytes.
 */
interface LocationsById {
  /** `info[3 * id]`: name id, `[3 * id + 1]`: frames, `[3 * id + 2]`: row, -1 for an unknown id. */
  info: Int32Array;
  /** Rows of ids past the table (sparse ids: all of them), -1 for an unknown id. */
  rowOf: (id: number) => number;
}

function locationsById(index: ProfileIndex, locStart: Int32Array, locIds: Int32Array): LocationsById {
  const dense = index.locations.denseRows;
  const rowOf = (id: number) => index.locations.get(id);
  if (!dense) return { info: new Int32Array(0), rowOf };
  const info = new Int32Array(3 * dense.length);
  for (let id = 0; id < dense.length; id++) {
    const r = dense[id]!;
    info[3 * id + 2] = r;
    if (r < 0) continue;
    info[3 * id] = locIds[locStart[r]!]!;
    info[3 * id + 1] = locStart[r + 1]! - locStart[r]!;
  }
  return { info, rowOf };
}

/**
 * The name of name id `id` as a string of its own, made once per id (for the frames drawn only).
 * The profile's strings, as a browser's `TextDecoder` makes them, compare several times slower
 * than strings V8 builds itself (Chromium, 47,000 names sorted by `<`: 130-560 ms against 26-128
 * ms once copied by a JSON round trip, which keeps every string exactly, lone surrogates too),
 * and the callees of the 1M-sample profile's root alone are 45,000 names to sort.
 */
function drawnNames(names: readonly string[]): (id: number) => string {
  const copies: (string | undefined)[] = new Array(names.length);
  return (id) => (copies[id] ??= JSON.parse(JSON.stringify(names[id]!)) as string);
}

/**
 * The values of the members (see `cutFlameTree`), read and written as `number`: a typed array of
 * doubles, or an array of bigints (a member sums the samples of its stack, which may pass 2^63).
 */
type ValueColumn = { [i: number]: number; readonly length: number };

/** A `ValueColumn` of `n` zeros: doubles when `exact` (every sum exact in them), else bigints. */
function valueColumnOf(exact: boolean, n: number): ValueColumn {
  return (exact ? new Float64Array(n) : new Array<bigint>(n).fill(0n)) as unknown as ValueColumn;
}

/**
 * The flame tree of sample type `t` (as `flameTree`: root `all`, inline frames expanded
 * outermost first, callees sorted by name, samples with a value <= 0 left out) without the frames
 * narrower than `minWidth` of the total: every drawn frame and value equal to
 * `boundedFlameTree(p, t, minWidth).tree`. A frame left out is not expanded: `elided` counts
 * only the outermost frames left out (unless `countEveryFrame`: then `frames` and `elided` are
 * `boundedFlameTree`'s, without its stack table, whose rows take 8-24 bytes a distinct caller
 * path where the members here take 52 bytes a sample).
 *
 * Memory layout (the walk is bound by cache misses: its members are samples scattered over the
 * profile's stack entries, 24.5M of them at 1M samples): a member carries its sample's value and
 * the bounds of its stack entries, so a visit reads no per-sample column; a location id resolves
 * through `LocationsById`; and each expansion runs in passes (the next stack entry of every
 * member, then their locations, then their names' groups), short loops in which the processor
 * has the misses of many members in flight at once. 1M samples: 0.9 -> 0.6 s (see
 * docs/performance.md).
 */
export function cutFlameTree(p: Profile, t: number, minWidth: number, options: CutFlameTreeOptions & { countEveryFrame: true }): Required<CutFlameTree>;
export function cutFlameTree(p: Profile, t: number, minWidth: number, options?: CutFlameTreeOptions): CutFlameTree;
export function cutFlameTree(p: Profile, t: number, minWidth: number, options: CutFlameTreeOptions = {}): CutFlameTree {
  const cut = cutFlameFrames(p, t, minWidth, options);
  const tree = flameNodesOf(cut.frames);
  return options.countEveryFrame ? { tree, elided: cut.elided, frames: cut.allFrames, countStopped: cut.countStopped } : { tree, elided: cut.elided };
}

/**
 * The drawn frames of a cut flame tree as columns, 30-odd bytes a frame where a `FlameNode` takes
 * about 270 (the object, its callee array, two bigints): numbered in the order the cut draws them
 * (every caller before its callees), callees not yet sorted (`sortedCallees`). Frame 0 is the root.
 */
export class FlameFrames {
  count = 0;
  /** Name id of each frame (see `name`). */
  nameId = new Int32Array(1024);
  /** Caller of each frame, -1 for the root. */
  parent = new Int32Array(1024);
  /** Level of each frame: 1 for the root, its caller's + 1 (checked against `maxDepth`). */
  private level = new Int32Array(1024);
  /** Value and self value of each frame: doubles, or bigints when a sum may pass 2^53 (see ValueColumn). */
  value: ValueColumn;
  self: ValueColumn;

  constructor(
    /** The name of a name id, a string made once per name (see drawnNames). */
    readonly name: (nameId: number) => string,
    private readonly exact: boolean,
    /** Frames at most (`maxFlameFrames`), the root included. */
    private readonly maxFrames: number = Infinity,
    /** Levels at most (`maxFlameDepth`), the root's included. */
    private readonly maxDepth: number = Infinity,
  ) {
    this.value = this.valueColumn(1024);
    this.self = this.valueColumn(1024);
  }

  private valueColumn(n: number): ValueColumn {
    return valueColumnOf(this.exact, n);
  }

  /** Adds a frame (self value 0 until set) and returns its number. */
  add(nameId: number, value: number, parent: number): number {
    if (this.count >= this.maxFrames) {
      throw limitError('maxFlameFrames', `the frames drawn in one flame graph (${this.maxFrames + 1} so far, frames narrower than the min width left out)`, this.maxFrames);
    }
    const level = parent < 0 ? 1 : this.level[parent]! + 1;
    if (level > this.maxDepth) {
      throw limitError('maxFlameDepth', `the levels of one flame graph (a frame drawn at level ${level}: its stack of ${level - 1} frames, inline frames included)`, this.maxDepth);
    }
    const f = this.count++;
    if (f === this.nameId.length) {
      const n = 2 * f;
      this.nameId = grown(this.nameId, n);
      this.parent = grown(this.parent, n);
      this.level = grown(this.level, n);
      const [value, self] = [this.valueColumn(n), this.valueColumn(n)];
      for (let i = 0; i < f; i++) [value[i], self[i]] = [this.value[i]!, this.self[i]!];
      [this.value, this.self] = [value, self];
    }
    this.nameId[f] = nameId;
    this.parent[f] = parent;
    this.level[f] = level;
    this.value[f] = value;
    this.self[f] = (this.exact ? 0 : 0n) as number;
    return f;
  }

  /**
   * Each frame's callees sorted by name (as `sortChildrenByName`, a stable sort of them in the
   * order they were drawn): the callees of frame f are `callees[start[f] .. start[f + 1]]`.
   */
  sortedCallees(): { start: Int32Array; callees: Int32Array } {
    const n = this.count;
    const start = new Int32Array(n + 1);
    for (let f = 1; f < n; f++) start[this.parent[f]! + 1]!++;
    for (let f = 0; f < n; f++) start[f + 1]! += start[f]!;
    const callees = new Int32Array(Math.max(0, n - 1));
    const next = start.slice(0, n);
    for (let f = 1; f < n; f++) callees[next[this.parent[f]!]!++] = f;
    const byName = (x: number, y: number) => {
      const [a, b] = [this.name(this.nameId[x]!), this.name(this.nameId[y]!)];
      return a < b ? -1 : a > b ? 1 : 0;
    };
    for (let f = 0; f < n; f++) {
      if (start[f + 1]! - start[f]! < 2) continue;
      const sorted = Array.from(callees.subarray(start[f]!, start[f + 1]!)).sort(byName);
      callees.set(sorted, start[f]!);
    }
    return { start, callees };
  }
}

/**
 * `FlameFrames` as a tree of `FlameNode`s, callees sorted by name, each callee array made at its
 * size (one grown by `push` holds 17 entries: 152 bytes for a frame's single callee).
 */
function flameNodesOf(frames: FlameFrames): FlameNode {
  const { start, callees } = frames.sortedCallees();
  const nodes: FlameNode[] = new Array(frames.count);
  for (let f = 0; f < frames.count; f++) {
    nodes[f] = { name: frames.name(frames.nameId[f]!), value: BigInt(frames.value[f]!), self: BigInt(frames.self[f]!), children: [] };
  }
  for (let f = 0; f < frames.count; f++) {
    if (start[f + 1]! > start[f]!) nodes[f]!.children = Array.from(callees.subarray(start[f]!, start[f + 1]!), (c) => nodes[c]!);
  }
  return nodes[0]!;
}

/** What `cutFlameFrames` returns: the drawn frames, and (as `CutFlameTree`) the counts of those left out. */
export interface CutFlameFrames {
  frames: FlameFrames;
  elided: number;
  /** With `countEveryFrame`: the frames of the complete tree (the root included). */
  allFrames: number;
  /** With `countEveryFrame`: the count stopped at its budget (`CutFlameTree.countStopped`). */
  countStopped: boolean;
  /** With `countEveryFrame`: the steps spent counting the frames left out (see `countBudget`). */
  countSteps: number;
  /** The members visited by the frames expanded, drawn or left out: the work of the walk. */
  walkSteps: number;
  /** The members visited by the drawn frames and the names compared for their runs (so it may pass `walkSteps`), checked against `maxFlameWalkSteps`. */
  drawSteps: number;
}

/** `cutFlameTree` as columns (`FlameFrames`): the frames as `cutFlameTree` draws them, the root `all` (name id -1). */
export function cutFlameFrames(p: Profile, t: number, minWidth: number, { countEveryFrame = false, countBudget, limits }: CutFlameTreeOptions = {}): CutFlameFrames {
  const col = p.samples['.values'][t];
  if (!col) {
    throw new ProfkitError(ErrorCodes.USAGE, `sample type index ${t} is out of range (the profile has ${p.sample_types.type.length} sample types)`, {
      option: 'sampleTypeIndex',
      rule: 'the sample type index must name an existing sample type',
    });
  }
  // NaN would never stop the count (no comparison with it is true), a negative budget always.
  if (countBudget !== undefined && !(typeof countBudget === 'number' && countBudget >= 0)) {
    throw new ProfkitError(ErrorCodes.USAGE, `countBudget ${String(countBudget)}: expected a number of steps >= 0`, { option: 'countBudget', rule: 'the count budget is a number >= 0' });
  }
  const index = new ProfileIndex(p);
  const { names, start: locStart, ids: locIds } = locationNameIds(p, index);
  const { info: idInfo, rowOf } = locationsById(index, locStart, locIds);
  const idsInTable = idInfo.length / 3;
  const { offsets, location_id } = p.samples.locations;
  // Sample values as doubles when every sum is exact in them (sumsExactInDoubles), else the
  // bigints: `+` is exact on either (as in boundedFlameTree).
  const keep = (v: bigint) => v > 0n;
  const exact = sumsExactInDoubles(col, keep);
  const zero = (exact ? 0 : 0n) as number;
  const valueColumn = (n: number) => valueColumnOf(exact, n);
  let kept = 0;
  for (let i = 0; i < col.length; i++) if (keep(col[i]!)) kept++;

  // The members of the frames still to visit (each distinct stack of the kept samples is a
  // member of at most one of them, so `kept` entries are enough), a stack: the value of the
  // stack's samples, its lowest entry `low` (the innermost location) and its current entry k, and
  // the frame within that entry's location: the location's row and the position among its frames,
  // or row -1 for a location of one frame (only the next entry below is of interest then). The
  // root's members stand before their stack's outermost location: k = offsets[i + 1], row -1.
  const memberValue = valueColumn(kept);
  const memberLow = new Int32Array(kept);
  const memberK = new Int32Array(kept);
  const memberRow = new Int32Array(kept);
  const memberPos = new Int32Array(kept);
  const rootColumns: MemberColumns = { value: memberValue, low: memberLow, k: memberK, row: memberRow, pos: memberPos };
  // Merging the samples of equal stacks pays where stacks repeat (a CPU profile's hot loop is one
  // stack in thousands of samples), and costs a hash of every stack entry and a probe per sample
  // where they do not (1M samples of random stacks: ~40% more time, for 130 merged). Decided on
  // about 4,096 samples spread over the profile: merged when a quarter of the profile's samples
  // are estimated to repeat a stack. Few of the drawn repeat where the distinct stacks outnumber
  // them, however many of all do: n samples drawn of D stacks (n < D) repeat about n²/2D times
  // (the birthday estimate), so r repeats seen (16 or more: fewer say little) estimate D at
  // n²/2r, and a quarter of the profile's N samples repeat when D ≤ 3N/4. 300k samples over
  // 20,000 stacks: 10% of the drawn repeat, 93% of all; the walk 450 → 250 ms.
  const stride = Math.max(1, Math.ceil(col.length / 4096));
  let root = rootMembers(p, col, keep, exact, rootColumns, { stride, merge: true });
  if (stride > 1) {
    const sampled = root.samples;
    const repeats = sampled - root.members;
    const repeated = repeats >= sampled / 4 || (repeats >= 16 && sampled * sampled <= 1.5 * repeats * kept);
    root = rootMembers(p, col, keep, exact, rootColumns, { stride: 1, merge: repeated });
  }
  let members = root.members;
  const rootValue = root.value;
  const drawnName = drawnNames(names);
  const drawn = new FlameFrames((id) => (id < 0 ? 'all' : drawnName(id)), exact, limitValue(limits, 'maxFlameFrames'), limitValue(limits, 'maxFlameDepth'));
  const ROOT = drawn.add(-1, rootValue, -1);
  const threshold = minWidth * Number(rootValue);

  // The callees of the frame being expanded, as the members above; `nextName` holds a location
  // id until pass 2 resolves it (row NEEDS_LOCATION), then the name id, then the name's group
  // (unsigned: location ids go up to 2^32-1).
  const NEEDS_LOCATION = -2;
  const NO_CALLEE = -3;
  const nextValue = valueColumn(kept);
  const nextLow = new Int32Array(kept);
  const nextK = new Int32Array(kept);
  const nextRow = new Int32Array(kept);
  const nextPos = new Int32Array(kept);
  const nextName = new Uint32Array(kept);
  const calleeGroups = new CalleeGroups(names.length, zero);
  const { name: groupName, count: groupCount, value: groupValue } = calleeGroups;
  // The frames of a single member's stack below its current frame: the rest of its location's
  // frames, then every frame of each known location below (unknown ids skipped, as in pass 2).
  const framesBelow = (m: number): number => {
    const r = memberRow[m]!;
    let n = r >= 0 ? locStart[r + 1]! - locStart[r]! - memberPos[m]! - 1 : 0;
    for (let k = memberK[m]! - 1; k >= memberLow[m]!; k--) {
      const id = location_id[k]!;
      const row = id < idsInTable ? idInfo[3 * id + 2]! : rowOf(id);
      if (row >= 0) n += id < idsInTable ? idInfo[3 * id + 1]! : locStart[row + 1]! - locStart[row]!;
    }
    return n;
  };
  let elided = 0;
  // Frames of the complete tree seen (counted with countEveryFrame only).
  let frames = 1;
  const sharedRun = new SharedInlineRun(locStart, locIds);
  /**
   * The run of inline frames every member of the frame (members `from..end`) shares below it (see
   * SharedInlineRun): drawn under `frame` (or, for a frame left out, counted) here at once, the
   * members moved to its last frame. Returns the frame the members are at. The walk a frame at a
   * time cost members × inline frames (1,000 samples through 65 entries of a 1,000-line location:
   * 65M steps, 6.4 s, for 65,000 drawn frames; 300k samples of a 60-deep inline chain at 200
   * addresses differing in the innermost frame: 18M steps); this, members + frames, and for a
   * drawn frame the comparisons of its members' distinct locations, charged to the walk. A frame
   * left out takes a run only where its members stand at one position of one location (no
   * comparisons); else it is walked, within the count budget.
   */
  const drawnOrCountedRun = (from: number, end: number, frame: number): number => {
    const r = memberRow[from]!;
    const pos = memberPos[from]!;
    sharedRun.begin();
    for (let m = from; m < end; m++) {
      const o = memberRow[m]!;
      if (o < 0) return frame;
      if (frame < 0 && (o !== r || memberPos[m] !== pos)) return frame;
      sharedRun.add(o, memberPos[m]!);
    }
    const run = sharedRun.length(frame >= 0 ? walkBudget - drawSteps : Number.MAX_SAFE_INTEGER);
    if (frame >= 0) {
      drawSteps += sharedRun.comparisons;
      if (drawSteps > walkBudget) throw flameWalkLimitError('one flame graph', drawSteps, walkBudget);
    }
    if (run === 0) return frame;
    // As the walk a frame at a time: one frame a level, drawn as wide as its caller (or counted).
    frames += run;
    if (frame >= 0) {
      let value = zero;
      for (let m = from; m < end; m++) value += memberValue[m]!;
      const names = locStart[sharedRun.row]! + sharedRun.pos;
      for (let at = 1; at <= run; at++) frame = drawn.add(locIds[names + at]!, value, frame);
    }
    for (let m = from; m < end; m++) memberPos[m]! += run;
    return frame;
  };
  // The steps counting the frames left out may still take; once one would pass the budget, no
  // frame left out is walked any more (`frames` is then a lower bound).
  const budget = countBudget ?? flameCountBudget(p);
  let countSteps = 0;
  // Members visited by the expansions, drawn frames or not (CutFlameFrames.walkSteps), and by the
  // drawn ones (drawSteps, with the comparisons of drawnOrCountedRun), which maxFlameWalkSteps
  // bounds: where a member has at most one frame left in its location (the same frames cut into
  // 2-line locations) no run is shared, and the walk takes members × frames.
  let walkSteps = 0;
  let drawSteps = 0;
  const walkBudget = flameWalkBudget(p, limits);
  let counting = countEveryFrame;
  const pendingStart: number[] = [0];
  // The drawn frame, or -1: a frame left out, walked to count its callees (countEveryFrame).
  const pendingFrame: number[] = [ROOT];
  while (pendingStart.length > 0) {
    const from = pendingStart.pop()!;
    let frame = pendingFrame.pop()!;
    if (frame < 0) {
      // A single member counts the rest of its stack a stack entry a step, a group a step a member.
      const steps = members - from === 1 ? memberK[from]! - memberLow[from]! + 1 : members - from;
      if (!counting || countSteps + steps > budget) {
        counting = false;
        members = from;
        continue;
      }
      countSteps += steps;
      if (members - from === 1) {
        frames += framesBelow(from);
        members = from;
        continue;
      }
    }
    const end = members;
    walkSteps += end - from;
    if (frame >= 0) {
      drawSteps += end - from;
      if (drawSteps > walkBudget) throw flameWalkLimitError('one flame graph', drawSteps, walkBudget);
    }
    frame = drawnOrCountedRun(from, end, frame);
    let callees = 0;
    let self = zero;
    // Pass 1: each member's next frame, the next inline frame of its location, or the stack entry
    // below (its location id read); none: the member's value is the frame's own.
    for (let m = from; m < end; m++) {
      const r = memberRow[m]!;
      const pos = memberPos[m]! + 1;
      let k = memberK[m]!;
      if (r >= 0 && locStart[r]! + pos < locStart[r + 1]!) {
        nextRow[callees] = r;
        nextPos[callees] = pos;
        nextName[callees] = locIds[locStart[r]! + pos]!;
      } else {
        if (--k < memberLow[m]!) {
          self += memberValue[m]!;
          continue;
        }
        nextRow[callees] = NEEDS_LOCATION;
        nextName[callees] = location_id[k]!;
      }
      nextValue[callees] = memberValue[m]!;
      nextLow[callees] = memberLow[m]!;
      nextK[callees++] = k;
    }
    // Pass 2: the locations of the entries read, their outermost frame's name (an unknown location
    // id is skipped, as by locationFrames: the entry below it, if any).
    for (let c = 0; c < callees; c++) {
      if (nextRow[c] !== NEEDS_LOCATION) continue;
      let k = nextK[c]!;
      let id = nextName[c]!;
      let r: number;
      for (;;) {
        r = id < idsInTable ? idInfo[3 * id + 2]! : rowOf(id);
        if (r >= 0 || --k < nextLow[c]!) break;
        id = location_id[k]!;
      }
      if (r < 0) {
        self += nextValue[c]!;
        nextRow[c] = NO_CALLEE;
        continue;
      }
      const inTable = id < idsInTable;
      const frames = inTable ? idInfo[3 * id + 1]! : locStart[r + 1]! - locStart[r]!;
      nextK[c] = k;
      nextRow[c] = frames > 1 ? r : -1;
      nextPos[c] = 0;
      nextName[c] = inTable ? idInfo[3 * id]! : locIds[locStart[r]!]!;
    }
    if (frame >= 0) drawn.self[frame] = self;
    // Pass 3: the callees grouped by name.
    calleeGroups.begin();
    for (let c = 0; c < callees; c++) {
      if (nextRow[c] === NO_CALLEE) continue;
      const g = calleeGroups.groupOf(nextName[c]!);
      nextName[c] = g;
      groupValue[g]! += nextValue[c]!;
    }
    const groups = calleeGroups.size;
    frames += groups;
    // The drawn callees replace the expanded frame's members, one run per group (a counting
    // sort); the members of the callees left out are dropped, unless they are to be counted.
    members = from;
    for (let g = 0; g < groups; g++) {
      let child = -1;
      if (frame < 0 || Number(groupValue[g]!) < threshold) {
        if (frame >= 0) elided++;
        if (!counting) {
          groupCount[g] = -1;
          continue;
        }
      } else {
        child = drawn.add(groupName[g]!, groupValue[g]!, frame);
      }
      pendingStart.push(members);
      pendingFrame.push(child);
      const count = groupCount[g]!;
      groupCount[g] = members; // from here on: where the group's next member goes
      members += count;
    }
    for (let c = 0; c < callees; c++) {
      if (nextRow[c] === NO_CALLEE) continue;
      const g = nextName[c]!;
      if (groupCount[g]! < 0) continue;
      const to = groupCount[g]!++;
      memberValue[to] = nextValue[c]!;
      memberLow[to] = nextLow[c]!;
      memberK[to] = nextK[c]!;
      memberRow[to] = nextRow[c]!;
      memberPos[to] = nextPos[c]!;
    }
  }
  // With countEveryFrame: every frame not drawn, once the complete tree is counted.
  return { frames: drawn, elided: countEveryFrame ? frames - drawn.count : elided, allFrames: frames, countStopped: countEveryFrame && !counting, countSteps, walkSteps, drawSteps };
}

/**
 * The default `countBudget` of `p`: `COUNT_STEPS_PER_ENTRY` steps per stack entry, inline line,
 * location and sample, plus `COUNT_STEPS_FLOOR`. Counting costs a step per stack entry where stacks
 * no longer share callers, a step per member and frame where they do; real profiles take well
 * under 2 steps per entry (see docs/security.md), a crafted one members × inline frames.
 */
export function flameCountBudget(p: Profile): number {
  return COUNT_STEPS_FLOOR + STEPS_PER_ENTRY * flameInputSize(p);
}
const COUNT_STEPS_FLOOR = 4_000_000;
/** Steps of the count (`flameCountBudget`) and of the walk (`flameWalkBudget`) per entry of the profile. */
const STEPS_PER_ENTRY = 16;

/** The entries of `p` a flame graph's walk reads: stack entries, inline lines, locations, samples. */
function flameInputSize(p: Profile): number {
  return p.samples.locations.location_id.length + p['.inline_lines'].function_id.length + p.locations.location_id.length + p.samples.locations.offsets.length;
}

/**
 * The steps a flame graph's walk of `p` may take (`maxFlameWalkSteps`; a step is one member
 * moved one frame down): the option when given, else its floor (`READ_LIMITS`) plus
 * `STEPS_PER_ENTRY` per stack entry, inline line, location and sample, as `flameCountBudget`.
 * Where stacks share callers a frame's members are one per distinct stack and a run of inline
 * frames they share is taken at once, so real profiles take under 2 steps per entry (see
 * docs/security.md), comparisons included; where a member has at most one frame left in its
 * location (the same frames cut into 2-line locations) no run is shared, and the members are
 * walked a frame at a time, members × inline frames.
 */
export function flameWalkBudget(p: Profile, limits?: ReadLimits): number {
  const given = (limits as Record<string, unknown> | undefined)?.maxFlameWalkSteps;
  if (typeof given === 'number' && given > 0) return given;
  return READ_LIMITS.maxFlameWalkSteps + STEPS_PER_ENTRY * flameInputSize(p);
}

/** The `PROFKIT_E_LIMIT` error of a walk (of `what`) that took `steps` steps, over `budget`. */
export function flameWalkLimitError(what: string, steps: number, budget: number): ProfkitError {
  return limitError(
    'maxFlameWalkSteps',
    `the steps of the walk of ${what} (${steps} so far; a step is one stack moved one frame down, by default at most ${READ_LIMITS.maxFlameWalkSteps} + ${STEPS_PER_ENTRY} per stack entry, inline line, location and sample of the profile)`,
    budget,
  );
}

/**
 * The run of inline frames every member of a frame shares below it: the frames after each
 * member's position in its location (`start`, `ids` as `locationNameIds` gives them) that have
 * the same names in all of them, down to the innermost frame of the member with the fewest left.
 * Such a run is a chain of frames, one callee each of every member, as wide as the frame: drawn
 * or counted at once, members + frames instead of members × frames. Each distinct (location row,
 * position) is compared once, frame by frame in lockstep against the first: `comparisons`
 * (charged to the walk) is at most distinct locations × (run + 1), never more than walking the
 * run a frame at a time. Deeply inlined code at many addresses (the same long inline chain
 * differing in the innermost frame) is the usual shape.
 */
export class SharedInlineRun {
  // Per location row, the last run (`call`) that listed it, and at which position.
  private readonly listedIn: Int32Array;
  private readonly listedAt: Int32Array;
  private call = 0;
  // The distinct (row, position) pairs of the current run, and the fewest frames left after one.
  private rows = new Int32Array(16);
  private positions = new Int32Array(16);
  private distinct = 0;
  private fewestLeft = 0;
  /** Frame names compared by the last `length` call. */
  comparisons = 0;

  constructor(
    private readonly start: Int32Array,
    private readonly ids: Int32Array,
  ) {
    this.listedIn = new Int32Array(start.length);
    this.listedAt = new Int32Array(start.length);
  }

  /** Starts the run of a frame's members. */
  begin(): void {
    this.call++;
    this.distinct = 0;
    this.fewestLeft = Number.MAX_SAFE_INTEGER;
  }

  /** Adds a member at `pos` among the frames of location row `row`. */
  add(row: number, pos: number): void {
    if (this.listedIn[row] === this.call && this.listedAt[row] === pos) return;
    this.listedIn[row] = this.call;
    this.listedAt[row] = pos;
    this.fewestLeft = Math.min(this.fewestLeft, this.start[row + 1]! - this.start[row]! - 1 - pos);
    if (this.distinct === this.rows.length) {
      this.rows = grown(this.rows, this.distinct + 1);
      this.positions = grown(this.positions, this.distinct + 1);
    }
    this.rows[this.distinct] = row;
    this.positions[this.distinct++] = pos;
  }

  /**
   * The frames of the run after the members' positions (0 when under 2: not worth taking), the
   * names those of the first member's location row (`row`) after its position (`pos`).
   * Comparing stops once `comparisons` passes `maxComparisons` (the walk's budget left; at most
   * `distinct` past it), returning 0: the caller's budget check then fails. Members at many
   * positions of one long location of a repeated name shared runs of its length, members ×
   * frames compared before the budget was checked (1,000 × 98,000 over a 5.7M budget).
   */
  length(maxComparisons = Number.MAX_SAFE_INTEGER): number {
    this.comparisons = 0;
    const { start, ids, rows, positions, distinct } = this;
    // No member added (every member of the frame left its locations): no run. `fewestLeft` is
    // still MAX_SAFE_INTEGER then, and the loop below would never end.
    if (distinct === 0) return 0;
    const most = this.fewestLeft;
    if (most < 2) return 0;
    if (distinct === 1) return most;
    const first = start[rows[0]!]! + positions[0]!;
    for (let at = 1; at <= most; at++) {
      const name = ids[first + at];
      for (let d = 1; d < distinct; d++) {
        this.comparisons++;
        if (ids[start[rows[d]!]! + positions[d]! + at] !== name) return at - 1 < 2 ? 0 : at - 1;
      }
      if (this.comparisons > maxComparisons) return 0;
    }
    return most;
  }

  /** The location row of the run's names (its first member's). */
  get row(): number {
    return this.rows[0]!;
  }

  /** The position in `row` the run starts after. */
  get pos(): number {
    return this.positions[0]!;
  }
}

/** Where `cutFlameTree` keeps its members (see there). */
interface MemberColumns {
  value: ValueColumn;
  low: Int32Array;
  k: Int32Array;
  row: Int32Array;
  pos: Int32Array;
}

/**
 * Writes the root's members into `m`, from every `stride`-th sample whose value passes `keep`: one
 * per sample, or with `merge` one per distinct stack (samples of equal location ids are one member,
 * their values summed: exact in either representation), in order of first appearance. Returns
 * how many members, from how many samples, and their sum. The walk then follows a repeated stack
 * once instead of once per sample; the tree is the same (callees are grouped by name and sorted,
 * whatever the order of the members).
 */
function rootMembers(
  p: Profile,
  col: BigInt64Array,
  keep: (v: bigint) => boolean,
  exact: boolean,
  m: MemberColumns,
  { stride, merge }: { stride: number; merge: boolean },
): { members: number; samples: number; value: number } {
  const { offsets, location_id } = p.samples.locations;
  const capacity = merge ? Math.min(m.low.length, Math.ceil(col.length / stride)) : 0;
  const hashOf = new Int32Array(capacity);
  const mask = (1 << Math.min(30, Math.max(4, 32 - Math.clz32(2 * capacity)))) - 1;
  const slots = new Int32Array(mask + 1).fill(-1);
  // Seeded per call (see locationIdsHash).
  const seed = (Math.random() * 0x1_0000_0000) | 0;
  let members = 0;
  let samples = 0;
  let sum = (exact ? 0 : 0n) as number;
  for (let i = 0; i < col.length; i += stride) {
    const v = col[i]!;
    if (!keep(v)) continue;
    samples++;
    const value = (exact ? Number(v) : v) as number;
    sum += value;
    const low = offsets[i]!;
    const high = offsets[i + 1]!;
    if (merge) {
      const h = locationIdsHash(location_id, low, high, seed);
      // The member of an equal stack, else -1 and the free slot the new member takes.
      let same = -1;
      let slot = h & mask;
      for (let j = slots[slot]!; j >= 0; slot = (slot + 1) & mask, j = slots[slot]!) {
        if (hashOf[j] === h && sameLocationIds(location_id, m.low[j]!, m.k[j]!, low, high)) {
          same = j;
          break;
        }
      }
      if (same >= 0) {
        m.value[same]! += value;
        continue;
      }
      slots[slot] = members;
      hashOf[members] = h;
    }
    m.value[members] = value;
    m.low[members] = low;
    m.k[members] = high;
    m.row[members] = -1;
    m.pos[members++] = 0;
  }
  return { members, samples, value: sum };
}
