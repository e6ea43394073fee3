/**
 * Source maps: generated JavaScript positions → original sources (TypeScript, bundled modules…),
 * platform-neutral. Getting a script's map (reading files) is the caller's `SourceMapLoader`;
 * `@profkit/v8/node`'s `nodeSourceMapLoader` reads them from disk. The mapping itself is
 * `@jridgewell/trace-mapping`'s.
 *
 * Every location whose function's file has a map is remapped: its line and column, and its
 * function becomes one with the original file and start line (name kept: V8's names are the
 * runtime ones, and tsc keeps them). A position the map does not cover keeps its generated file,
 * line and column. Lines are 1-based and columns 1-based in profkit; trace-mapping wants
 * 0-based columns, so a column c is looked up as c − 1 (an unknown column as 0).
 */

import { GREATEST_LOWER_BOUND, LEAST_UPPER_BOUND, TraceMap, originalPositionFor, type SourceMapInput } from '@jridgewell/trace-mapping';
import type { Profile, Warning } from '@profkit/core';

export interface LoadedSourceMap {
  /** The map (parsed JSON or its text). */
  map: SourceMapInput;
  /** Where the map is (URL or path): its `sources` are resolved against it. */
  mapUrl: string;
  /** How it was found, for reports: `inline`, or the path/URL of the `.map` file. */
  origin: string;
}

/**
 * Finds the map of a script (its URL or path as the profile names it): `undefined` when it has
 * none. Throwing a `ProfkitError` reports a broken map as a warning for that script.
 */
export type SourceMapLoader = (scriptUrl: string) => Promise<LoadedSourceMap | undefined>;

export interface ScriptReport {
  script: string;
  status: 'mapped' | 'no-map' | 'bad-map';
  origin?: string;
  /** Locations moved to original positions. */
  mapped: number;
  /** Locations of the script the map does not cover. */
  unmapped: number;
  message?: string;
}

export interface SourceMapsResult {
  profile: Profile;
  warnings: Warning[];
  scripts: ScriptReport[];
}

interface Original {
  source: string;
  line: number;
  /** 1-based, 0 = unknown. */
  column: number;
}

/** Looks a 1-based line and column (0 = unknown) up in a map: the nearest mapping at or before it, else after it. */
function lookUp(map: TraceMap, line: number, column: number): Original | undefined {
  if (line <= 0) return undefined;
  const needle = { line, column: column > 0 ? column - 1 : 0 };
  let m = originalPositionFor(map, { ...needle, bias: GREATEST_LOWER_BOUND });
  if (m.source === null) m = originalPositionFor(map, { ...needle, bias: LEAST_UPPER_BOUND });
  if (m.source === null || m.line === null) return undefined;
  return { source: m.source, line: m.line, column: m.column === null ? 0 : m.column + 1 };
}

/** The last `//# sourceMappingURL=` (or `//@`) comment of a script, or undefined. */
export function parseSourceMappingUrl(scriptText: string): string | undefined {
  const re = /\/\/[#@][ \t]+sourceMappingURL=([^\s'"]+)[ \t]*$/gm;
  let found: string | undefined;
  for (let m = re.exec(scriptText); m; m = re.exec(scriptText)) found = m[1];
  return found;
}

/** Applies the maps `load` finds to every script of `profile`; the input profile is not changed. */
export async function applySourceMaps(profile: Profile, load: SourceMapLoader, options: { signal?: AbortSignal } = {}): Promise<SourceMapsResult> {
  const warnings: Warning[] = [];
  const f = profile.functions;
  const maps = new Map<string, TraceMap | undefined>();
  const reports = new Map<string, ScriptReport>();
  for (const script of new Set(f.filename)) {
    if (script === '') continue;
    options.signal?.throwIfAborted();
    try {
      const loaded = await load(script);
      if (!loaded) {
        maps.set(script, undefined);
        reports.set(script, { script, status: 'no-map', mapped: 0, unmapped: 0 });
        continue;
      }
      maps.set(script, new TraceMap(loaded.map, loaded.mapUrl));
      reports.set(script, { script, status: 'mapped', origin: loaded.origin, mapped: 0, unmapped: 0 });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      maps.set(script, undefined);
      reports.set(script, { script, status: 'bad-map', mapped: 0, unmapped: 0, message });
      warnings.push({ code: 'PROFKIT_W_V8_SOURCE_MAP', message: `${script}: its source map could not be used: ${message}`, detail: { file: script } });
    }
  }

  // New functions (original file, start line) are appended after the existing ones; functions
  // no location uses any more are dropped at the end.
  const fnRow = new Map<number, number>();
  for (let r = 0; r < f.function_id.length; r++) fnRow.set(f.function_id[r]!, r);
  const name = f.name.slice();
  const systemName = f.system_name.slice();
  const filename = f.filename.slice();
  const startLine = Array.from(f.start_line);
  const functionId = Array.from(f.function_id);
  let nextId = functionId.reduce((a, b) => Math.max(a, b), 0) + 1;
  const newFunctions = new Map<string, number>();
  const remapFunction = (id: number, original: Original): number => {
    const r = fnRow.get(id)!;
    const start = f.start_line[r]! > 0 ? original.line : 0;
    const key = `${r}\u0000${original.source}\u0000${start}`;
    let nid = newFunctions.get(key);
    if (nid === undefined) {
      nid = nextId++;
      newFunctions.set(key, nid);
      functionId.push(nid);
      name.push(f.name[r]!);
      systemName.push(f.system_name[r]!);
      filename.push(original.source);
      startLine.push(start);
    }
    return nid;
  };
  /** Maps one (function, line, column): the new function id, line and column, or undefined. */
  const remap = (fid: number, line: number, column: number): [number, number, number] | undefined => {
    const r = fnRow.get(fid);
    if (r === undefined) return undefined;
    const map = maps.get(f.filename[r]!);
    if (!map) return undefined;
    const report = reports.get(f.filename[r]!)!;
    // A V8 frame's position is its function's start; a pprof-style line inside the function
    // is looked up on its own, and the function's start line with column 0.
    const start = f.start_line[r]!;
    const here = lookUp(map, line > 0 ? line : start, line > 0 || start === 0 ? column : 0);
    if (!here) {
      report.unmapped++;
      return undefined;
    }
    const startOriginal = start > 0 && start !== line ? lookUp(map, start, 0) : here;
    report.mapped++;
    const nid = remapFunction(fid, { source: here.source, line: startOriginal && startOriginal.source === here.source ? startOriginal.line : here.line, column: 0 });
    return [nid, line > 0 ? here.line : 0, line > 0 ? here.column : 0];
  };

  const l = profile.locations;
  const locFn = l.function_id.slice();
  const locLine = l.line.slice();
  const locColumn = l['.column'].slice();
  for (let i = 0; i < locFn.length; i++) {
    const m = locFn[i] ? remap(locFn[i]!, locLine[i]!, locColumn[i]!) : undefined;
    if (m) [locFn[i], locLine[i], locColumn[i]] = m;
  }
  const inl = profile['.inline_lines'];
  const inlFn = inl.function_id.slice();
  const inlLine = inl.line.slice();
  const inlColumn = inl.column.slice();
  for (let i = 0; i < inlFn.length; i++) {
    const m = remap(inlFn[i]!, inlLine[i]!, inlColumn[i]!);
    if (m) [inlFn[i], inlLine[i], inlColumn[i]] = m;
  }

  const used = new Set<number>([...locFn, ...inlFn]);
  const keep: number[] = [];
  for (let r = 0; r < functionId.length; r++) if (used.has(functionId[r]!) || r < f.function_id.length && !maps.get(f.filename[r]!)) keep.push(r);
  const functions = {
    function_id: Uint32Array.from(keep, (r) => functionId[r]!),
    name: keep.map((r) => name[r]!),
    system_name: keep.map((r) => systemName[r]!),
    filename: keep.map((r) => filename[r]!),
    start_line: Float64Array.from(keep, (r) => startLine[r]!),
  };
  const out: Profile = {
    ...profile,
    functions,
    locations: { ...l, function_id: locFn, line: locLine, '.column': locColumn },
    '.inline_lines': { function_id: inlFn, line: inlLine, column: inlColumn },
  };
  return { profile: out, warnings, scripts: [...reports.values()] };
}
