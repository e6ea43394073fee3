/**
 * The call graph of `go tool pprof -dot` (google/pprof `internal/graph` and `report`'s
 * `newTrimmedGraph` in visual mode): nodes with flat/cum values and their tags (string labels
 * and `bytes` numeric labels, drawn as "nodelets"), calls as edges (residual when they skip
 * dropped nodes, inline when every occurrence is an inlined call), trimmed like pprof: nodes
 * below the node fraction dropped, nodes sorted by pprof's entropy score, the first `nodeCount`
 * kept (tags counted as nodes), light tags and edges dropped, redundant residual edges removed.
 * With `callTree` every node is a path (pprof `-call_tree`), trimmed by re-parenting.
 *
 * Flat, cum and edge weights come from the shared stack table (`buildNodes`); tags need each
 * sample's labels, so they are summed in one pass over the samples, only when the profile has
 * labels. Objects are made only for the graph's nodes, never per sample.
 */

import { ErrorCodes, ProfkitError } from '../errors.js';
import type { Profile } from '../model.js';
import { ProfileIndex, defaultSampleTypeIndex } from '../views.js';
import { numLabelUnits } from './filter.js';
import { formatValue } from './format.js';
import { abs, compareGoStrings } from './internal.js';
import { buildNodes, checkSampleType, divisorInput, graphInputOf, nodeTable, type CallGraphOptions, type GraphInput, type NodeFields } from './report.js';
import { PrefixTreeBuilder, subtreeSums, type StackValues } from './stack-table.js';
import { meanStackTables } from './mean.js';
import { StringKeys } from '../string-keys.js';
import { MAX_STRING_LENGTH } from '../report-text.js';

/** A sample annotation summed on a node (pprof `graph.Tag`). */
export interface GraphTag {
  /** `key:value` string labels joined by `\n` (as two characters), or a formatted number (`512kB`). */
  name: string;
  /** Unit of a numeric tag, '' for string labels. */
  unit: string;
  /** Value of a numeric tag. */
  value: bigint;
  flat: bigint;
  cum: bigint;
  /** With `-mean`: the divisor's sums over the same samples (0: none). */
  flatDiv: bigint;
  cumDiv: bigint;
}

export interface GraphEdge {
  src: GraphNode;
  dest: GraphNode;
  weight: bigint;
  /** With `-mean`: the divisor's sum over the same samples (0: none). */
  weightDiv: bigint;
  /** The call skips nodes that were dropped (drawn dotted). */
  residual: boolean;
  /** Every counted occurrence is a call inlined into the caller. */
  inline: boolean;
}

export interface GraphNode {
  /** The node table row of its info (a call tree has several nodes per row). */
  id: number;
  /** What the node stands for (pprof `NodeInfo`). */
  info: NodeFields;
  /** pprof `PrintableName()`. */
  name: string;
  /** `fmt.Sprint(NodeInfo)`: pprof's last-resort sort key. */
  sortKey: string;
  flat: bigint;
  cum: bigint;
  /** With `-mean`: the divisor's sums over the same samples (0: none); see `meanValue`. */
  flatDiv: bigint;
  cumDiv: bigint;
  /** Callers by caller node, callees by callee node. */
  in: Map<GraphNode, GraphEdge>;
  out: Map<GraphNode, GraphEdge>;
  /** String-label tags by name. */
  labelTags: Map<string, GraphTag>;
  /** Numeric tags by the string labels of their samples ('' = none), then by name. */
  numericTags: Map<string, Map<string, GraphTag>>;
}

export interface VisualGraphOptions extends Pick<CallGraphOptions, 'by' | 'inline'> {
  sampleTypeIndex?: number;
  /** Keep at most this many nodes, tags counted (pprof `-nodecount`; 0: all). Default 80. */
  nodeCount?: number;
  /** Drop nodes whose |cum| is below this fraction of the sum of flat values (default 0.005). */
  nodeFraction?: number;
  /** Drop edges (and tags) below this fraction (default 0.001; tags use the node fraction). */
  edgeFraction?: number;
  /** One node per call path instead of per function (pprof `-call_tree`). */
  callTree?: boolean;
  /** The unit `bytes` tags are printed in (pprof's `-unit`; default `minimum`). */
  tagUnit?: string;
  /** pprof `-mean`: values divided by the sums of this sample type (the count) over the same samples. */
  meanDivisorIndex?: number;
  /**
   * Leave out nodes whose flat (or, at flat 0, cum) is negative (pprof `-drop_negative`; not with
   * `callTree`). As in pprof, calls into them stay, drawn to a node `N0`.
   */
  dropNegative?: boolean;
}

export interface VisualGraph {
  /** In pprof's order (entropy score), which numbers them in the DOT output. */
  nodes: GraphNode[];
  sampleTypeIndex: number;
  unit: string;
  /** Nodes left after the node-fraction cut, before `nodeCount`. */
  origCount: number;
  droppedNodes: number;
  droppedEdges: number;
}

/**
 * What a report prints for a sum (pprof `FlatValue`, `CumValue`, `WeightValue`): with `-mean`
 * the sum divided by its divisor (trimming and sorting use the undivided sums, as in pprof).
 */
export function meanValue(value: bigint, div: bigint): bigint {
  return div === 0n ? value : value / div;
}

/** pprof `maxNodelets`: tags shown per node (and counted per node when selecting nodes). */
export const MAX_NODELETS = 4;

/** The label tags of pprof's graph leave out the diff-base marker (report `newGraph`). */
const DIFF_BASE_KEY = 'pprof::base';

/**
 * Per sample, the tag pprof's graph attaches: the string labels as one name, and the values of
 * the `bytes` numeric label (the only numeric label graph reports keep) formatted in the key's
 * unit. Undefined when no sample has either.
 */
function sampleTagsOf(p: Profile, tagUnit: string): { labels: string[]; bytes: bigint[][]; unit: string; tagUnit: string } | undefined {
  const offsets = p.samples['.label_offsets'];
  if (!offsets) return undefined;
  const t = p['.labels'];
  const n = offsets.length - 1;
  const labels = new Array<string>(n).fill('');
  const bytes: bigint[][] = new Array(n);
  // Samples with the same labels share one tag text, found by a short key: labels can name one
  // long value many times, and a text per sample would cost its length once per sample.
  const strings = new StringKeys();
  const tagTexts = new Map<string, string>();
  let any = false;
  for (let i = 0; i < n; i++) {
    const strs: { text: string; key: string }[] = [];
    const nums: bigint[] = [];
    let length = 0;
    for (let j = offsets[i]!; j < offsets[i + 1]!; j++) {
      if (t.is_num[j]) {
        if (t.key[j] === 'bytes') nums.push(t.num[j]!);
      } else if (t.key[j] !== DIFF_BASE_KEY) {
        strs.push({ text: t.key[j]! + ':' + t.str[j]!, key: strings.of(t.key[j]!) + ':' + strings.of(t.str[j]!) });
        length += t.key[j]!.length + t.str[j]!.length + 3;
      }
    }
    if (strs.length > 0) {
      // Checked before the sort, which makes each label's text whole.
      if (length > MAX_STRING_LENGTH) {
        throw new ProfkitError(ErrorCodes.LIMIT, `the labels of sample ${i} as one tag (${length} UTF-16 code units) exceed the longest string JavaScript makes (${MAX_STRING_LENGTH})`, {
          rule: 'longest JavaScript string',
          limit: MAX_STRING_LENGTH,
        });
      }
      strs.sort((a, b) => compareGoStrings(a.text, b.text));
      const key = strs.map((e) => e.key).join('\n');
      let text = tagTexts.get(key);
      if (text === undefined) {
        tagTexts.set(key, (text = strs.map((e) => e.text).join('\\n')));
      }
      labels[i] = text;
    }
    bytes[i] = nums;
    any ||= strs.length > 0 || nums.length > 0;
  }
  if (!any) return undefined;
  return { labels, bytes, unit: numLabelUnits(p).get('bytes') ?? 'bytes', tagUnit };
}

function newNode(src: GraphSource, id: number): GraphNode {
  return { id, info: src.fields[id]!, name: src.names[id]!, sortKey: src.infos[id]!, flat: 0n, cum: 0n, flatDiv: 0n, cumDiv: 0n, in: new Map(), out: new Map(), labelTags: new Map(), numericTags: new Map() };
}

function findOrAddTag(m: Map<string, GraphTag>, name: string, unit: string, value: bigint): GraphTag {
  let t = m.get(name);
  if (!t) m.set(name, (t = { name, unit, value, flat: 0n, cum: 0n, flatDiv: 0n, cumDiv: 0n }));
  return t;
}

/** pprof `Node.addSample` for the tags only (the values come from the stack table). */
function addSampleTags(n: GraphNode, w: bigint, dw: bigint, labels: string, bytes: readonly bigint[], unit: string, tagUnit: string, flat: boolean): void {
  const add = (t: GraphTag) => {
    if (flat) {
      t.flat += w;
      t.flatDiv += dw;
    } else {
      t.cum += w;
      t.cumDiv += dw;
    }
  };
  if (labels !== '') add(findOrAddTag(n.labelTags, labels, '', 0n));
  if (bytes.length === 0) return;
  let numeric = n.numericTags.get(labels);
  if (!numeric) n.numericTags.set(labels, (numeric = new Map()));
  for (const v of bytes) add(findOrAddTag(numeric, formatValue(v, unit, tagUnit), unit, v));
}

/** The node table and stack table of one sample type: what every graph build of a report starts from. */
interface GraphSource {
  p: Profile;
  t: number;
  input: GraphInput;
  fields: NodeFields[];
  names: string[];
  infos: string[];
  tags: ReturnType<typeof sampleTagsOf>;
  dropNegative: boolean;
  /** With `-mean`: the divisor's sample type (its per-stack sums are `input.divisor`). */
  divisorIndex?: number;
}

/**
 * The tags of the samples, summed on graph nodes: `pathOf(stack)` lists a stack's nodes
 * (undefined entries for dropped ones), innermost first; flat tags go to the innermost node
 * when it is kept (as pprof's flat values), cum tags once per node per sample.
 */
function addTags(src: GraphSource, pathOf: (stack: number, visit: (node: GraphNode | undefined) => void) => void): void {
  const tags = src.tags;
  if (!tags) return;
  const col = src.p.samples['.values'][src.t]!;
  const div = src.divisorIndex === undefined ? undefined : src.p.samples['.values'][src.divisorIndex]!;
  const { sampleStack } = src.input.stacks;
  const seen = new Set<GraphNode>();
  for (let i = 0; i < col.length; i++) {
    const s = sampleStack[i]!;
    if (s < 0 || (tags.labels[i] === '' && tags.bytes[i]!.length === 0)) continue;
    const w = col[i]!;
    const dw = div ? div[i]! : 0n;
    seen.clear();
    let innermost = true;
    pathOf(s, (n) => {
      if (n && !seen.has(n)) {
        seen.add(n);
        addSampleTags(n, w, dw, tags.labels[i]!, tags.bytes[i]!, tags.unit, tags.tagUnit, false);
        if (innermost) addSampleTags(n, w, dw, tags.labels[i]!, tags.bytes[i]!, tags.unit, tags.tagUnit, true);
      }
      innermost = false;
    });
  }
}

/** Visits the node ids of stack `s`, innermost first (a location's lines innermost first). */
function forEachNodeId(input: GraphInput, s: number, visit: (id: number, inlined: boolean) => void): void {
  const { prefix, frame } = input.stacks;
  for (let k = s; k >= 0; k = prefix[k]!) {
    const r = frame[k]!;
    const last = input.locNodeOffsets[r + 1]! - 1;
    for (let ni = input.locNodeOffsets[r]!; ni <= last; ni++) visit(input.locNodeIds[ni]!, ni !== last);
  }
}

/**
 * pprof `newGraph` with `KeptNodes` = `kept` (all nodes when undefined); without `calls` only the
 * nodes' values (no edges, no tags: all the node-fraction cut looks at).
 */
function newGraph(src: GraphSource, kept: Uint8Array | undefined, calls = true): GraphNode[] {
  const callees = calls ? (kept ?? new Uint8Array(src.input.nNodes).fill(1)) : undefined;
  const b = buildNodes(src.input, kept, callees);
  // -mean: the divisor summed over the same stacks gives the same nodes and calls, in the same order.
  const d = src.input.divisor ? buildNodes(divisorInput(src.input), kept, callees) : undefined;
  const byId: (GraphNode | undefined)[] = new Array(src.input.nNodes);
  const nodes: GraphNode[] = [];
  for (let id = 0; id < src.input.nNodes; id++) {
    if (b.flat[id] === 0n && b.cum[id] === 0n) continue;
    const n = newNode(src, id);
    n.flat = b.flat[id]!;
    n.cum = b.cum[id]!;
    if (d) {
      n.flatDiv = d.flat[id]!;
      n.cumDiv = d.cum[id]!;
    }
    byId[id] = n;
    // pprof's selectNodesForGraph: a dropped negative node keeps its edges (see VisualGraphOptions).
    if (!(src.dropNegative && (n.flat < 0n || (n.flat === 0n && n.cum < 0n)))) nodes.push(n);
  }
  // pprof keeps the calls into nodes it leaves out for a zero value (a cancelled diff, a -mean
  // sample of value 0): they are drawn to N0, like the calls into dropped negative nodes.
  const endpoint = (id: number) => byId[id] ?? (byId[id] = newNode(src, id));
  for (let e = 0; e < b.src.length; e++) {
    const s = endpoint(b.src[e]!);
    const t = endpoint(b.dst[e]!);
    const edge: GraphEdge = { src: s, dest: t, weight: BigInt(b.weight[e]!), weightDiv: d ? BigInt(d.weight[e]!) : 0n, residual: b.residual[e]!, inline: b.inline[e]! };
    s.out.set(t, edge);
    t.in.set(s, edge);
  }
  if (calls) addTags(src, (s, visit) => forEachNodeId(src.input, s, (id) => visit(kept && !kept[id] ? undefined : byId[id])));
  return nodes;
}

/**
 * pprof `newTree` in arrays: a tree node per (caller tree node, node info), i.e. per call path,
 * interned over the stack table's rows in row order (callers first, so `parents[t] < t`). Objects
 * are made later, only for the nodes the node-fraction cut keeps (`treeGraph`): call trees of big
 * profiles have a node per distinct path.
 */
interface CallTree {
  /** Caller tree node of each tree node, -1 for roots. */
  parents: Int32Array;
  /** Node table row (the info) of each tree node. */
  ids: Int32Array;
  /** 1 when every step into the tree node is an inlined call. */
  inline: Uint8Array;
  flat: StackValues;
  cum: StackValues;
  /** With `-mean`: the divisor's sums. */
  div?: { flat: StackValues; cum: StackValues };
  /** Innermost tree node of each stack. */
  treeOf: Int32Array;
}

function callTreeOf(input: GraphInput): CallTree {
  const { prefix, frame, self, length } = input.stacks;
  const { locNodeOffsets, locNodeIds } = input;
  const tree = new PrefixTreeBuilder();
  const treeOf = new Int32Array(length);
  let inline = new Uint8Array(1024);
  for (let s = 0; s < length; s++) {
    let parent = prefix[s]! < 0 ? -1 : treeOf[prefix[s]!]!;
    const r = frame[s]!;
    const last = locNodeOffsets[r + 1]! - 1;
    for (let ni = last; ni >= locNodeOffsets[r]!; ni--) {
      const before = tree.length;
      const t = tree.intern(parent, locNodeIds[ni]!);
      if (t === before) {
        if (t === inline.length) {
          const next = new Uint8Array(inline.length * 2);
          next.set(inline);
          inline = next;
        }
        inline[t] = ni !== last ? 1 : 0;
      } else if (ni === last) inline[t] = 0;
      parent = t;
    }
    treeOf[s] = parent;
  }
  const { prefix: parents, frame: ids } = tree.finish();
  const sums = (stackSelf: StackValues) => treeSums(input, stackSelf, parents, treeOf);
  return { parents, ids, inline: inline.subarray(0, ids.length), ...sums(self), ...(input.divisor ? { div: sums(input.divisor.self) } : {}), treeOf };
}

/** Flat and cum per tree node of the per-stack sums `self`, in their representation (`+` works on both). */
function treeSums(input: GraphInput, self: StackValues, parents: Int32Array, treeOf: Int32Array): { flat: StackValues; cum: StackValues } {
  const { prefix, frame, length } = input.stacks;
  const { locNodeOffsets } = input;
  const totals = subtreeSums(prefix, self);
  const zeros = (): StackValues => (self instanceof Float64Array ? new Float64Array(parents.length) : new Array<bigint>(parents.length).fill(0n));
  const flat = zeros();
  const cum = zeros();
  const flatSums = flat as unknown as number[];
  const cumSums = cum as unknown as number[];
  for (let s = 0; s < length; s++) {
    const r = frame[s]!;
    let t = treeOf[s]!;
    flatSums[t]! += self[s] as number;
    // The location's lines are the innermost tree nodes of the stack's chain.
    for (let k = locNodeOffsets[r]!; k < locNodeOffsets[r + 1]!; k++, t = parents[t]!) cumSums[t]! += totals[s] as number;
  }
  return { flat, cum };
}

/**
 * The call tree as graph nodes, cut at `nodeCutoff` like pprof's `DiscardLowFrequencyNodePtrs`
 * then `TrimTree`: a dropped node's callees hang from its nearest kept caller (residual edges,
 * inline when every step was), or become roots. Returns the nodes and how many were dropped.
 */
function treeGraph(src: GraphSource, tree: CallTree, nodeCutoff: bigint): { nodes: GraphNode[]; dropped: number } {
  const { parents, ids, inline, treeOf } = tree;
  const n = ids.length;
  const nodes: (GraphNode | undefined)[] = new Array(n);
  const list: GraphNode[] = [];
  let live = 0;
  for (let t = 0; t < n; t++) {
    const flat = BigInt(tree.flat[t]!);
    const cum = BigInt(tree.cum[t]!);
    const zero = flat === 0n && cum === 0n;
    if (!zero) live++;
    // Zero nodes (-mean samples of value 0, cancelled diffs) are not in pprof's node list, so its
    // trimming never removes them: the calls into them stay and are drawn to N0.
    if (!zero && abs(cum) < nodeCutoff) continue;
    const node = newNode(src, ids[t]!);
    node.flat = flat;
    node.cum = cum;
    if (tree.div) {
      node.flatDiv = BigInt(tree.div.flat[t]!);
      node.cumDiv = BigInt(tree.div.cum[t]!);
    }
    nodes[t] = node;
    if (!zero) list.push(node);
  }
  // Per tree node: its nearest kept (or zero) caller, and whether the way there skips nodes / is all inline.
  const above = new Int32Array(n);
  const residual = new Uint8Array(n);
  const inlineUp = new Uint8Array(n);
  for (let t = 0; t < n; t++) {
    const p = parents[t]!;
    if (p < 0) above[t] = -1;
    else if (nodes[p]) {
      above[t] = p;
      inlineUp[t] = inline[t]!;
    } else {
      above[t] = above[p]!;
      residual[t] = 1;
      inlineUp[t] = inlineUp[p]! & inline[t]!;
    }
    const node = nodes[t];
    if (!node || above[t]! < 0) continue;
    const caller = nodes[above[t]!]!;
    const edge: GraphEdge = { src: caller, dest: node, weight: node.cum, weightDiv: node.cumDiv, residual: residual[t] === 1, inline: inlineUp[t] === 1 };
    caller.out.set(node, edge);
    node.in.set(caller, edge);
  }
  addTags(src, (s, visit) => {
    for (let t = treeOf[s]!; t >= 0; t = parents[t]!) visit(nodes[t]);
  });
  return { nodes: list, dropped: live - list.length };
}

/** pprof `EdgeMap.Sort`: |weight| descending, then caller and callee names. */
export function compareEdges(a: GraphEdge, b: GraphEdge): number {
  if (a.weight !== b.weight) {
    const x = abs(a.weight);
    const y = abs(b.weight);
    return x > y ? -1 : x < y ? 1 : 0;
  }
  return compareGoStrings(a.src.name, b.src.name) || compareGoStrings(a.dest.name, b.dest.name);
}

/** pprof `edgeEntropyScore`. */
function edgeEntropyScore(edges: Map<GraphNode, GraphEdge>, self: bigint): number {
  let score = 0;
  let total = self;
  for (const e of edges.values()) if (e.weight > 0n) total += abs(e.weight);
  if (total !== 0n) {
    const t = Number(total);
    for (const e of edges.values()) {
      const frac = Number(abs(e.weight)) / t;
      score += -frac * Math.log2(frac);
    }
    if (self > 0n) {
      const frac = Number(abs(self)) / t;
      score += -frac * Math.log2(frac);
    }
  }
  return score;
}

/** pprof `entropyScore`: favours entry and leaf nodes and nodes whose calls fan in or out. */
function entropyScore(n: GraphNode): bigint {
  let score = 0;
  score += n.in.size === 0 ? 1 : edgeEntropyScore(n.in, 0n);
  score += n.out.size === 0 ? 1 : edgeEntropyScore(n.out, n.flat);
  return BigInt.asIntN(64, goInt64(score * Number(n.cum)) + n.flat);
}

const MIN_INT64 = -(2n ** 63n);

/**
 * Go's `int64(x)` on amd64: truncation toward zero, and the "integer indefinite" minimum for NaN
 * and values out of range (negative values make entropy scores NaN: pprof sorts diffs so).
 */
function goInt64(x: number): bigint {
  return Number.isNaN(x) || x >= 2 ** 63 || x < -(2 ** 63) ? MIN_INT64 : BigInt(Math.trunc(x));
}

/** Go's `abs64` on int64 (the minimum stays itself). */
const abs64 = (v: bigint): bigint => BigInt.asIntN(64, v < 0n ? -v : v);

/** pprof `SortNodes(_, visualMode=true)`: `EntropyOrder`, ties by name, |flat|, `fmt.Sprint(Info)`. */
function sortByEntropy(nodes: GraphNode[]): void {
  const score = new Map<GraphNode, bigint>();
  for (const n of nodes) score.set(n, abs64(entropyScore(n)));
  const byAbs = (x: bigint, y: bigint) => (x > y ? -1 : x < y ? 1 : 0);
  nodes.sort((l, r) => byAbs(score.get(l)!, score.get(r)!) || compareGoStrings(l.name, r.name) || byAbs(abs(l.flat), abs(r.flat)) || compareGoStrings(l.sortKey, r.sortKey));
}

/** pprof `countTags`: tags with a flat value. */
function countTags(n: GraphNode): number {
  let count = 0;
  for (const t of n.labelTags.values()) if (t.flat !== 0n) count++;
  for (const m of n.numericTags.values()) for (const t of m.values()) if (t.flat !== 0n) count++;
  return count;
}

/** pprof `selectTopNodes(maxNodes, visualMode=true)`: tags (up to 4 a node) count as nodes. */
function selectTopNodes(nodes: GraphNode[], maxNodes: number): GraphNode[] {
  if (maxNodes > 0) {
    let count = 0;
    for (let i = 0; i < nodes.length; i++) {
      count += Math.min(countTags(nodes[i]!), MAX_NODELETS) + 1;
      if (count >= maxNodes) {
        maxNodes = i + 1;
        break;
      }
    }
  }
  return nodes.slice(0, Math.min(maxNodes, nodes.length));
}

/** pprof `TrimLowFrequencyTags`. */
function trimLowFrequencyTags(nodes: GraphNode[], cutoff: bigint): void {
  const trim = (m: Map<string, GraphTag>) => {
    for (const [k, t] of m) if (abs(t.flat) < cutoff && abs(t.cum) < cutoff) m.delete(k);
  };
  for (const n of nodes) {
    trim(n.labelTags);
    for (const m of n.numericTags.values()) trim(m);
  }
}

/** pprof `TrimLowFrequencyEdges`: the number of edges removed. */
function trimLowFrequencyEdges(nodes: GraphNode[], cutoff: bigint): number {
  let dropped = 0;
  for (const n of nodes) {
    for (const [src, e] of n.in) {
      if (abs(e.weight) < cutoff) {
        n.in.delete(src);
        src.out.delete(n);
        dropped++;
      }
    }
  }
  return dropped;
}

/** pprof `isRedundantEdge`: whether `e.src` reaches `e.dest` another way (breadth-first over callers). */
function isRedundantEdge(e: GraphEdge): boolean {
  const seen = new Set<GraphNode>([e.dest]);
  const queue: GraphNode[] = [e.dest];
  for (let q = 0; q < queue.length; q++) {
    for (const ie of queue[q]!.in.values()) {
      if (ie === e || seen.has(ie.src)) continue;
      if (ie.src === e.src) return true;
      seen.add(ie.src);
      queue.push(ie.src);
    }
  }
  return false;
}

/**
 * pprof `RemoveRedundantEdges`: residual edges whose destination is reached another way, the
 * lightest first, stopping at a node's first non-residual edge.
 */
function removeRedundantEdges(nodes: GraphNode[]): void {
  for (let i = nodes.length - 1; i >= 0; i--) {
    const inEdges = [...nodes[i]!.in.values()].sort(compareEdges);
    for (let j = inEdges.length - 1; j >= 0; j--) {
      const e = inEdges[j]!;
      if (!e.residual) break;
      if (isRedundantEdge(e)) {
        e.src.out.delete(e.dest);
        e.dest.in.delete(e.src);
      }
    }
  }
}

/**
 * pprof `TrimTree`: keeps the `kept` nodes of a forest; a dropped node's callees move to its
 * caller (residual edges, inline when both steps were), or become roots.
 */
function trimTree(nodes: GraphNode[], kept: Set<GraphNode>): GraphNode[] {
  const out: GraphNode[] = [];
  for (const cur of nodes) {
    if (kept.has(cur)) {
      out.push(cur);
      continue;
    }
    const parentEdge = cur.in.values().next().value as GraphEdge | undefined;
    if (!parentEdge) {
      for (const e of cur.out.values()) e.dest.in.delete(cur);
      continue;
    }
    const parent = parentEdge.src;
    parent.out.delete(cur);
    for (const e of cur.out.values()) {
      const child = e.dest;
      child.in.delete(cur);
      child.in.set(parent, e);
      parent.out.set(child, e);
      e.src = parent;
      e.residual = true;
      e.inline = parentEdge.inline && e.inline;
    }
  }
  removeRedundantEdges(out);
  return out;
}

function flatSum(nodes: GraphNode[]): bigint {
  let s = 0n;
  for (const n of nodes) s += n.flat;
  return s;
}

/**
 * `go tool pprof -dot`'s graph (report `newTrimmedGraph` with the `Dot` output format): built,
 * trimmed by node fraction, sorted by entropy, cut to `nodeCount` nodes (tags counted), light
 * tags and edges dropped and redundant residual edges removed. Focus/ignore are applied by the
 * caller (they change the samples, not the report total).
 */
export function visualGraph(p: Profile, options: VisualGraphOptions = {}): VisualGraph {
  const t = options.sampleTypeIndex ?? defaultSampleTypeIndex(p);
  checkSampleType(p, t);
  const index = new ProfileIndex(p);
  const table = nodeTable(p, options.by ?? 'function', options.inline ?? true, false, index);
  const src: GraphSource = {
    p,
    t,
    input: graphInputOf(p, index, t, table.locNodes, table.names.length),
    divisorIndex: options.meanDivisorIndex,
    fields: table.fields,
    names: table.names,
    infos: table.infos,
    tags: sampleTagsOf(p, options.tagUnit ?? 'minimum'),
    dropNegative: options.dropNegative ?? false,
  };
  // -mean: the stacks of the samples whose value or divisor is nonzero, with the divisor's sums.
  if (options.meanDivisorIndex !== undefined) src.input = { ...src.input, ...meanStackTables(p, index, t, options.meanDivisorIndex) };
  const callTree = options.callTree ?? false;
  if (callTree && src.dropNegative) {
    throw new ProfkitError(ErrorCodes.USAGE, 'drop_negative is not supported with call_tree', { option: 'dropNegative', rule: 'a call tree keeps its negative nodes' });
  }
  const keptIds = (list: GraphNode[]) => {
    const kept = new Uint8Array(src.input.nNodes);
    for (const n of list) kept[n.id] = 1;
    return kept;
  };
  const tree = callTree ? callTreeOf(src.input) : undefined;
  // The first graph serves the node-fraction cut only: its values are all that cut needs.
  let g = tree ? [] : newGraph(src, undefined, false);
  let total = flatSum(g);
  if (tree) for (let k = 0; k < tree.flat.length; k++) total += BigInt(tree.flat[k]!);
  const cutoff = (fraction: number) => abs(BigInt(Math.trunc(Number(total) * fraction)));
  const nodeCutoff = cutoff(options.nodeFraction ?? 0.005);
  const edgeCutoff = cutoff(options.edgeFraction ?? 0.001);
  let droppedNodes = 0;
  if (tree) {
    const cut = treeGraph(src, tree, nodeCutoff);
    g = cut.nodes;
    droppedNodes = cut.dropped;
  } else {
    const above = nodeCutoff > 0n ? g.filter((n) => abs(n.cum) >= nodeCutoff) : g;
    droppedNodes = g.length - above.length;
    g = newGraph(src, droppedNodes > 0 ? keptIds(above) : undefined);
  }
  const origCount = g.length;
  sortByEntropy(g);
  const nodeCount = options.nodeCount ?? 80;
  if (nodeCount > 0) {
    trimLowFrequencyTags(g, nodeCutoff);
    trimLowFrequencyEdges(g, edgeCutoff);
    const top = selectTopNodes(g, nodeCount);
    if (top.length !== g.length) {
      g = callTree ? trimTree(g, new Set(top)) : newGraph(src, keptIds(top));
      sortByEntropy(g);
    }
  }
  trimLowFrequencyTags(g, nodeCutoff);
  const droppedEdges = trimLowFrequencyEdges(g, edgeCutoff);
  removeRedundantEdges(g);
  return { nodes: g, sampleTypeIndex: t, unit: p.sample_types.unit[t]!, origCount, droppedNodes, droppedEdges };
}
