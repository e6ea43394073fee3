/**
 * One pass of pprof's `newGraph` over a stack table (`buildNodes` in report.ts), in one of two
 * ways that give the same sums, calls, flags and call order:
 *
 * - `walkLeafPaths`: from every stack with samples of its own (and every stack with no callee),
 *   up its path to the root, counting each node and call once per path. On profiles whose stacks
 *   share little (every sample's tail a chain of stacks of its own: 4.75 of 4.9 million frames
 *   on a 200,000-sample profile of random stacks) the paths add up to about the number of
 *   stacks, and the climb reads the table nearly in row order: its prefix column is a bit per
 *   stack ("the row before") plus the prefixes of the few others (`stackPaths`), so the table
 *   needs no child lists (report.ts builds the call graph's tables without). 1.4 times as fast
 *   there as the walk below for the first pass, 2 times for the pass over the shown nodes: the
 *   depth-first walk jumps through the table at every branch (a cache miss per column).
 * - `walkRuns`: a depth-first walk of the prefix tree that keeps its state per level of the
 *   current path: each stack once, whatever the paths add up to. Taken when stacks share much
 *   (deep stacks, many samples per leaf), where climbing every path would re-read the shared
 *   part once per leaf; it derives the child lists once when the table has none.
 *
 * Memory either way: a few arrays per node and call, a bit per stack, 12 bytes per stack whose
 * caller is not the row before it, and (the runs walk) a few arrays per level of depth.
 */

import type { BuiltGraph, GraphInput } from './report.js';
import { grown, popcount, sparseSlot, stackChildren, type ChildLists, type PrefixJumps, type SparseSelf, type StackTable } from './stack-table.js';

/** `onlyNode` of a location whose nodes a pass leaves out, every one. */
const NONE_KEPT = -2;

/**
 * Climbing every path is taken while the paths' frames add up to at most this many times the
 * stacks: about where both cost the same, a frame climbed costing 2/3 of a stack of the runs walk
 * (67 and 99 ns on the 200,000-sample profile) plus the child lists the runs walk derives first.
 */
const LEAF_PATHS_FACTOR = 2;

/** Which walk `walkCallGraph` takes: by the table's shape (default), or one of them (tests). */
export type CallGraphWalk = 'auto' | 'leaf-paths' | 'runs';

/**
 * The sums of one graph pass (see `buildNodes`): flat and cum per node, the calls in the order the
 * samples first reach them. `self` is the per-stack sum to add up (the table's own, or a
 * divisor's; `sparseSelf`); doubles when exact, bigints otherwise (`zero` says which).
 */
export function walkCallGraph<V extends number | bigint>(
  g: GraphInput,
  self: SparseSelf,
  zero: V,
  kept: Uint8Array | undefined,
  callees: Uint8Array | undefined,
  callers: Uint8Array | undefined,
  touching: Uint8Array | undefined,
  walk: CallGraphWalk = 'auto',
): BuiltGraph {
  const pass: GraphPass<V> = {
    g,
    self,
    zero,
    kept,
    calls: callees ? { callees, callers, touching } : undefined,
    flat: sumColumn(g.nNodes, zero),
    cum: sumColumn(g.nNodes, zero),
    edges: new CallTable(zero),
  };
  const leaves = walk === 'runs' ? undefined : leafPaths(g.stacks, self);
  if (leaves && (walk === 'leaf-paths' || leaves.frames <= LEAF_PATHS_FACTOR * g.stacks.length)) walkLeafPaths(pass, leaves);
  else walkRuns(pass);
  return pass.edges.built(pass.flat, pass.cum);
}

/** `n` sums of zero: doubles in a typed array when the sums are numbers (no boxing, no element kind to change). */
function sumColumn<V extends number | bigint>(n: number, zero: V): V[] {
  return (typeof zero === 'number' ? new Float64Array(n) : new Array<V>(n).fill(zero)) as unknown as V[];
}

/** What both walks read and fill. */
interface GraphPass<V extends number | bigint> {
  g: GraphInput;
  self: SparseSelf;
  zero: V;
  kept: Uint8Array | undefined;
  /** The calls to collect (none when absent): into `callees`, from `callers`, from or to `touching`. */
  calls:
    | {
        callees: Uint8Array;
        callers: Uint8Array | undefined;
        touching: Uint8Array | undefined;
      }
    | undefined;
  flat: V[];
  cum: V[];
  edges: CallTable<V>;
}

/**
 * The node of each location with one node (most: no inline frames), -1 for the others: one read
 * per stack instead of three (the node lists stop fitting the cache on large profiles). With
 * `kept`, NONE_KEPT for a location whose nodes are all left out (most, when a pass keeps the few
 * shown nodes): its stacks only mark the calls below them residual, read no node list.
 */
function onlyNodes(g: GraphInput, kept: Uint8Array | undefined): Int32Array {
  const { locNodeOffsets, locNodeIds } = g;
  const onlyNode = new Int32Array(locNodeOffsets.length - 1);
  for (let r = 0; r < onlyNode.length; r++) {
    const [from, to] = [locNodeOffsets[r]!, locNodeOffsets[r + 1]!];
    let anyKept = !kept;
    for (let k = from; k < to && !anyKept; k++) anyKept = kept![locNodeIds[k]!] === 1;
    onlyNode[r] = to > from && !anyKept ? NONE_KEPT : to - from === 1 ? locNodeIds[from]! : -1;
  }
  return onlyNode;
}

/** Slots per location in `packedNodes`: its number of nodes, then up to PACKED - 1 of them. */
const PACKED = 4;

/**
 * The nodes of every location side by side, so that a stack's location costs one cache line:
 * at PACKED * r, the number of nodes of location r (NONE_KEPT when `kept` leaves out every one,
 * -1 when they do not fit: then read from `locNodeIds`), then the nodes, innermost line first.
 */
function packedNodes(g: GraphInput, kept: Uint8Array | undefined): Int32Array {
  const { locNodeOffsets, locNodeIds } = g;
  const packed = new Int32Array(PACKED * (locNodeOffsets.length - 1));
  for (let r = 0; r + 1 < locNodeOffsets.length; r++) {
    const [from, to] = [locNodeOffsets[r]!, locNodeOffsets[r + 1]!];
    let anyKept = !kept;
    for (let k = from; k < to && !anyKept; k++) anyKept = kept![locNodeIds[k]!] === 1;
    packed[PACKED * r] = to > from && !anyKept ? NONE_KEPT : to - from < PACKED ? to - from : -1;
    // Copied one by one: a `subarray` per location was most of a walk's garbage (10 MB for 100,000 locations).
    if (to - from < PACKED) for (let k = from; k < to; k++) packed[PACKED * r + 1 + k - from] = locNodeIds[k]!;
  }
  return packed;
}

/** Whether a pass collects the call `src -> dst` (see `GraphPass.calls`). */
function collects(calls: GraphPass<number | bigint>['calls'], src: number, dst: number): boolean {
  if (!calls || src === dst) return false;
  const { callees, callers, touching } = calls;
  // `touching` first when given: it is the rare one (the nodes `peek` prints; the others all nodes).
  if (touching && !touching[src] && !touching[dst]) return false;
  return callees[dst] !== 0 && (!callers || callers[src] !== 0);
}

/**
 * The calls of a pass: (src, dst) node pairs found through a hash table, with their sums, flags,
 * and where the samples first reach them (stack row, then position of the callee's line in its
 * location, outermost first): their order in the result.
 */
export class CallTable<V extends number | bigint> {
  readonly src: number[] = [];
  readonly dst: number[] = [];
  readonly weight: V[] = [];
  readonly inline: boolean[] = [];
  readonly residual: boolean[] = [];
  private readonly firstStack: number[] = [];
  private readonly firstPos: number[] = [];
  /** A walk's own mark per call (-1 for a new one): on the current path, or the path it was last counted on. */
  mark = new Int32Array(64);
  // Open-addressing hash table of (src, dst) -> call index.
  private mask = (1 << 12) - 1;
  private hSrc = new Int32Array(this.mask + 1).fill(-1);
  private hDst = new Int32Array(this.mask + 1);
  private hEdge = new Int32Array(this.mask + 1);
  /** Mixed into the hash, drawn per table: node ids follow from the input (see `PrefixTreeBuilder.seed`). */
  private readonly seed = (Math.random() * 2 ** 32) | 0;

  constructor(private readonly zero: V) {}

  private slot(src: number, dst: number): number {
    // murmur3's 32-bit finalizer over the pair
    let h = Math.imul(src ^ this.seed, 0x9e3779b1) ^ dst;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h = (h ^ (h >>> 16)) & this.mask;
    const { hSrc, hDst } = this;
    while (hSrc[h] !== -1 && (hSrc[h] !== src || hDst[h] !== dst)) h = (h + 1) & this.mask;
    return h;
  }

  /** The index of call `src -> dst` reached at (`stack`, `pos`), added when new. */
  at(src: number, dst: number, stack: number, pos: number): number {
    const h = this.slot(src, dst);
    if (this.hSrc[h] !== -1) {
      const e = this.hEdge[h]!;
      if (stack < this.firstStack[e]! || (stack === this.firstStack[e] && pos < this.firstPos[e]!)) {
        this.firstStack[e] = stack;
        this.firstPos[e] = pos;
      }
      return e;
    }
    const e = this.src.length;
    this.hSrc[h] = src;
    this.hDst[h] = dst;
    this.hEdge[h] = e;
    this.src.push(src);
    this.dst.push(dst);
    this.weight.push(this.zero);
    this.inline.push(true);
    this.residual.push(false);
    this.firstStack.push(stack);
    this.firstPos.push(pos);
    if (e === this.mark.length) this.mark = grown(this.mark, e + 1);
    this.mark[e] = -1;
    if (this.src.length * 2 > this.mask) this.grow();
    return e;
  }

  private grow(): void {
    const [oSrc, oDst, oEdge] = [this.hSrc, this.hDst, this.hEdge];
    this.mask = this.mask * 2 + 1;
    this.hSrc = new Int32Array(this.mask + 1).fill(-1);
    this.hDst = new Int32Array(this.mask + 1);
    this.hEdge = new Int32Array(this.mask + 1);
    for (let i = 0; i < oSrc.length; i++) {
      if (oSrc[i] === -1) continue;
      const h = this.slot(oSrc[i]!, oDst[i]!);
      this.hSrc[h] = oSrc[i]!;
      this.hDst[h] = oDst[i]!;
      this.hEdge[h] = oEdge[i]!;
    }
  }

  /** The pass's result: the calls in first-reached order (stack rows are numbered in sample order, root first). */
  built(flat: V[], cum: V[]): BuiltGraph {
    const { firstStack, firstPos } = this;
    const order = this.src.map((_, e) => e).sort((a, b) => firstStack[a]! - firstStack[b]! || firstPos[a]! - firstPos[b]!);
    return {
      flat: Array.from(flat, (v) => BigInt(v)),
      cum: Array.from(cum, (v) => BigInt(v)),
      src: order.map((e) => this.src[e]!),
      dst: order.map((e) => this.dst[e]!),
      weight: order.map((e) => this.weight[e]!),
      inline: order.map((e) => this.inline[e]!),
      residual: order.map((e) => this.residual[e]!),
    };
  }
}

/**
 * The prefix column of a stack table in compact form, ready to climb: the table's `PrefixJumps`
 * (see stack-table.ts), with the number of jumps before each word of `previous` and the depth of
 * each jump.
 */
export interface StackPaths {
  /** Bit `s & 31` of word `s >>> 5`: the prefix of stack `s` is `s - 1`. */
  previous: Uint32Array;
  /** Number of jumps (clear bits) in the words before each word. */
  jumpsBefore: Int32Array;
  jumpRow: Int32Array;
  jumpPrefix: Int32Array;
  /** Depth of each jump (0 for a root). */
  jumpDepth: Int32Array;
}

/** The paths of the tables walked, by their jumps or child lists (a -mean divisor's table shares them). */
const pathsOfTable = new WeakMap<object, StackPaths>();

/** The compact prefix column of `t` (see `StackPaths`): from its builder's jumps, or derived from its child lists; once per table. */
export function stackPaths(t: StackTable): StackPaths {
  const key = t.jumps ?? stackChildren(t).firstChild;
  const known = pathsOfTable.get(key);
  if (known) return known;
  const { previous, rows, prefixes } = t.jumps ?? prefixJumps(stackChildren(t), t.length);
  const paths: StackPaths = {
    previous,
    jumpsBefore: jumpsBeforeWords(previous),
    jumpRow: rows,
    jumpPrefix: prefixes,
    jumpDepth: new Int32Array(rows.length),
  };
  // In row order, a jump's prefix (an earlier row) has its depth already.
  for (let k = 0; k < rows.length; k++) paths.jumpDepth[k] = prefixes[k]! < 0 ? 0 : depthOf(paths, prefixes[k]!) + 1;
  pathsOfTable.set(key, paths);
  return paths;
}

/** The `PrefixJumps` of the `n` stacks with these child lists (for tables not made by `PrefixTreeBuilder`). */
function prefixJumps({ firstChild, nextSibling }: ChildLists, n: number): PrefixJumps {
  const previous = new Uint32Array((n + 31) >>> 5);
  // The jumps as found (by caller), then put in row order. Row 0 is never one: fewer than n.
  let found = new Int32Array(64);
  let foundPrefix = new Int32Array(64);
  let count = 0;
  for (let p = -1; p < n; p++) {
    for (let c = firstChild[p + 1]!; c !== -1; c = nextSibling[c]!) {
      if (c === p + 1) {
        previous[c >>> 5]! |= 1 << (c & 31);
        continue;
      }
      if (count === found.length) {
        found = grown(found, count + 1, n - 1);
        foundPrefix = grown(foundPrefix, count + 1, n - 1);
      }
      found[count] = c;
      foundPrefix[count++] = p;
    }
  }
  // A jump's place in row order: the clear bits before its own.
  const jumpsBefore = jumpsBeforeWords(previous);
  const rows = new Int32Array(count);
  const prefixes = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    const c = found[i]!;
    const k = jumpsBefore[c >>> 5]! + popcount(~previous[c >>> 5]! & ((1 << (c & 31)) - 1));
    rows[k] = c;
    prefixes[k] = foundPrefix[i]!;
  }
  return { previous, rows, prefixes };
}

/** The number of clear bits of `previous` (jumps) in the words before each word. */
function jumpsBeforeWords(previous: Uint32Array): Int32Array {
  const jumpsBefore = new Int32Array(previous.length);
  for (let w = 0, k = 0; w < previous.length; w++) {
    jumpsBefore[w] = k;
    k += 32 - popcount(previous[w]!);
  }
  return jumpsBefore;
}

/** The number of jumps among stacks 0..s. */
function jumpsUpTo(paths: StackPaths, s: number): number {
  const word = ~paths.previous[s >>> 5]!;
  const bit = s & 31;
  return paths.jumpsBefore[s >>> 5]! + popcount(bit === 31 ? word : word & ((1 << (bit + 1)) - 1));
}

/** The depth of stack `s` (0 for a root). */
function depthOf(paths: StackPaths, s: number): number {
  const k = jumpsUpTo(paths, s);
  return k === 0 ? s : paths.jumpDepth[k - 1]! + (s - paths.jumpRow[k - 1]!);
}

/**
 * The stacks whose paths `walkLeafPaths` climbs: those with samples of their own and those with
 * no callee (whose samples summed to nothing: their calls still exist, with weight 0, as in the
 * runs walk), as a bit set; and the frames of their paths in all.
 */
interface LeafPaths {
  paths: StackPaths;
  leaves: Uint32Array;
  frames: number;
}

function leafPaths(t: StackTable, self: SparseSelf): LeafPaths {
  const paths = stackPaths(t);
  const { previous, jumpPrefix } = paths;
  // The stacks with a callee: s when the prefix of s + 1 is s, and the jumps' prefixes.
  const withCallee = new Uint32Array(previous.length);
  for (let w = 0; w < previous.length; w++) withCallee[w] = (previous[w]! >>> 1) | ((previous[w + 1] ?? 0) << 31);
  for (const p of jumpPrefix) if (p >= 0) withCallee[p >>> 5]! |= 1 << (p & 31);
  const leaves = self.bits.slice();
  for (let w = 0; w < leaves.length; w++) {
    const rows = Math.min(32, t.length - 32 * w);
    leaves[w]! |= ~withCallee[w]! & (rows === 32 ? -1 : (1 << rows) - 1);
  }
  let frames = 0;
  for (let w = 0; w < leaves.length; w++) {
    for (let word = leaves[w]!; word !== 0; word &= word - 1) frames += depthOf(paths, w * 32 + (31 - Math.clz32(word & -word))) + 1;
  }
  return { paths, leaves, frames };
}

/**
 * The pass from every leaf of `leaves` up to the root (see the top of the file). Climbing, the
 * last kept node seen is the callee of the next kept node above it: the call is residual when
 * nodes were left out between them, and takes its flags from its outermost occurrence on the path
 * (as the runs walk, which meets it there first); each node and call counts the leaf's sum once.
 */
function walkLeafPaths<V extends number | bigint>(pass: GraphPass<V>, { paths, leaves }: LeafPaths): void {
  const { g, kept, calls, flat, cum, edges } = pass;
  const packed = packedNodes(g, kept);
  // With `kept`, whether a location has a kept node: a byte per location (the packed nodes are
  // 16), as most stacks of a pass that keeps the few shown nodes have none.
  const anyKept = kept && Uint8Array.from({ length: packed.length / PACKED }, (_, r) => (packed[PACKED * r] === NONE_KEPT ? 0 : 1));
  const add = (a: V, b: V): V => ((a as number) + (b as number)) as V;
  const selfSums = pass.self.sums as unknown as ArrayLike<V>;
  const selfBits = pass.self.bits;
  const { locNodeOffsets, locNodeIds } = g;
  const { frame } = g.stacks;
  const { jumpRow, jumpPrefix } = paths;
  // The leaf whose path last counted each node.
  const nodeSeen = new Int32Array(g.nNodes).fill(-1);
  // The calls on the current path, and the flags of their outermost occurrence so far.
  let pathCalls = new Int32Array(64);
  let pathResidual = new Uint8Array(64);
  let pathNotInline = new Uint8Array(64);
  let ownSlot = 0;
  for (let w = 0; w < leaves.length; w++) {
    for (let word = leaves[w]!; word !== 0; word &= word - 1) {
      const bitOfLeaf = word & -word;
      const leaf = w * 32 + (31 - Math.clz32(bitOfLeaf));
      // Leaves in row order: the k-th with samples of its own has the k-th sum.
      const hasOwn = (selfBits[w]! & bitOfLeaf) !== 0;
      const v = hasOwn ? selfSums[ownSlot++]! : pass.zero;
      let below = -1;
      let belowStack = 0;
      let belowPos = 0;
      let belowOutermost = false;
      // Nodes left out since `below` (or since the leaf).
      let gap = false;
      let onPath = 0;
      // Up the path a segment at a time: stacks s, s - 1, … down to the jump that starts it (or row 0).
      for (let s = leaf; s >= 0; ) {
        const jumps = jumpsUpTo(paths, s);
        const segmentStart = jumps === 0 ? 0 : jumpRow[jumps - 1]!;
        for (; s >= segmentStart; s--) {
          const r = frame[s]!;
          if (anyKept && !anyKept[r]) {
            gap = true;
            continue;
          }
          // The location's nodes, innermost line first (the last is the outermost); not NONE_KEPT
          // (skipped above).
          const count = packed[PACKED * r]!;
          const ids = count >= 0 ? packed : locNodeIds;
          const from = count >= 0 ? PACKED * r + 1 : locNodeOffsets[r]!;
          const to = count >= 0 ? from + count : locNodeOffsets[r + 1]!;
          for (let ni = from; ni < to; ni++) {
            const n = ids[ni]!;
            if (kept && !kept[n]) {
              gap = true;
              continue;
            }
            if (nodeSeen[n] !== leaf) {
              nodeSeen[n] = leaf;
              cum[n] = add(cum[n]!, v);
            }
            if (below < 0) {
              if (hasOwn && !gap) flat[n] = add(flat[n]!, v);
            } else if (collects(calls, n, below)) {
              const e = edges.at(n, below, belowStack, belowPos);
              // Its place in `pathCalls` once counted on this path (cleared when the path is done).
              let k = edges.mark[e]!;
              if (k < 0) {
                k = onPath++;
                if (k === pathCalls.length) {
                  pathCalls = grown(pathCalls, k + 1);
                  pathResidual = grown(pathResidual, k + 1);
                  pathNotInline = grown(pathNotInline, k + 1);
                }
                pathCalls[k] = e;
                edges.mark[e] = k;
                edges.weight[e] = add(edges.weight[e]!, v);
              }
              pathResidual[k] = gap ? 1 : 0;
              pathNotInline[k] = belowOutermost ? 1 : 0;
            }
            below = n;
            belowStack = s;
            belowPos = to - 1 - ni;
            belowOutermost = ni === to - 1;
            gap = false;
          }
        }
        s = jumps === 0 ? -1 : jumpPrefix[jumps - 1]!;
      }
      for (let k = 0; k < onPath; k++) {
        const e = pathCalls[k]!;
        if (pathResidual[k]) edges.residual[e] = true;
        if (pathNotInline[k]) edges.inline[e] = false;
        edges.mark[e] = -1;
      }
    }
  }
}

/** Child lists derived for tables without them (made without, for `walkLeafPaths`), once per table. */
const derivedChildLists = new WeakMap<PrefixJumps, ChildLists>();

/** The child lists of `t`: its own, or derived from its prefix column once. */
function childListsOf(t: StackTable): ChildLists {
  if (t.children || !t.jumps) return stackChildren(t);
  let lists = derivedChildLists.get(t.jumps);
  if (!lists) derivedChildLists.set(t.jumps, (lists = stackChildren(t)));
  return lists;
}

/**
 * The depth-first pass (see the top of the file), with its state per level of the current path,
 * never per stack: a stack's total is summed on the way back up, and "already counted on this
 * path" is a mark set where a node (or call) first counts and cleared when the walk leaves that
 * stack.
 *
 * A run of stacks each the only callee of the one before, with no samples of their own until the
 * last, is one level of the walk: every stack of the run has the same subtree total (the last
 * one's), so their marks are summed together when the walk leaves the run.
 */
function walkRuns<V extends number | bigint>(pass: GraphPass<V>): void {
  const { g, kept, calls, flat, cum, edges, zero } = pass;
  const onlyNode = onlyNodes(g, kept);
  const add = (a: V, b: V): V => ((a as number) + (b as number)) as V;
  const self = pass.self;
  const selfSums = self.sums as unknown as ArrayLike<V>;
  const { locNodeOffsets, locNodeIds, stacks } = g;
  const { frame } = stacks;
  const { firstChild, nextSibling } = childListsOf(stacks);
  // Nodes counted by a stack on the current path (pprof counts a node once per sample).
  const nodeOnPath = new Uint8Array(g.nNodes);
  // Per level of the current path (a run of stacks, see above), four ints: its first stack, the
  // last kept node after it (-1: none yet), whether nodes were skipped since, and where its marks
  // start; and the sum of its subtree so far.
  let path: Int32Array = new Int32Array(4 * 256);
  // Doubles in a typed array when the sums are numbers (most profiles): no boxing per level.
  let pathTotal: V[] | Float64Array = typeof zero === 'number' ? new Float64Array(256) : [];
  // What the stacks on the path counted: node n as n, call e as ~e; summed and cleared on leaving.
  let marks: Int32Array = new Int32Array(1024);
  let marked = 0;
  let depth = 0;
  let next = firstChild[0]!;
  for (;;) {
    if (next >= 0) {
      const first = next;
      let s = first;
      let parent = depth === 0 ? -1 : path[4 * depth - 3]!;
      let residual = depth === 0 ? false : path[4 * depth - 2] === 1;
      const marksStart = marked;
      let total = zero;
      for (;;) {
        const r = frame[s]!;
        const only = onlyNode[r]!;
        if (only === NONE_KEPT) residual = true;
        // A location of one node is walked as the list [only] at position -1 (one of no kept node as no list).
        const b = only >= 0 ? -1 : only === NONE_KEPT ? 0 : locNodeOffsets[r]!;
        const last = only >= 0 ? -1 : only === NONE_KEPT ? -1 : locNodeOffsets[r + 1]! - 1;
        // Room for a mark per node and per call of the location.
        if (marked + 2 * (last - b + 1) > marks.length) marks = grown(marks, marked + 2 * (last - b + 1));
        // The location's nodes, outermost line first.
        for (let ni = last; ni >= b; ni--) {
          const n = only >= 0 ? only : locNodeIds[ni]!;
          if (kept && !kept[n]) {
            residual = true;
            continue;
          }
          if (!nodeOnPath[n]) {
            nodeOnPath[n] = 1;
            marks[marked++] = n;
          }
          if (parent >= 0 && collects(calls, parent, n)) {
            const e = edges.at(parent, n, s, last - ni);
            if (edges.mark[e] !== 0) {
              edges.mark[e] = 0;
              marks[marked++] = ~e;
              if (residual) edges.residual[e] = true;
              if (ni === last) edges.inline[e] = false;
            }
          }
          parent = n;
          residual = false;
        }
        const own = sparseSlot(self, s);
        if (own >= 0) {
          const v = selfSums[own]!;
          if (parent >= 0 && !residual) flat[parent] = add(flat[parent]!, v);
          total = add(total, v);
          break;
        }
        // The only callee of a stack without samples of its own continues the run. Usually that
        // is the next row (a stack's new tail is made of consecutive rows): tested first, so that
        // the next row's number comes from an addition the CPU can run ahead of, not from a load.
        const following = s + 1;
        if (firstChild[following] === following && nextSibling[following] === -1) {
          s = following;
          continue;
        }
        const child = firstChild[s + 1]!;
        if (child < 0 || nextSibling[child] !== -1) break;
        s = child;
      }
      if (4 * depth + 4 > path.length) {
        path = grown(path, 4 * depth + 4);
        if (pathTotal instanceof Float64Array) pathTotal = grown(pathTotal, depth + 1);
      }
      path[4 * depth] = first;
      path[4 * depth + 1] = parent;
      path[4 * depth + 2] = residual ? 1 : 0;
      path[4 * depth + 3] = marksStart;
      (pathTotal as V[])[depth++] = total;
      next = firstChild[s + 1]!;
      continue;
    }
    if (depth === 0) break;
    // Leaving the run at the end of the path: its subtree total is complete.
    depth--;
    const first = path[4 * depth]!;
    const total = pathTotal[depth] as V;
    const from = path[4 * depth + 3]!;
    for (let m = marked - 1; m >= from; m--) {
      const id = marks[m]!;
      if (id >= 0) {
        cum[id] = add(cum[id]!, total);
        nodeOnPath[id] = 0;
      } else {
        edges.weight[~id] = add(edges.weight[~id]!, total);
        edges.mark[~id] = -1;
      }
    }
    marked = from;
    if (depth > 0) (pathTotal as V[])[depth - 1] = add(pathTotal[depth - 1] as V, total);
    next = nextSibling[first]!;
  }
}
