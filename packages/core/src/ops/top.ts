/** `topTable`: flat and cumulative values per function, file or line, like `pprof -top`. */

import type { Profile } from '../model.js';
import { formatPercentage, formatValue } from './format.js';
import { callGraph, type CallGraph, type CallGraphNode } from './report.js';

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

export { cleanPath } from './internal.js';

/** pprof's inline marker of a node: from the kept calls into it. */
function inlineMarker(n: CallGraphNode): TopEntry['inline'] {
  const inl = n.in.some((e) => e.inline);
  const plain = n.in.some((e) => !e.inline);
  return inl ? (plain ? '(partial-inline)' : '(inline)') : '';
}

/** The `-top` entries of a call graph, in the graph's order. */
export function topEntries(g: CallGraph): TopEntry[] {
  return g.nodes.map((n) => ({ name: n.name, flat: n.flat, cum: n.cum, inline: inlineMarker(n) }));
}

/**
 * pprof `-top`: each entry's flat value (samples whose leaf frame is the entry) and cumulative
 * value (samples whose stack contains the entry, counted once per sample), inline frames
 * expanded; samples with value 0 are skipped. Entries are `callGraph`'s nodes (pprof's graph
 * nodes after `Aggregate` for the granularity; functions without a name, `<?>`, are named after
 * their mapping like pprof's `[binary]`), sorted like `-top` (`FlatNameOrder`: |flat|
 * descending, then name, then |cum| descending; with `cum`: |cum|, name, |flat|).
 */
export function topTable(p: Profile, options: TopOptions = {}): TopTable {
  const g = callGraph(p, {
    sampleTypeIndex: options.sampleTypeIndex,
    by: options.by,
    cum: options.cum,
    inline: options.inline,
    columns: options.columns,
    nodeFraction: options.nodeFraction,
    edgeFraction: options.edgeFraction,
    nodeCount: options.nodeCount,
  });
  const entries = topEntries(g);
  return {
    entries,
    total: g.total,
    sampleTypeIndex: g.sampleTypeIndex,
    unit: g.unit,
    outputUnit: g.outputUnit,
    dropped: g.droppedNodes + (g.origCount - entries.length),
  };
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
