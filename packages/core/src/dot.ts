/**
 * `go tool pprof -dot`: the call graph (`visualGraph`, pprof's trimming in visual mode) written
 * in Graphviz DOT as google/pprof's `graph.ComposeDot` writes it: a legend box with the report
 * labels, one box per node (name split on package and class separators, flat and cum with their
 * share of the total, font size growing with flat, colours with cum), tag "nodelets" (string
 * labels, `bytes` ranges), and the calls sorted by weight (width and colour by weight, dotted
 * when residual, `(inline)` when inlined). Rendering the DOT (SVG, PNG) is the CLI's business.
 */

import type { Profile } from './model.js';
import { defaultSampleTypeIndex } from './views.js';
import { formatPercentage, formatValue, scaleMeasurement } from './ops/format.js';
import { MAX_NODELETS, compareEdges, meanValue, visualGraph, type GraphEdge, type GraphNode, type GraphTag, type VisualGraphOptions } from './ops/graph.js';
import { abs, baseName, compareGoStrings } from './ops/internal.js';
import { nameComponents } from './ops/pprof-graph.js';
import { outputUnitFor, profileLabels, reportLabels, reportTotal, reportValue, type NodeFields } from './ops/report.js';
import { activeFilterLabels, applyReportFilters, type ReportFilterOptions } from './ops/report-filters.js';

export { visualGraph, type VisualGraph, type VisualGraphOptions, type GraphNode, type GraphEdge, type GraphTag } from './ops/graph.js';

export interface DotReportOptions extends VisualGraphOptions, ReportFilterOptions {
  // `meanDivisorIndex` (pprof -mean) comes with VisualGraphOptions: the legend then says mean_TYPE.
  /** Print values in this unit (pprof `-unit`; default `minimum`: pprof's choice). */
  outputUnit?: string;
  /** Percentages of the total after the filters (pprof `-relative_percentages`). */
  relativePercentages?: boolean;
  /** Print every value divided by this (pprof `-divide_by`; default 1). */
  divideBy?: number;
}

export interface DotReport {
  /** The graph as drawn (nodes in output order: node `N<k>` is `graph.nodes[k-1]`). */
  graph: GraphNode[];
  /** The legend lines (pprof's report labels). */
  labels: string[];
  /** pprof's report total (before focus/ignore). */
  total: bigint;
  /** The unit values are printed in. */
  outputUnit: string;
  /** The DOT text. */
  text: string;
}

/** The legend's last line in pprof. */
const HOW_TO_READ = '\nSee https://git.io/JfYMW for how to read the graph';

/**
 * `go tool pprof -dot` of `p`: the report filters (focus, ignore, hide, show, …) applied to the
 * samples (the total stays the whole profile's unless `relativePercentages`, as in pprof), the
 * graph trimmed (defaults: 80 nodes, node fraction 0.005, edge fraction 0.001), and written as
 * pprof writes it.
 */
export function dotReport(p: Profile, options: DotReportOptions = {}): DotReport {
  const t = options.sampleTypeIndex ?? defaultSampleTypeIndex(p);
  const div = options.meanDivisorIndex;
  const whole = reportTotal(p, t, div);
  const q = applyReportFilters(p, options);
  const total = options.relativePercentages ? reportTotal(q, t, div) : whole;
  const chosenUnit = options.outputUnit ?? 'minimum';
  // pprof formats numeric tags while it builds the graph, in the -unit given (minimum: its own choice).
  const g = visualGraph(q, { ...options, sampleTypeIndex: t, tagUnit: chosenUnit });
  const unit = g.unit;
  const ratio = 1 / (options.divideBy ?? 1);
  // What pprof prints: with -mean, each sum over its divisor.
  const shownValues = g.nodes.map((n) => ({ flat: meanValue(n.flat, n.flatDiv), cum: meanValue(n.cum, n.cumDiv) }));
  const outputUnit = chosenUnit !== 'minimum' ? chosenUnit : outputUnitFor(shownValues, total, unit, true, ratio);
  let shownFlat = 0n;
  for (const n of shownValues) shownFlat += n.flat;
  const labels = [
    ...profileLabels(p, t, total, outputUnit, { ratio, ...(div !== undefined ? { typeName: 'mean_' + p.sample_types.type[t]! } : {}) }),
    ...reportLabels({
      total,
      unit,
      outputUnit,
      shownFlat,
      nodeFraction: options.nodeFraction ?? 0.005,
      edgeFraction: options.edgeFraction ?? 0.001,
      droppedNodes: g.droppedNodes,
      droppedEdges: g.droppedEdges,
      shown: g.nodes.length,
      origCount: g.origCount,
      activeFilters: activeFilterLabels(options),
      ratio,
    }),
    HOW_TO_READ,
  ];
  const m = p['.mappings'];
  const title = m.mapping_id.length > 0 && m.filename[0] !== '' ? baseName(m.filename[0]!) : '';
  const text = composeDot(g.nodes, { title, labels, total, formatValue: (v) => reportValue(v, unit, outputUnit, ratio) });
  return { graph: g.nodes, labels, total, outputUnit, text };
}

export interface DotConfig {
  /** Graph name ('' = "unnamed"), also the legend's tooltip. */
  title: string;
  /** Legend lines; the first names the legend box. */
  labels: string[];
  /** The total percentages and colours are relative to. */
  total: bigint;
  formatValue: (v: bigint) => string;
}

/**
 * A tag name inside a DOT string, where pprof writes it raw: quotes escaped, and backslashes
 * except those of the `\n` pprof joins string labels with (and Graphviz's `\l`, `\r` line ends),
 * so no name (`\" URL="…`) can end the string and add attributes (an SVG link, say).
 */
function escapeTagName(s: string): string {
  return s.replace(/\\(?![nlr])/g, '\\\\').replaceAll('"', '\\"');
}

/** pprof `escapeForDot`: backslashes and quotes escaped, newlines as left-justified line ends. */
export function escapeForDot(s: string): string {
  return s.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\l');
}

// pprof `ShortenFunctionName`'s patterns (Go RE2; the same matches in JavaScript).
const JAVA_RE = /^(?:[a-z]\w*\.)*([A-Z][\w$]*\.(?:<init>|[a-z][\w$]*(?:\$\d+)?))(?:(?:\()|$)/;
const GO_RE = /^(?:[\w\-.]+\/)+(.+)/;
const GO_VERSION_RE = /^(.*?)\/v(?:[2-9]|[1-9][0-9]+)([./].*)$/;
const CPP_RE = /^(?:[_a-zA-Z]\w*::)+(_*[A-Z]\w*::~?[_a-zA-Z]\w*(?:<.*>)?)/;
const CPP_ANONYMOUS_PREFIX_RE = /^\(anonymous namespace\)::/g;

/** pprof `ShortenFunctionName`: package paths, Java packages and C++ namespaces dropped. */
export function shortenFunctionName(f: string): string {
  f = f.replace(CPP_ANONYMOUS_PREFIX_RE, '');
  f = f.replace(GO_VERSION_RE, '$1$2');
  for (const re of [GO_RE, JAVA_RE, CPP_RE]) {
    const m = re.exec(f);
    if (m && m.length >= 2) return m.slice(1).join('');
  }
  return f;
}

/** pprof `multilinePrintableName`: a node's label lines, the name split on `::` and `.`. */
function multilineName(i: NodeFields): string {
  const name = escapeForDot(shortenFunctionName(i.name)).replaceAll('::', '\\n').replaceAll('[...]', '[…]').replaceAll('.', '\\n');
  // The file and object names escaped too (pprof writes them raw; see escapeTagName).
  const file = i.file !== '' ? escapeForDot(baseName(i.file)) : '';
  return nameComponents({ name, address: i.address, file, lineno: i.lineno, objfile: escapeForDot(i.obj) }).join('\\n') + '\\n';
}

/** Go `%02x` of `uint8(x)`, x in [0, 255]. */
const hex2 = (x: number) => (Math.trunc(x) & 0xff).toString(16).padStart(2, '0');

/**
 * pprof `dotColor`: grey near 0, red towards 1, green towards -1; light when `background`.
 */
export function dotColor(score: number, background: boolean): string {
  const shift = 0.7;
  let saturation = background ? 0.1 : 1.0;
  const value = background ? 0.93 : 0.7;
  score = Math.max(-1.0, Math.min(1.0, score));
  if (Math.abs(score) < 0.2) saturation *= Math.abs(score) / 0.2;
  if (score > 0.0) score = Math.pow(score, 1.0 - shift);
  if (score < 0.0) score = -Math.pow(-score, 1.0 - shift);
  let r: number;
  let g: number;
  if (score < 0.0) {
    g = value;
    r = value * (1 + saturation * score);
  } else {
    r = value;
    g = value * (1 - saturation * score);
  }
  const b = value * (1 - saturation);
  return `#${hex2(r * 255.0)}${hex2(g * 255.0)}${hex2(b * 255.0)}`;
}

/** pprof `SortTags`: by |cum| (unless `flat`), then |flat|, descending, then by name. */
function sortTags(tags: GraphTag[], flat: boolean): GraphTag[] {
  const desc = (x: bigint, y: bigint) => (abs(x) > abs(y) ? -1 : abs(x) < abs(y) ? 1 : 0);
  return tags.sort((a, b) => (!flat && a.cum !== b.cum ? desc(a.cum, b.cum) : 0) || (a.flat !== b.flat ? desc(a.flat, b.flat) : 0) || compareGoStrings(a.name, b.name));
}

/** pprof `tagDistance`: how far apart two numeric tags are, in `t`'s unit. */
function tagDistance(t: GraphTag, u: GraphTag): number {
  const [v] = scaleMeasurement(Number(u.value), u.unit, t.unit);
  const x = Number(t.value);
  return v < x ? x - v : v - x;
}

/** pprof `tagGroupLabel`: `min..max` (in each tag's own unit) and the summed weights (means with `-mean`). */
function tagGroupLabel(group: GraphTag[]): { name: string; flat: bigint; cum: bigint } {
  const label = (t: GraphTag) => formatValue(t.value, t.unit, 'auto');
  if (group.length === 1) return { name: label(group[0]!), flat: meanValue(group[0]!.flat, group[0]!.flatDiv), cum: meanValue(group[0]!.cum, group[0]!.cumDiv) };
  let min = group[0]!;
  let max = group[0]!;
  let flat = min.flat;
  let cum = min.cum;
  let flatDiv = min.flatDiv;
  let cumDiv = min.cumDiv;
  for (const t of group.slice(1)) {
    // As pprof: scaled into the current extreme's unit, truncated, compared with its raw value.
    if (BigInt(Math.trunc(scaleMeasurement(Number(t.value), t.unit, min.unit)[0])) < min.value) min = t;
    if (BigInt(Math.trunc(scaleMeasurement(Number(t.value), t.unit, max.unit)[0])) > max.value) max = t;
    flat += t.flat;
    cum += t.cum;
    flatDiv += t.flatDiv;
    cumDiv += t.cumDiv;
  }
  return { name: label(min) + '..' + label(max), flat: meanValue(flat, flatDiv), cum: meanValue(cum, cumDiv) };
}

/** pprof `collapsedTags`: the tags sorted, more than `count` grouped around the first `count`. */
function collapsedTags(tags: GraphTag[], count: number, flat: boolean): GraphTag[] {
  tags = sortTags(tags, flat);
  if (tags.length <= count) return tags;
  const groups = tags.slice(0, count).map((t) => [t]);
  for (const t of tags.slice(count)) {
    let g = 0;
    let d = tagDistance(t, groups[0]![0]!);
    for (let i = 1; i < count; i++) {
      const nd = tagDistance(t, groups[i]![0]!);
      if (nd < d) {
        g = i;
        d = nd;
      }
    }
    groups[g]!.push(t);
  }
  return sortTags(
    groups.map((group) => ({ ...tagGroupLabel(group), unit: '', value: 0n, flatDiv: 0n, cumDiv: 0n })),
    flat,
  );
}

/**
 * pprof `graph.ComposeDot` (with no per-node attributes): `nodes` in their order, numbered from
 * 1, then every edge between them sorted by weight.
 */
export function composeDot(nodes: GraphNode[], c: DotConfig): string {
  const out: string[] = [];
  const w = (s: string) => out.push(s + '\n');
  // The title (a mapping's file name) comes from the profile: escaped, where pprof writes it raw
  // (see escapeTagName).
  const title = escapeForDot(c.title);
  w(`digraph "${title !== '' ? title : 'unnamed'}" {`);
  w('node [style=filled fillcolor="#f8f8f8"]');
  if (c.labels.length > 0) {
    let legend = `subgraph cluster_L { "${escapeForDot(c.labels[0]!)}" [shape=box fontsize=16 label="${c.labels.map(escapeForDot).join('\\l')}\\l"`;
    if (title !== '') legend += ` tooltip="${title}"`;
    w(legend + '] }');
  }
  if (nodes.length > 0) {
    const ids = new Map<GraphNode, number>();
    let maxFlat = Number(abs(meanValue(nodes[0]!.flat, nodes[0]!.flatDiv)));
    nodes.forEach((n, i) => {
      ids.set(n, i + 1);
      maxFlat = Math.max(maxFlat, Number(abs(meanValue(n.flat, n.flatDiv))));
    });
    const hasNodelets = new Set<GraphNode>();
    const edges: GraphEdge[] = [];
    for (const n of nodes) {
      out.push(dotNode(n, ids.get(n)!, maxFlat, c));
      const nodelets = dotNodelets(n, ids.get(n)!, c);
      if (nodelets !== '') {
        out.push(nodelets);
        hasNodelets.add(n);
      }
      edges.push(...n.out.values());
    }
    for (const e of edges.sort(compareEdges)) out.push(dotEdge(e, ids.get(e.src) ?? 0, ids.get(e.dest) ?? 0, hasNodelets.has(e.src), c));
  }
  w('}');
  return out.join('');
}

/** pprof `builder.addNode`. */
function dotNode(node: GraphNode, id: number, maxFlat: number, c: DotConfig): string {
  const pct = (v: bigint) => formatPercentage(v, c.total).trim();
  const n = { info: node.info, name: node.name, flat: meanValue(node.flat, node.flatDiv), cum: meanValue(node.cum, node.cumDiv) };
  const flatValue = c.formatValue(n.flat);
  let label = multilineName(n.info);
  label += n.flat !== 0n ? `${flatValue} (${pct(n.flat)})` : '0';
  let cumValue = flatValue;
  if (n.cum !== n.flat) {
    label += n.flat !== 0n ? '\\n' : ' ';
    cumValue = c.formatValue(n.cum);
    label += `of ${cumValue} (${pct(n.cum)})`;
  }
  // Font size 8 to 24, growing with the square root of the share of the largest flat value.
  let fontSize = 8;
  const flat = Number(abs(n.flat));
  if (maxFlat !== 0 && n.flat !== 0n && flat <= maxFlat) fontSize += Math.ceil(16.0 * Math.sqrt(flat / maxFlat));
  const score = Number(n.cum) / Number(abs(c.total));
  return (
    `N${id} [label="${label}" id="node${id}" fontsize=${fontSize} shape=box tooltip="${escapeForDot(n.name)} (${cumValue})"` +
    ` color="${dotColor(score, false)}" fillcolor="${dotColor(score, true)}"]\n`
  );
}

/** pprof `builder.addNodelets`: the top 4 label tags, and numeric tags collapsed into 4 ranges. */
function dotNodelets(n: GraphNode, id: number, c: DotConfig): string {
  let nodelets = '';
  const numericByLabels = new Map<string, GraphTag[]>();
  for (const [labels, m] of n.numericTags) if (m.size > 0) numericByLabels.set(labels, [...m.values()]);
  // Leaf nodes show cumulative tags (weight of trimmed callees included), others flat ones.
  const flatTags = n.out.size > 0;
  const labelTags = sortTags([...n.labelTags.values()], flatTags).slice(0, MAX_NODELETS);
  labelTags.forEach((t, i) => {
    const w = flatTags ? meanValue(t.flat, t.flatDiv) : meanValue(t.cum, t.cumDiv);
    if (w === 0n) return;
    const weight = c.formatValue(w);
    nodelets += `N${id}_${i} [label = "${escapeTagName(t.name)}" id="N${id}_${i}" fontsize=8 shape=box3d tooltip="${weight}"]\n`;
    nodelets += `N${id} -> N${id}_${i} [label=" ${weight}" weight=100 tooltip="${weight}" labeltooltip="${weight}"]\n`;
    const numeric = numericByLabels.get(t.name);
    if (numeric) nodelets += numericNodelets(numeric, flatTags, `N${id}_${i}`, c);
  });
  const unlabelled = numericByLabels.get('');
  if (unlabelled) nodelets += numericNodelets(unlabelled, flatTags, `N${id}`, c);
  return nodelets;
}

/** pprof `builder.numericNodelets`. */
function numericNodelets(tags: GraphTag[], flatTags: boolean, source: string, c: DotConfig): string {
  let nodelets = '';
  collapsedTags(tags, MAX_NODELETS, flatTags).forEach((t, j) => {
    const flat = meanValue(t.flat, t.flatDiv);
    let w = meanValue(t.cum, t.cumDiv);
    let attr = ' style="dotted"';
    if (flatTags || flat === w) {
      w = flat;
      attr = '';
    }
    if (w === 0n) return;
    const weight = c.formatValue(w);
    nodelets += `N${source}_${j} [label = "${escapeTagName(t.name)}" id="N${source}_${j}" fontsize=8 shape=box3d tooltip="${weight}"]\n`;
    nodelets += `${source} -> N${source}_${j} [label=" ${weight}" weight=100 tooltip="${weight}" labeltooltip="${weight}"${attr}]\n`;
  });
  return nodelets;
}

/** pprof `builder.addEdge`. */
function dotEdge(edge: GraphEdge, from: number, to: number, hasNodelets: boolean, c: DotConfig): string {
  const e = { ...edge, weight: meanValue(edge.weight, edge.weightDiv) };
  const w = c.formatValue(e.weight);
  let attr = `label=" ${w}${e.inline ? '\\n (inline)' : ''}"`;
  if (c.total !== 0n) {
    // Go's int64 arithmetic: the products truncate toward zero.
    const weight = 1n + bigMin(abs((e.weight * 100n) / c.total), 100n);
    if (weight > 1n) attr += ` weight=${weight}`;
    const width = 1n + bigMin(abs((e.weight * 5n) / c.total), 5n);
    if (width > 1n) attr += ` penwidth=${width}`;
    attr += ` color="${dotColor(Number(e.weight) / Number(abs(c.total)), false)}"`;
  }
  const arrow = e.residual ? '...' : '->';
  const tooltip = `"${escapeForDot(e.src.name)} ${arrow} ${escapeForDot(e.dest.name)} (${w})"`;
  attr += ` tooltip=${tooltip} labeltooltip=${tooltip}`;
  if (e.residual) attr += ' style="dotted"';
  if (hasNodelets) attr += ' minlen=2';
  return `N${from} -> N${to} [${attr}]\n`;
}

const bigMin = (a: bigint, b: bigint) => (a < b ? a : b);
