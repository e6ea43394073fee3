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
import { filterSamples } from './filter.js';
import { formatPercentage, formatValue, scaleMeasurement } from './format.js';
import { abs, baseName, cleanPath, compareGoStrings, readLocations, type OpLine, type OpLocation } from './internal.js';
import { compilePattern, type Pattern } from './regex.js';
import { formatTopTable, topEntries, type TopTable } from './top.js';

export interface CallGraphOptions {
  /** Sample type to report; default: the profile's default sample type. */
  sampleTypeIndex?: number;
  /** Node granularity (pprof `-functions`, `-files`, `-lines`); default `function`. */
  by?: 'function' | 'file' | 'line';
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
}

export interface CallGraphEdge {
  /** Caller node index in `CallGraph.nodes`. */
  src: number;
  /** Callee node index. */
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
}

/** R's `<?>`: the name the adapters give functions without one (pprof's empty name). */
const UNKNOWN_NAME = '<?>';

function checkSampleType(p: Profile, t: number): void {
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
export function reportTotal(p: Profile, sampleTypeIndex: number): bigint {
  checkSampleType(p, sampleTypeIndex);
  const col = p.samples['.values'][sampleTypeIndex]!;
  const offsets = p.samples['.label_offsets'];
  let total = 0n;
  let diffTotal = 0n;
  for (let i = 0; i < col.length; i++) {
    const a = abs(col[i]!);
    total += a;
    if (offsets && offsets[i + 1]! > offsets[i]! && labelsOf(p, i).some((l) => l.key === DIFF_BASE_LABEL && l.str === 'true')) diffTotal += a;
  }
  return diffTotal > 0n ? diffTotal : total;
}

interface NodeState {
  name: string;
  flat: bigint;
  cum: bigint;
  seen: number;
  out: Map<number, CallGraphEdge & { stamp: number }>;
}

/**
 * Node ids of every location row (innermost line first), the node names (pprof
 * `NodeInfo.PrintableName`) and `fmt.Sprint(NodeInfo)` of each node (pprof's last-resort sort key).
 */
function nodeTable(p: Profile, by: 'function' | 'file' | 'line', inline: boolean, columns: boolean, index: ProfileIndex) {
  const locs = readLocations(p, index);
  const f = p.functions;
  const mapFile = p['.mappings'].filename;
  const keys = new Map<string, number>();
  const names: string[] = [];
  const infos: string[] = [];
  const nodeOf = (loc: OpLocation, ln: OpLine | undefined): number => {
    const objfile = loc.mapping >= 0 ? mapFile[loc.mapping]! : '';
    let name = '';
    let file = '';
    let lineno = 0;
    let column = 0;
    let startLine = 0;
    let obj = '';
    if (ln) {
      // R's placeholder for a missing name (how the adapters read an empty name) is no name.
      if (by !== 'file' && f.name[ln.fn] !== UNKNOWN_NAME) name = f.name[ln.fn]!;
      if (by !== 'function' && f.filename[ln.fn] !== '') file = cleanPath(f.filename[ln.fn]!);
      if (by === 'line') {
        lineno = ln.line;
        if (columns) column = ln.column;
      }
      if (name === '') {
        obj = objfile;
        startLine = f.start_line[ln.fn]!;
      }
    } else obj = objfile;
    const key = JSON.stringify([name, file, lineno, column, startLine, obj]);
    let id = keys.get(key);
    if (id === undefined) {
      const parts: string[] = [];
      if (name !== '') parts.push(name);
      if (lineno !== 0) parts.push(`${file}:${lineno}` + (column !== 0 ? `:${column}` : ''));
      else if (file !== '') parts.push(file);
      else if (name !== '') {
        // the function name says it all
      } else if (obj !== '') parts.push(`[${baseName(obj)}]`);
      else parts.push('<unknown>');
      id = names.length;
      names.push(parts.join(' '));
      infos.push(`{${name}  0 ${file} ${startLine} ${lineno}${columns ? ` ${column}` : ''} ${obj}}`);
      keys.set(key, id);
    }
    return id;
  };
  const locNodes = locs.map((loc) => {
    let lines = loc.lines;
    if (!inline && lines.length > 1) lines = lines.slice(lines.length - 1);
    return lines.length === 0 ? [nodeOf(loc, undefined)] : lines.map((ln) => nodeOf(loc, ln));
  });
  return { locNodes, names, infos };
}

/** pprof `newGraph` restricted to `kept` nodes (all when undefined). */
function buildNodes(p: Profile, col: BigInt64Array, locNodes: number[][], names: string[], index: ProfileIndex, kept: Set<number> | undefined): NodeState[] {
  const nodes: NodeState[] = names.map((name) => ({ name, flat: 0n, cum: 0n, seen: -1, out: new Map() }));
  const { offsets, location_id } = p.samples.locations;
  for (let i = 0; i < col.length; i++) {
    const w = col[i]!;
    if (w === 0n) continue;
    let parent = -1;
    let residual = false;
    for (let k = offsets[i + 1]! - 1; k >= offsets[i]!; k--) {
      const r = index.locations.get(location_id[k]!);
      if (r < 0) continue;
      const ln = locNodes[r]!;
      for (let ni = ln.length - 1; ni >= 0; ni--) {
        const n = ln[ni]!;
        if (kept && !kept.has(n)) {
          residual = true;
          continue;
        }
        const node = nodes[n]!;
        if (node.seen !== i) {
          node.seen = i;
          node.cum += w;
        }
        if (parent >= 0 && parent !== n) {
          const out = nodes[parent]!.out;
          const e = out.get(n);
          const inl = ni !== ln.length - 1;
          if (!e) out.set(n, { src: parent, dst: n, weight: w, inline: inl, residual, stamp: i });
          else if (e.stamp !== i) {
            e.stamp = i;
            e.weight += w;
            if (residual) e.residual = true;
            if (!inl) e.inline = false;
          }
        }
        parent = n;
        residual = false;
      }
    }
    if (parent >= 0 && !residual) nodes[parent]!.flat += w;
  }
  return nodes;
}

/**
 * pprof's call graph for text reports, trimmed like `newTrimmedGraph`: nodes whose |cum| is
 * below `nodeFraction` of the flat sum are dropped (the graph is rebuilt without them, so calls
 * across them become residual edges), nodes are sorted, the first `nodeCount` are kept, and
 * edges below `edgeFraction` are dropped.
 */
export function callGraph(p: Profile, options: CallGraphOptions = {}): CallGraph {
  const t = options.sampleTypeIndex ?? defaultSampleTypeIndex(p);
  checkSampleType(p, t);
  const col = p.samples['.values'][t]!;
  const index = new ProfileIndex(p);
  const { locNodes, names, infos } = nodeTable(p, options.by ?? 'function', options.inline ?? true, options.columns ?? false, index);
  const live = (ns: NodeState[]) => {
    const ids: number[] = [];
    ns.forEach((n, i) => {
      if (n.flat !== 0n || n.cum !== 0n) ids.push(i);
    });
    return ids;
  };
  let nodes = buildNodes(p, col, locNodes, names, index, undefined);
  let ids = live(nodes);
  let flatSum = 0n;
  for (const i of ids) flatSum += nodes[i]!.flat;
  const cutoff = (fraction: number) => abs(BigInt(Math.trunc(Number(flatSum) * fraction)));
  const nodeCutoff = cutoff(options.nodeFraction ?? 0.005);
  const edgeCutoff = cutoff(options.edgeFraction ?? 0.001);
  let droppedNodes = 0;
  if (nodeCutoff > 0n) {
    const kept = ids.filter((i) => abs(nodes[i]!.cum) >= nodeCutoff);
    if (kept.length !== ids.length) {
      droppedNodes = ids.length - kept.length;
      nodes = buildNodes(p, col, locNodes, names, index, new Set(kept));
      ids = live(nodes);
    }
  }
  const origCount = ids.length;
  const byName = (a: number, b: number) => compareGoStrings(names[a]!, names[b]!);
  const byInfo = (a: number, b: number) => compareGoStrings(infos[a]!, infos[b]!);
  const byAbs = (x: bigint, y: bigint) => (abs(x) > abs(y) ? -1 : abs(x) < abs(y) ? 1 : 0);
  // pprof `FlatNameOrder` / `CumNameOrder`, ties broken by `compareNodes`.
  const sort = (list: number[]) =>
    list.sort(
      options.cum
        ? (a, b) => byAbs(nodes[a]!.cum, nodes[b]!.cum) || byName(a, b) || byAbs(nodes[a]!.flat, nodes[b]!.flat) || byInfo(a, b)
        : (a, b) => byAbs(nodes[a]!.flat, nodes[b]!.flat) || byName(a, b) || byAbs(nodes[a]!.cum, nodes[b]!.cum) || byInfo(a, b),
    );
  sort(ids);
  const nodeCount = options.nodeCount ?? 0;
  if (nodeCount > 0 && ids.length > nodeCount) {
    nodes = buildNodes(p, col, locNodes, names, index, new Set(ids.slice(0, nodeCount)));
    ids = sort(live(nodes));
  }
  const pos = new Map<number, number>();
  ids.forEach((id, k) => pos.set(id, k));
  const out: CallGraphNode[] = ids.map((id) => ({ name: nodes[id]!.name, flat: nodes[id]!.flat, cum: nodes[id]!.cum, in: [], out: [] }));
  let droppedEdges = 0;
  for (const id of ids) {
    for (const e of nodes[id]!.out.values()) {
      const s = pos.get(e.src);
      const d = pos.get(e.dst);
      if (s === undefined || d === undefined) continue;
      if (abs(e.weight) < edgeCutoff) {
        droppedEdges++;
        continue;
      }
      const edge: CallGraphEdge = { src: s, dst: d, weight: e.weight, inline: e.inline, residual: e.residual };
      out[s]!.out.push(edge);
      out[d]!.in.push(edge);
    }
  }
  const edgeOrder = (a: CallGraphEdge, b: CallGraphEdge) => {
    if (a.weight !== b.weight) return byAbs(a.weight, b.weight);
    return compareGoStrings(out[a.src]!.name, out[b.src]!.name) || compareGoStrings(out[a.dst]!.name, out[b.dst]!.name);
  };
  for (const n of out) {
    n.in.sort(edgeOrder);
    n.out.sort(edgeOrder);
  }
  const total = reportTotal(p, t);
  const unit = p.sample_types.unit[t]!;
  return { nodes: out, total, sampleTypeIndex: t, unit, outputUnit: outputUnitFor(out, total, unit), origCount, droppedNodes, droppedEdges };
}

/** pprof report's `selectOutputUnit` for the "minimum" output unit. */
function outputUnitFor(nodes: { flat: bigint; cum: bigint }[], total: bigint, unit: string): string {
  if (nodes.length === 0) return 'minimum';
  let minValue = 0n;
  for (const n of nodes) {
    let m = abs(n.flat);
    if (m === 0n) m = abs(n.cum);
    if (m > 0n && (minValue === 0n || m < minValue)) minValue = m;
  }
  if (minValue === 0n) minValue = total;
  const minUnit = scaleMeasurement(Number(minValue), unit, 'minimum')[1];
  const maxUnit = scaleMeasurement(Number(total), unit, 'minimum')[1];
  let u = minUnit;
  if (minUnit !== maxUnit && minValue * 100n < total) u = scaleMeasurement(Number(100n * minValue), unit, 'minimum')[1];
  return u !== '' ? u : unit;
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
export function profileLabels(p: Profile, sampleTypeIndex: number, total: bigint = reportTotal(p, sampleTypeIndex), outputUnit = 'minimum'): string[] {
  const labels: string[] = [];
  const m = p['.mappings'];
  if (m.mapping_id.length > 0) {
    if (m.filename[0] !== '') labels.push('File: ' + baseName(m.filename[0]!));
    if (m.build_id[0] !== '') labels.push('Build ID: ' + m.build_id[0]!);
  }
  const facts = p['.profile'];
  for (const c of facts.comments) if (!c.startsWith('#')) labels.push(c);
  const type = p.sample_types.type[sampleTypeIndex];
  if (type) labels.push('Type: ' + type);
  if (facts.time_nanos !== 0n) {
    const t = goTime(facts.time_nanos);
    if (t) labels.push('Time: ' + t);
  }
  if (facts.duration_nanos !== 0n) {
    const unit = p.sample_types.unit[sampleTypeIndex] ?? '';
    const [totalNanos, totalUnit] = scaleMeasurement(Number(total), unit, 'nanoseconds');
    const ratio = totalUnit === 'ns' && totalNanos !== 0 ? `(${formatPercentage(Math.trunc(totalNanos), facts.duration_nanos)})` : '';
    labels.push(`Duration: ${formatValue(facts.duration_nanos, 'nanoseconds', 'auto')}, Total samples = ${formatValue(total, unit, outputUnit)} ${ratio}`);
  }
  return labels;
}

export interface ReportFilters {
  /** Keep only samples with a frame matching (pprof `-focus`). */
  focus?: Pattern;
  /** Drop samples with a frame matching (pprof `-ignore`). */
  ignore?: Pattern;
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
}

/** pprof `reportLabels` after the profile labels: active filters, "Showing nodes accounting for…", dropped counts. */
export function reportLabels(h: ReportHeaderInput): string[] {
  const fv = (v: bigint) => formatValue(v, h.unit, h.outputUnit);
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

function activeFilters(f: ReportFilters): string[] {
  const out: string[] = [];
  const src = (p: Pattern) => (p instanceof RegExp ? p.source : p);
  if (f.focus !== undefined) out.push('focus=' + src(f.focus));
  if (f.ignore !== undefined) out.push('ignore=' + src(f.ignore));
  return out;
}

function applyFilters(p: Profile, f: ReportFilters): Profile {
  if (f.focus === undefined && f.ignore === undefined) return p;
  return filterSamples(p, { focus: f.focus, ignore: f.ignore });
}

/**
 * What `-top`, `-tree` and `-peek` share: `callGraph` of `p` after focus/ignore (option defaults
 * from `defaults`), with pprof's total before filtering as its total, the output unit chosen
 * against that total, and the header lines (profile labels, then the report labels).
 */
function textReport(
  p: Profile,
  options: TopReportOptions,
  defaults: { nodeFraction: number; edgeFraction: number; nodeCount: number },
): { t: number; g: CallGraph; header: string[] } {
  const t = options.sampleTypeIndex ?? defaultSampleTypeIndex(p);
  const total = reportTotal(p, t);
  const q = applyFilters(p, options);
  const nodeFraction = options.nodeFraction ?? defaults.nodeFraction;
  const edgeFraction = options.edgeFraction ?? defaults.edgeFraction;
  const g = callGraph(q, { sampleTypeIndex: t, by: options.by, cum: options.cum, inline: options.inline, nodeFraction, edgeFraction, nodeCount: options.nodeCount ?? defaults.nodeCount });
  g.total = total;
  g.outputUnit = outputUnitFor(g.nodes, total, g.unit);
  let shownFlat = 0n;
  for (const n of g.nodes) shownFlat += n.flat;
  const header = [
    ...profileLabels(p, t, total, g.outputUnit),
    ...reportLabels({
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
      activeFilters: activeFilters(options),
    }),
  ];
  return { t, g, header };
}

export interface TopReportOptions extends ReportFilters {
  sampleTypeIndex?: number;
  by?: 'function' | 'file' | 'line';
  cum?: boolean;
  inline?: boolean;
  /** Default 0.005 (pprof's default). */
  nodeFraction?: number;
  /** Default 0.001. */
  edgeFraction?: number;
  /** Default all (pprof `-top` default). */
  nodeCount?: number;
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
export function topReport(p: Profile, options: TopReportOptions = {}): TopReport {
  const { t, g, header } = textReport(p, options, { nodeFraction: 0.005, edgeFraction: 0.001, nodeCount: 0 });
  const entries = topEntries(g);
  const table: TopTable = { entries, total: g.total, sampleTypeIndex: t, unit: g.unit, outputUnit: g.outputUnit, dropped: g.droppedNodes + (g.origCount - entries.length) };
  return { header, table, total: g.total, origCount: g.origCount, droppedNodes: g.droppedNodes, text: header.join('\n') + '\n' + formatTopTable(table) };
}

export interface TreeReportOptions extends ReportFilters {
  sampleTypeIndex?: number;
  by?: 'function' | 'file' | 'line';
  cum?: boolean;
  inline?: boolean;
  /** Default 0.005 for `tree`, 0 for `peek` (pprof turns trimming off for -peek). */
  nodeFraction?: number;
  /** Default 0.001 for `tree`, 0 for `peek`. */
  edgeFraction?: number;
  /** Default 80 for `tree` (pprof's default for graph reports), all for `peek`. */
  nodeCount?: number;
  /** Only print the nodes whose name matches (pprof `-peek RE`); turns trimming off by default. */
  symbol?: Pattern;
}

export interface TreeReport {
  header: string[];
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
export function treeReport(p: Profile, options: TreeReportOptions = {}): TreeReport {
  const peek = options.symbol !== undefined;
  const rx = peek ? compilePattern(options.symbol!, 'symbol') : undefined;
  const { g, header } = textReport(p, options, peek ? { nodeFraction: 0, edgeFraction: 0, nodeCount: 0 } : { nodeFraction: 0.005, edgeFraction: 0.001, nodeCount: 80 });
  const total = g.total;
  const fv = (v: bigint) => formatValue(v, g.unit, g.outputUnit);
  const sep = '----------------------------------------------------------+-------------';
  const lines = [...header, sep, '      flat  flat%   sum%        cum   cum%   calls calls% + context \t \t '];
  let flatSum = 0n;
  const printed: number[] = [];
  g.nodes.forEach((n, k) => {
    if (rx && !rx.test(n.name)) return;
    printed.push(k);
    lines.push(sep);
    for (const e of n.in) lines.push(`${fv(e.weight).padStart(50)} ${formatPercentage(e.weight, n.cum)} |   ${g.nodes[e.src]!.name}${e.inline ? ' (inline)' : ''}`);
    flatSum += n.flat;
    lines.push(
      `${fv(n.flat).padStart(10)} ${formatPercentage(n.flat, total)} ${formatPercentage(flatSum, total)} ${fv(n.cum).padStart(10)} ${formatPercentage(n.cum, total)}                | ${n.name}`,
    );
    for (const e of n.out) lines.push(`${fv(e.weight).padStart(50)} ${formatPercentage(e.weight, n.cum)} |   ${g.nodes[e.dst]!.name}${e.inline ? ' (inline)' : ''}`);
  });
  if (g.nodes.length > 0) lines.push(sep);
  if (rx && printed.length === 0) {
    throw new ProfkitError(ErrorCodes.USAGE, `no matches found for regexp: ${rx.source}`, { option: 'symbol', rule: 'the regular expression must match a function of the report' });
  }
  return { header, graph: g, printed, text: lines.join('\n') + '\n' };
}
