/**
 * pprof's `-top` inline markers (`(inline)`, `(partial-inline)`) of a diff's nodes, from the two
 * sides' samples, without the calls of the graph (diff-report.ts gives them to the report as
 * `ReportGraphSource.inlineMarkers`).
 *
 * Why: a node's marker says whether its calls at or above the edge cutoff are inlined, not
 * inlined, or both, so `-top` collected the calls into every inlined node. When most nodes are
 * shown (`--node-fraction 0`, `diff` without `-n`) that is nearly every call of both profiles: on
 * two 200,000-sample profiles of random stacks 9.3 million distinct calls, each held in a call
 * table per side, the tables merged, then made objects (30 s, 2.9 GB). The markers need far less:
 *
 * - A kept line below another kept line of its own location is called from that line: an inlined
 *   call fixed by the location ("location calls", as many as the locations' lines at most). Their
 *   weights and flags are summed exactly, in one table for both sides.
 * - Every other call into a node comes from the frames above ("calls from above": millions, and
 *   nearly all distinct on such profiles). One is inlined only where the trimming left out the
 *   lines above the callee in its location. When none into a node is, they can only add the
 *   "not inlined" half of its marker, which changes it only when one of its inlined calls is at
 *   or above the cutoff. Whether one of them is: with a cutoff of 0 every call is; when every
 *   sample value is a multiple of a g at or above the cutoff, every call whose weight is not 0 is,
 *   and a weighted sum of the node's calls' weights (modulo 2^32, each call weighted by an odd
 *   number drawn from its caller: `callerWeight`) that is not 0 proves one weight is not 0.
 * - The other nodes have their calls from above summed exactly, per caller: those that can be
 *   called inlined from above (a location with lines left out above them) collected as the walk
 *   meets them, the rest (a weighted sum of 0, a cutoff above g, sums in bigints) in more passes
 *   over the samples, in batches of at most MAX_BATCH_CALLS calls. So the result is exact either
 *   way; on those random profiles no node needs another pass.
 *
 * The calls are those of pprof's graph walk (`walkCallGraph` in call-graph-walk.ts): each
 * sample's kept nodes root first, a node called by the last kept node before it (not by
 * itself), a call counted once per sample with the flags of its outermost occurrence, samples of
 * value 0 left out. The walk's cost is its cache misses (a random location per frame, a random
 * node per call): what it reads of a location, of a node's calls from above and of a location
 * call lies in one cache line each.
 */

import { grown } from './stack-table.js';

/** One side of a diff as the markers read it: its samples' frames and values, and its locations' nodes. */
export interface MarkerSide {
  /** Sample i's frames (leaf first) are `frames[offsets[i] .. offsets[i + 1]]`, location rows. */
  offsets: Uint32Array;
  frames: Uint16Array | Int32Array | Uint32Array;
  values: BigInt64Array;
  /** `values` as doubles when their magnitudes sum to less than 2^53. */
  doubles: Float64Array | undefined;
  /** Sum of |value| over the samples. */
  absTotal: bigint;
  /** The base: its values count negated. */
  negated: boolean;
  /** Node ids of location row r: `locNodeIds[locNodeOffsets[r] .. locNodeOffsets[r + 1]]`, innermost line first. */
  locNodeOffsets: Uint32Array;
  locNodeIds: Int32Array;
}

/** A call into the node of this bit is inlined, at or above the cutoff. */
export const INLINED_CALL = 1;
/** A call into the node of this bit is not inlined, at or above the cutoff. */
export const PLAIN_CALL = 2;

/**
 * At most this many calls from above are held at once to be summed exactly (17 bytes each while
 * the sums fit doubles, a heap bigint each past 2^53), but for a node with more, a batch of its
 * own (its calls, one per sample and caller, are at most the frames of the samples). Each batch
 * costs a pass over both sides' samples.
 */
export const MAX_BATCH_CALLS = 1 << 21;

/** What `topInlineMarkers` did, for tests: the nodes whose calls from above were summed exactly, and the passes over the samples. */
export interface MarkerStats {
  exactNodes: number;
  passes: number;
}

/**
 * Per node, INLINED_CALL and PLAIN_CALL of the calls into it with |weight| >= `edgeCutoff`
 * (the weight summed over both sides), for the `shown` nodes (0 for the others). `kept`: the
 * nodes the walk keeps (the others are skipped; undefined: every node).
 */
export function topInlineMarkers(sides: readonly MarkerSide[], nNodes: number, kept: Uint8Array | undefined, shown: Uint8Array, edgeCutoff: bigint, stats?: MarkerStats): Uint8Array {
  let absTotal = 0n;
  for (const side of sides) absTotal += side.absTotal;
  // Doubles when every value is one and every partial sum of a weight is exact (|sum| <= sum of |value|).
  const doubles = absTotal < 2n ** 53n && sides.every((side) => side.doubles !== undefined);
  return doubles ? markers(sides, nNodes, kept, shown, edgeCutoff, 0, stats) : markers(sides, nNodes, kept, shown, edgeCutoff, 0n, stats);
}

function markers<V extends number | bigint>(sides: readonly MarkerSide[], nNodes: number, kept: Uint8Array | undefined, shown: Uint8Array, edgeCutoff: bigint, zero: V, stats: MarkerStats | undefined): Uint8Array {
  const locationCalls = new CallPairs();
  const inlinedFromAbove = new Uint8Array(nNodes);
  const plans = sides.map((side) => planSide(side, kept, shown, locationCalls, inlinedFromAbove));
  const weights = new Weights(zero, edgeCutoff);
  const walk = new MarkerWalk(nNodes, locationCalls, weights, inlinedFromAbove);
  sides.forEach((side, i) => walk.run(side, plans[i]!));
  const out = walk.locationMarkers();
  const { fromAbove, collected } = walk;
  // The nodes whose calls from above can change the marker and are not decided here: summed
  // exactly, from the calls the walk collected or in more passes.
  const fromCollected = new Uint8Array(nNodes);
  const inPasses = new Uint8Array(nNodes);
  let multipleOf: number | undefined;
  let exactNodes = 0;
  for (let n = 0; n < nNodes; n++) {
    const bits = out[n]!;
    const kinds = fromAbove.kinds(n);
    if (!shown[n] || kinds === 0 || bits === (INLINED_CALL | PLAIN_CALL)) continue;
    if (kinds === PLAIN_CALL) {
      // Only the plain half can be added, which matters next to an inlined call.
      if (!(bits & INLINED_CALL)) continue;
      if (edgeCutoff === 0n) {
        out[n] = bits | PLAIN_CALL;
        continue;
      }
      // (Sums in doubles only: in bigints the weighted sum is not kept.)
      multipleOf ??= zero === 0 ? commonDivisor(sides, Number(edgeCutoff)) : 0;
      if (multipleOf >= Number(edgeCutoff) && fromAbove.weightedSum(n) !== 0) {
        out[n] = bits | PLAIN_CALL;
        continue;
      }
    }
    exactNodes++;
    if (inlinedFromAbove[n] && !collected.overflowed) fromCollected[n] = 1;
    else inPasses[n] = 1;
  }
  let passes = sides.length;
  if (fromCollected.includes(1)) addCallerMarkers(collected.byCallee(nNodes), fromCollected, weights, out);
  if (inPasses.includes(1)) passes += sumInPasses(sides, plans, inPasses, walk, out);
  if (stats) Object.assign(stats, { exactNodes, passes });
  return out;
}

/** Calls from above grouped by callee: node n's are `start[n] .. end[n]` of the columns (each counted once per sample already). */
interface CallsByCallee<V extends number | bigint> {
  start: Float64Array;
  end: Float64Array;
  src: Int32Array;
  values: V[];
  plain: Uint8Array;
}

/**
 * Adds to `out` the kinds of the calls of `calls` into the `nodes` whose weight (summed per
 * caller: the calls of one caller are one call) passes the cutoff, each with the flag of its
 * first occurrence in each sample (not inlined when one is not).
 */
function addCallerMarkers<V extends number | bigint>(calls: CallsByCallee<V>, nodes: Uint8Array, weights: Weights<V>, out: Uint8Array): void {
  const nNodes = nodes.length;
  const callerSeen = new Int32Array(nNodes).fill(-1);
  const callerSum = weights.column(nNodes);
  const callerPlain = new Uint8Array(nNodes);
  const callers: number[] = [];
  for (let n = 0; n < nNodes; n++) {
    if (!nodes[n]) continue;
    callers.length = 0;
    for (let k = calls.start[n]!; k < calls.end[n]!; k++) {
      const s = calls.src[k]!;
      if (callerSeen[s] !== n) {
        callerSeen[s] = n;
        callerSum[s] = weights.zero;
        callerPlain[s] = 0;
        callers.push(s);
      }
      callerSum[s] = ((callerSum[s] as number) + (calls.values[k] as number)) as V;
      if (calls.plain[k]) callerPlain[s] = 1;
    }
    for (const s of callers) if (weights.passes(callerSum[s]!)) out[n]! |= callerPlain[s] ? PLAIN_CALL : INLINED_CALL;
  }
}

/**
 * The markers of the `nodes`' calls from above, summed in more passes over the samples: one that
 * counts them, then one per batch of nodes whose calls fit in MAX_BATCH_CALLS (at least one
 * node), which collects them. Returns the number of passes.
 */
function sumInPasses<V extends number | bigint>(sides: readonly MarkerSide[], plans: readonly SidePlan[], nodes: Uint8Array, walk: MarkerWalk<V>, out: Uint8Array): number {
  const nNodes = nodes.length;
  const counting: CallBatch<V> = { inBatch: nodes, next: new Float64Array(nNodes) };
  sides.forEach((side, i) => walk.run(side, plans[i]!, counting));
  const counts = counting.next;
  let passes = sides.length;
  for (let first = 0; first < nNodes; ) {
    const start = new Float64Array(nNodes);
    const inBatch = new Uint8Array(nNodes);
    let size = 0;
    let end = first;
    for (; end < nNodes; end++) {
      if (!nodes[end]) continue;
      if (size > 0 && size + counts[end]! > MAX_BATCH_CALLS) break;
      inBatch[end] = 1;
      start[end] = size;
      size += counts[end]!;
    }
    const batch: CallBatch<V> = { inBatch, next: start.slice(), src: new Int32Array(size), values: walk.weights.column(size), plain: new Uint8Array(size) };
    sides.forEach((side, i) => walk.run(side, plans[i]!, batch));
    passes += sides.length;
    addCallerMarkers({ start, end: batch.next, src: batch.src!, values: batch.values!, plain: batch.plain! }, inBatch, walk.weights, out);
    first = end;
  }
  return passes;
}

/**
 * The calls from above into the nodes of a batch of `sumInPasses`: node n's go at `next[n]`
 * onwards in the columns; without columns, only counted there.
 */
interface CallBatch<V extends number | bigint> {
  inBatch: Uint8Array;
  next: Float64Array;
  src?: Int32Array;
  values?: V[];
  plain?: Uint8Array;
}

/**
 * Calls from above as the walk meets them (the nodes that can be called inlined from above),
 * up to MAX_BATCH_CALLS: past that `overflowed`, and the nodes are summed in passes instead.
 */
class CollectedCalls<V extends number | bigint> {
  private dst = new Int32Array(64);
  private src = new Int32Array(64);
  private plain = new Uint8Array(64);
  private values: V[];
  private length = 0;
  overflowed = false;

  constructor(private readonly weights: Weights<V>) {
    this.values = weights.column(64);
  }

  add(dst: number, src: number, value: V, plain: boolean): void {
    if (this.overflowed) return;
    const k = this.length++;
    if (k === MAX_BATCH_CALLS) {
      this.overflowed = true;
      [this.dst, this.src, this.plain, this.values] = [new Int32Array(0), new Int32Array(0), new Uint8Array(0), []];
      return;
    }
    if (k === this.dst.length) {
      this.dst = grown(this.dst, k + 1);
      this.src = grown(this.src, k + 1);
      this.plain = grown(this.plain, k + 1);
      const values = this.weights.column(this.dst.length);
      for (let i = 0; i < k; i++) values[i] = this.values[i]!;
      this.values = values;
    }
    this.dst[k] = dst;
    this.src[k] = src;
    this.plain[k] = plain ? 1 : 0;
    this.values[k] = value;
  }

  /** The calls grouped by callee, in the order met. */
  byCallee(nNodes: number): CallsByCallee<V> {
    const start = new Float64Array(nNodes + 1);
    for (let k = 0; k < this.length; k++) start[this.dst[k]! + 1]!++;
    for (let n = 0; n < nNodes; n++) start[n + 1]! += start[n]!;
    const end = start.slice(0, nNodes);
    const src = new Int32Array(this.length);
    const values = this.weights.column(this.length);
    const plain = new Uint8Array(this.length);
    for (let k = 0; k < this.length; k++) {
      const into = end[this.dst[k]!]!++;
      src[into] = this.src[k]!;
      values[into] = this.values[k]!;
      plain[into] = this.plain[k]!;
    }
    return { start, end, src, values, plain };
  }
}

/** Sums of weights in doubles or bigints (`zero` says which), and the cutoff test on them. */
class Weights<V extends number | bigint> {
  private readonly cutoffNumber: number;

  constructor(
    readonly zero: V,
    private readonly cutoff: bigint,
  ) {
    // Exact: a sum in doubles is below 2^53 in magnitude, and so is a cutoff it can reach.
    this.cutoffNumber = Number(cutoff);
  }

  column(n: number): V[] {
    return (typeof this.zero === 'number' ? new Float64Array(n) : new Array<bigint>(n).fill(0n)) as unknown as V[];
  }

  passes(w: V): boolean {
    if (typeof w === 'number') return Math.abs(w) >= this.cutoffNumber;
    return (w < 0n ? -w : w) >= this.cutoff;
  }
}

/**
 * The largest g, up to `atLeast` once known to be below it (then the exact answer is not needed),
 * that divides every value of the sides: every weight is a multiple of it.
 */
function commonDivisor(sides: readonly MarkerSide[], atLeast: number): number {
  let g = 0;
  for (const side of sides) {
    const values = side.doubles!;
    for (let i = 0; i < values.length; i++) {
      let [a, b] = [g, Math.abs(values[i]!)];
      while (b !== 0) [a, b] = [b, a % b];
      g = a;
      if (g !== 0 && g < atLeast) return g;
    }
  }
  return g;
}

/**
 * What a kept node of a location is called from (`SidePlan`): >= 0, a location call; or one of
 * these. A call from above is inlined when the location's lines above the node were left out.
 */
const FROM_ABOVE_PLAIN = -1;
const FROM_ABOVE_INLINED = -2;
/** Called from the same node (the next kept line out), or not shown: no call counted. */
const NO_CALL = -3;

/** Ints per location in `SidePlan.packed`: the number of its kept nodes, then up to (PACKED - 1) / 2 of them as (node, call) pairs. */
const PACKED = 8;

/**
 * One side's locations as the walk reads them, one cache line per frame: at `PACKED * r`, the
 * number of kept nodes of location r (0: its frames are skipped), then its kept nodes outermost
 * first, each as (node id, what it is called from); a location of more kept nodes has -1 there,
 * then where its pairs start in `spill` and how many.
 */
interface SidePlan {
  packed: Int32Array;
  spill: Int32Array;
}

/** The plan of `side` for the walk, its location calls added to `locationCalls`, the nodes it can call inlined from above marked in `inlinedFromAbove`. */
function planSide(side: MarkerSide, kept: Uint8Array | undefined, shown: Uint8Array, locationCalls: CallPairs, inlinedFromAbove: Uint8Array): SidePlan {
  const { locNodeOffsets, locNodeIds } = side;
  const locations = locNodeOffsets.length - 1;
  const packed = new Int32Array(PACKED * locations);
  const pairs: number[] = [];
  const spill: number[] = [];
  for (let r = 0; r < locations; r++) {
    // The kept line next out, walking the location's lines outermost first.
    let outer = -1;
    pairs.length = 0;
    const last = locNodeOffsets[r + 1]! - 1;
    for (let k = last; k >= locNodeOffsets[r]!; k--) {
      const n = locNodeIds[k]!;
      if (kept && !kept[n]) continue;
      const call = !shown[n] || outer === n ? NO_CALL : outer >= 0 ? locationCalls.add(outer, n) : k === last ? FROM_ABOVE_PLAIN : FROM_ABOVE_INLINED;
      if (call === FROM_ABOVE_INLINED) inlinedFromAbove[n] = 1;
      pairs.push(n, call);
      outer = n;
    }
    const at = PACKED * r;
    if (pairs.length < PACKED) {
      packed[at] = pairs.length / 2;
      for (let j = 0; j < pairs.length; j++) packed[at + 1 + j] = pairs[j]!;
    } else {
      packed[at] = -1;
      packed[at + 1] = spill.length;
      packed[at + 2] = pairs.length / 2;
      // Appended in place (a concat copied the whole spill per location: 10,000 locations of 4 lines 4.5 s).
      for (const x of pairs) spill.push(x);
    }
  }
  return { packed, spill: Int32Array.from(spill) };
}

/** Ints per node in `FromAbove.state`. */
const NODE_INTS = 4;

/** `FromAbove`'s kinds word of a node whose calls from above the walk collects (`CollectedCalls`). */
const COLLECTED = 4;

/**
 * Per node, what the walk reads and sums of the calls from above into it, side by side at
 * `NODE_INTS * n` (one cache line per call): the sample that last called it from above (the
 * walk's own), `weightedSum`, `kinds` (and COLLECTED), and a filter word of its location callers
 * (bit `callerBit(src)` set for each), which rules out most calls from above without a look at
 * the location calls.
 */
class FromAbove {
  static readonly LAST_SAMPLE = 0;
  static readonly WEIGHTED_SUM = 1;
  static readonly KINDS = 2;
  static readonly CALLER_FILTER = 3;
  readonly state: Int32Array;

  constructor(
    readonly nNodes: number,
    locationCalls: CallPairs,
    collected: Uint8Array,
  ) {
    const state = (this.state = new Int32Array(NODE_INTS * nNodes));
    for (let n = 0; n < nNodes; n++) {
      state[NODE_INTS * n + FromAbove.LAST_SAMPLE] = -1;
      state[NODE_INTS * n + FromAbove.KINDS] = collected[n] ? COLLECTED : 0;
    }
    for (let e = 0; e < locationCalls.length; e++) state[NODE_INTS * locationCalls.dst[e]! + FromAbove.CALLER_FILTER]! |= 1 << callerBit(locationCalls.src[e]!);
  }

  /** INLINED_CALL, PLAIN_CALL: the kinds of the calls from above into n seen (the first occurrence of each in a sample); 0: none. */
  kinds(n: number): number {
    return this.state[NODE_INTS * n + FromAbove.KINDS]! & (INLINED_CALL | PLAIN_CALL);
  }

  /** Their weights times their callers' numbers, summed modulo 2^32 (see `callerWeight`). */
  weightedSum(n: number): number {
    return this.state[NODE_INTS * n + FromAbove.WEIGHTED_SUM]!;
  }
}

/** A caller's bit in `FromAbove`'s filter word (the top 5 bits of a multiplicative hash). */
function callerBit(src: number): number {
  return Math.imul(src, 0x9e3779b1) >>> 27;
}

/** An odd number drawn from a caller, `seed` drawn per walk: a call's factor in `FromAbove.weightedSum`. */
function callerWeight(src: number, seed: number): number {
  const h = Math.imul(src ^ seed, 0x85ebca6b);
  return (h ^ (h >>> 15)) | 1;
}

/**
 * The walk of the sides' samples, root first (see the top of the file): it sums the location
 * calls and, per callee, the calls from above (`fromAbove`, `collected`), or counts or collects
 * the calls from above into a batch's nodes (`sumInPasses`).
 */
class MarkerWalk<V extends number | bigint> {
  readonly fromAbove: FromAbove;
  readonly collected: CollectedCalls<V>;
  /**
   * Per location call e, 16 bytes (one cache line per call): at `4 * e` of `callState` the sample
   * that last counted it (-1: none yet) and whether its first occurrence in some sample was not
   * inlined, then its sum as a double (`callSums[2 * e + 1]`, over the same buffer); in bigints in
   * `callBigSums` when the sums are bigints.
   */
  private readonly callState: Int32Array;
  private readonly callSums: Float64Array;
  private readonly callBigSums: bigint[];
  private readonly samplePairs = new SamplePairs();
  private readonly seed = (Math.random() * 2 ** 32) | 0;
  private sample = 0;

  constructor(
    nNodes: number,
    private readonly locationCalls: CallPairs,
    readonly weights: Weights<V>,
    collect: Uint8Array,
  ) {
    this.fromAbove = new FromAbove(nNodes, locationCalls, collect);
    this.collected = new CollectedCalls(weights);
    const calls = locationCalls.length;
    this.callSums = new Float64Array(2 * calls);
    this.callState = new Int32Array(this.callSums.buffer);
    for (let e = 0; e < calls; e++) this.callState[4 * e] = -1;
    this.callBigSums = typeof weights.zero === 'bigint' ? new Array<bigint>(calls).fill(0n) : [];
    locationCalls.listByCallee(nNodes);
  }

  /** The markers of the location calls: per callee, the kinds of those made by a sample with |weight| >= the cutoff. */
  locationMarkers(): Uint8Array {
    const out = new Uint8Array(this.fromAbove.nNodes);
    const { callState, callSums, callBigSums } = this;
    const big = typeof this.weights.zero === 'bigint';
    for (let e = 0; e < this.locationCalls.length; e++) {
      // A location call no sample made is no call (its weight 0 would pass a cutoff of 0).
      if (callState[4 * e]! < 0 || !this.weights.passes((big ? callBigSums[e]! : callSums[2 * e + 1]!) as V)) continue;
      out[this.locationCalls.dst[e]!]! |= callState[4 * e + 1] ? PLAIN_CALL : INLINED_CALL;
    }
    return out;
  }

  /** One pass over a side's samples: summing (no `batch`), or counting or collecting the calls from above into `batch`'s nodes. */
  run(side: MarkerSide, plan: SidePlan, batch?: CallBatch<V>): void {
    const { offsets, frames, negated } = side;
    const zero = this.weights.zero;
    const weighted = typeof zero === 'number';
    const values = (weighted ? side.doubles! : side.values) as unknown as V[];
    const { packed, spill } = plan;
    const { callState, callSums, callBigSums, samplePairs, locationCalls, seed, collected } = this;
    const state = this.fromAbove.state;
    for (let i = 0; i + 1 < offsets.length; i++) {
      const raw = values[i]!;
      if (raw === zero) continue;
      // Unary minus negates a bigint as it does a double.
      const value = (negated ? -(raw as number) : raw) as V;
      // The value modulo 2^32 (ToUint32 of an exact double), for the weighted sums.
      const valueLow = weighted ? (value as number) >>> 0 : 0;
      const sample = this.sample++;
      samplePairs.clear();
      let parent = -1;
      for (let k = offsets[i + 1]! - 1, from = offsets[i]!; k >= from; k--) {
        const at = PACKED * frames[k]!;
        const count = packed[at]!;
        if (count === 0) continue;
        const list = count > 0 ? packed : spill;
        const first = count > 0 ? at + 1 : packed[at + 1]!;
        const end = first + 2 * (count > 0 ? count : packed[at + 2]!);
        for (let j = first; j < end; j += 2) {
          const n = list[j]!;
          const how = list[j + 1]!;
          let call = how;
          if (how < 0 && how !== NO_CALL && parent >= 0 && parent !== n) {
            // A call from above, which can be one of the pairs of the location calls too.
            const node = NODE_INTS * n;
            call = ((state[node + FromAbove.CALLER_FILTER]! >>> callerBit(parent)) & 1) === 0 ? NOT_A_PAIR : locationCalls.indexOf(parent, n);
            if (call === NOT_A_PAIR) {
              // Counted once per sample, the first time.
              const newCallee = state[node + FromAbove.LAST_SAMPLE] !== sample;
              if (newCallee) state[node + FromAbove.LAST_SAMPLE] = sample;
              if (samplePairs.add(parent, n, newCallee)) {
                const plain = how === FROM_ABOVE_PLAIN;
                if (!batch) {
                  const kinds = state[node + FromAbove.KINDS]!;
                  state[node + FromAbove.KINDS] = kinds | (plain ? PLAIN_CALL : INLINED_CALL);
                  if (weighted) state[node + FromAbove.WEIGHTED_SUM] = (state[node + FromAbove.WEIGHTED_SUM]! + Math.imul(valueLow, callerWeight(parent, seed))) | 0;
                  if (kinds & COLLECTED) collected.add(n, parent, value, plain);
                } else if (batch.inBatch[n]) {
                  const into = batch.next[n]!++;
                  if (batch.src) {
                    batch.src[into] = parent;
                    batch.values![into] = value;
                    batch.plain![into] = plain ? 1 : 0;
                  }
                }
              }
            }
          }
          if (call >= 0 && !batch && callState[4 * call] !== sample) {
            callState[4 * call] = sample;
            if (weighted) callSums[2 * call + 1] += value as number;
            else callBigSums[call] = callBigSums[call]! + (value as bigint);
            if (how === FROM_ABOVE_PLAIN) callState[4 * call + 1] = 1;
          }
          parent = n;
        }
      }
    }
  }
}

/**
 * The calls from above of the current sample, to count each once: a list, with a hash set over it
 * once a callee repeats (recursion; most samples have none), so that no sample costs more than
 * its frames whatever its depth.
 */
class SamplePairs {
  private src = new Int32Array(64);
  private dst = new Int32Array(64);
  private count = 0;
  /** Slots of the hash set hold a list index + 1 while their generation is the current one. */
  private slots = new Int32Array(0);
  private slotGeneration = new Int32Array(0);
  private generation = 0;
  private hashed = false;
  /** Mixed into the hash, drawn per set: node ids follow from the input (unseeded, a crafted deep sample's calls fell in one run of slots: 100,000 frames 20 s). */
  private readonly seed = (Math.random() * 2 ** 32) | 0;

  clear(): void {
    this.count = 0;
    this.hashed = false;
  }

  /**
   * Adds the call `src -> dst` to the sample's; false when the sample has it already.
   * `newCallee`: the sample has no call into `dst` yet (the caller keeps track).
   */
  add(src: number, dst: number, newCallee: boolean): boolean {
    if (!newCallee) {
      if (!this.hashed) this.rehash(2 * this.count + 2);
      if (this.find(src, dst) >= 0) return false;
    }
    if (this.count === this.src.length) {
      this.src = grown(this.src, this.count + 1);
      this.dst = grown(this.dst, this.count + 1);
    }
    this.src[this.count] = src;
    this.dst[this.count++] = dst;
    if (this.hashed) {
      if (2 * this.count > this.slots.length) this.rehash(2 * this.count);
      else this.insert(this.count - 1);
    }
    return true;
  }

  /** The hash set over the list so far, of at least `size` slots. */
  private rehash(size: number): void {
    if (size > this.slots.length) {
      let n = 64;
      while (n < size) n *= 2;
      this.slots = new Int32Array(n);
      this.slotGeneration = new Int32Array(n);
    }
    this.generation++;
    this.hashed = true;
    for (let k = 0; k < this.count; k++) this.insert(k);
  }

  /** The slot of `src -> dst` when the set has it, else ~ the empty slot where it goes. */
  private find(src: number, dst: number): number {
    const mask = this.slots.length - 1;
    let h = pairHash(src, dst, this.seed) & mask;
    for (; this.slotGeneration[h] === this.generation; h = (h + 1) & mask) {
      const k = this.slots[h]! - 1;
      if (this.src[k] === src && this.dst[k] === dst) return h;
    }
    return ~h;
  }

  private insert(k: number): void {
    const h = ~this.find(this.src[k]!, this.dst[k]!);
    this.slots[h] = k + 1;
    this.slotGeneration[h] = this.generation;
  }
}

/** murmur3's 32-bit finalizer over a pair of node ids (as `CallTable`'s), `seed` mixed in. */
function pairHash(src: number, dst: number, seed: number): number {
  let h = Math.imul(src ^ seed, 0x9e3779b1) ^ dst;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Callees with at most this many location callers are looked up by a scan of their callers (one cache line), the others in the hash table. */
const SCANNED_CALLERS = 8;

/** `CallPairs.indexOf` of a pair never added. */
const NOT_A_PAIR = -1;

/**
 * (src, dst) node pairs numbered in first-added order, found through an open-addressing hash table
 * while they are added, then through each callee's list of callers (`listByCallee`): the calls from
 * above are looked up among them, nearly all in vain (9 million lookups on a diff of random
 * stacks, whose callees have a few location callers each).
 */
class CallPairs {
  src = new Int32Array(64);
  dst = new Int32Array(64);
  length = 0;
  /** Pair number + 1 per slot, 0 for an empty one. */
  private slots = new Int32Array(128);
  /** Mixed into the hash, drawn per table: node ids follow from the input (see `PrefixTreeBuilder.seed`). */
  private readonly seed = (Math.random() * 2 ** 32) | 0;
  /** Callee n's pairs: `calleePairs[calleeStart[n] .. calleeStart[n + 1]]`, their callers in `calleeCallers` (`listByCallee`). */
  private calleeStart = new Int32Array(1);
  private calleeCallers = new Int32Array(0);
  private calleePairs = new Int32Array(0);

  /** The number of the pair `src -> dst`, added when new. */
  add(src: number, dst: number): number {
    const h = this.slot(src, dst);
    if (this.slots[h] !== 0) return this.slots[h]! - 1;
    const e = this.length++;
    this.src = grown(this.src, this.length);
    this.dst = grown(this.dst, this.length);
    this.src[e] = src;
    this.dst[e] = dst;
    this.slots[h] = e + 1;
    if (2 * this.length > this.slots.length) {
      this.slots = new Int32Array(this.slots.length * 2);
      for (let k = 0; k < this.length; k++) this.slots[this.slot(this.src[k]!, this.dst[k]!)] = k + 1;
    }
    return e;
  }

  /** Lists the pairs by callee (once every pair is added, before `indexOf`). */
  listByCallee(nNodes: number): void {
    const start = new Int32Array(nNodes + 1);
    for (let e = 0; e < this.length; e++) start[this.dst[e]! + 1]!++;
    for (let n = 0; n < nNodes; n++) start[n + 1]! += start[n]!;
    const next = start.slice(0, nNodes);
    this.calleeCallers = new Int32Array(this.length);
    this.calleePairs = new Int32Array(this.length);
    for (let e = 0; e < this.length; e++) {
      const k = next[this.dst[e]!]!++;
      this.calleeCallers[k] = this.src[e]!;
      this.calleePairs[k] = e;
    }
    this.calleeStart = start;
  }

  /** The number of the pair `src -> dst`, NOT_A_PAIR when it was never added. */
  indexOf(src: number, dst: number): number {
    const from = this.calleeStart[dst]!;
    const to = this.calleeStart[dst + 1]!;
    // (An empty slot holds 0: NOT_A_PAIR + 1.)
    if (to - from > SCANNED_CALLERS) return this.slots[this.slot(src, dst)]! - 1;
    for (let k = from; k < to; k++) if (this.calleeCallers[k] === src) return this.calleePairs[k]!;
    return NOT_A_PAIR;
  }

  private slot(src: number, dst: number): number {
    const mask = this.slots.length - 1;
    let h = pairHash(src, dst, this.seed) & mask;
    for (; this.slots[h] !== 0; h = (h + 1) & mask) {
      const k = this.slots[h]! - 1;
      if (this.src[k] === src && this.dst[k] === dst) break;
    }
    return h;
  }
}
