/**
 * Text reports like `go tool pprof`: the call graph with pprof's trimming (`callGraph`, the
 * graph behind `-top`, `-tree` and `-peek`), the header lines (`profileLabels`,
 * `reportLabels`), and the complete `-top` / `-tree` / `-peek` reports (`topReport`,
 * `treeReport`). The percentages are taken of the total before `focus`/`ignore`, as pprof does.
 */

import { ErrorCodes, ProfkitError } from '../errors.js';
import type { Profile } from '../model.js';
import { ProfileIndex, defaultSampleTypeIndex, labelsOf } from '../views.js';
import { DIFF_BASE_LABEL } from './diff.js';
import { applyRatio, formatPercentage, formatValue, scaleMeasurement } from './format.js';
import { abs, baseName, cleanPath, compareGoStrings, visitLocationLines, type OpLine, type OpLocation } from './internal.js';
import { compilePattern, type Pattern } from './regex.js';
import { walkCallGraph, type CallGraphWalk } from './call-graph-walk.js';
import { INLINED_CALL, PLAIN_CALL } from './inline-markers.js';
import { buildStackTable, sparseSelf, type StackTable, type StackValues } from './stack-table.js';
import { formatTopTable, type TopEntry, type TopOptions, type TopTable } from './top.js';
import { granularityFields, type ReportGranularity } from './granularity.js';
import { meanOf, meanStackTables } from './mean.js';
import { activeFilterLabels, applyReportFilters, withoutEmptyStacks, type ReportFilterOptions } from './report-filters.js';
import { addTagFrames } from './tag-frames.js';
import { hasStackFilters, planStackFilters } from './stack-filters.js';
import { StringKeys } from '../string-keys.js';
import { ReportTextBudget, type ReportLimits } from '../report-text.js';

export interface CallGraphOptions {
  /** Sample type to report; default: the profile's default sample type. */
  sampleTypeIndex?: number;
  /** Node granularity (pprof `-functions`, `-files`, `-lines`, `-addresses`, `-filefunctions`); default `function`. */
  by?: ReportGranularity;
  /** Expand inline frames (default true). */
  inline?: boolean;
  /** Show columns in `line` nodes (pprof `-show_columns`). */
  columns?: boolean;
  /** Drop nodes whose |cum| is below this fraction of the sum of flat values (default 0.005). */
  nodeFraction?: number;
  /** Drop edges whose |weight| is below this fraction of the sum of flat values (default 0.001). */
  edgeFraction?: number;
  /** Keep at most this many nodes (0 or absent: all). */
  nodeCount?: number;
  /** Sort nodes by cumulative value (pprof `-cum`). */
  cum?: boolean;
  /** pprof `-mean`: print each node's values divided by the sums of this sample type (pprof: 0, the count) over the same samples. */
  meanDivisorIndex?: number;
  /** pprof `-drop_negative`: leave out nodes whose flat (or, at flat 0, cum) is negative. */
  dropNegative?: boolean;
  /** Filters applied to the stacks (once per distinct stack) rather than to the samples first; same results. */
  stackFilters?: ReportFilterOptions;
}

export interface CallGraphEdge {
  /** Caller node index in `CallGraph.nodes`, or past its end one in `CallGraph.offGraph` (see `callGraphNode`). */
  src: number;
  /** Callee node index, as `src`. */
  dst: number;
  /** Sum of the values of the samples with this call (once per sample). */
  weight: bigint;
  /** True when every counted occurrence is an inlined call. */
  inline: boolean;
  /** True when the edge skips nodes that were trimmed away. */
  residual: boolean;
}

export interface CallGraphNode {
  name: string;
  flat: bigint;
  cum: bigint;
  /** Callers, sorted like pprof (|weight| descending, then names). */
  in: CallGraphEdge[];
  /** Callees, sorted the same way. */
  out: CallGraphEdge[];
}

export interface CallGraph {
  /** Nodes sorted like pprof's text reports (flat, name, cum; or cum, name, flat with `cum`). */
  nodes: CallGraphNode[];
  /** pprof's report total: sum of |value| (of the diff-base samples when there are any). */
  total: bigint;
  sampleTypeIndex: number;
  unit: string;
  /** The unit every value is printed in (pprof `selectOutputUnit`). */
  outputUnit: string;
  /** Nodes left after the node-fraction cut, before `nodeCount`. */
  origCount: number;
  /** Nodes dropped by the node-fraction cut. */
  droppedNodes: number;
  /** Edges dropped by the edge-fraction cut. */
  droppedEdges: number;
  /** pprof `-divide_by`: values are printed times this ratio (absent: 1). */
  ratio?: number;
  /**
   * Nodes not shown at the other end of a shown node's call, in first-seen order (their `in` and
   * `out` are empty). pprof keeps those calls when it does not rebuild its graph (nothing trimmed):
   * calls with nodes whose values net to 0 (diffs) or with negative nodes under -drop_negative.
   * An edge's `src`/`dst` at `nodes.length + k` is `offGraph[k]`.
   */
  offGraph: CallGraphNode[];
  /**
   * `-top`'s marker of each node when the source computed them (`ReportGraphSource.inlineMarkers`):
   * no call is collected then (`in`, `out` empty, `droppedEdges` 0).
   */
  topMarkers?: TopEntry['inline'][];
}

/** The node at one end of a call: `index` is an edge's `src` or `dst` (a shown node, or one of `offGraph`). */
export function callGraphNode(g: Pick<CallGraph, 'nodes' | 'offGraph'>, index: number): CallGraphNode {
  return index < g.nodes.length ? g.nodes[index]! : g.offGraph[index - g.nodes.length]!;
}

/** R's `<?>`: the name the adapters give functions without one (pprof's empty name). */
const UNKNOWN_NAME = '<?>';

/** A `PROFKIT_E_USAGE` error unless `t` names a sample type of `p`. */
export function checkSampleType(p: Profile, t: number): void {
  if (!p.samples['.values'][t]) {
    throw new ProfkitError(ErrorCodes.USAGE, `sample type index ${t} is out of range (the profile has ${p.sample_types.type.length} sample types)`, {
      option: 'sampleTypeIndex',
      rule: 'the sample type index must name an existing sample type',
    });
  }
}

/**
 * pprof `computeTotal`: the sum of |value| of one sample type, or of the diff-base samples only
 * (label `pprof::base=true`) when there are any.
 */
export function reportTotal(p: Profile, sampleTypeIndex: number, meanDivisorIndex?: number): bigint {
  checkSampleType(p, sampleTypeIndex);
  const col = p.samples['.values'][sampleTypeIndex]!;
  const divCol = meanDivisorIndex === undefined ? undefined : p.samples['.values'][meanDivisorIndex];
  // The labels of a sample are read only when some label has pprof's base key (most profiles: none).
  const offsets = p['.labels'].key.includes(DIFF_BASE_LABEL) ? p.samples['.label_offsets'] : undefined;
  let total = 0n;
  let diffTotal = 0n;
  let div = 0n;
  let diffDiv = 0n;
  for (let i = 0; i < col.length; i++) {
    const a = abs(col[i]!);
    const d = divCol ? divCol[i]! : 0n;
    total += a;
    div += d;
    if (offsets && offsets[i + 1]! > offsets[i]! && labelsOf(p, i).some((l) => l.key === DIFF_BASE_LABEL && l.str === 'true')) {
      diffTotal += a;
      diffDiv += d;
    }
  }
  // pprof -mean: the total over the sum of the divisor (Go integer division)
  return diffTotal > 0n ? meanOf(diffTotal, diffDiv) : meanOf(total, div);
}

/** A built graph: flat and cum per node id, and the calls (node ids) in first-seen order. */
export interface BuiltGraph {
  flat: bigint[];
  cum: bigint[];
  src: number[];
  dst: number[];
  /** Doubles when the graph was summed in doubles (exact), bigints otherwise. */
  weight: (number | bigint)[];
  inline: boolean[];
  residual: boolean[];
}

/** The graph input: node ids per location row, and the stack table of the sample type. */
export interface GraphInput {
  nNodes: number;
  /** Node ids of location row r: `locNodeIds[locNodeOffsets[r] .. locNodeOffsets[r+1]]`, innermost first. */
  locNodeOffsets: Uint32Array;
  locNodeIds: Int32Array;
  /** The distinct stacks of the samples with a nonzero value. */
  stacks: StackTable;
  /** With pprof `-mean`: per stack, the sums of the divisor (see mean.ts); nodes and calls are then divided by them. */
  divisor?: { self: StackValues };
  /**
   * More samples over the same nodes, in tables of their own (a diff's base, its sums negated:
   * diff-report.ts): `buildNodes` walks each and adds up, as if their stacks were in `stacks`
   * after this table's (sums over samples are additive; a call is inline only where every
   * occurrence is, residual where any is; calls first reached here come first).
   */
  others?: GraphInput[];
}

/** The parts of a node's name (pprof `NodeInfo` as the graph labels print it); '' / 0 = absent. */
export interface NodeFields {
  name: string;
  file: string;
  lineno: number;
  /** The mapping's file, kept for nodes without a function name. */
  obj: string;
  /** The location's address at `address` granularity, else 0. */
  address: bigint;
}

/** The nodes of a report: each node's key (what identifies it), printable name, sort key and fields, by node id. */
export interface NodeNames {
  keys: Map<string, number>;
  /** The nodes of a function name alone (no file, line, address or mapping: most, by function), by the name's key. */
  nameKeys: Map<string, number>;
  names: string[];
  infos: string[];
  fields: NodeFields[];
  /** The short keys of long strings in `keys`: one set with the map (a diff adds both profiles' nodes to it). */
  stringKeys: StringKeys;
}

export function newNodeNames(): NodeNames {
  return { keys: new Map(), nameKeys: new Map(), names: [], infos: [], fields: [], stringKeys: new StringKeys() };
}

/**
 * Node ids of every location row (innermost line first), the node names (pprof
 * `NodeInfo.PrintableName`) and `fmt.Sprint(NodeInfo)` of each node (pprof's last-resort sort key).
 */
export function nodeTable(
  p: Profile,
  by: ReportGranularity,
  inline: boolean,
  columns: boolean,
  index: ProfileIndex,
  /** The location rows (e.g. as filters leave them); default: the profile's, read one at a time. */
  locs?: readonly OpLocation[],
  /** The nodes to add to (a diff gives both profiles one table, nodes matched by what they print): default a new one. */
  into: NodeNames = newNodeNames(),
) {
  const { withName, withFile, withLine, withAddress } = granularityFields(by);
  const f = p.functions;
  const mapFile = p['.mappings'].filename;
  const { keys, nameKeys, names, infos, fields, stringKeys } = into;
  const nodeOf = (loc: OpLocation, ln: OpLine | undefined): number => {
    const objfile = loc.mapping >= 0 ? mapFile[loc.mapping]! : '';
    let name = '';
    let file = '';
    let lineno = 0;
    let column = 0;
    let startLine = 0;
    let obj = '';
    const address = withAddress ? loc.address : 0n;
    if (ln) {
      // R's placeholder for a missing name (how the adapters read an empty name) is no name.
      if (withName && f.name[ln.fn] !== UNKNOWN_NAME) name = f.name[ln.fn]!;
      if (withFile && f.filename[ln.fn] !== '') file = cleanPath(f.filename[ln.fn]!);
      if (withLine) {
        lineno = ln.line;
        if (columns) column = ln.column;
      }
      if (name === '') {
        obj = objfile;
        startLine = f.start_line[ln.fn]!;
      }
    } else obj = objfile;
    // Unambiguous (each string led by its length) and much cheaper than JSON.stringify of the
    // fields; a long name or file stands in by its StringKeys key (V8 hashes long keys slowly).
    // A node of a name alone is keyed by the name in a map of its own: no key text to build (the
    // base of a diff looks up every node of the new profile's again).
    const nameOnly = name !== '' && file === '' && obj === '' && lineno === 0 && column === 0 && startLine === 0 && address === 0n;
    const nameKey = stringKeys.of(name);
    let map = nameKeys;
    let key = nameKey;
    if (!nameOnly) {
      const fileKey = stringKeys.of(file);
      const objKey = stringKeys.of(obj);
      map = keys;
      key = `${nameKey.length}:${nameKey}${fileKey.length}:${fileKey}${objKey.length}:${objKey}${lineno},${column},${startLine},${address}`;
    }
    let id = map.get(key);
    if (id === undefined) {
      const parts: string[] = [];
      if (address !== 0n) parts.push(address.toString(16).padStart(16, '0'));
      if (name !== '') parts.push(name);
      if (lineno !== 0) parts.push(`${file}:${lineno}` + (column !== 0 ? `:${column}` : ''));
      else if (file !== '') parts.push(file);
      else if (name !== '') {
        // the function name says it all
      } else if (obj !== '') parts.push(`[${baseName(obj)}]`);
      else parts.push('<unknown>');
      fields.push({ name, file, lineno, obj, address });
      id = names.length;
      names.push(parts.join(' '));
      infos.push(`{${name}  ${address} ${file} ${startLine} ${lineno}${columns ? ` ${column}` : ''} ${obj}}`);
      map.set(key, id);
    }
    return id;
  };
  // Without lines and addresses in the key (by function or file), a line's node follows from its
  // function and the location's mapping: looked up by that pair, its key built once per pair
  // (a profile has far fewer functions than lines: 20,000 and 100,000 at 200,000 samples).
  const mappingSlots = p['.mappings'].mapping_id.length + 1;
  const nodeOfPair = !withLine && !withAddress ? new Map<number, number>() : undefined;
  const lineNode = (loc: OpLocation, ln: OpLine): number => {
    if (!nodeOfPair) return nodeOf(loc, ln);
    const pair = ln.fn * mappingSlots + loc.mapping + 1;
    let id = nodeOfPair.get(pair);
    if (id === undefined) nodeOfPair.set(pair, (id = nodeOf(loc, ln)));
    return id;
  };
  // Without `locs`, each row is read line by line over the same objects: no object per location
  // and line (50,000 and 115,000 on a 200,000-sample profile: 20 MB of heap at the report's peak;
  // one location can hold millions of lines).
  const scratch: OpLocation = { address: 0n, mapping: -1, folded: false, lines: [] };
  const line: OpLine = { fn: -1, line: 0, column: 0 };
  const outermost: OpLine = { fn: -1, line: 0, column: 0 };
  const rowNodes: number[] = [];
  const locNodes: number[][] = new Array(locs ? locs.length : p.locations.location_id.length);
  for (let r = 0; r < locNodes.length; r++) {
    if (locs) {
      const loc = locs[r]!;
      let lines = loc.lines;
      if (!inline && lines.length > 1) lines = lines.slice(lines.length - 1);
      locNodes[r] = lines.length === 0 ? [nodeOf(loc, undefined)] : lines.map((ln) => lineNode(loc, ln));
      continue;
    }
    // Gathered in one array reused for every row, then copied at their exact length.
    let count = 0;
    outermost.fn = -1;
    visitLocationLines(p, index, r, scratch, line, (ln) => {
      if (inline) rowNodes[count++] = lineNode(scratch, ln);
      else {
        outermost.fn = ln.fn;
        outermost.line = ln.line;
        outermost.column = ln.column;
      }
    });
    if (outermost.fn >= 0) rowNodes[count++] = lineNode(scratch, outermost);
    locNodes[r] = count === 0 ? [nodeOf(scratch, undefined)] : rowNodes.slice(0, count);
  }
  return { locNodes, names, infos, fields };
}

/**
 * pprof `newGraph` restricted to `kept` nodes (all when undefined), over the stack table: cum
 * once per node per sample (a stack adds its total to a node only where the node is not already
 * on its caller path, pprof's rule for recursion), flat on the leaf node, calls (parent -> node)
 * counted once per sample the same way, inline only when every counted occurrence is an inlined
 * line, residual when they skip nodes that are not kept. Calls are only collected into nodes
 * marked in `callees` from nodes marked in `callers`, from or to a node marked in `touching`
 * when given (no calls when `callees` is undefined: the
 * trimming passes need flat and cum only), listed in the order the samples first reach them, as
 * pprof's graph lists them.
 */
export function buildNodes(
  g: GraphInput,
  kept: Uint8Array | undefined,
  callees?: Uint8Array,
  callers?: Uint8Array,
  touching?: Uint8Array,
  /** Which walk of the stacks (default: by their shape; the same graph either way). */
  walk?: CallGraphWalk,
): BuiltGraph {
  const self = sparseSelf(g.stacks);
  const own = self.sums instanceof Float64Array ? walkCallGraph(g, self, 0, kept, callees, callers, touching, walk) : walkCallGraph(g, self, 0n, kept, callees, callers, touching, walk);
  return (g.others ?? []).reduce((sum, other) => addBuiltGraphs(sum, buildNodes(other, kept, callees, callers, touching, walk)), own);
}

/** The graph of the samples of `a` and `b` together (see `GraphInput.others`). */
function addBuiltGraphs(a: BuiltGraph, b: BuiltGraph): BuiltGraph {
  const out: BuiltGraph = { flat: a.flat.map((v, n) => v + b.flat[n]!), cum: a.cum.map((v, n) => v + b.cum[n]!), src: a.src.slice(), dst: a.dst.slice(), weight: a.weight.slice(), inline: a.inline.slice(), residual: a.residual.slice() };
  const edgeOf = new Map<number, number>();
  // A (src, dst) pair as one number: exact while nodes² < 2^53.
  const nodes = a.flat.length;
  const key = (src: number, dst: number) => src * nodes + dst;
  a.src.forEach((src, e) => edgeOf.set(key(src, a.dst[e]!), e));
  b.src.forEach((src, f) => {
    const e = edgeOf.get(key(src, b.dst[f]!));
    if (e === undefined) {
      out.src.push(src);
      out.dst.push(b.dst[f]!);
      out.weight.push(b.weight[f]!);
      out.inline.push(b.inline[f]!);
      out.residual.push(b.residual[f]!);
      return;
    }
    out.weight[e] = addExact(out.weight[e]!, b.weight[f]!);
    out.inline[e] = out.inline[e]! && b.inline[f]!;
    out.residual[e] = out.residual[e]! || b.residual[f]!;
  });
  return out;
}

/** `a + b` in doubles while that is exact, else in bigints. */
function addExact(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number') {
    const sum = a + b;
    if (Number.isSafeInteger(sum)) return sum;
  }
  return BigInt(a) + BigInt(b);
}

/** `g` summing the divisor of `-mean` instead of the values (the same nodes and calls, in the same order). */
export function divisorInput(g: GraphInput): GraphInput {
  // Not `{ ...g.stacks }`: spreading reads a built table's lazy `prefix` and `self` (see buildStackTable).
  const values = g.stacks;
  const { length, frame, sampleStack, children, jumps } = values;
  const stacks: StackTable = {
    length,
    frame,
    sampleStack,
    ...(children ? { children } : {}),
    ...(jumps ? { jumps } : {}),
    get prefix() {
      return values.prefix;
    },
    self: g.divisor!.self,
  };
  return { ...g, stacks, divisor: undefined, ...(g.others ? { others: g.others.map(divisorInput) } : {}) };
}

/**
 * pprof `-mean`: the values a report prints for `values` (the graph `buildNodes` built with these
 * arguments): each sum divided by the divisor's sum over the same samples. pprof trims and sorts
 * on the undivided sums, so only the printed values change.
 */
function meanValues(g: GraphInput, values: BuiltGraph, kept: Uint8Array | undefined, callees?: Uint8Array, callers?: Uint8Array, touching?: Uint8Array): BuiltGraph {
  if (!g.divisor) return values;
  // Both sums over the same stacks give the same nodes and calls, in the same order.
  const divisors = buildNodes(divisorInput(g), kept, callees, callers, touching);
  return {
    ...values,
    flat: values.flat.map((v, n) => meanOf(v, divisors.flat[n]!)),
    cum: values.cum.map((v, n) => meanOf(v, divisors.cum[n]!)),
  };
}

/**
 * The stack tables of the call graph: without child lists (call-graph-walk.ts climbs paths with
 * the jumps; the lists are derived for the profiles whose paths overlap much): 8 bytes a stack
 * less, 38 MB on a 200,000-sample profile of random stacks.
 */
const GRAPH_TABLE = { childLists: false };

/** The node ids of every location row in one array, with each row's start offset. */
export function flattenLocationNodes(locNodes: readonly (readonly number[])[]): { locNodeOffsets: Uint32Array; locNodeIds: Int32Array } {
  const locNodeOffsets = new Uint32Array(locNodes.length + 1);
  for (let r = 0; r < locNodes.length; r++) locNodeOffsets[r + 1] = locNodeOffsets[r]! + locNodes[r]!.length;
  const locNodeIds = new Int32Array(locNodeOffsets[locNodes.length]!);
  for (let r = 0; r < locNodes.length; r++) locNodeIds.set(locNodes[r]!, locNodeOffsets[r]!);
  return { locNodeOffsets, locNodeIds };
}

/**
 * The input of `buildNodes` for sample type `t`: `locNodes[r]` are the node ids (0..nNodes-1) of
 * location row r, innermost line first (how a report groups frames into nodes).
 */
export function graphInputOf(p: Profile, index: ProfileIndex, t: number, locNodes: readonly (readonly number[])[], nNodes: number): GraphInput {
  const stacks = buildStackTable(p, index, t, undefined, undefined, GRAPH_TABLE);
  return { nNodes, ...flattenLocationNodes(locNodes), stacks };
}

/**
 * pprof's call graph for text reports, trimmed like `newTrimmedGraph`: nodes whose |cum| is
 * below `nodeFraction` of the flat sum are dropped (the graph is rebuilt without them, so calls
 * across them become residual edges), nodes are sorted, the first `nodeCount` are kept, and
 * edges below `edgeFraction` are dropped.
 */
export function callGraph(p: Profile, options: CallGraphOptions = {}): CallGraph {
  return buildCallGraph(p, options, true);
}

/**
 * `callGraph`; with `allCalls` false only the calls into inlined frames are kept (all `-top`
 * needs for its inline markers; much less work on large profiles), in no order; with `callsOf`, only the
 * calls from or to the nodes whose name it accepts (all `-peek` prints).
 */
function buildCallGraph(p: Profile, options: CallGraphOptions, allCalls: boolean, callsOf?: (name: string) => boolean): CallGraph {
  return trimmedCallGraph(graphSourceOf(p, options), options, allCalls, callsOf);
}

/** The graph source of one profile for `options` (sample type, granularity, per-stack filters, -mean). */
function graphSourceOf(p: Profile, options: CallGraphOptions): ReportGraphSource {
  const t = options.sampleTypeIndex ?? defaultSampleTypeIndex(p);
  checkSampleType(p, t);
  const nodes = newNodeNames();
  const { locNodes, stacks, divisor } = reportStacks(p, new ProfileIndex(p), t, options, nodes);
  const g: GraphInput = { nNodes: nodes.names.length, ...flattenLocationNodes(locNodes), stacks, ...(divisor ? { divisor } : {}) };
  return { t, unit: p.sample_types.unit[t]!, g, names: nodes.names, infos: nodes.infos, total: () => reportTotal(p, t, options.meanDivisorIndex) };
}

/** The stacks a report walks, with the nodes of their frames: what `reportStacks` makes of one profile. */
export interface ReportStacks {
  /** Node ids (in the `NodeNames` given) of every location row, innermost line first. */
  locNodes: number[][];
  /** The stack table of the sample type, the per-stack filters applied. */
  stacks: StackTable;
  /** With `meanDivisorIndex`: the divisor's sums per stack. */
  divisor?: { self: StackValues };
}

/**
 * The stack table of sample type `t` as a report walks it (over the samples `-mean` counts with
 * `meanDivisorIndex`, the per-stack filters of `options.stackFilters` applied), the node of every
 * frame added to `nodes`.
 */
export function reportStacks(p: Profile, index: ProfileIndex, t: number, options: CallGraphOptions, nodes: NodeNames): ReportStacks {
  // The filters, decided once per distinct stack (see stack-filters.ts); the frames keep the lines they leave.
  const plan = options.stackFilters && hasStackFilters(options.stackFilters) ? planStackFilters(p, index, options.stackFilters) : undefined;
  const { locNodes } = nodeTable(p, options.by ?? 'function', options.inline ?? true, options.columns ?? false, index, plan?.locs, nodes);
  let stacks: StackTable;
  let divisor: { self: StackValues } | undefined;
  if (options.meanDivisorIndex !== undefined) ({ stacks, divisor } = meanStackTables(p, index, t, options.meanDivisorIndex));
  else stacks = buildStackTable(p, index, t, undefined, undefined, GRAPH_TABLE);
  if (plan) {
    const columns = [p.samples['.values'][t]!];
    if (options.meanDivisorIndex !== undefined) columns.push(p.samples['.values'][options.meanDivisorIndex]!);
    const filtered = plan.apply(stacks, columns);
    stacks = filtered.stacks;
    if (divisor) divisor = { self: filtered.sums[1]! };
  }
  return { locNodes, stacks, ...(divisor ? { divisor } : {}) };
}

/** What a report's call graph is computed from: the graph input of one sample type and its nodes. */
export interface ReportGraphSource {
  t: number;
  unit: string;
  g: GraphInput;
  /** Per node id: pprof's printable name and its last-resort sort key. */
  names: string[];
  infos: string[];
  /** pprof's report total (`reportTotal`), computed when asked. */
  total: () => bigint;
  /**
   * Every node's flat and cum when the source already has them (as a walk of `g` of all nodes
   * would sum them; never with a divisor): the trimming takes them instead of walking `g`, whose
   * walk then only gives the calls (diff-report.ts walks tables cut to the shown nodes).
   */
  nodeSums?: Pick<BuiltGraph, 'flat' | 'cum'>;
  /**
   * `-top`'s inline markers without the calls (diff-report.ts: from the samples, inline-markers.ts),
   * taken by `-top` in place of a walk of `g`: per node, bits INLINED_CALL and PLAIN_CALL of its
   * calls with |weight| >= `edgeCutoff` in the walk that keeps `kept` (undefined: every node), for
   * the `shown` nodes.
   */
  inlineMarkers?: (kept: Uint8Array | undefined, shown: Uint8Array, edgeCutoff: bigint) => Uint8Array;
}

/** Whether `g` (or one of its `others`) sums a `-mean` divisor. */
function hasDivisor(g: GraphInput): boolean {
  return g.divisor !== undefined || (g.others ?? []).some(hasDivisor);
}

/** `buildCallGraph` from the graph input on (see there). */
export function trimmedCallGraph(source: ReportGraphSource, options: CallGraphOptions, allCalls: boolean, callsOf?: (name: string) => boolean): CallGraph {
  const { t, g, names, infos } = source;
  // The given sums are trusted in place of a walk; the divisor is walked (meanValues), over a `g`
  // that need not hold the stacks the sums come from (a diff trims over a `g` of no stacks):
  // the means would then be divided by sums of other samples, silently.
  if (source.nodeSums && hasDivisor(g)) {
    throw new ProfkitError(ErrorCodes.USAGE, 'a report graph source gives nodeSums and a -mean divisor: its means would divide sums of different samples', {
      rule: 'ReportGraphSource.nodeSums is never given with a divisor',
    });
  }
  // Top needs only the calls into inlined frames (for its inline markers), or none when the source gives the markers.
  const markersOnly = !allCalls && source.inlineMarkers !== undefined;
  let inlinedNodes: Uint8Array | undefined;
  if (!allCalls && !markersOnly) {
    const inlined = new Uint8Array(names.length);
    for (const { locNodeOffsets, locNodeIds } of [g, ...(g.others ?? [])]) {
      for (let r = 0; r + 1 < locNodeOffsets.length; r++) for (let k = locNodeOffsets[r]!; k < locNodeOffsets[r + 1]! - 1; k++) inlined[locNodeIds[k]!] = 1;
    }
    inlinedNodes = inlined;
  }
  const keep = (list: number[]): Uint8Array => {
    const kept = new Uint8Array(names.length);
    for (const n of list) kept[n] = 1;
    return kept;
  };
  const live = (b: BuiltGraph) => {
    const ids: number[] = [];
    for (let i = 0; i < names.length; i++) {
      const flat = b.flat[i]!;
      const cum = b.cum[i]!;
      // pprof `isNegative` for -drop_negative
      if ((flat !== 0n || cum !== 0n) && !(options.dropNegative && (flat < 0n || (flat === 0n && cum < 0n)))) ids.push(i);
    }
    return ids;
  };
  // The trimming passes need flat and cum only; the calls are collected once the shown nodes are
  // known. Unless nothing can be trimmed (peek; -nodefraction 0 without -nodecount): then one
  // pass collects the calls between all nodes (of these, the shown ones are read below: the same
  // calls with the same sums and order as a second pass would collect), a walk less.
  const untrimmed = (options.nodeFraction ?? 0.005) === 0 && !((options.nodeCount ?? 0) > 0);
  const everyNode = new Uint8Array(names.length).fill(1);
  const untrimmedCalls: CallsToCollect | undefined = untrimmed && !markersOnly ? [inlinedNodes ?? everyNode, everyNode, callsOf && Uint8Array.from(names, (name) => (callsOf(name) ? 1 : 0))] : undefined;
  let kept: Uint8Array | undefined;
  const { nodeSums } = source;
  // Flat and cum of the kept nodes are those of the first pass (see below): given sums replace the walk's.
  const withSums = (built: BuiltGraph): BuiltGraph => (nodeSums ? { ...built, ...nodeSums } : built);
  const noCalls = { src: [], dst: [], weight: [], inline: [], residual: [] };
  let nodes = untrimmedCalls ? withSums(buildNodes(g, kept, ...untrimmedCalls)) : nodeSums ? { ...nodeSums, ...noCalls } : buildNodes(g, kept);
  let ids = live(nodes);
  let flatSum = 0n;
  for (const i of ids) flatSum += nodes.flat[i]!;
  const cutoff = (fraction: number) => abs(BigInt(Math.trunc(Number(flatSum) * fraction)));
  const nodeCutoff = cutoff(options.nodeFraction ?? 0.005);
  const edgeCutoff = cutoff(options.edgeFraction ?? 0.001);
  let droppedNodes = 0;
  if (nodeCutoff > 0n) {
    const aboveCutoff = ids.filter((i) => abs(nodes.cum[i]!) >= nodeCutoff);
    if (aboveCutoff.length !== ids.length) {
      droppedNodes = ids.length - aboveCutoff.length;
      kept = keep(aboveCutoff);
      // pprof rebuilds the graph without the dropped nodes; the kept ones would get the same flat
      // and cum (a node counts once per sample wherever it is, flat only on a kept leaf), so no pass.
      ids = aboveCutoff;
    }
  }
  const origCount = ids.length;
  const byName = (a: number, b: number) => compareGoStrings(names[a]!, names[b]!);
  const byInfo = (a: number, b: number) => compareGoStrings(infos[a]!, infos[b]!);
  const byAbs = (x: bigint, y: bigint) => (abs(x) > abs(y) ? -1 : abs(x) < abs(y) ? 1 : 0);
  // |flat| and |cum| of each node taken once: the sort compares them n log n times, and the abs of
  // a negative bigint (half a diff's nodes) is a new bigint (24 MB of garbage on 20,000 nodes).
  const absFlat = new Array<bigint>(names.length);
  const absCum = new Array<bigint>(names.length);
  for (const i of ids) {
    absFlat[i] = abs(nodes.flat[i]!);
    absCum[i] = abs(nodes.cum[i]!);
  }
  const descending = (x: bigint, y: bigint) => (x > y ? -1 : x < y ? 1 : 0);
  // pprof `FlatNameOrder` / `CumNameOrder`, ties broken by `compareNodes`.
  const sort = (list: number[]) =>
    list.sort(
      options.cum
        ? (a, b) => descending(absCum[a]!, absCum[b]!) || byName(a, b) || descending(absFlat[a]!, absFlat[b]!) || byInfo(a, b)
        : (a, b) => descending(absFlat[a]!, absFlat[b]!) || byName(a, b) || descending(absCum[a]!, absCum[b]!) || byInfo(a, b),
    );
  sort(ids);
  const nodeCount = options.nodeCount ?? 0;
  if (nodeCount > 0 && ids.length > nodeCount) {
    // As above: the graph without the other nodes has the same numbers for these.
    ids = ids.slice(0, nodeCount);
    kept = keep(ids);
  }
  const pos = new Int32Array(names.length).fill(-1);
  ids.forEach((id, k) => (pos[id] = k));
  // The same graph again, now with the calls between the shown nodes.
  const shownNodes = keep(ids);
  // Not rebuilt (kept unset): as in pprof, every node with values is in the graph, and the calls
  // between a shown node and a node not shown (values netting to 0, negative under -drop_negative)
  // are printed too, so the calls from and to shown nodes are collected, whatever the other end.
  const rebuilt = kept !== undefined;
  let calls = untrimmedCalls;
  let markers: Uint8Array | undefined;
  if (markersOnly) {
    // Of the walk pprof's graph makes: of the shown nodes when rebuilt, of every node otherwise.
    markers = source.inlineMarkers!(kept, shownNodes, edgeCutoff);
    nodes = { ...nodes, ...noCalls };
  } else if (!calls) {
    const callsFromShownOrTo = callsOf ? shownNodes.map((shown, id) => (shown && callsOf(names[id]!) ? 1 : 0)) : rebuilt ? undefined : shownNodes;
    const callers = rebuilt ? shownNodes : everyNode;
    calls = [inlinedNodes ? shownNodes.map((shown, n) => shown & inlinedNodes[n]!) : rebuilt ? shownNodes : everyNode, callers, callsFromShownOrTo];
    // No call to collect (top of a profile without inlined frames among the shown nodes): the first
    // pass's flat and cum are already those of the shown nodes, so no second pass over the stacks.
    nodes = calls[0].includes(1) ? withSums(buildNodes(g, kept, ...calls)) : { ...nodes, ...noCalls };
  }
  // pprof prints the nodes' -mean values; calls keep their sums (as pprof's -tree prints them).
  const printed = calls ? meanValues(g, nodes, kept, ...calls) : meanValues(g, nodes, kept);
  const out: CallGraphNode[] = ids.map((id) => ({ name: names[id]!, flat: printed.flat[id]!, cum: printed.cum[id]!, in: [], out: [] }));
  // The calls of shown nodes at or above the edge cutoff, grouped by caller in node order (then
  // the callers not shown, in first-seen order) and in first-seen order within a caller (the
  // order ties keep in the sorts below). A call with one end not shown (collected only when not
  // rebuilt) is cut by weight only when its callee is shown: pprof's TrimLowFrequencyEdges cuts
  // the calls into the graph's nodes.
  const cutoffNumber = Number(edgeCutoff);
  const offGraph: CallGraphNode[] = [];
  const endIndex = (id: number): number => {
    if (pos[id]! < 0) {
      pos[id] = out.length + offGraph.length;
      offGraph.push({ name: names[id]!, flat: printed.flat[id]!, cum: printed.cum[id]!, in: [], out: [] });
    }
    return pos[id]!;
  };
  const callsBySrc: number[][] = ids.map(() => []);
  let droppedEdges = 0;
  for (let e = 0; e < nodes.src.length; e++) {
    const srcShown = pos[nodes.src[e]!]! >= 0 && pos[nodes.src[e]!]! < out.length;
    const dstShown = pos[nodes.dst[e]!]! >= 0 && pos[nodes.dst[e]!]! < out.length;
    if (!srcShown && !dstShown) continue;
    const w = nodes.weight[e]!;
    if (dstShown && (typeof w === 'number' ? Math.abs(w) < cutoffNumber : abs(w) < edgeCutoff)) {
      droppedEdges++;
      continue;
    }
    const s = endIndex(nodes.src[e]!);
    (callsBySrc[s] ??= []).push(e);
  }
  const node = (index: number) => (index < out.length ? out[index]! : offGraph[index - out.length]!);
  callsBySrc.forEach((list, s) => {
    for (const e of list) {
      const d = endIndex(nodes.dst[e]!);
      const edge: CallGraphEdge = { src: s, dst: d, weight: BigInt(nodes.weight[e]!), inline: nodes.inline[e]!, residual: nodes.residual[e]! };
      if (s < out.length) out[s]!.out.push(edge);
      if (d < out.length) out[d]!.in.push(edge);
    }
  });
  const edgeOrder = (a: CallGraphEdge, b: CallGraphEdge) => {
    if (a.weight !== b.weight) return byAbs(a.weight, b.weight);
    return compareGoStrings(node(a.src).name, node(b.src).name) || compareGoStrings(node(a.dst).name, node(b.dst).name);
  };
  // Top reads only the flags of a node's calls (its inline marker), whatever their order: unsorted
  // (every node shown, e.g. `diff --by line` without -n, sorted millions of calls for nothing).
  if (allCalls) {
    for (const n of out) {
      n.in.sort(edgeOrder);
      n.out.sort(edgeOrder);
    }
  }
  const total = source.total();
  const unit = source.unit;
  const graph: CallGraph = { nodes: out, total, sampleTypeIndex: t, unit, outputUnit: outputUnitFor(out, total, unit), origCount, droppedNodes, droppedEdges, offGraph };
  if (markers) graph.topMarkers = ids.map((id) => markerOf(markers[id]!));
  return graph;
}

/** `buildNodes`' arguments for the calls a pass collects: into `callees`, from `callers`, from or to `touching` (when given). */
type CallsToCollect = [callees: Uint8Array, callers: Uint8Array, touching: Uint8Array | undefined];

/**
 * pprof report's `selectOutputUnit` for the "minimum" output unit; `fractions` false for reports
 * of integers (callgrind), where pprof does not pick a larger unit to show 0.01s.
 */
export function outputUnitFor(nodes: { flat: bigint; cum: bigint }[], total: bigint, unit: string, fractions = true, ratio = 1): string {
  if (nodes.length === 0) return 'minimum';
  let minValue = 0n;
  for (const n of nodes) {
    let m = abs(n.flat);
    if (m === 0n) m = abs(n.cum);
    if (m > 0n && (minValue === 0n || m < minValue)) minValue = m;
  }
  if (minValue === 0n) minValue = total;
  // pprof -divide_by: the unit is chosen for the divided values
  minValue = applyRatio(minValue, ratio);
  total = applyRatio(total, ratio);
  const minUnit = scaleMeasurement(Number(minValue), unit, 'minimum')[1];
  const maxUnit = scaleMeasurement(Number(total), unit, 'minimum')[1];
  let u = minUnit;
  if (fractions && minUnit !== maxUnit && minValue * 100n < total) u = scaleMeasurement(Number(100n * minValue), unit, 'minimum')[1];
  return u !== '' ? u : unit;
}

/** A value as a report prints it: `-divide_by` applied, then scaled to `outputUnit` (pprof `Report.formatValue`). */
export function reportValue(v: bigint, unit: string, outputUnit: string, ratio = 1): string {
  return formatValue(applyRatio(v, ratio), unit, outputUnit);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Go's `"Jan 2, 2006 at 3:04pm (MST)"` layout, in UTC. */
function goTime(ns: bigint): string | undefined {
  const d = new Date(Number(ns / 1_000_000n));
  if (!Number.isFinite(d.getTime())) return undefined;
  const h = d.getUTCHours();
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()} at ${h % 12 === 0 ? 12 : h % 12}:${String(d.getUTCMinutes()).padStart(2, '0')}${h < 12 ? 'am' : 'pm'} (UTC)`;
}

/**
 * pprof `ProfileLabels`: `File:` (first mapping), `Build ID:`, comments not starting with `#`,
 * `Type:`, `Time:` (printed in UTC), `Duration: …, Total samples = … (…%)` (the total in
 * `outputUnit`, the unit the report's table uses, as pprof does).
 */
/** The parts of a profile its header lines print (`profileLabels`). */
export type ProfileHeader = Pick<Profile, 'sample_types'> & {
  '.mappings': Pick<Profile['.mappings'], 'mapping_id' | 'filename' | 'build_id'>;
  '.profile': Pick<Profile['.profile'], 'comments' | 'time_nanos' | 'duration_nanos'>;
};

export function profileLabels(
  p: ProfileHeader,
  sampleTypeIndex: number,
  /** Required unless `p` is a whole profile. */
  total: bigint = reportTotal(p as Profile, sampleTypeIndex),
  outputUnit = 'minimum',
  /** pprof's `Type:` (`mean_` + the type with `-mean`) and `-divide_by` ratio. */
  shown: { typeName?: string; ratio?: number } = {},
): string[] {
  const labels: string[] = [];
  const m = p['.mappings'];
  if (m.mapping_id.length > 0) {
    if (m.filename[0] !== '') labels.push('File: ' + baseName(m.filename[0]!));
    if (m.build_id[0] !== '') labels.push('Build ID: ' + m.build_id[0]!);
  }
  const facts = p['.profile'];
  for (const c of facts.comments) if (!c.startsWith('#')) labels.push(c);
  const type = shown.typeName ?? p.sample_types.type[sampleTypeIndex];
  if (type) labels.push('Type: ' + type);
  if (facts.time_nanos !== 0n) {
    const t = goTime(facts.time_nanos);
    if (t) labels.push('Time: ' + t);
  }
  if (facts.duration_nanos !== 0n) {
    const unit = p.sample_types.unit[sampleTypeIndex] ?? '';
    const [totalNanos, totalUnit] = scaleMeasurement(Number(total), unit, 'nanoseconds');
    const ratio = totalUnit === 'ns' && totalNanos !== 0 ? `(${formatPercentage(Math.trunc(totalNanos), facts.duration_nanos)})` : '';
    labels.push(`Duration: ${formatValue(facts.duration_nanos, 'nanoseconds', 'auto')}, Total samples = ${reportValue(total, unit, outputUnit, shown.ratio)} ${ratio}`);
  }
  return labels;
}

/**
 * The filters pprof applies before a report (see report-filters.ts) and the options that change
 * what every text report prints.
 */
export interface ReportFilters extends ReportFilterOptions {
  /** pprof `-tagroot`: label keys whose values become frames above the root (see `addTagFrames`). */
  tagRoot?: readonly string[];
  /** pprof `-tagleaf`: label keys whose values become frames below the leaf. */
  tagLeaf?: readonly string[];
  /** pprof `-relative_percentages`: percentages of the total after the filters instead of before. */
  relativePercentages?: boolean;
  /** pprof `-unit`: the unit values are printed in (`minimum`, the default, picks one as pprof does). */
  outputUnit?: string;
  /** pprof `-divide_by`: print every value divided by this (default 1). */
  divideBy?: number;
  /** pprof `-mean`: print values divided by the count (the first sample type) of the same samples. */
  mean?: boolean;
  /** pprof `-drop_negative`: leave out entries whose value is negative. */
  dropNegative?: boolean;
}

export interface ReportHeaderInput {
  total: bigint;
  unit: string;
  outputUnit: string;
  /** Sum of the flat values of the shown nodes. */
  shownFlat: bigint;
  nodeFraction: number;
  edgeFraction: number;
  droppedNodes: number;
  droppedEdges: number;
  shown: number;
  origCount: number;
  activeFilters: string[];
  /** pprof `-divide_by`: values are printed times this ratio (default 1). */
  ratio?: number;
}

/** pprof `reportLabels` after the profile labels: active filters, "Showing nodes accounting for…", dropped counts. */
export function reportLabels(h: ReportHeaderInput): string[] {
  const fv = (v: bigint) => reportValue(v, h.unit, h.outputUnit, h.ratio);
  const labels: string[] = [];
  if (h.activeFilters.length) labels.push('Active filters:', ...h.activeFilters.map((s) => '   ' + (s.length > 80 ? s.slice(0, 80) + '…' : s)));
  labels.push(`Showing nodes accounting for ${fv(h.shownFlat)}, ${formatPercentage(h.shownFlat, h.total).trim()} of ${fv(h.total)} total`);
  const gen = (d: number, n: string, l: string, f: string) => `Dropped ${d} ${d > 1 ? n + 's' : n} (${l} <= ${f})`;
  if (h.total !== 0n) {
    if (h.droppedNodes > 0) labels.push(gen(h.droppedNodes, 'node', 'cum', fv(abs(BigInt(Math.trunc(Number(h.total) * h.nodeFraction))))));
    if (h.droppedEdges > 0) labels.push(gen(h.droppedEdges, 'edge', 'freq', fv(abs(BigInt(Math.trunc(Number(h.total) * h.edgeFraction))))));
    if (h.shown > 0 && h.shown < h.origCount) labels.push(`Showing top ${h.shown} nodes out of ${h.origCount}`);
  }
  return labels;
}

/**
 * What pprof does to a profile before any report (driver `generateRawReport`): the -tagroot/
 * -tagleaf frames added, the filters applied, and the report total taken before the filters (after
 * them with -relative_percentages; of the -mean values with -mean). Also the `-divide_by` ratio
 * and the `Type:` name (`mean_…` with -mean).
 */
export function prepareReport(
  p: Profile,
  t: number,
  options: ReportFilters,
  /** For the call graph reports: leave the filters to `buildCallGraph`'s per-stack pass when it can apply them (`stackFilters`). */
  perStack = false,
): { profile: Profile; total: bigint; ratio: number; meanDivisorIndex: number | undefined; typeName: string | undefined; stackFilters?: ReportFilterOptions } {
  checkSampleType(p, t);
  const ratio = ratioOf(options);
  const meanDivisorIndex = options.mean ? 0 : undefined;
  let q = withTagFrames(p, options);
  // The graph needs no labels (-tagshow/-taghide change nothing it shows), and the other filters
  // are decided per stack. Not with -relative_percentages: its total is of the filtered samples.
  if (perStack && !options.relativePercentages) {
    const typeName = options.mean ? 'mean_' + p.sample_types.type[t]! : undefined;
    return { profile: q, total: reportTotal(q, t, meanDivisorIndex), ratio, meanDivisorIndex, typeName, stackFilters: options };
  }
  // pprof's filters always drop the samples without a stack; the total counts them unless taken after the filters.
  if (options.relativePercentages) q = withoutEmptyStacks(applyReportFilters(q, options));
  const total = reportTotal(q, t, meanDivisorIndex);
  if (!options.relativePercentages) q = applyReportFilters(q, options);
  return { profile: q, total, ratio, meanDivisorIndex, typeName: options.mean ? 'mean_' + p.sample_types.type[t]! : undefined };
}

/** `p` with the -tagroot/-tagleaf frames added (pprof adds them before filtering, so that filters see them). */
export function withTagFrames(p: Profile, f: ReportFilters): Profile {
  const root = (f.tagRoot ?? []).filter((k) => k !== '');
  const leaf = (f.tagLeaf ?? []).filter((k) => k !== '');
  return root.length === 0 && leaf.length === 0 ? p : addTagFrames(p, root, leaf, f.outputUnit ?? 'minimum').profile;
}

/** pprof's `-divide_by` as the ratio values are printed with; 0 is pprof's "zero divisor specified". */
export function ratioOf(f: ReportFilters): number {
  const d = f.divideBy ?? 1;
  if (d === 0 || !Number.isFinite(d)) {
    throw new ProfkitError(ErrorCodes.USAGE, `divide_by ${d}: zero divisor specified`, { option: 'divideBy', rule: 'the divisor must be a nonzero number' });
  }
  return 1 / d;
}

/** What `prepareReport` makes of a report's input for sample type `t`, as the text reports use it. */
export interface PreparedReport {
  total: bigint;
  ratio: number;
  meanDivisorIndex: number | undefined;
  typeName: string | undefined;
  stackFilters?: ReportFilterOptions;
  /**
   * The graph input for these options (the sample type, granularity, per-stack filters, -mean);
   * `allCalls` false: for `-top` (only its inline markers read calls).
   */
  graphSource(options: CallGraphOptions, allCalls?: boolean): ReportGraphSource;
  /** What the header's profile labels print. */
  header: ProfileHeader;
}

/**
 * The input of `topReport` / `treeReport` when it is not one profile: e.g. two profiles compared
 * without merging them (`diffReportInput`).
 */
export interface ReportInput {
  readonly kind: 'report-input';
  /** The sample type reported when the options name none. */
  defaultSampleTypeIndex: number;
  prepare(t: number, options: ReportFilters): PreparedReport;
}

function isReportInput(p: Profile | ReportInput): p is ReportInput {
  return (p as ReportInput).kind === 'report-input';
}

/** One profile as a report input: `prepareReport`, then the call graph of the prepared profile. */
function profileReportInput(p: Profile): ReportInput {
  return {
    kind: 'report-input',
    defaultSampleTypeIndex: defaultSampleTypeIndex(p),
    prepare(t, options) {
      const { profile: q, ...prepared } = prepareReport(p, t, options, true);
      return { ...prepared, graphSource: (o) => graphSourceOf(q, o), header: p };
    },
  };
}

/**
 * What `-top`, `-tree` and `-peek` share: `callGraph` of `p` after focus/ignore (option defaults
 * from `defaults`), with pprof's total before filtering as its total, the output unit chosen
 * against that total, and the header lines (profile labels, then the report labels).
 */
function textReport(
  p: Profile | ReportInput,
  options: TopReportOptions,
  defaults: { nodeFraction: number; edgeFraction: number; nodeCount: number },
  allCalls: boolean,
  callsOf?: (name: string) => boolean,
): { t: number; g: CallGraph; header: string[] } {
  const input = isReportInput(p) ? p : profileReportInput(p);
  const t = options.sampleTypeIndex ?? input.defaultSampleTypeIndex;
  const { total, ratio, meanDivisorIndex, typeName, stackFilters, graphSource, header: headerProfile } = input.prepare(t, options);
  const nodeFraction = options.nodeFraction ?? defaults.nodeFraction;
  const edgeFraction = options.edgeFraction ?? defaults.edgeFraction;
  const graphOptions: CallGraphOptions = { sampleTypeIndex: t, by: options.by, cum: options.cum, inline: options.inline, nodeFraction, edgeFraction, nodeCount: options.nodeCount ?? defaults.nodeCount, meanDivisorIndex, dropNegative: options.dropNegative, stackFilters };
  const g = trimmedCallGraph(graphSource(graphOptions, allCalls), graphOptions, allCalls, callsOf);
  g.total = total;
  const unit = options.outputUnit ?? 'minimum';
  g.outputUnit = unit !== 'minimum' ? unit : outputUnitFor(g.nodes, total, g.unit, true, ratio);
  g.ratio = ratio;
  let shownFlat = 0n;
  for (const n of g.nodes) shownFlat += n.flat;
  const header = [
    // pprof -compact_labels: the text reports leave out the profile labels (File:, Type:, Time:, …).
    ...(options.compactLabels ? [] : profileLabels(headerProfile, t, total, g.outputUnit, { typeName, ratio })),
    ...reportLabels({
      ratio,
      total,
      unit: g.unit,
      outputUnit: g.outputUnit,
      shownFlat,
      nodeFraction,
      edgeFraction,
      droppedNodes: g.droppedNodes,
      droppedEdges: 0,
      shown: g.nodes.length,
      origCount: g.origCount,
      activeFilters: activeFilterLabels(options),
    }),
  ];
  return { t, g, header };
}

export interface TopReportOptions extends ReportFilters {
  /** `maxReportBytes` bounds the text (a long name printed once per node or call). */
  limits?: ReportLimits;
  sampleTypeIndex?: number;
  by?: ReportGranularity;
  cum?: boolean;
  inline?: boolean;
  /** Default 0.005 (pprof's default). */
  nodeFraction?: number;
  /** Default 0.001. */
  edgeFraction?: number;
  /** Default all (pprof `-top` default). */
  nodeCount?: number;
  /** Leave the profile labels out of the header (pprof `-compact_labels`). */
  compactLabels?: boolean;
}

export interface TopReport {
  /** pprof's header lines (`File:`, `Type:`, …, `Showing nodes accounting for …`). */
  header: string[];
  table: TopTable;
  /** The report total (before focus/ignore, like pprof). */
  total: bigint;
  /** Nodes left after the node-fraction cut (before `nodeCount`). */
  origCount: number;
  droppedNodes: number;
  /** The whole report as `go tool pprof -top` prints it. */
  text: string;
}

/**
 * `go tool pprof -top`: header lines and the table, from `callGraph` (entries sorted by flat, or
 * cum with `cum`; the `(inline)` / `(partial-inline)` markers from the kept calls into each entry).
 */
export function topReport(p: Profile | ReportInput, options: TopReportOptions = {}): TopReport {
  const { t, g, header } = textReport(p, options, { nodeFraction: 0.005, edgeFraction: 0.001, nodeCount: 0 }, false);
  const entries = topEntries(g);
  const table: TopTable = { entries, total: g.total, sampleTypeIndex: t, unit: g.unit, outputUnit: g.outputUnit, dropped: g.droppedNodes + (g.origCount - entries.length), ratio: g.ratio };
  return { header, table, total: g.total, origCount: g.origCount, droppedNodes: g.droppedNodes, text: header.join('\n') + '\n' + formatTopTable(table, options.limits) };
}

export interface TreeReportOptions extends ReportFilters {
  /** `maxReportBytes` bounds the text (a long name printed once per node or call). */
  limits?: ReportLimits;
  sampleTypeIndex?: number;
  by?: ReportGranularity;
  cum?: boolean;
  inline?: boolean;
  /** Default 0.005 for `tree`, 0 for `peek` (pprof turns trimming off for -peek). */
  nodeFraction?: number;
  /** Default 0.001 for `tree`, 0 for `peek`. */
  edgeFraction?: number;
  /** Default 80 for `tree` (pprof's default for graph reports), all for `peek`. */
  nodeCount?: number;
  /**
   * Only print the nodes whose name matches (pprof `-peek RE`); turns trimming off by default. Or
   * a matcher of one's own, `source` its text for messages: profkit web's peek of one function
   * compares names with it (a RegExp of a 65,536-character name is more than V8 builds).
   */
  symbol?: Pattern | { test(name: string): boolean; source: string };
  /** Leave the profile labels out of the header (pprof `-compact_labels`). */
  compactLabels?: boolean;
}

export interface TreeReport {
  header: string[];
  /** The call graph; with `symbol`, only the calls of the printed nodes are in it. */
  graph: CallGraph;
  /** Indices of the printed nodes (all, or those matching `symbol`). */
  printed: number[];
  /** The report as `go tool pprof -tree` / `-peek RE` prints it. */
  text: string;
}

/**
 * `go tool pprof -tree` (every node with its callers above and callees below, with the share of
 * the node's cum each call accounts for) and `-peek RE` (the same for the nodes matching RE,
 * untrimmed). A `symbol` that matches nothing is a `PROFKIT_E_USAGE` error, as in pprof.
 */
export function treeReport(p: Profile | ReportInput, options: TreeReportOptions = {}): TreeReport {
  const { symbol } = options;
  const peek = symbol !== undefined;
  const rx = symbol === undefined ? undefined : typeof symbol === 'string' || symbol instanceof RegExp ? compilePattern(symbol, 'symbol') : symbol;
  const { g, header } = textReport(
    p,
    // pprof never trims -peek: driver.applyCommandOverrides sets nodecount, nodefraction and
    // edgefraction to 0 for it whatever the flags say, so a function outside the top N still shows.
    peek ? { ...options, nodeFraction: 0, edgeFraction: 0, nodeCount: 0 } : options,
    peek ? { nodeFraction: 0, edgeFraction: 0, nodeCount: 0 } : { nodeFraction: 0.005, edgeFraction: 0.001, nodeCount: 80 },
    true,
    rx ? (name) => rx.test(name) : undefined,
  );
  const total = g.total;
  const fv = (v: bigint) => reportValue(v, g.unit, g.outputUnit, g.ratio);
  const sep = '----------------------------------------------------------+-------------';
  // Counted as made (maxReportBytes): every call prints its caller's or callee's name.
  const budget = new ReportTextBudget(rx ? 'peek' : 'tree', options.limits, true);
  const lines: string[] = [];
  const push = (line: string) => lines.push(budget.take(line + '\n'));
  for (const line of [...header, sep, '      flat  flat%   sum%        cum   cum%   calls calls% + context \t \t ']) push(line);
  let flatSum = 0n;
  const printed: number[] = [];
  g.nodes.forEach((n, k) => {
    if (rx && !rx.test(n.name)) return;
    printed.push(k);
    push(sep);
    for (const e of n.in) push(`${fv(e.weight).padStart(50)} ${formatPercentage(e.weight, n.cum)} |   ${callGraphNode(g, e.src).name}${e.inline ? ' (inline)' : ''}`);
    flatSum += n.flat;
    push(
      `${fv(n.flat).padStart(10)} ${formatPercentage(n.flat, total)} ${formatPercentage(flatSum, total)} ${fv(n.cum).padStart(10)} ${formatPercentage(n.cum, total)}                | ${n.name}`,
    );
    for (const e of n.out) push(`${fv(e.weight).padStart(50)} ${formatPercentage(e.weight, n.cum)} |   ${callGraphNode(g, e.dst).name}${e.inline ? ' (inline)' : ''}`);
  });
  if (g.nodes.length > 0) push(sep);
  if (rx && printed.length === 0) {
    throw new ProfkitError(ErrorCodes.USAGE, `no matches found for regexp: ${rx.source}`, { option: 'symbol', rule: 'the regular expression must match a function of the report' });
  }
  return { header, graph: g, printed, text: lines.join('') };
}

/** pprof's inline marker of a node: from the kept calls into it. */
function inlineMarker(n: CallGraphNode): TopEntry['inline'] {
  let bits = 0;
  for (const e of n.in) bits |= e.inline ? INLINED_CALL : PLAIN_CALL;
  return markerOf(bits);
}

/** The marker of a node whose kept calls are of the kinds `bits` (INLINED_CALL, PLAIN_CALL). */
function markerOf(bits: number): TopEntry['inline'] {
  return bits & INLINED_CALL ? (bits & PLAIN_CALL ? '(partial-inline)' : '(inline)') : '';
}

/** The `-top` entries of a call graph, in the graph's order. */
function topEntries(g: CallGraph): TopEntry[] {
  return g.nodes.map((n, k) => ({ name: n.name, flat: n.flat, cum: n.cum, inline: g.topMarkers ? g.topMarkers[k]! : inlineMarker(n) }));
}

/**
 * pprof `-top`: each entry's flat value (samples whose leaf frame is the entry) and cumulative
 * value (samples whose stack contains the entry, counted once per sample), inline frames
 * expanded; samples with value 0 are skipped. Entries are the nodes of `callGraph` (pprof's
 * graph nodes after `Aggregate` for the granularity; functions without a name, `<?>`, are named
 * after their mapping like pprof's `[binary]`), sorted like `-top` (`FlatNameOrder`: |flat|
 * descending, then name, then |cum| descending; with `cum`: |cum|, name, |flat|).
 */
export function topTable(p: Profile, options: TopOptions = {}): TopTable {
  const g = buildCallGraph(p, options, false);
  const entries = topEntries(g);
  return { entries, total: g.total, sampleTypeIndex: g.sampleTypeIndex, unit: g.unit, outputUnit: g.outputUnit, dropped: g.droppedNodes + (g.origCount - entries.length) };
}
