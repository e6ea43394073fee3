/** `topTable`'s options and result types (the computation is `callGraph`'s, in report.ts), and `formatTopTable`. */

import { applyRatio, formatPercentage, formatValue } from './format.js';
import type { ReportGranularity } from './granularity.js';
import { ReportTextBudget, type ReportLimits } from '../report-text.js';

export interface TopOptions {
  /** Sample type to report; default: the profile's default sample type (pprof's rule). */
  sampleTypeIndex?: number;
  /** Entry granularity (pprof `-functions`, `-files`, `-lines`); default `function`. */
  by?: ReportGranularity;
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
  /** pprof `-divide_by`: values are printed times this ratio (absent: 1). */
  ratio?: number;
}

export { cleanPath } from './internal.js';
/** `topTable(p, options)`: the `-top` view of `callGraph` (see report.ts). */
export { topTable } from './report.js';

/**
 * The table as `pprof -top` prints it (the column header and one line per entry; pprof's
 * preamble lines — file, type, "Showing nodes accounting for…" — are not printed).
 */
export function formatTopTable(table: TopTable, limits?: ReportLimits): string {
  const pad = (s: string, w: number) => s.padStart(w, ' ');
  const ratio = table.ratio ?? 1;
  const fv = (v: bigint) => formatValue(applyRatio(v, ratio), table.unit, table.outputUnit);
  // Counted as made (maxReportBytes): many entries can print one long name.
  const budget = new ReportTextBudget('top', limits, true);
  const lines = [budget.take(`${pad('flat', 10)} ${pad('flat', 5)}% ${pad('sum', 5)}% ${pad('cum', 10)} ${pad('cum', 5)}%\n`)];
  let sum = 0n;
  for (const e of table.entries) {
    sum += e.flat;
    lines.push(
      budget.take(
        `${pad(fv(e.flat), 10)} ${formatPercentage(e.flat, table.total)} ${formatPercentage(sum, table.total)} ` +
          `${pad(fv(e.cum), 10)} ${formatPercentage(e.cum, table.total)}  ${e.name}${e.inline ? ' ' + e.inline : ''}\n`,
      ),
    );
  }
  return lines.join('');
}
