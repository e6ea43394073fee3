/**
 * pprof's report graph with its full node identity (`graph.NodeInfo`: name, address, file, line,
 * start line, binary), at the granularities the source, disassembly, callgrind and topproto
 * reports use. `callGraph` (report.ts) keeps only a node's printable name; these reports need the
 * parts (a listing groups nodes by function and file, callgrind prints addresses and binaries).
 * Flat, cum and call weights come from the same engine (`buildNodes` over the stack table), so
 * recursion and inlined frames are counted as in every other report.
 */

import type { Profile } from '../model.js';
import { EMPTY_NAME_PLACEHOLDER } from '../pprof-text.js';
import { ProfileIndex, defaultSampleTypeIndex } from '../views.js';
import { abs, baseName, cleanPath, compareGoStrings, readLocations, type OpLine, type OpLocation } from './internal.js';
import { buildNodes, checkSampleType, graphInputOf, reportTotal, type BuiltGraph, type GraphInput } from './report.js';
import { StringKeyedMap, StringKeys } from '../string-keys.js';

/** pprof `graph.NodeInfo` (Go 1.19: no column). */
export interface GoNodeInfo {
  name: string;
  origName: string;
  address: bigint;
  file: string;
  startLine: number;
  lineno: number;
  objfile: string;
}

/**
 * pprof `-granularity`, as `go tool pprof` sets it per report: `addresses` (disasm, callgrind),
 * `lines` (list), `functions` (top, topproto).
 */
export type GoGranularity = 'addresses' | 'lines' | 'functions';

export interface GoGraphOptions {
  sampleTypeIndex?: number;
  granularity: GoGranularity;
  /** Keep inlined frames as nodes (default true; pprof `-noinlines` keeps only a location's outermost line). */
  inlines?: boolean;
  /** Keep the binary and start line in every node (pprof's `ObjNames`: list, disasm, callgrind). */
  objNames?: boolean;
  /** pprof `-trim_path` (applied to function file names as pprof's `newGraph` does). */
  trimPath?: string;
  /** pprof `-source_path` as given ('' when not: the trim heuristic then has no directory to look for). */
  sourcePath?: string;
  /** Drop nodes whose |cum| is below this fraction of the flat sum, rebuilding without them (pprof `-nodefraction`; default 0). */
  nodeFraction?: number;
  /** Collect the calls between nodes (default false). */
  calls?: boolean;
  /** The report total (default pprof's `computeTotal` of `p`; pprof takes it before -focus and the other filters). */
  total?: bigint;
}

export interface GoGraphNode {
  info: GoNodeInfo;
  flat: bigint;
  cum: bigint;
  /** Equal for nodes of the same function (pprof `Node.Function`: the info without address and line). */
  functionKey: string;
}

export interface GoGraphCall {
  /** Indices in `GoGraph.nodes`. */
  src: number;
  dst: number;
  weight: bigint;
  inline: boolean;
}

export interface GoGraph {
  /** The nodes with a nonzero flat or cum, in the order the locations first create them. */
  nodes: GoGraphNode[];
  /** With `calls`: the calls between nodes, in first-seen order. */
  calls: GoGraphCall[];
  /** pprof's report total (`computeTotal`). */
  total: bigint;
  sampleTypeIndex: number;
  /** The sample type's unit, lower case as pprof's reports take it. */
  unit: string;
}


/** Go `filepath.SplitList` (':'-separated; '' is no entry). */
function splitList(list: string): string[] {
  return list === '' ? [] : list.split(':');
}

/**
 * pprof's `trimPath`: without `trim`, the part of `path` up to the base name of a search-path
 * directory is cut (`/remote/proj/foo/bar.c` with source path `/local/proj` gives `foo/bar.c`);
 * then the first `trim` prefix (':'-separated) and `/proc/self/cwd/` are removed.
 */
export function goTrimPath(path: string, trim: string, searchPath: string): string {
  if (trim === '') {
    for (const dir of splitList(searchPath)) {
      const want = '/' + baseName(dir) + '/';
      const found = path.indexOf(want);
      if (found !== -1) return path.slice(found + want.length);
    }
  }
  for (let prefix of [...splitList(trim), '/proc/self/cwd/./', '/proc/self/cwd/']) {
    if (!prefix.endsWith('/')) prefix += '/';
    if (path.startsWith(prefix)) return path.slice(prefix.length);
  }
  return path;
}

/** pprof `NodeInfo.NameComponents`: the parts of a node's name (the graph labels put them on lines). */
export function nameComponents(i: Pick<GoNodeInfo, 'name' | 'address' | 'file' | 'lineno' | 'objfile'>): string[] {
  const parts: string[] = [];
  if (i.address !== 0n) parts.push(i.address.toString(16).padStart(16, '0'));
  if (i.name !== '') parts.push(i.name);
  if (i.lineno !== 0) parts.push(`${i.file}:${i.lineno}`);
  else if (i.file !== '') parts.push(i.file);
  else if (i.name !== '') {
    // the function name says it all
  } else if (i.objfile !== '') parts.push(`[${baseName(i.objfile)}]`);
  else parts.push('<unknown>');
  return parts;
}

/** pprof `NodeInfo.PrintableName`. */
export function printableName(i: GoNodeInfo): string {
  return nameComponents(i).join(' ');
}

/** `fmt.Sprint(NodeInfo)`: pprof's last tie-break between nodes. */
function infoString(i: GoNodeInfo): string {
  return `{${i.name} ${i.origName} ${i.address} ${i.file} ${i.startLine} ${i.lineno} ${i.objfile}}`;
}

/** Larger |value| first. */
export const byAbsDescending = (x: bigint, y: bigint): number => (abs(x) > abs(y) ? -1 : abs(x) < abs(y) ? 1 : 0);

/** pprof `FlatNameOrder` (or `CumNameOrder` with `cum`), the order of the text reports' tables. */
export function sortGoNodes(nodes: GoGraphNode[], cum = false): GoGraphNode[] {
  const names = new Map(nodes.map((n) => [n, printableName(n.info)]));
  const first = cum ? (n: GoGraphNode) => n.cum : (n: GoGraphNode) => n.flat;
  const second = cum ? (n: GoGraphNode) => n.flat : (n: GoGraphNode) => n.cum;
  return nodes.sort(
    (a, b) =>
      byAbsDescending(first(a), first(b)) ||
      compareGoStrings(names.get(a)!, names.get(b)!) ||
      byAbsDescending(second(a), second(b)) ||
      compareGoStrings(infoString(a.info), infoString(b.info)),
  );
}

/** The key of a node's whole function: its info without address and line (pprof `Node.Function`). */
function functionKeyOf(i: GoNodeInfo, keys: StringKeys): string {
  return JSON.stringify([keys.of(i.name), keys.of(i.origName), keys.of(i.file), i.startLine, keys.of(i.objfile)]);
}

/**
 * The node infos of every location row, innermost line first (pprof `CreateNodes` after the
 * granularity's `Aggregate`), and the table of distinct infos.
 */
function nodeInfos(p: Profile, locs: OpLocation[], o: GoGraphOptions): { locNodes: number[][]; infos: GoNodeInfo[] } {
  const f = p.functions;
  const mapFile = p['.mappings'].filename;
  const keys = new Map<string, number>();
  const infos: GoNodeInfo[] = [];
  // Keyed through StringKeyedMap: file names are the input's (a Map hashes long ones by length alone).
  const trimmed = new StringKeyedMap<string>();
  const fileOf = (name: string): string => {
    let t = trimmed.get(name);
    if (t === undefined) {
      t = goTrimPath(name, o.trimPath ?? '', o.sourcePath ?? '');
      t = t === '' ? '' : cleanPath(t);
      trimmed.set(name, t);
    }
    return t;
  };
  const withAddress = o.granularity === 'addresses';
  const withLine = o.granularity !== 'functions';
  // Names and files keyed through StringKeys: many nodes can share one long name.
  const stringKeys = new StringKeys();
  const intern = (info: GoNodeInfo): number => {
    const key = JSON.stringify([stringKeys.of(info.name), stringKeys.of(info.origName), String(info.address), stringKeys.of(info.file), info.startLine, info.lineno, stringKeys.of(info.objfile)]);
    let id = keys.get(key);
    if (id === undefined) {
      id = infos.length;
      infos.push(info);
      keys.set(key, id);
    }
    return id;
  };
  const nodeOf = (loc: OpLocation, ln: OpLine | undefined): number => {
    const objfile = loc.mapping >= 0 ? mapFile[loc.mapping]! : '';
    const address = withAddress ? loc.address : 0n;
    if (!ln) return intern({ name: '', origName: '', address, file: '', startLine: 0, lineno: 0, objfile });
    const name = f.name[ln.fn] === EMPTY_NAME_PLACEHOLDER ? '' : f.name[ln.fn]!;
    const file = withLine && f.filename[ln.fn] !== '' ? fileOf(f.filename[ln.fn]!) : '';
    const keepObj = o.objNames === true || name === '';
    return intern({
      name,
      origName: '',
      address,
      file,
      startLine: keepObj ? Number(f.start_line[ln.fn]!) : 0,
      lineno: withLine ? ln.line : 0,
      objfile: keepObj ? objfile : '',
    });
  };
  const inlines = o.inlines ?? true;
  const locNodes = locs.map((loc) => {
    let lines = loc.lines;
    if (!inlines && lines.length > 1) lines = lines.slice(lines.length - 1);
    return lines.length === 0 ? [nodeOf(loc, undefined)] : lines.map((ln) => nodeOf(loc, ln));
  });
  return { locNodes, infos };
}

/** pprof `newGraph` (with `newTrimmedGraph`'s node-fraction cut when asked) at a granularity. */
export function goGraph(p: Profile, options: GoGraphOptions): GoGraph {
  const t = options.sampleTypeIndex ?? defaultSampleTypeIndex(p);
  checkSampleType(p, t);
  const index = new ProfileIndex(p);
  const { locNodes, infos } = nodeInfos(p, readLocations(p, index), options);
  const input: GraphInput = graphInputOf(p, index, t, locNodes, infos.length);
  const live = (b: BuiltGraph) => infos.map((_, i) => i).filter((i) => b.flat[i] !== 0n || b.cum[i] !== 0n);
  // Calls are collected in the same pass (a pass costs as much as the rest of the report).
  const callees = options.calls ? new Uint8Array(infos.length).fill(1) : undefined;
  let built = buildNodes(input, undefined, callees);
  let ids = live(built);
  const fraction = options.nodeFraction ?? 0;
  if (fraction > 0) {
    let flatSum = 0n;
    for (const i of ids) flatSum += built.flat[i]!;
    const cutoff = abs(BigInt(Math.trunc(Number(flatSum) * fraction)));
    const above = ids.filter((i) => abs(built.cum[i]!) >= cutoff);
    if (cutoff > 0n && above.length !== ids.length) {
      const kept = new Uint8Array(infos.length);
      for (const i of above) kept[i] = 1;
      built = buildNodes(input, kept, callees);
      ids = live(built);
    }
  }
  const position = new Int32Array(infos.length).fill(-1);
  ids.forEach((id, k) => (position[id] = k));
  const functionKeys = new StringKeys();
  const nodes = ids.map((id) => ({ info: infos[id]!, flat: built.flat[id]!, cum: built.cum[id]!, functionKey: functionKeyOf(infos[id]!, functionKeys) }));
  const calls: GoGraphCall[] = [];
  if (options.calls) {
    for (let e = 0; e < built.src.length; e++) {
      const src = position[built.src[e]!]!;
      const dst = position[built.dst[e]!]!;
      if (src >= 0 && dst >= 0) calls.push({ src, dst, weight: BigInt(built.weight[e]!), inline: built.inline[e]! });
    }
  }
  return { nodes, calls, total: options.total ?? reportTotal(p, t), sampleTypeIndex: t, unit: (p.sample_types.unit[t] ?? '').toLowerCase() };
}
