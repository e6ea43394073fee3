/** `filterSamples`: pprof `FilterSamplesByName` (+ tag filters). */

import type { Profile } from '../model.js';
import { ProfileIndex, labelsOf, type LabelRow } from '../views.js';
import { rebuildSamplewise, readLocations, type OpLine, type OpLocation } from './internal.js';
import { compilePattern, type Pattern } from './regex.js';

/**
 * A tag filter: a predicate on a sample's labels, or a string `key=re1,re2` (the sample has a
 * string label `key` whose value matches one of the regular expressions, searched anywhere) or
 * `re1,re2` (some string label value matches one of them).
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
}

function compileTagFilter(f: TagFilter, option: string): (labels: LabelRow[]) => boolean {
  if (typeof f === 'function') return f;
  const eq = f.indexOf('=');
  const key = eq >= 0 ? f.slice(0, eq) : undefined;
  const res = (eq >= 0 ? f.slice(eq + 1) : f).split(',').map((s) => compilePattern(s, option));
  return (labels) => labels.some((l) => l.str !== undefined && (key === undefined || l.key === key) && res.some((re) => re.test(l.str!)));
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
  const focus = options.focus === undefined ? undefined : compilePattern(options.focus, 'focus');
  const ignore = options.ignore === undefined ? undefined : compilePattern(options.ignore, 'ignore');
  const hide = options.hide === undefined ? undefined : compilePattern(options.hide, 'hide');
  const show = options.show === undefined ? undefined : compilePattern(options.show, 'show');
  const tagFocus = options.tagFocus === undefined ? undefined : compileTagFilter(options.tagFocus, 'tagFocus');
  const tagIgnore = options.tagIgnore === undefined ? undefined : compileTagFilter(options.tagIgnore, 'tagIgnore');
  const index = new ProfileIndex(p);
  const locs = readLocations(p, index);
  const f = p.functions;
  const mapFile = p['.mappings'].filename;
  const lineMatches = (ln: OpLine, re: RegExp) => re.test(f.name[ln.fn]!) || re.test(f.filename[ln.fn]!);
  const mappingMatches = (loc: OpLocation, re: RegExp) => loc.mapping >= 0 && re.test(mapFile[loc.mapping]!);
  const matches = (loc: OpLocation, re: RegExp) => loc.lines.some((ln) => lineMatches(ln, re)) || mappingMatches(loc, re);

  // 0 = neither, 1 = focused, 2 = ignored
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
  const byName = focus || ignore || hide || show;
  return rebuildSamplewise(p, index, locs, (i, rows) => {
    if (byName) {
      let focused = false;
      for (const r of rows) {
        if (focusOrIgnore[r] === 2) return undefined;
        if (focusOrIgnore[r] === 1) focused = true;
      }
      if (!focused) return undefined;
    }
    if (tagFocus || tagIgnore) {
      const labels = labelsOf(p, i);
      if (tagFocus && !tagFocus(labels)) return undefined;
      if (tagIgnore && tagIgnore(labels)) return undefined;
    }
    if (!byName || !anyHidden) return rows;
    const kept = rows.filter((r) => !hidden[r]);
    return kept.length === 0 ? undefined : kept;
  });
}
