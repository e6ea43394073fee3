/**
 * The analysis behind the page, on core's engine and nothing else: reading (every bundled
 * adapter, format detection, gzip, limits), drop_frames as `go tool pprof` applies it, the `top`
 * report and the flame tree. Each view is computed with the same core calls as the CLI's
 * commands (`packages/cli/src/commands/top.ts` and `flame.ts` with `readForView` of
 * `shared.ts`), so every number the page shows is the number `profkit top FILE [--base BASE]`
 * prints for the same options. Platform-neutral: runs in the Web Worker and in Node tests.
 */

import {
  ErrorCodes,
  ProfkitError,
  Registry,
  applyDropFrames,
  applyReportFilters,
  boundedFlameTree,
  defaultSampleTypeIndex,
  diff,
  findSampleType,
  formatPercentage,
  formatValue,
  isProfkitError,
  topReport,
  treeReport,
  type FlameNode,
  type Profile,
  type ReportFilterOptions,
  type Warning,
} from '@profkit/core';
import { fuchsiaSampler } from '@profkit/fuchsia-sampler';
import { gperftoolsHeapAdapter } from '@profkit/gperftools-heap';
import { pprofAdapter } from '@profkit/pprof';
import { rprofAdapter } from '@profkit/rprof';
import type { FlameLayout, LoadedInfo, PeekCall, PeekView, SandwichView, TopView, ViewOptions, ViewPart, ViewResult, ViewWarning } from './protocol.js';
import { exactPattern } from './state.js';

/**
 * The adapters the page bundles: the published platform-neutral ones (docs/browser.md). The
 * example speedscope adapter (tools/adapter-example-speedscope) is not one: it is not published,
 * and it depends on the CLI, which depends on this package.
 */
export function webRegistry(): Registry {
  return new Registry([pprofAdapter, rprofAdapter, gperftoolsHeapAdapter, fuchsiaSampler]);
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
}

const warningsOf = (ws: readonly Warning[]): ViewWarning[] => ws.map((w) => ({ code: w.code, message: w.message }));

/** A profile read by the page, ready for views. */
export class ProfileSession {
  private constructor(private readonly loaded: Loaded) {}

  get info(): LoadedInfo {
    return this.loaded.info;
  }

  /**
   * Reads `bytes` (and `baseBytes`: then the views show `profile - base`, as `profkit top FILE
   * --base BASE`). drop_frames/keep_frames are the profile's own, applied after the subtraction
   * as pprof does.
   */
  static async open(registry: Registry, profile: { name: string; bytes: Uint8Array }, base?: { name: string; bytes: Uint8Array }): Promise<ProfileSession> {
    const r = await registry.read(profile.bytes, { fileName: profile.name });
    const b = base ? await registry.read(base.bytes, { fileName: base.name }) : undefined;
    const patterns = r.profile['.profile'];
    const merged = b ? diff(b.profile, r.profile, { labelBase: false }) : r.profile;
    const viewed = await applyDropFrames(merged, patterns);
    const loaded: Loaded = {
      viewed: viewed.profile,
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

  /** The top table, the flame graph, or the peek or sandwich of function `fn`, for `options`. */
  view(options: ViewOptions, part: ViewPart, fn = ''): ViewResult {
    const p = this.loaded.viewed;
    const t = options.sampleType >= 0 && options.sampleType < p.sample_types.type.length ? options.sampleType : this.loaded.info.defaultSampleType;
    if (t < 0) throw new ProfkitError(ErrorCodes.INVALID_PROFILE, 'the profile has no sample types, so there are no values to show');
    const filters = filtersOf(options);
    const unit = p.sample_types.unit[t]!;
    const result: ViewResult = { sampleType: t, sampleTypeName: p.sample_types.type[t]!, unit, diff: this.loaded.newer !== undefined };
    if (part === 'top') result.top = topView(p, t, options, filters);
    else if (part === 'peek') result.peek = peekView(p, t, options, filters, fn);
    else if (part === 'sandwich') result.sandwich = sandwichView(p, t, filters, fn, unit);
    else if (this.loaded.newer && this.loaded.base) result.flame = diffFlameLayout(this.loaded.newer, this.loaded.base, p.sample_types.type[t]!, filters, unit);
    else result.flame = flameLayout(boundedFlameTree(applyReportFilters(p, filters), t, FLAME_MIN_WIDTH), unit);
    return result;
  }
}

function filtersOf(o: ViewOptions): ReportFilterOptions {
  const v = (s: string) => (s === '' ? undefined : s);
  return { focus: v(o.focus), ignore: v(o.ignore), hide: v(o.hide), show: v(o.show) };
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
  return { header: rep.header, total: total.toString(), outputUnit, rows };
}

/**
 * `profkit peek FILE '^fn$'` for these options (sample type, --by, filters; peek is untrimmed, so
 * --node-fraction does not apply): the printed report and the values of `--json`.
 */
export function peekView(p: Profile, t: number, options: ViewOptions, filters: ReportFilterOptions, fn: string): PeekView {
  const rep = treeReport(p, { ...filters, sampleTypeIndex: t, by: options.by, cum: options.cum, symbol: exactPattern(fn) });
  const g = rep.graph;
  const percentOf = (v: bigint, total: bigint) => (total === 0n ? 0 : Math.round((Number(v) / Number(total)) * 1e6) / 1e4);
  const call = (e: { weight: bigint; inline: boolean }, other: number, cum: bigint): PeekCall => ({
    name: g.nodes[other]!.name,
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

/** A merged tree as core's flame tree (callees sorted by name, like `flameTree`). */
function toFlameNode(root: MergedNode): FlameNode {
  const out: FlameNode = { name: root.name, value: root.value, self: root.self, children: [] };
  const work: [MergedNode, FlameNode][] = [[root, out]];
  while (work.length > 0) {
    const [m, f] = work.pop()!;
    for (const c of [...m.children.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const fc: FlameNode = { name: c.name, value: c.value, self: c.self, children: [] };
      f.children.push(fc);
      work.push([c, fc]);
    }
  }
  return out;
}

/**
 * The sandwich of `fn` (speedscope's): the samples through `fn` (core's focus filter on top of
 * the page's filters), their flame tree (core's), and from it every outermost frame named `fn`:
 * its path to the root, reversed, merged into the callers tree, and its subtree merged into the
 * callees tree. A recursive call inside `fn` stays in the callees tree and is not counted twice.
 */
export function sandwichView(p: Profile, t: number, filters: ReportFilterOptions, fn: string, unit: string): SandwichView {
  const through = applyReportFilters(applyReportFilters(p, filters), { focus: exactPattern(fn) });
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
  return { callers: flameLayout({ tree: toFlameNode(callers), elided: 0 }, unit), callees: flameLayout({ tree: toFlameNode(callees), elided: 0 }, unit) };
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

/** Lays out a flame tree in preorder: typed arrays, one entry per frame (see `FlameLayout`). */
export function flameLayout(bounded: { tree: FlameNode; elided: number }, unit: string, baseOf?: (node: FlameNode) => bigint): FlameLayout {
  const names: string[] = [];
  const nameIds = new Map<string, number>();
  const entries: { node: FlameNode; depth: number; start: number; base: bigint }[] = [];
  let maxDepth = 0;
  // Iterative: stacks can be thousands of frames deep.
  const work: { node: FlameNode; depth: number; start: number }[] = [{ node: bounded.tree, depth: 0, start: 0 }];
  while (work.length > 0) {
    const w = work.pop()!;
    entries.push({ node: w.node, depth: w.depth, start: w.start, base: baseOf ? baseOf(w.node) : 0n });
    if (w.depth > maxDepth) maxDepth = w.depth;
    let offset = w.start;
    const kids: typeof work = [];
    for (const c of w.node.children) {
      kids.push({ node: c, depth: w.depth + 1, start: offset });
      offset += Number(c.value);
    }
    for (let i = kids.length - 1; i >= 0; i--) work.push(kids[i]!);
  }
  const n = entries.length;
  const layout: FlameLayout = {
    names,
    nameIndex: new Int32Array(n),
    depth: new Int32Array(n),
    start: new Float64Array(n),
    value: new Float64Array(n),
    self: new Float64Array(n),
    maxDepth,
    elided: bounded.elided,
    unit,
    exactValue: new BigInt64Array(n),
    exactSelf: new BigInt64Array(n),
  };
  if (baseOf) {
    layout.base = new Float64Array(n);
    layout.exactBase = new BigInt64Array(n);
  }
  entries.forEach((e, i) => {
    let id = nameIds.get(e.node.name);
    if (id === undefined) {
      id = names.length;
      names.push(e.node.name);
      nameIds.set(e.node.name, id);
    }
    layout.nameIndex[i] = id;
    layout.depth[i] = e.depth;
    layout.start[i] = e.start;
    layout.value[i] = Number(e.node.value);
    layout.self[i] = Number(e.node.self);
    layout.exactValue[i] = e.node.value;
    layout.exactSelf[i] = e.node.self;
    if (layout.base) layout.base[i] = Number(e.base);
    if (layout.exactBase) layout.exactBase[i] = e.base;
  });
  return layout;
}

/**
 * The diff flame graph: widths are the new profile's values, each frame's base value is the
 * value of the frame with the same call path in the base profile (0 for a frame new in this
 * profile). Frames only in the base have no width here; the top table lists them (negative).
 */
function diffFlameLayout(newer: Profile, base: Profile, sampleType: string, filters: ReportFilterOptions, unit: string): FlameLayout {
  const tn = findSampleType(newer, sampleType);
  const tb = findSampleType(base, sampleType);
  const newTree = boundedFlameTree(applyReportFilters(newer, filters), tn, FLAME_MIN_WIDTH);
  const baseTree = boundedFlameTree(applyReportFilters(base, filters), tb, 0).tree;
  // The base value of each new frame: both trees walked together, children matched by name.
  const baseValue = new Map<FlameNode, bigint>();
  const work: [FlameNode, FlameNode][] = [[newTree.tree, baseTree]];
  while (work.length > 0) {
    const [n, b] = work.pop()!;
    baseValue.set(n, b.value);
    const baseChildren = new Map(b.children.map((c) => [c.name, c]));
    for (const c of n.children) {
      const bc = baseChildren.get(c.name);
      if (bc) work.push([c, bc]);
    }
  }
  return flameLayout(newTree, unit, (node) => baseValue.get(node) ?? 0n);
}

/** A thrown value as the `error` message: a ProfkitError keeps its code and text. */
export function errorOf(e: unknown): { code: string; message: string } {
  if (isProfkitError(e)) return { code: e.code, message: e.message };
  return { code: 'PROFKIT_E_INTERNAL', message: e instanceof Error ? e.message : String(e) };
}
