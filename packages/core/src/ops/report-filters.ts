/**
 * The filters `go tool pprof` applies before every report (driver `applyFocus`): by frame name
 * (`-focus`, `-ignore`, `-hide`, `-show`), `-show_from`, by label (`-tagfocus`, `-tagignore`),
 * label keys (`-tagshow`, `-taghide`), then `-prune_from`; and the "Active filters" lines the
 * text reports print for them.
 */

import type { Profile } from '../model.js';
import { ProfileIndex } from '../views.js';
import { filterSamples, type FilterOptions, type TagFilter } from './filter.js';
import { labelInputs, rebuildSamplewise, readLocations, type OpLocation } from './internal.js';
import { pruneFrom } from './prune.js';
import { compileMatcher, type Pattern, type PatternCompiler } from './regex.js';

export interface ReportFilterOptions {
  /** Keep only samples with a frame matching (pprof `-focus`). */
  focus?: Pattern;
  /** Drop samples with a frame matching (pprof `-ignore`). */
  ignore?: Pattern;
  /** Remove matching frames (pprof `-hide`). */
  hide?: Pattern;
  /** Keep only matching frames (pprof `-show`). */
  show?: Pattern;
  /** Drop the frames above the outermost matching one (pprof `-show_from`). */
  showFrom?: Pattern;
  /** Keep only samples whose labels match (pprof `-tagfocus`). */
  tagFocus?: TagFilter;
  /** Drop samples whose labels match (pprof `-tagignore`). */
  tagIgnore?: TagFilter;
  /** Keep only the label keys matching (pprof `-tagshow`). */
  tagShow?: Pattern;
  /** Remove the label keys matching (pprof `-taghide`). */
  tagHide?: Pattern;
  /** Cut stacks below the first frame from the leaf matching (pprof `-prune_from`). */
  pruneFrom?: Pattern;
  /**
   * How the string patterns above (the tag filters' too) are compiled: default `compilePattern`
   * (JavaScript `RegExp`); `goPatternCompiler(re2js)` for Go's RE2 in linear time (profkit web).
   */
  compile?: PatternCompiler;
}

/** Whether an option was given: set, and not the empty string (pprof's unset flag). */
export const given = (v: unknown): boolean => v !== undefined && v !== '';

/**
 * The by-name filters (focus, ignore, hide, show) of `options` that are given, with its `compile`:
 * what `classifyLocations` takes, which compiles any string it is handed (`''` matches everything).
 */
export function givenNameFilters(options: ReportFilterOptions): Pick<FilterOptions, 'focus' | 'ignore' | 'hide' | 'show' | 'compile'> {
  const ifGiven = (v: Pattern | undefined) => (given(v) ? v : undefined);
  return { focus: ifGiven(options.focus), ignore: ifGiven(options.ignore), hide: ifGiven(options.hide), show: ifGiven(options.show), compile: options.compile };
}

/**
 * pprof `Profile.ShowFrom`: in every location, the lines above the outermost line whose function
 * name or file matches are removed (a location whose mapping file matches keeps its lines); in
 * every sample, the frames above the outermost matching location are removed; samples without
 * one are dropped.
 */
export function showFrom(p: Profile, pattern: Pattern, compile?: PatternCompiler): Profile {
  const index = new ProfileIndex(p);
  const locs = readLocations(p, index);
  const matched = showFromLocations(p, locs, pattern, compile);
  return rebuildSamplewise(p, index, locs, (_i, rows) => {
    for (let i = rows.length - 1; i >= 0; i--) if (matched[rows[i]!]) return rows.slice(0, i + 1);
    return undefined;
  });
}

/**
 * The location side of `showFrom`: marks the rows of `locs` that match (by mapping file, or by a
 * line's function name or file) and cuts their lines above the outermost matching line, in place.
 */
export function showFromLocations(p: Profile, locs: OpLocation[], pattern: Pattern, compile?: PatternCompiler): Uint8Array {
  const re = compileMatcher(pattern, 'showFrom', compile);
  const f = p.functions;
  const mapFile = p['.mappings'].filename;
  const matched = new Uint8Array(locs.length);
  for (let r = 0; r < locs.length; r++) {
    const loc = locs[r]!;
    if (loc.mapping >= 0 && re.test(mapFile[loc.mapping]!)) {
      matched[r] = 1;
      continue;
    }
    for (let i = loc.lines.length - 1; i >= 0; i--) {
      const fn = loc.lines[i]!.fn;
      if (re.test(f.name[fn]!) || re.test(f.filename[fn]!)) {
        matched[r] = 1;
        locs[r] = { ...loc, lines: loc.lines.slice(0, i + 1) };
        break;
      }
    }
  }
  return matched;
}

/**
 * `p` without its samples whose stack is empty: pprof's `FilterSamplesByName` drops them before
 * every report, filters or not (they have no frame to be focused on).
 */
export function withoutEmptyStacks(p: Profile): Profile {
  const { offsets } = p.samples.locations;
  let any = false;
  for (let i = 0; i + 1 < offsets.length; i++) if (offsets[i] === offsets[i + 1]) any = true;
  if (!any) return p;
  const index = new ProfileIndex(p);
  return rebuildSamplewise(p, index, undefined, (_i, rows) => (rows.length === 0 ? undefined : rows));
}

/** pprof `Profile.FilterTagsByName`: removes the label keys not matching `show` or matching `hide`. */
export function filterTagsByName(p: Profile, show: Pattern | undefined, hide: Pattern | undefined, compile?: PatternCompiler): Profile {
  const showRe = show === undefined ? undefined : compileMatcher(show, 'tagShow', compile);
  const hideRe = hide === undefined ? undefined : compileMatcher(hide, 'tagHide', compile);
  const removed = (key: string) => (showRe !== undefined && !showRe.test(key)) || (hideRe !== undefined && hideRe.test(key));
  const index = new ProfileIndex(p);
  return rebuildSamplewise(p, index, undefined, (_i, rows) => rows, {
    labelsFor: (i) => labelInputs(p, i).filter((l) => !removed(l.key)),
  });
}

/** Whether a sample of `p` has labels at all (label filters on a profile without any change nothing). */
function hasLabels(p: Profile): boolean {
  return p['.labels'].key.length > 0;
}

/** The filters of `options` applied to `p` in pprof's order (driver `applyFocus`). */
export function applyReportFilters(p: Profile, options: ReportFilterOptions): Profile {
  let q = p;
  const byName = { focus: options.focus, ignore: options.ignore, hide: options.hide, show: options.show, tagFocus: options.tagFocus, tagIgnore: options.tagIgnore };
  if (Object.values(byName).some(given)) {
    q = filterSamples(q, { ...Object.fromEntries(Object.entries(byName).filter(([, v]) => given(v))), compile: options.compile });
  }
  // Label filters commute with -show_from (one looks at labels, the other at frames), so the
  // one filterSamples pass above is pprof's FilterSamplesByName, ShowFrom, FilterSamplesByTag.
  if (given(options.showFrom)) q = showFrom(q, options.showFrom!, options.compile);
  if ((given(options.tagShow) || given(options.tagHide)) && hasLabels(q)) {
    q = filterTagsByName(q, given(options.tagShow) ? options.tagShow : undefined, given(options.tagHide) ? options.tagHide : undefined, options.compile);
  }
  if (given(options.pruneFrom)) q = pruneFrom(q, options.pruneFrom!, options.compile);
  return q;
}

/** pprof's "Active filters" entries (driver `reportOptions`): `name=value` in pprof's order; -prune_from is not listed. */
export function activeFilterLabels(options: ReportFilterOptions): string[] {
  const src = (v: unknown) => (v instanceof RegExp ? v.source : String(v));
  const out: string[] = [];
  const add = (name: string, v: unknown) => {
    if (given(v) && typeof v !== 'function') out.push(`${name}=${src(v)}`);
  };
  add('focus', options.focus);
  add('ignore', options.ignore);
  add('hide', options.hide);
  add('show', options.show);
  add('show_from', options.showFrom);
  add('tagfocus', options.tagFocus);
  add('tagignore', options.tagIgnore);
  add('tagshow', options.tagShow);
  add('taghide', options.tagHide);
  return out;
}
