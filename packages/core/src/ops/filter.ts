/** `filterSamples`: pprof `FilterSamplesByName` (+ tag filters). */

import type { Profile } from '../model.js';
import { ProfileIndex, labelsOf, type LabelRow } from '../views.js';
import { rebuildSamplewise, readLocations, type OpLine, type OpLocation } from './internal.js';
import { compileMatcher, type Pattern, type PatternCompiler, type PatternMatcher } from './regex.js';
import { scaleMeasurement } from './format.js';

/**
 * A tag filter: a predicate on a sample's labels, or a string in pprof's `-tagfocus` /
 * `-tagignore` syntax (see `compileTagFilter`).
 */
export type TagFilter = string | ((labels: LabelRow[]) => boolean);

export interface FilterOptions {
  /** Keep only samples with at least one frame matching (function name, file or mapping file). */
  focus?: Pattern;
  /** Drop samples with any frame matching. */
  ignore?: Pattern;
  /** Remove matching frames from stacks (the samples stay). */
  hide?: Pattern;
  /** Keep only matching frames in stacks. */
  show?: Pattern;
  /** Keep only samples whose labels match. */
  tagFocus?: TagFilter;
  /** Drop samples whose labels match. */
  tagIgnore?: TagFilter;
  /** How the string patterns above are compiled (default `compilePattern`, JavaScript `RegExp`; see `PatternCompiler`). */
  compile?: PatternCompiler;
}

/**
 * pprof `Profile.NumLabelUnits`: per numeric label key, the first unit seen in the profile; keys
 * never given a unit get `bytes` (`alignment`, `request`) or their own name.
 */
export function numLabelUnits(p: Profile): Map<string, string> {
  const t = p['.labels'];
  const units = new Map<string, string>();
  const keys = new Set<string>();
  for (let j = 0; j < t.key.length; j++) {
    if (!t.is_num[j]) continue;
    keys.add(t.key[j]!);
    if (t.num_unit[j] !== '' && !units.has(t.key[j]!)) units.set(t.key[j]!, t.num_unit[j]!);
  }
  for (const k of keys) if (!units.has(k)) units.set(k, k === 'alignment' || k === 'request' ? 'bytes' : k);
  return units;
}

/**
 * pprof's numeric tag range (`parseTagFilterRange`): `32kb` (equal), `:64kb` (at most), `4mb:`
 * (at least), `12kb:64mb` (between, inclusive), values compared after unit scaling; undefined
 * when `filter` is not a range.
 */
function parseTagFilterRange(filter: string): ((v: bigint, unit: string) => boolean) | undefined {
  const ranges = [...filter.matchAll(/([+-]?[0-9]+)([A-Za-z]+)?/g)].slice(0, 2);
  if (ranges.length === 0) return undefined;
  const [sv1, unit] = scaleMeasurement(Number(ranges[0]![1]), ranges[0]![2] ?? '', ranges[0]![2] ?? '');
  const scaled = (v: bigint, u: string) => scaleMeasurement(Number(v), u, unit);
  const m0 = ranges[0]![0];
  if (ranges.length === 1) {
    if (filter === m0) return (v, u) => { const [x, xu] = scaled(v, u); return xu === unit && x === sv1; };
    if (filter === m0 + ':') return (v, u) => { const [x, xu] = scaled(v, u); return xu === unit && x >= sv1; };
    if (filter === ':' + m0) return (v, u) => { const [x, xu] = scaled(v, u); return xu === unit && x <= sv1; };
    return undefined;
  }
  if (filter !== m0 + ':' + ranges[1]![0]) return undefined;
  const [sv2, unit2] = scaleMeasurement(Number(ranges[1]![1]), ranges[1]![2] ?? '', unit);
  if (unit2 !== unit) return undefined;
  return (v, u) => { const [x, xu] = scaled(v, u); return xu === unit && x >= sv1 && x <= sv2; };
}

/**
 * pprof's `compileTagFilter` for `-tagfocus`/`-tagignore` strings:
 * - `key=value` restricts the test to label `key`, plain `value` tests all labels;
 * - a numeric range value (`32kb`, `:64kb`, `4mb:`, `12kb:64mb`) tests numeric labels, in the
 *   key's unit (`numLabelUnits`);
 * - otherwise `value` is a comma-separated list of regular expressions (searched anywhere): with
 *   a key, some value of that key must match one of them; without a key, every expression must
 *   match some `key:value` string label.
 */
export function compileTagFilter(filter: TagFilter, option: string, units: Map<string, string>, compile?: PatternCompiler): (labels: LabelRow[]) => boolean {
  if (typeof filter === 'function') return filter;
  const eq = filter.indexOf('=');
  const wantKey = eq >= 0 ? filter.slice(0, eq) : '';
  const value = eq >= 0 ? filter.slice(eq + 1) : filter;
  const range = parseTagFilterRange(value);
  if (range) {
    const match = (l: LabelRow) => l.num !== undefined && range(l.num, units.get(l.key) ?? '');
    return wantKey === '' ? (labels) => labels.some(match) : (labels) => labels.some((l) => l.key === wantKey && match(l));
  }
  const res = value.split(',').map((s) => compileMatcher(s, option, compile));
  if (wantKey === '') {
    return (labels) => res.every((re) => labels.some((l) => l.str !== undefined && re.test(l.key + ':' + l.str)));
  }
  return (labels) => labels.some((l) => l.key === wantKey && l.str !== undefined && res.some((re) => re.test(l.str!)));
}

/** pprof `FilterSamplesByTag`: whether sample `i` passes `tagFocus` and `tagIgnore` (undefined when neither is given). */
export function sampleTagFilter(p: Profile, options: Pick<FilterOptions, 'tagFocus' | 'tagIgnore' | 'compile'>): ((i: number) => boolean) | undefined {
  const given = (f: TagFilter | undefined) => f !== undefined && f !== '';
  if (!given(options.tagFocus) && !given(options.tagIgnore)) return undefined;
  const units = numLabelUnits(p);
  const tagFocus = given(options.tagFocus) ? compileTagFilter(options.tagFocus!, 'tagFocus', units, options.compile) : undefined;
  const tagIgnore = given(options.tagIgnore) ? compileTagFilter(options.tagIgnore!, 'tagIgnore', units, options.compile) : undefined;
  return (i) => {
    const labels = labelsOf(p, i);
    return (!tagFocus || tagFocus(labels)) && !(tagIgnore && tagIgnore(labels));
  };
}

/** Per location row: whether -focus/-ignore/-hide/-show look at it, and what they make of it. */
export interface LocationClasses {
  /** Whether any of focus/ignore/hide/show is given. */
  byName: boolean;
  /** 0 = neither, 1 = focused, 2 = ignored. */
  focusOrIgnore: Uint8Array;
  /** 1 = no line left after -hide/-show: the location leaves the stacks. */
  hidden: Uint8Array;
  anyHidden: boolean;
}

/**
 * The location side of pprof `FilterSamplesByName`: classifies every row of `locs` as focused or
 * ignored (on its lines before -hide/-show) and rewrites its lines for -hide/-show in place (see
 * `filterSamples` for the rules). Shared by `filterSamples` and the reports' per-stack filters.
 */
export function classifyLocations(p: Profile, locs: OpLocation[], options: Pick<FilterOptions, 'focus' | 'ignore' | 'hide' | 'show' | 'compile'>): LocationClasses {
  const focus = options.focus === undefined ? undefined : compileMatcher(options.focus, 'focus', options.compile);
  const ignore = options.ignore === undefined ? undefined : compileMatcher(options.ignore, 'ignore', options.compile);
  const hide = options.hide === undefined ? undefined : compileMatcher(options.hide, 'hide', options.compile);
  const show = options.show === undefined ? undefined : compileMatcher(options.show, 'show', options.compile);
  const f = p.functions;
  const mapFile = p['.mappings'].filename;
  const lineMatches = (ln: OpLine, re: PatternMatcher) => re.test(f.name[ln.fn]!) || re.test(f.filename[ln.fn]!);
  const mappingMatches = (loc: OpLocation, re: PatternMatcher) => loc.mapping >= 0 && re.test(mapFile[loc.mapping]!);
  const matches = (loc: OpLocation, re: PatternMatcher) => loc.lines.some((ln) => lineMatches(ln, re)) || mappingMatches(loc, re);
  const focusOrIgnore = new Uint8Array(locs.length);
  const hidden = new Uint8Array(locs.length);
  let anyHidden = false;
  for (let r = 0; r < locs.length; r++) {
    let loc = locs[r]!;
    if (ignore && matches(loc, ignore)) focusOrIgnore[r] = 2;
    else if (!focus || matches(loc, focus)) focusOrIgnore[r] = 1;
    if (hide && matches(loc, hide)) {
      loc = { ...loc, lines: mappingMatches(loc, hide) ? [] : loc.lines.filter((ln) => !lineMatches(ln, hide)) };
      if (loc.lines.length === 0) hidden[r] = 1;
    }
    if (show) {
      loc = { ...loc, lines: mappingMatches(loc, show) ? loc.lines : loc.lines.filter((ln) => lineMatches(ln, show)) };
      if (loc.lines.length === 0) hidden[r] = 1;
    }
    if (hidden[r]) anyHidden = true;
    locs[r] = loc;
  }
  return { byName: !!(focus || ignore || hide || show), focusOrIgnore, hidden, anyHidden };
}

/**
 * pprof `FilterSamplesByName` on function names, file names and mapping files (regular
 * expressions searched anywhere in the text):
 * - a sample is kept when some frame matches `focus` (or `focus` is absent) and no frame
 *   matches `ignore`; a location is "ignored" when any of its lines matches, and counts as
 *   "focused" only when not ignored;
 * - `hide` removes the matching lines from every location (a location whose mapping file
 *   matches loses all lines) and `show` keeps only the matching lines (all lines when the
 *   mapping file matches); locations left without lines are removed from stacks, and samples
 *   left without locations are dropped;
 * - as in pprof, when any of focus/ignore/hide/show is given, samples with an empty stack are
 *   dropped (they have no focused frame);
 * - `tagFocus` / `tagIgnore` then keep / drop samples by label (see `TagFilter`).
 * Samples are only subset, so per-sample extension columns are kept.
 */
export function filterSamples(p: Profile, options: FilterOptions): Profile {
  const tagsPass = sampleTagFilter(p, options);
  const index = new ProfileIndex(p);
  const locs = readLocations(p, index);
  const { byName, focusOrIgnore, hidden, anyHidden } = classifyLocations(p, locs, options);
  return rebuildSamplewise(p, index, locs, (i, rows) => {
    if (byName) {
      let focused = false;
      for (const r of rows) {
        if (focusOrIgnore[r] === 2) return undefined;
        if (focusOrIgnore[r] === 1) focused = true;
      }
      if (!focused) return undefined;
    }
    if (tagsPass && !tagsPass(i)) return undefined;
    if (!byName || !anyHidden) return rows;
    const kept = rows.filter((r) => !hidden[r]);
    return kept.length === 0 ? undefined : kept;
  });
}
