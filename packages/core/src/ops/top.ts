/** `topTable`: flat and cumulative values per function, file or line, like `pprof -top`. */

import { ErrorCodes, ProfkitError } from '../errors.js';
import type { Profile } from '../model.js';
import { ProfileIndex, defaultSampleTypeIndex, labelsOf } from '../views.js';
import { readLocations, type OpLine, type OpLocation } from './internal.js';
import { formatPercentage, formatValue, scaleMeasurement } from './format.js';
import { DIFF_BASE_LABEL } from './diff.js';

export interface TopOptions {
  /** Sample type to report; default: the profile's default sample type (pprof's rule). */
  sampleTypeIndex?: number;
  /** Entry granularity (pprof `-functions`, `-files`, `-lines`); default `function`. */
  by?: 'function' | 'file' | 'line';
  /** Sort by cumulative value (pprof `-cum`). */
  cum?: boolean;
  /** Expand inline frames (default true); false uses only each location's outermost line (`-noinlines`). */
  inline?: boolean;
  /** Show columns in `line` entries (`-show_columns`). */
  columns?: boolean;
  /**
   * Drop entries whose |cum| is below this fraction of the sum of flat values (pprof
   * `-nodefraction`, default 0.005 like pprof; 0 keeps every entry).
   */
  nodeFraction?: number;
  /**
   * Ignore call edges whose weight is below this fraction of the sum of flat values when
   * deciding the `(inline)` markers (pprof `-edgefraction`, default 0.001 like pprof).
   */
  edgeFraction?: number;
  /** Keep at most this many entries after sorting (pprof `-nodecount`); default all. */
  nodeCount?: number;
}

export interface TopEntry {
  /** The printed name (pprof `NodeInfo.PrintableName`). */
  name: string;
  /** Sum of the values of samples whose leaf frame is this entry. */
  flat: bigint;
  /** Sum of the values of samples whose stack contains this entry (counted once per sample). */
  cum: bigint;
  /** pprof's inline marker: `(inline)` when always reached as an inlined frame, `(partial-inline)`, or `''`. */
  inline: '' | '(inline)' | '(partial-inline)';
}

export interface TopTable {
  entries: TopEntry[];
  /** Sum of |value| over all samples (over the diff-base samples only when there are any), pprof's total. */
  total: bigint;
  sampleTypeIndex: number;
  /** The sample type's unit. */
  unit: string;
  /**
   * The one unit pprof prints every value of the table in (`selectOutputUnit`): the unit of the
   * smallest nonzero entry value, or of 100 times it when the total needs a larger unit.
   */
  outputUnit: string;
  /** Entries dropped by `nodeFraction`/`nodeCount`. */
  dropped: number;
}

/** Go `filepath.Clean` (slash-separated paths). */
export function cleanPath(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
      continue;
    }
    out.push(part);
  }
  const res = (rooted ? '/' : '') + out.join('/');
  return res === '' ? '.' : res;
}

/** Go `filepath.Base`. */
function baseName(p: string): string {
  if (p === '') return '.';
  const s = p.replace(/\/+$/, '');
  if (s === '') return '/';
  return s.slice(s.lastIndexOf('/') + 1);
}

interface Node {
  id: number;
  name: string;
  /** `fmt.Sprint(NodeInfo)`, pprof's last-resort sort key (`compareNodes`). */
  info: string;
  flat: bigint;
  cum: bigint;
}

const abs = (v: bigint) => (v < 0n ? -v : v);

/** Go string order: bytewise UTF-8, i.e. Unicode code point order. */
function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

interface GraphInput {
  nNodes: number;
  /** Node ids of location row r: `locNodeIds[locNodeOffsets[r] .. locNodeOffsets[r+1]]`, innermost first. */
  locNodeOffsets: Uint32Array;
  locNodeIds: Int32Array;
  /** Sample stacks as location rows (-1 = unknown id), innermost first. */
  stackOffsets: Uint32Array;
  stackRows: Int32Array;
}

interface GraphEdges {
  dst: number[];
  weight: (number | bigint)[];
  inline: number[];
}

/**
 * pprof's graph construction (`graph.newGraph`): cum once per node per sample, flat on the
 * leaf node, edges (parent -> node, counted once per sample) inline only when every counted
 * occurrence is an inlined line. With `kept`, other nodes are skipped (pprof rebuilds the
 * graph this way after trimming). Works on numbers or bigints (`weights` decides).
 */
function buildGraph<W extends Float64Array | BigInt64Array>(
  g: GraphInput,
  weights: W,
  kept: Uint8Array | undefined,
): { flat: (number | bigint)[]; cum: (number | bigint)[]; edges: GraphEdges } {
  type V = W extends Float64Array ? number : bigint;
  const zero = (weights instanceof Float64Array ? 0 : 0n) as V;
  const flat = new Array<V>(g.nNodes).fill(zero);
  const cum = new Array<V>(g.nNodes).fill(zero);
  const { locNodeOffsets, locNodeIds, stackOffsets, stackRows } = g;
  // Only edges into nodes that occur as an inlined line somewhere can make an inline marker:
  // the others are not tracked at all.
  const inlinable = new Uint8Array(g.nNodes);
  for (let r = 0; r + 1 < locNodeOffsets.length; r++) {
    for (let k = locNodeOffsets[r]!; k < locNodeOffsets[r + 1]! - 1; k++) inlinable[locNodeIds[k]!] = 1;
  }
  const edges: { dst: number[]; weight: V[]; inline: number[]; stamp: number[] } = { dst: [], weight: [], inline: [], stamp: [] };
  // Open-addressing hash table of (src, dst) -> edge index.
  let mask = (1 << 12) - 1;
  let hSrc = new Int32Array(mask + 1).fill(-1);
  let hDst = new Int32Array(mask + 1);
  let hEdge = new Int32Array(mask + 1);
  const slot = (src: number, dst: number): number => {
    // murmur3's 32-bit finalizer over the pair
    let h = Math.imul(src, 0x9e3779b1) ^ dst;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h = (h ^ (h >>> 16)) & mask;
    while (hSrc[h] !== -1 && (hSrc[h] !== src || hDst[h] !== dst)) h = (h + 1) & mask;
    return h;
  };
  const grow = () => {
    const [oSrc, oDst, oEdge] = [hSrc, hDst, hEdge];
    mask = mask * 2 + 1;
    hSrc = new Int32Array(mask + 1).fill(-1);
    hDst = new Int32Array(mask + 1);
    hEdge = new Int32Array(mask + 1);
    for (let i = 0; i < oSrc.length; i++) {
      if (oSrc[i] === -1) continue;
      const h = slot(oSrc[i]!, oDst[i]!);
      hSrc[h] = oSrc[i]!;
      hDst[h] = oDst[i]!;
      hEdge[h] = oEdge[i]!;
    }
  };
  const seen = new Int32Array(g.nNodes).fill(-1);
  const add = (a: V, b: V): V => ((a as number) + (b as number)) as V;
  for (let i = 0; i < weights.length; i++) {
    const w = weights[i] as V;
    if (w == 0) continue;
    let parent = -1;
    let residual = false;
    for (let k = stackOffsets[i + 1]! - 1; k >= stackOffsets[i]!; k--) {
      const r = stackRows[k]!;
      if (r < 0) continue;
      const b = locNodeOffsets[r]!;
      const last = locNodeOffsets[r + 1]! - 1;
      for (let ni = last; ni >= b; ni--) {
        const n = locNodeIds[ni]!;
        if (kept && !kept[n]) {
          residual = true;
          continue;
        }
        if (seen[n] !== i) {
          seen[n] = i;
          cum[n] = add(cum[n]!, w);
        }
        if (parent >= 0 && parent !== n && inlinable[n]) {
          const inline = ni !== last ? 1 : 0;
          const h = slot(parent, n);
          if (hSrc[h] === -1) {
            hSrc[h] = parent;
            hDst[h] = n;
            hEdge[h] = edges.dst.length;
            edges.dst.push(n);
            edges.weight.push(w);
            edges.inline.push(inline);
            edges.stamp.push(i);
            if (edges.dst.length * 2 > mask) grow();
          } else {
            const e = hEdge[h]!;
            if (edges.stamp[e] !== i) {
              edges.stamp[e] = i;
              edges.weight[e] = add(edges.weight[e]!, w);
              if (!inline) edges.inline[e] = 0;
            }
          }
        }
        parent = n;
        residual = false;
      }
    }
    if (parent >= 0 && !residual) flat[parent] = add(flat[parent]!, w);
  }
  return { flat, cum, edges };
}

/**
 * pprof `-top`: each entry's flat value (samples whose leaf frame is the entry) and cumulative
 * value (samples whose stack contains the entry, counted once per sample), inline frames
 * expanded; samples with value 0 are skipped. Entries are identified like pprof's graph nodes
 * (after `Aggregate` for the granularity) and sorted like `-top` (`FlatNameOrder`: |flat|
 * descending, then name, then |cum| descending; with `cum`: |cum|, name, |flat|).
 */
export function topTable(p: Profile, options: TopOptions = {}): TopTable {
  const t = options.sampleTypeIndex ?? defaultSampleTypeIndex(p);
  const col = p.samples['.values'][t];
  if (!col) {
    throw new ProfkitError(ErrorCodes.USAGE, `sample type index ${t} is out of range (the profile has ${p.sample_types.type.length} sample types)`, {
      option: 'sampleTypeIndex',
      rule: 'the sample type index must name an existing sample type',
    });
  }
  const by = options.by ?? 'function';
  const inline = options.inline ?? true;
  const columns = options.columns ?? false;
  const index = new ProfileIndex(p);
  const locs = readLocations(p, index);
  const f = p.functions;
  const mapFile = p['.mappings'].filename;

  const nodes = new Map<string, Node>();
  const nodeOf = (loc: OpLocation, ln: OpLine | undefined): Node => {
    const objfile = loc.mapping >= 0 ? mapFile[loc.mapping]! : '';
    let name = '';
    let file = '';
    let lineno = 0;
    let column = 0;
    let startLine = 0;
    let obj = '';
    if (ln) {
      if (by !== 'file') name = f.name[ln.fn]!;
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
    let n = nodes.get(key);
    if (!n) {
      const parts: string[] = [];
      if (name !== '') parts.push(name);
      if (lineno !== 0) parts.push(`${file}:${lineno}` + (column !== 0 ? `:${column}` : ''));
      else if (file !== '') parts.push(file);
      else if (name !== '') {
        // the function name says it all
      } else if (obj !== '') parts.push(`[${baseName(obj)}]`);
      else parts.push('<unknown>');
      const info = `{${name}  0 ${file} ${startLine} ${lineno}${columns ? ` ${column}` : ''} ${obj}}`;
      n = { id: nodes.size, name: parts.join(' '), info, flat: 0n, cum: 0n };
      nodes.set(key, n);
    }
    return n;
  };
  // Nodes of each location, innermost line first (pprof's locationMap).
  const locNodes: Node[][] = locs.map((loc) => {
    let lines = loc.lines;
    if (!inline && lines.length > 1) lines = lines.slice(lines.length - 1);
    return lines.length === 0 ? [nodeOf(loc, undefined)] : lines.map((ln) => nodeOf(loc, ln));
  });

  let total = 0n;
  let diffTotal = 0n;
  const offsets = p.samples['.label_offsets'];
  for (let i = 0; i < col.length; i++) {
    const a = abs(col[i]!);
    total += a;
    if (offsets && offsets[i + 1]! > offsets[i]! && labelsOf(p, i).some((l) => l.key === DIFF_BASE_LABEL && l.str === 'true')) diffTotal += a;
  }
  // Sums stay exact in doubles when the sum of |values| is at most 2^53 (the usual case, and
  // much faster than bigint arithmetic); otherwise bigints are used.
  const exact = total <= 2n ** 53n;
  if (diffTotal > 0n) total = diffTotal;
  // The graph input as flat typed arrays: node ids per location row, location rows per sample.
  const nodeList = [...nodes.values()];
  const nNodes = nodeList.length;
  const locNodeOffsets = new Uint32Array(locNodes.length + 1);
  for (let r = 0; r < locNodes.length; r++) locNodeOffsets[r + 1] = locNodeOffsets[r]! + locNodes[r]!.length;
  const locNodeIds = new Int32Array(locNodeOffsets[locNodes.length]!);
  for (let r = 0; r < locNodes.length; r++) locNodes[r]!.forEach((n, k) => (locNodeIds[locNodeOffsets[r]! + k] = n.id));
  const { offsets: stackOffsets, location_id: stackIds } = p.samples.locations;
  const stackRowsFlat = new Int32Array(stackIds.length);
  for (let k = 0; k < stackIds.length; k++) stackRowsFlat[k] = index.locations.get(stackIds[k]!);
  const input: GraphInput = { nNodes, locNodeOffsets, locNodeIds, stackOffsets, stackRows: stackRowsFlat };

  const weights: Float64Array | BigInt64Array = exact ? Float64Array.from(col, (v) => Number(v)) : col;
  const g = buildGraph(input, weights, undefined);
  nodeList.forEach((n, id) => {
    n.flat = BigInt(g.flat[id]!);
    n.cum = BigInt(g.cum[id]!);
  });
  let edges = g.edges;

  let flatSum = 0n;
  for (const n of nodes.values()) flatSum += n.flat;
  const cutoffOf = (fraction: number) => abs(BigInt(Math.trunc(Number(flatSum) * fraction)));
  const nodeCutoff = cutoffOf(options.nodeFraction ?? 0.005);
  const edgeCutoff = cutoffOf(options.edgeFraction ?? 0.001);

  let entries = [...nodes.values()].filter((n) => n.flat !== 0n || n.cum !== 0n);
  const all = entries.length;
  const byName = (a: Node, b: Node) => compareGoStrings(a.name, b.name);
  const byInfo = (a: Node, b: Node) => compareGoStrings(a.info, b.info);
  const byAbs = (x: bigint, y: bigint) => (abs(x) > abs(y) ? -1 : abs(x) < abs(y) ? 1 : 0);
  if (nodeCutoff > 0n) entries = entries.filter((n) => abs(n.cum) >= nodeCutoff);
  entries.sort(
    options.cum
      ? (a, b) => byAbs(a.cum, b.cum) || byName(a, b) || byAbs(a.flat, b.flat) || byInfo(a, b)
      : (a, b) => byAbs(a.flat, b.flat) || byName(a, b) || byAbs(a.cum, b.cum) || byInfo(a, b),
  );
  if (options.nodeCount !== undefined && options.nodeCount > 0) entries = entries.slice(0, options.nodeCount);
  if (entries.length !== all) {
    const kept = new Uint8Array(nNodes);
    for (const n of entries) kept[n.id] = 1;
    edges = buildGraph(input, weights, kept).edges;
  }
  // Inline markers from the in-edges at or above the edge cutoff.
  const inlineIn = new Uint8Array(nNodes);
  const plainIn = new Uint8Array(nNodes);
  for (let e = 0; e < edges.dst.length; e++) {
    if (abs(BigInt(edges.weight[e]!)) < edgeCutoff) continue;
    if (edges.inline[e]) inlineIn[edges.dst[e]!] = 1;
    else plainIn[edges.dst[e]!] = 1;
  }

  return {
    entries: entries.map((n) => ({
      name: n.name,
      flat: n.flat,
      cum: n.cum,
      inline: inlineIn[n.id] ? (plainIn[n.id] ? '(partial-inline)' : '(inline)') : '',
    })),
    total,
    sampleTypeIndex: t,
    unit: p.sample_types.unit[t]!,
    outputUnit: selectOutputUnit(entries, total, p.sample_types.unit[t]!),
    dropped: all - entries.length,
  };
}

/** pprof report's `selectOutputUnit` for the "minimum" output unit. */
function selectOutputUnit(entries: { flat: bigint; cum: bigint }[], total: bigint, sampleUnit: string): string {
  if (entries.length === 0) return 'minimum';
  let minValue = 0n;
  for (const n of entries) {
    let m = abs(n.flat);
    if (m === 0n) m = abs(n.cum);
    if (m > 0n && (minValue === 0n || m < minValue)) minValue = m;
  }
  const maxValue = total;
  if (minValue === 0n) minValue = maxValue;
  const minUnit = scaleMeasurement(Number(minValue), sampleUnit, 'minimum')[1];
  const maxUnit = scaleMeasurement(Number(maxValue), sampleUnit, 'minimum')[1];
  let unit = minUnit;
  if (minUnit !== maxUnit && minValue * 100n < maxValue) unit = scaleMeasurement(Number(100n * minValue), sampleUnit, 'minimum')[1];
  return unit !== '' ? unit : sampleUnit;
}

/**
 * The table as `pprof -top` prints it (the column header and one line per entry; pprof's
 * preamble lines — file, type, "Showing nodes accounting for…" — are not printed).
 */
export function formatTopTable(table: TopTable): string {
  const pad = (s: string, w: number) => s.padStart(w, ' ');
  const lines = [`${pad('flat', 10)} ${pad('flat', 5)}% ${pad('sum', 5)}% ${pad('cum', 10)} ${pad('cum', 5)}%`];
  let sum = 0n;
  for (const e of table.entries) {
    sum += e.flat;
    lines.push(
      `${pad(formatValue(e.flat, table.unit, table.outputUnit), 10)} ${formatPercentage(e.flat, table.total)} ${formatPercentage(sum, table.total)} ` +
        `${pad(formatValue(e.cum, table.unit, table.outputUnit), 10)} ${formatPercentage(e.cum, table.total)}  ${e.name}${e.inline ? ' ' + e.inline : ''}`,
    );
  }
  return lines.join('\n') + '\n';
}
