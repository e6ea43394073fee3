/**
 * pprof's report filters (driver `applyFocus`) applied the way `go tool pprof -raw` sees them:
 * in place on the profile, so that the location table stays whole. pprof's filters only drop
 * samples, cut their stacks and rewrite locations' lines (`-hide`, `-show`, `-show_from`,
 * `-prune_from`); a location no sample uses any more is still listed, under its id, and
 * `-raw` prints it. `applyReportFilters` instead builds a new profile of the used locations
 * (renumbered), which is what every other report wants.
 */

import type { InlineLinesTable, LabelsTable, LocationsTable, Profile } from '../model.js';
import { ProfileIndex } from '../views.js';
import { classifyLocations, sampleTagFilter } from './filter.js';
import { readLocations, stackRows, type OpLocation } from './internal.js';
import { pruneFromLocations } from './prune.js';
import { compileMatcher } from './regex.js';
import { given, givenNameFilters, showFromLocations, type ReportFilterOptions } from './report-filters.js';

/** The location table of `p` with each row's lines replaced by `locs[row].lines` (ids, addresses, mappings kept). */
function locationsWithLines(p: Profile, locs: OpLocation[]): { locations: LocationsTable; inline: InlineLinesTable } {
  const l = p.locations;
  const n = l.location_id.length;
  const fnId = p.functions.function_id;
  const functionId = new Uint32Array(n);
  const line = new Float64Array(n);
  const column = new Float64Array(n);
  const inlineOffsets = new Uint32Array(n + 1);
  const inl = { function_id: [] as number[], line: [] as number[], column: [] as number[] };
  for (let r = 0; r < n; r++) {
    const lines = locs[r]!.lines;
    // The innermost line is the row's own; the callers it was inlined into follow.
    if (lines.length > 0) {
      functionId[r] = fnId[lines[0]!.fn]!;
      line[r] = lines[0]!.line;
      column[r] = lines[0]!.column;
    }
    for (let k = 1; k < lines.length; k++) {
      inl.function_id.push(fnId[lines[k]!.fn]!);
      inl.line.push(lines[k]!.line);
      inl.column.push(lines[k]!.column);
    }
    inlineOffsets[r + 1] = inl.function_id.length;
  }
  return {
    locations: { ...l, function_id: functionId, line, '.column': column, '.inline_offsets': inlineOffsets },
    inline: { function_id: Uint32Array.from(inl.function_id), line: Float64Array.from(inl.line), column: Float64Array.from(inl.column) },
  };
}

/**
 * `p` after pprof's `applyFocus` with `options`, as `go tool pprof -raw` prints it: samples
 * without a stack dropped (pprof's `FilterSamplesByName` always drops them), then -focus,
 * -ignore, -hide, -show, -show_from, -tagfocus, -tagignore, -tagshow, -taghide, -prune_from in
 * pprof's order. Every location keeps its row and id, with the lines the filters left it
 * (`-hide`/`-show`/`-show_from`/`-prune_from` rewrite the lines of every location, used or not);
 * functions and mappings are unchanged. Per-sample extension columns are not carried: the
 * result is for printing (`rawReport`), not for further operations.
 */
export function filtersKeepingLocations(p: Profile, options: ReportFilterOptions): Profile {
  const index = new ProfileIndex(p);
  const locs = readLocations(p, index);
  // The location passes, in pprof's order, each on the lines the previous one left.
  const byName = classifyLocations(p, locs, givenNameFilters(options));
  const showFromMatched = given(options.showFrom) ? showFromLocations(p, locs, options.showFrom!, options.compile) : undefined;
  const tagsPass = sampleTagFilter(p, { tagFocus: options.tagFocus, tagIgnore: options.tagIgnore, compile: options.compile });
  const pruneBeneath = given(options.pruneFrom) ? pruneFromLocations(p, locs, options.pruneFrom!, options.compile) : undefined;
  const tagShow = given(options.tagShow) ? compileMatcher(options.tagShow!, 'tagShow', options.compile) : undefined;
  const tagHide = given(options.tagHide) ? compileMatcher(options.tagHide!, 'tagHide', options.compile) : undefined;
  const labelKept = (key: string) => (!tagShow || tagShow.test(key)) && !(tagHide && tagHide.test(key));

  /** The stack (location rows, innermost first) sample `i` keeps, undefined when it is dropped. */
  const stackAfterFilters = (i: number): number[] | undefined => {
    let rows = stackRows(p, index, i);
    // FilterSamplesByName: one focused location and no ignored one (without -focus every location counts as focused).
    let focused = false;
    for (const r of rows) {
      if (byName.focusOrIgnore[r] === 2) return undefined;
      if (byName.focusOrIgnore[r] === 1) focused = true;
    }
    if (!focused) return undefined;
    if (byName.anyHidden) {
      rows = rows.filter((r) => !byName.hidden[r]);
      if (rows.length === 0) return undefined;
    }
    if (showFromMatched) {
      let outermost = -1;
      for (let k = rows.length - 1; k >= 0 && outermost < 0; k--) if (showFromMatched[rows[k]!]) outermost = k;
      if (outermost < 0) return undefined;
      rows = rows.slice(0, outermost + 1);
    }
    if (tagsPass && !tagsPass(i)) return undefined;
    if (pruneBeneath) {
      const leaf = rows.findIndex((r) => pruneBeneath[r] === 1);
      if (leaf > 0) rows = rows.slice(leaf);
    }
    return rows;
  };

  const cols = p.samples['.values'];
  const locationIds = p.locations.location_id;
  const labelOffsets = p.samples['.label_offsets'];
  const srcLabels = p['.labels'];
  const kept: number[] = [];
  const offsets: number[] = [0];
  const stackIds: number[] = [];
  const labelRows: number[] = [];
  const outLabelOffsets: number[] = [0];
  for (let i = 0; i < p.samples.value.length; i++) {
    const rows = stackAfterFilters(i);
    if (!rows) continue;
    kept.push(i);
    for (const r of rows) stackIds.push(locationIds[r]!);
    offsets.push(stackIds.length);
    if (labelOffsets) {
      for (let j = labelOffsets[i]!; j < labelOffsets[i + 1]!; j++) if (labelKept(srcLabels.key[j]!)) labelRows.push(j);
      outLabelOffsets.push(labelRows.length);
    }
  }
  const values = cols.map((c) => BigInt64Array.from(kept, (i) => c[i]!));
  const labels: LabelsTable = {
    key: labelRows.map((j) => srcLabels.key[j]!),
    str: labelRows.map((j) => srcLabels.str[j]!),
    num: BigInt64Array.from(labelRows, (j) => srcLabels.num[j]!),
    num_unit: labelRows.map((j) => srcLabels.num_unit[j]!),
    is_num: Uint8Array.from(labelRows, (j) => srcLabels.is_num[j]!),
  };
  const { locations, inline } = locationsWithLines(p, locs);
  return {
    ...p,
    samples: {
      // Without sample types `value` is a column of its own (no `.values[0]` to alias).
      value: values[0] ?? BigInt64Array.from(kept, (i) => p.samples.value[i]!),
      '.values': values,
      locations: { offsets: Uint32Array.from(offsets), location_id: Uint32Array.from(stackIds) },
      ...(labelOffsets ? { '.label_offsets': Uint32Array.from(outLabelOffsets) } : {}),
    },
    locations,
    '.inline_lines': inline,
    '.labels': labels,
    '.extensions': {},
  };
}
