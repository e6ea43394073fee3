/**
 * The analysis behind the page, on core's engine and nothing else: reading (every bundled
 * adapter, format detection, gzip, limits), drop_frames as `go tool pprof` applies it, the `top`,
 * `peek`, `graph` (DOT) and `list` reports and the flame tree. Each view is computed with the same
 * core calls as the CLI's commands (`packages/cli/src/commands/top.ts`, `peek.ts`, `graph.ts`,
 * `list.ts`, `flame.ts`), so every number the page shows is the number `profkit top/peek/graph/list
 * FILE [--base BASE]` prints for the same options. Platform-neutral: runs in the Web Worker and
 * in Node tests.
 */

import {
  ErrorCodes,
  MAX_SOURCE_FILE_LINES,
  ProfkitError,
  type Registry,
  applyDropFrames,
  applyReportFilters,
  boundedFlameTree,
  callGraphNode,
  cutFlameTree,
  defaultSampleTypeIndex,
  diff,
  dotReport,
  findSampleType,
  formatPercentage,
  formatValue,
  isProfkitError,
  listReport,
  reportTotal,
  topReport,
  treeReport,
  withTagFrames,
  type FlameNode,
  type Profile,
  type ReportFilterOptions,
  type SourceLines,
  type Warning,
} from '@profkit/core';
import type { FlameLayout, GraphView, LoadedInfo, PeekCall, PeekView, SandwichView, SourceAccess, SourceView, TopView, ViewOptions, ViewPart, ViewResult, ViewWarning } from './protocol.js';
import { checkPatternLengths, viewPatternCompiler } from './patterns.js';
import { exactPattern } from './state.js';

export { webRegistry } from '../registry.js';

/**
 * What the source view knows of a file the listing names: its lines (or why it could not be
 * read), or undefined when its text is not known (the static build): the lines then show their
 * costs without text.
 */
export type SourceReader = (file: string) => SourceLines | undefined;

/** Lines of one source file beyond which it is reported, not kept: core's bound, the CLI's too. */
export { MAX_SOURCE_FILE_LINES };

/** A file's lines, or the error shown in their place past MAX_SOURCE_FILE_LINES. */
export function sourceLinesOf(file: string, lines: readonly string[]): SourceLines {
  return lines.length > MAX_SOURCE_FILE_LINES ? { error: `${file}: more than ${MAX_SOURCE_FILE_LINES} lines (${ErrorCodes.LIMIT})` } : { lines };
}

/**
 * The lines of a file as Go's `bufio.ScanLines` splits them (as `profkit list` reads files): \n, a
 * trailing \r dropped; the scan stops one line past MAX_SOURCE_FILE_LINES (a file of newlines
 * would otherwise cost an array slot per byte).
 */
export function linesOf(text: string): string[] {
  const lines: string[] = [];
  for (let at = 0; at < text.length && lines.length <= MAX_SOURCE_FILE_LINES; ) {
    let end = text.indexOf('\n', at);
    if (end < 0) end = text.length;
    const line = text.slice(at, end);
    lines.push(line.endsWith('\r') ? line.slice(0, -1) : line);
    at = end + 1;
  }
  return lines;
}

/**
 * Frames narrower than this fraction of the total are left out of the flame graph: 1/100 of a
 * pixel of a 1000-pixel graph, so that zooming 100x still shows every frame wider than a pixel,
 * while a profile of millions of distinct stacks stays a bounded number of frames.
 */
export const FLAME_MIN_WIDTH = 0.00001;

interface Loaded {
  /** The profile as the views see it: drop_frames applied, minus the base for a diff. */
  viewed: Profile;
  /** Diffs only: the new and the base profile each with drop_frames applied (for the flame graph). */
  newer?: Profile;
  base?: Profile;
  info: LoadedInfo;
  source: SourceAccess;
}

const warningsOf = (ws: readonly Warning[]): ViewWarning[] => ws.map((w) => ({ code: w.code, message: w.message }));

/** A profile read by the page, ready for views. */
export class ProfileSession {
  private constructor(private readonly loaded: Loaded) {}

  /** The profiles with the last tag root's pseudo frames (`withTagFrames` costs a pass over the samples). */
  private tagged: { tagRoot: string; viewed: Profile; newer?: Profile; base?: Profile } | undefined;

  get info(): LoadedInfo {
    return this.loaded.info;
  }

  /** How the source view finds the text of files (`profkit web`'s --source-path/--trim-path). */
  get source(): SourceAccess {
    return this.loaded.source;
  }

  /**
   * The profiles the views read, with the pseudo frames of `tagRoot` (pprof -tagroot: the label
   * values of these comma-separated keys as frames above the root), as the CLI adds them
   * (`withTagFramesOf`) before its filters.
   */
  private profiles(tagRoot: string): { viewed: Profile; newer?: Profile; base?: Profile } {
    const keys = tagRoot.split(',').filter((k) => k !== '');
    if (keys.length === 0) return this.loaded;
    if (this.tagged?.tagRoot !== tagRoot) {
      const add = (p: Profile | undefined) => (p ? withTagFrames(p, { tagRoot: keys }) : undefined);
      this.tagged = { tagRoot, viewed: add(this.loaded.viewed)!, newer: add(this.loaded.newer), base: add(this.loaded.base) };
    }
    return this.tagged;
  }

  /**
   * Reads `bytes` (and `baseBytes`: then the views show `profile - base`, as `profkit top FILE
   * --base BASE`). drop_frames/keep_frames are the profile's own, applied after the subtraction
   * as pprof does.
   */
  static async open(registry: Registry, profile: { name: string; bytes: Uint8Array }, base?: { name: string; bytes: Uint8Array }, source: SourceAccess = { sourcePath: '', trimPath: '' }): Promise<ProfileSession> {
    const r = await registry.read(profile.bytes, { fileName: profile.name });
    const b = base ? await registry.read(base.bytes, { fileName: base.name }) : undefined;
    const patterns = r.profile['.profile'];
    const merged = b ? diff(b.profile, r.profile, { labelBase: false }) : r.profile;
    const viewed = await applyDropFrames(merged, patterns);
    const loaded: Loaded = {
      viewed: viewed.profile,
      source,
      info: {
        format: r.format,
        baseFormat: b?.format,
        sampleTypes: viewed.profile.sample_types.type.map((type, i) => ({ type, unit: viewed.profile.sample_types.unit[i]! })),
        defaultSampleType: defaultSampleTypeIndex(viewed.profile),
        samples: viewed.profile.samples.value.length,
        warnings: warningsOf([...r.warnings, ...(b?.warnings ?? []), ...viewed.warnings]),
      },
    };
    if (b) {
      loaded.newer = (await applyDropFrames(r.profile, patterns)).profile;
      loaded.base = (await applyDropFrames(b.profile, patterns)).profile;
    }
    return new ProfileSession(loaded);
  }

  /**
   * The top table, the flame graph, the call graph, or the peek, sandwich or source listing of
   * function `fn`, for `options`; `readSource` gives the source view the files' text.
   */
  view(options: ViewOptions, part: ViewPart, fn = '', readSource: SourceReader = () => undefined): ViewResult {
    const { viewed: p, newer, base } = this.profiles(options.tagRoot);
    const t = options.sampleType >= 0 && options.sampleType < p.sample_types.type.length ? options.sampleType : this.loaded.info.defaultSampleType;
    if (t < 0) throw new ProfkitError(ErrorCodes.INVALID_PROFILE, 'the profile has no sample types, so there are no values to show');
    const filters = filtersOf(options);
    const unit = p.sample_types.unit[t]!;
    const result: ViewResult = { sampleType: t, sampleTypeName: p.sample_types.type[t]!, unit, diff: this.loaded.newer !== undefined };
    if (part === 'top') result.top = topView(p, t, options, filters);
    else if (part === 'peek') result.peek = peekView(p, t, options, filters, fn);
    else if (part === 'sandwich') result.sandwich = sandwichView(p, t, filters, fn, unit);
    else if (part === 'graph') result.graph = graphView(p, t, options, filters);
    else if (part === 'source') result.source = sourceView(p, t, filters, fn, this.loaded.source, readSource);
    else if (newer && base) result.flame = diffFlameLayout(newer, base, p.sample_types.type[t]!, filters, unit);
    // Cut from the samples (only drawn frames expanded): the first paint of a big profile waits for nothing else.
    else result.flame = flameLayout(cutFlameTree(applyReportFilters(p, filters), t, FLAME_MIN_WIDTH), unit);
    return result;
  }
}

/**
 * The names equal to `fn`, what the peek, sandwich and source of one function select, as a
 * matcher of `exactPattern(fn)` (its `source`): a comparison, not a regular expression. A
 * function's name is any text of the profile, and a link's `fn=` any text: a RegExp of a
 * 65,536-character name is more than V8 builds (a bare SyntaxError, not a view).
 */
function namedExactly(fn: string): { test(name: string): boolean; source: string } {
  return { test: (name) => name === fn, source: exactPattern(fn) };
}

function filtersOf(o: ViewOptions): ReportFilterOptions {
  const v = (s: string) => (s === '' ? undefined : s);
  // The page's patterns come from a link: matched in linear time, in pprof's syntax, within the
  // caps of patterns.ts (length before compiling; program size of each compiled piece, and together).
  const patterns = { focus: v(o.focus), ignore: v(o.ignore), hide: v(o.hide), show: v(o.show), tagFocus: v(o.tagFocus), tagIgnore: v(o.tagIgnore) };
  checkPatternLengths(patterns);
  return { ...patterns, compile: viewPatternCompiler() };
}

/**
 * `profkit graph --format dot` for these options (sample type, --by, filters, --node-fraction,
 * --nodecount; pprof's defaults otherwise): the DOT text, and each node's exact values.
 */
export function graphView(p: Profile, t: number, options: ViewOptions, filters: ReportFilterOptions): GraphView {
  const rep = dotReport(p, {
    ...filters,
    sampleTypeIndex: t,
    by: options.by,
    nodeFraction: options.nodeFraction >= 0 ? options.nodeFraction : undefined,
    nodeCount: options.nodeCount >= 0 ? options.nodeCount : undefined,
  });
  return { dot: rep.text, nodes: rep.graph.map((n, k) => ({ id: `N${k + 1}`, name: n.info.name || n.name, flat: n.flat.toString(), cum: n.cum.toString() })) };
}

/**
 * The lines of a file whose text is not known: as many as a readable file can have
 * (MAX_SOURCE_FILE_LINES), each empty. The listing then shows the lines pprof would show around
 * the sampled ones, with their costs, without text. Not more: the listing has a row for every
 * line from a function's first to its last sampled line, and a profile's line numbers are its
 * own (sampled lines 1 and 2^40 were 2^40 rows, the worker out of memory).
 */
const UNKNOWN_TEXT: readonly string[] = new Proxy([] as string[], {
  get: (target, key) => (key === 'length' ? MAX_SOURCE_FILE_LINES : typeof key === 'string' && /^\d+$/.test(key) ? '' : Reflect.get(target, key)),
});

/**
 * `profkit list FILE '^fn$'` for these options (sample type, filters; the total before them, as
 * `list` takes it; the file names trimmed with the server's --source-path/--trim-path): the
 * printed report and the values of `--json`.
 */
export function sourceView(p: Profile, t: number, filters: ReportFilterOptions, fn: string, access: SourceAccess, readSource: SourceReader): SourceView {
  const unknown = new Set<string>();
  const rep = listReport(applyReportFilters(p, filters), {
    sampleTypeIndex: t,
    total: reportTotal(p, t),
    symbol: (name) => name === fn,
    symbolText: exactPattern(fn),
    sourcePath: access.sourcePath,
    trimPath: access.trimPath,
    readSource: (file) => {
      const r = readSource(file);
      if (r) return r;
      unknown.add(file);
      return { lines: UNKNOWN_TEXT };
    },
  });
  const fv = (v: bigint) => (v === 0n ? '.' : formatValue(v, rep.unit));
  return {
    text: rep.text,
    total: rep.total.toString(),
    routines: rep.routines.map((r) => ({
      name: r.name,
      file: r.file,
      flat: r.flat.toString(),
      cum: r.cum.toString(),
      lines: r.lines.map((l) => ({ line: l.line, flat: l.flat.toString(), cum: l.cum.toString(), flatText: fv(l.flat), cumText: fv(l.cum), text: l.text })),
      ...(r.error !== undefined ? { error: r.error } : {}),
      ...(unknown.has(r.file) ? { noText: true } : {}),
    })),
  };
}

/** `profkit top` for these options: the report of `topReport` and the strings `formatTopTable` prints. */
export function topView(p: Profile, t: number, options: ViewOptions, filters: ReportFilterOptions): TopView {
  const rep = topReport(p, { ...filters, sampleTypeIndex: t, by: options.by, cum: options.cum, nodeFraction: options.nodeFraction >= 0 ? options.nodeFraction : undefined });
  const { unit, outputUnit, total } = rep.table;
  const fv = (v: bigint) => formatValue(v, unit, outputUnit);
  let sum = 0n;
  const rows = rep.table.entries.map((e) => {
    sum += e.flat;
    return {
      name: e.name,
      inline: e.inline,
      flat: e.flat.toString(),
      cum: e.cum.toString(),
      flatText: fv(e.flat),
      flatPercent: formatPercentage(e.flat, total).trim(),
      sumPercent: formatPercentage(sum, total).trim(),
      cumText: fv(e.cum),
      cumPercent: formatPercentage(e.cum, total).trim(),
    };
  });
  return { header: rep.header, total: total.toString(), outputUnit, rows, dropped: rep.table.dropped };
}

/**
 * `profkit peek FILE '^fn$'` for these options (sample type, --by, filters; peek is untrimmed, so
 * --node-fraction does not apply): the printed report and the values of `--json`.
 */
export function peekView(p: Profile, t: number, options: ViewOptions, filters: ReportFilterOptions, fn: string): PeekView {
  const rep = treeReport(p, { ...filters, sampleTypeIndex: t, by: options.by, cum: options.cum, symbol: namedExactly(fn) });
  const g = rep.graph;
  const percentOf = (v: bigint, total: bigint) => (total === 0n ? 0 : Math.round((Number(v) / Number(total)) * 1e6) / 1e4);
  const call = (e: { weight: bigint; inline: boolean }, other: number, cum: bigint): PeekCall => ({
    name: callGraphNode(g, other).name,
    weight: e.weight.toString(),
    weightText: formatValue(e.weight, g.unit, g.outputUnit),
    percentOfCum: percentOf(e.weight, cum),
    inline: e.inline,
  });
  return {
    text: rep.text,
    nodes: rep.printed.map((k) => {
      const n = g.nodes[k]!;
      return {
        name: n.name,
        flat: n.flat.toString(),
        cum: n.cum.toString(),
        callers: n.in.map((e) => call(e, e.src, n.cum)),
        callees: n.out.map((e) => call(e, e.dst, n.cum)),
      };
    }),
  };
}

/** A frame of a sandwich's trees while they are merged. */
interface MergedNode {
  name: string;
  value: bigint;
  self: bigint;
  children: Map<string, MergedNode>;
}

const mergedNode = (name: string): MergedNode => ({ name, value: 0n, self: 0n, children: new Map() });

function childOf(n: MergedNode, name: string): MergedNode {
  let c = n.children.get(name);
  if (!c) n.children.set(name, (c = mergedNode(name)));
  return c;
}

/** The frames of a merged tree (its root included). */
function mergedFrames(root: MergedNode): number {
  let n = 0;
  const work = [root];
  while (work.length > 0) {
    const m = work.pop()!;
    n++;
    for (const c of m.children.values()) work.push(c);
  }
  return n;
}

/**
 * A merged tree as core's flame tree (callees sorted by name, like `flameTree`), without the
 * frames narrower than `minWidth` of the root and what is under them, as core's `cutFlameTree`
 * cuts the CLI's flame graph (with `countEveryFrame`: every frame left out is counted).
 */
function toFlameNode(root: MergedNode, minWidth: number): { tree: FlameNode; elided: number } {
  const threshold = minWidth * Number(root.value);
  const out: FlameNode = { name: root.name, value: root.value, self: root.self, children: [] };
  let elided = 0;
  const work: [MergedNode, FlameNode][] = [[root, out]];
  while (work.length > 0) {
    const [m, f] = work.pop()!;
    for (const c of [...m.children.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (Number(c.value) < threshold) {
        elided += mergedFrames(c);
        continue;
      }
      const fc: FlameNode = { name: c.name, value: c.value, self: c.self, children: [] };
      f.children.push(fc);
      work.push([c, fc]);
    }
  }
  return { tree: out, elided };
}

/**
 * The sandwich of `fn` (speedscope's): the samples through `fn` (core's focus filter on top of
 * the page's filters), their flame tree (core's), and from it every outermost frame named `fn`:
 * its path to the root, reversed, merged into the callers tree, and its subtree merged into the
 * callees tree. A recursive call inside `fn` stays in the callees tree and is not counted twice.
 */
export function sandwichView(p: Profile, t: number, filters: ReportFilterOptions, fn: string, unit: string): SandwichView {
  const named = namedExactly(fn);
  const through = applyReportFilters(applyReportFilters(p, filters), { focus: named.source, compile: () => named });
  const tree = boundedFlameTree(through, t, 0).tree;
  const callers = mergedNode(fn);
  const callees = mergedNode(fn);
  // Depth-first with the path of names from the root's child down to the frame.
  const work: { node: FlameNode; path: string[] }[] = tree.children.map((node) => ({ node, path: [] }));
  while (work.length > 0) {
    const { node, path } = work.pop()!;
    if (node.name !== fn) {
      for (const c of node.children) work.push({ node: c, path: [...path, node.name] });
      continue;
    }
    callers.value += node.value;
    callers.self += node.value;
    let at = callers;
    for (let i = path.length - 1; i >= 0; i--) {
      at.self -= node.value;
      at = childOf(at, path[i]!);
      at.value += node.value;
      at.self += node.value;
    }
    addSubtree(callees, node);
  }
  // Cut once merged, not before: a frame narrow in each of the function's call sites can be wide merged.
  return { callers: flameLayout(toFlameNode(callers, FLAME_MIN_WIDTH), unit), callees: flameLayout(toFlameNode(callees, FLAME_MIN_WIDTH), unit) };
}

/** Adds the values of `node`'s subtree (its own included) into `into`. */
function addSubtree(into: MergedNode, node: FlameNode): void {
  const work: [MergedNode, FlameNode][] = [[into, node]];
  while (work.length > 0) {
    const [m, f] = work.pop()!;
    m.value += f.value;
    m.self += f.self;
    for (const c of f.children) work.push([childOf(m, c.name), c]);
  }
}

/**
 * Lays out a flame tree in preorder: typed arrays, one entry per frame (see `FlameLayout`);
 * `baseCut`: the diff's frames whose base value is below the width the base tree was cut at.
 */
export function flameLayout(bounded: { tree: FlameNode; elided: number }, unit: string, baseOf?: (node: FlameNode) => bigint, baseCut?: { width: number; frames: Set<FlameNode> }): FlameLayout {
  // A first walk counts the frames: the columns are allocated once, at their size, and filled in
  // the second (no object per frame: the 1M-sample profile's 48k frames took 40-80 ms that way).
  let n = 0;
  for (const counting = [bounded.tree]; counting.length > 0; n++) for (const c of counting.pop()!.children) counting.push(c);
  const layout: FlameLayout = {
    names: [],
    nameIndex: new Int32Array(n),
    depth: new Int32Array(n),
    start: new Float64Array(n),
    value: new Float64Array(n),
    self: new Float64Array(n),
    maxDepth: 0,
    elided: bounded.elided,
    unit,
    exactValue: new BigInt64Array(n),
    exactSelf: new BigInt64Array(n),
  };
  if (baseOf) {
    layout.base = new Float64Array(n);
    layout.exactBase = new BigInt64Array(n);
  }
  if (baseCut) {
    layout.baseCut = baseCut.width;
    layout.baseBelowCut = new Uint8Array(n);
  }
  const nameIds = new Map<string, number>();
  // Iterative (stacks can be thousands of frames deep): the frames still to lay out, the next
  // last, with their depth and left edge.
  const work: FlameNode[] = [bounded.tree];
  const workDepth: number[] = [0];
  const workStart: number[] = [0];
  const childStart: number[] = [];
  for (let i = 0; work.length > 0; i++) {
    const node = work.pop()!;
    const depth = workDepth.pop()!;
    const start = workStart.pop()!;
    let id = nameIds.get(node.name);
    if (id === undefined) {
      id = layout.names.length;
      layout.names.push(node.name);
      nameIds.set(node.name, id);
    }
    layout.nameIndex[i] = id;
    layout.depth[i] = depth;
    layout.start[i] = start;
    layout.value[i] = Number(node.value);
    layout.self[i] = Number(node.self);
    layout.exactValue[i] = node.value;
    layout.exactSelf[i] = node.self;
    if (baseOf) {
      const b = baseOf(node);
      layout.base![i] = Number(b);
      layout.exactBase![i] = b;
    }
    if (baseCut?.frames.has(node)) layout.baseBelowCut![i] = 1;
    if (depth > layout.maxDepth) layout.maxDepth = depth;
    // Callees start at the caller's left edge, in order; pushed last first, so that they are laid out in order.
    const kids = node.children;
    childStart.length = 0;
    let offset = start;
    for (const c of kids) {
      childStart.push(offset);
      offset += Number(c.value);
    }
    for (let j = kids.length - 1; j >= 0; j--) {
      work.push(kids[j]!);
      workDepth.push(depth + 1);
      workStart.push(childStart[j]!);
    }
  }
  return layout;
}

/**
 * The diff flame graph: widths are the new profile's values, each frame's base value is the
 * value of the frame with the same call path in the base profile (0 for a frame new in this
 * profile). Frames only in the base have no width here; the top table lists them (negative).
 * Both trees are cut as the main flame graph is, at the same absolute width (FLAME_MIN_WIDTH of
 * the new total): a frame whose counterpart in the base was cut has a base value below that
 * width, which the layout says (`baseBelowCut`) rather than pretend it is 0.
 */
function diffFlameLayout(newer: Profile, base: Profile, sampleType: string, filters: ReportFilterOptions, unit: string): FlameLayout {
  const tn = findSampleType(newer, sampleType);
  const tb = findSampleType(base, sampleType);
  const newTree = cutFlameTree(applyReportFilters(newer, filters), tn, FLAME_MIN_WIDTH);
  const filteredBase = applyReportFilters(base, filters);
  const cut = FLAME_MIN_WIDTH * Number(newTree.tree.value);
  const baseTotal = positiveTotal(filteredBase, tb);
  const baseTree = cutFlameTree(filteredBase, tb, baseTotal > 0 ? Math.min(1, cut / baseTotal) : 0).tree;
  // The base value of each new frame: both trees walked together, children matched by name.
  const baseValue = new Map<FlameNode, bigint>();
  const belowCut = new Set<FlameNode>();
  const work: [FlameNode, FlameNode][] = [[newTree.tree, baseTree]];
  while (work.length > 0) {
    const [n, b] = work.pop()!;
    baseValue.set(n, b.value);
    const baseChildren = new Map(b.children.map((c) => [c.name, c]));
    // Width of `b` that its drawn callees and its own value leave: callees cut from the base tree.
    let cutWidth = b.value - b.self;
    for (const c of b.children) cutWidth -= c.value;
    for (const c of n.children) {
      const bc = baseChildren.get(c.name);
      if (bc) work.push([c, bc]);
      else if (cutWidth > 0n) belowCut.add(c);
    }
  }
  return flameLayout(newTree, unit, (node) => baseValue.get(node) ?? 0n, belowCut.size > 0 ? { width: cut, frames: belowCut } : undefined);
}

/** The sum of the positive values of sample type `t` (the root of its flame tree). */
function positiveTotal(p: Profile, t: number): number {
  const col = p.samples['.values'][t]!;
  let sum = 0n;
  for (let i = 0; i < col.length; i++) if (col[i]! > 0n) sum += col[i]!;
  return Number(sum);
}

/** A thrown value as the `error` message: a ProfkitError keeps its code and text. */
export function errorOf(e: unknown): { code: string; message: string } {
  if (isProfkitError(e)) return { code: e.code, message: e.message };
  return { code: 'PROFKIT_E_INTERNAL', message: e instanceof Error ? e.message : String(e) };
}
