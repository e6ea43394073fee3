/** `aggregateStacks` and `aggregateBy` (pprof `Aggregate`). */

import type { Profile } from '../model.js';
import { ProfileIndex, sampleTypes } from '../views.js';
import { Rebuilder, SampleCombiner, copyFacts, labelInputs, rebuildSamplewise, readLocations, sampleTypeNames } from './internal.js';

/**
 * Merges samples whose stacks (compared by meaning: same frames, addresses and mappings) and
 * labels are identical, summing their values; the merged sample takes the place and labels of
 * its first occurrence. Unlike `compact`, samples whose values are all zero are kept. Per-sample
 * extension columns are kept only when no two samples were merged.
 */
export function aggregateStacks(p: Profile): Profile {
  const index = new ProfileIndex(p);
  const rb = new Rebuilder({ sampleTypes: sampleTypes(p), facts: copyFacts(p['.profile']), mergeMappings: false });
  rb.addSource(p, index);
  if (p['.mappings'].mapping_id.length > 0) rb.mapping(0, 0);
  const cols = p.samples['.values'];
  const combiner = new SampleCombiner(cols.length, sampleTypeNames(p));
  const buf: number[] = [];
  for (let i = 0; i < p.samples.value.length; i++) {
    const len = rb.sampleStack(0, i, buf);
    combiner.add(buf, len, (t) => cols[t]![i]!, labelInputs(p, i), 0, i);
  }
  combiner.flush(rb);
  return rb.build();
}

/** Granularity of `aggregateBy` (pprof's `-functions`, `-files`, `-lines`, `-addresses`). */
export type Granularity = 'function' | 'file' | 'line' | 'address';

export interface AggregateOptions {
  /** Keep inline frames (default true, pprof's default); false keeps only each location's outermost line. */
  inline?: boolean;
  /** Keep source columns (pprof `-show_columns`; default false). */
  columns?: boolean;
}

/**
 * pprof `Aggregate` as the pprof driver applies it for a granularity: clears the attributes the
 * granularity does not keep (function names, file names, line and column numbers, addresses;
 * with `inline: false` only each location's last, outermost line is kept) and ANDs the mappings'
 * has_* bits accordingly; locations that become identical are merged. Samples stay one per
 * input sample (use `aggregateStacks` to merge them). By `address` with inline frames kept is
 * a plain copy, as in pprof.
 *
 * Our model requires non-empty function names, so where pprof clears a name (by `file`) the
 * function is named after its file (`<unknown>` when that is empty).
 */
export function aggregateBy(p: Profile, by: Granularity, options: AggregateOptions = {}): Profile {
  const inline = options.inline ?? true;
  const columns = options.columns ?? false;
  let fn = false;
  let file = false;
  let line = false;
  let address = false;
  switch (by) {
    case 'address':
      fn = file = line = address = true;
      break;
    case 'line':
      fn = file = line = true;
      break;
    case 'file':
      file = true;
      break;
    case 'function':
      fn = true;
      break;
  }
  const index = new ProfileIndex(p);
  const locs = readLocations(p, index);
  if (by === 'address' && inline) return rebuildSamplewise(p, index, locs, (_i, rows) => rows);
  for (let r = 0; r < locs.length; r++) {
    const loc = locs[r]!;
    let lines = !inline && loc.lines.length > 1 ? loc.lines.slice(loc.lines.length - 1) : loc.lines;
    lines = lines.map((ln) => ({ fn: ln.fn, line: line ? ln.line : 0, column: line && columns ? ln.column : 0 }));
    locs[r] = { ...loc, address: address ? loc.address : 0n, lines };
  }
  const f = p.functions;
  return rebuildSamplewise(p, index, locs, (_i, rows) => rows, {
    mappingBitsMask: { hasFunctions: fn, hasFilenames: file, hasLineNumbers: line, hasInlineFrames: inline },
    rewriteFunction: (_p, row) => {
      const filename = file ? f.filename[row]! : '';
      const name = fn ? f.name[row]! : f.filename[row]! || '<unknown>';
      const systemName = fn ? f.system_name[row]! : name;
      return { name, systemName, filename, startLine: f.start_line[row]! };
    },
  });
}
