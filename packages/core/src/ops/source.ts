/**
 * `go tool pprof -list`: the source of every function matching a regexp, each line with its flat
 * and cumulative value (pprof `printSource`, graph at `lines` granularity). Platform-neutral:
 * the caller reads the source files (`readSource`; the CLI searches `--source-path` as pprof's
 * `openSourceFile` does), so a missing file is reported in the listing, as pprof reports it.
 */

import { ErrorCodes, ProfkitError } from '../errors.js';
import type { Profile } from '../model.js';
import { formatPercentage, formatValue } from './format.js';
import { compareGoStrings } from './internal.js';
import { goGraph, type GoGraph, type GoGraphNode } from './pprof-graph.js';
import { ReportTextBudget, type ReportLimits } from '../report-text.js';
import { StringKeyedMap } from '../string-keys.js';

/** A source file's lines (without line ends), or why it could not be read (pprof's error text). */
export type SourceLines = { lines: readonly string[] } | { error: string };

export interface ListReportOptions {
  /** The sample type reported (pprof `-sample_index`); default the profile's default type. */
  sampleTypeIndex?: number;
  /** The report total (default: of `loaded`; pprof takes it before -focus and the other filters). */
  total?: bigint;
  /** Whether a function name is listed (pprof's symbol regexp, `MatchString`). */
  symbol: (name: string) => boolean;
  /** The regexp as typed, for the "no matches" error. */
  symbolText: string;
  /** pprof `-source_path` as given ('' or absent: none; it feeds the trim heuristic). */
  sourcePath?: string;
  /** pprof `-trim_path`. */
  trimPath?: string;
  /** Count inlined frames as their own lines (default true; pprof `-noinlines` turns it off). */
  inlines?: boolean;
  /** The lines of a file named as in the profile (after trimming and `filepath.Clean`). */
  readSource: (file: string) => SourceLines;
  /** `maxReportBytes` bounds the text (a routine's header prints its name once per file). */
  limits?: ReportLimits;
}

export interface ListLine {
  line: number;
  flat: bigint;
  cum: bigint;
  text: string;
}

export interface ListRoutine {
  /** The function name. */
  name: string;
  /** The source file ('' when the function has no source information). */
  file: string;
  flat: bigint;
  cum: bigint;
  /** The listed lines (empty when the file could not be read). */
  lines: ListLine[];
  /** Why the source is not shown: the file could not be read, or the function has no file. */
  error?: string;
}

export interface ListReport {
  sampleTypeIndex: number;
  unit: string;
  total: bigint;
  /** Functions by name, then their files by name. */
  routines: ListRoutine[];
  /** The report as `go tool pprof -list` prints it. */
  text: string;
}

/** Lines shown before the first and after the last line with samples (pprof's margin). */
const MARGIN = 5;

/**
 * Lines of one source file that a listing shows at most: a file with more is not read
 * (`sourceFileReader` reports it; each line costs an array slot and a string header beyond its
 * text, so a 200 MB file of empty lines took `profkit list` past V8's heap), and no routine lists
 * a line past it, whatever its `readSource` gives (the web's source view without the file's text
 * gives lines without end): a routine has a row for every line from its first to its last sampled
 * line, and a profile's line numbers are its own (lines 1 and 2^40 were 2^40 rows).
 */
export const MAX_SOURCE_FILE_LINES = 4 << 20;

/**
 * The lines pprof shows of one function in one file (`getSourceFromFile`): from the function's
 * start line (or 5 before its first sampled line) to 5 after its last sampled line, stopping at
 * the end of the file (or MAX_SOURCE_FILE_LINES). `nodes` are in graph order: pprof seeds the
 * range with the first one. The file is read only when the range is not empty (as in pprof: a
 * start line after the sampled lines shows nothing, and no error). Each line is given to `row`
 * as it is made, which prints it before it is kept: rows stop at `maxReportBytes` (each prints
 * at least 30 bytes) instead of being made first, up to MAX_SOURCE_FILE_LINES for each routine.
 */
function* listedLines(nodes: GoGraphNode[], read: () => SourceLines): Generator<ListLine, { error: string } | undefined> {
  const byLine = new Map<number, { flat: bigint; cum: bigint }>();
  const first = nodes[0]!.info;
  let start = first.startLine !== 0 ? first.startLine : first.lineno - MARGIN;
  let end = first.lineno + MARGIN;
  for (const n of nodes) {
    const nodeStart = n.info.startLine !== 0 ? n.info.startLine : n.info.lineno - MARGIN;
    const nodeEnd = n.info.lineno + MARGIN;
    // pprof's rule, kept as it is: a node that lowers the start does not raise the end.
    if (nodeStart < start) start = nodeStart;
    else if (nodeEnd > end) end = nodeEnd;
    const sum = byLine.get(n.info.lineno) ?? { flat: 0n, cum: 0n };
    sum.flat += n.flat;
    sum.cum += n.cum;
    byLine.set(n.info.lineno, sum);
  }
  if (start < 1) start = 1;
  if (start > end) return undefined;
  const source = read();
  if ('error' in source) return source;
  const last = Math.min(end, source.lines.length, MAX_SOURCE_FILE_LINES);
  for (let line = start; line <= last; line++) {
    const sum = byLine.get(line);
    yield { line, flat: sum?.flat ?? 0n, cum: sum?.cum ?? 0n, text: source.lines[line - 1]! };
  }
  return undefined;
}

interface NodeGroup {
  key: string;
  nodes: GoGraphNode[];
}

/**
 * Groups `nodes` by `key`, sorted by key as Go sorts strings, each group's nodes in their order.
 * Keys (function names, file names) go through StringKeyedMap: a Map hashes a string longer than
 * 16,383 units by its length alone, and 2,000 long names of one length took a minute to group.
 */
function groupBy(nodes: GoGraphNode[], key: (n: GoGraphNode) => string): NodeGroup[] {
  const groups = new StringKeyedMap<NodeGroup>();
  for (const n of nodes) {
    const k = key(n);
    const g = groups.get(k);
    if (g) g.nodes.push(n);
    else groups.set(k, { key: k, nodes: [n] });
  }
  return [...groups.values()].sort((a, b) => compareGoStrings(a.key, b.key));
}

const sum = (nodes: GoGraphNode[], value: (n: GoGraphNode) => bigint) => nodes.reduce((s, n) => s + value(n), 0n);

/**
 * `go tool pprof -list REGEX`: for each function whose name matches (by name), for each of its
 * source files (by name), the function's flat and cum and its source lines with theirs.
 * `loaded` is a `goPprofLoad` result. No matching function with samples is a
 * `PROFKIT_E_USAGE` error, as in pprof.
 */
export function listReport(loaded: Profile, options: ListReportOptions): ListReport {
  const listing = new Listing(loaded, options);
  const routines: ListRoutine[] = [];
  const budget = new ReportTextBudget('list', options.limits, true);
  const out: string[] = [];
  let rows = 0;
  for (const piece of listing.pieces(routines, () => rows++)) {
    out.push(budget.take(piece));
    // A kept row is also a value of `routines` (the CLI's --json prints each as an object of
    // about 100 bytes): it counts that too, so the rows kept stay a few times under the limit.
    for (; rows > 0; rows--) budget.count(KEPT_ROW_BYTES);
  }
  const { g } = listing;
  return { sampleTypeIndex: g.sampleTypeIndex, unit: g.unit, total: g.total, routines, text: out.join('') };
}

/** What a row kept in `ListReport.routines` counts towards `maxReportBytes` besides its text. */
const KEPT_ROW_BYTES = 100;

/**
 * The text of `listReport` piece by piece as it is made, nothing kept (the CLI writes it as it
 * comes): `maxReportBytes` bounds the text, not the memory, which is one routine's nodes and the
 * source files read.
 */
export function* listReportText(loaded: Profile, options: ListReportOptions): Generator<string> {
  const budget = new ReportTextBudget('list', options.limits, false);
  for (const piece of new Listing(loaded, options).pieces()) yield budget.take(piece);
}

/** The functions a listing shows, and its text. */
class Listing {
  readonly g: GoGraph;
  private readonly functions: NodeGroup[];

  constructor(
    loaded: Profile,
    private readonly options: ListReportOptions,
  ) {
    this.g = goGraph(loaded, {
      sampleTypeIndex: options.sampleTypeIndex,
      granularity: 'lines',
      inlines: options.inlines,
      objNames: true,
      trimPath: options.trimPath,
      sourcePath: options.sourcePath,
      total: options.total,
    });
    this.functions = groupBy(
      this.g.nodes.filter((n) => options.symbol(n.info.name)),
      (n) => n.info.name,
    );
    if (this.functions.length === 0) {
      throw new ProfkitError(ErrorCodes.USAGE, `no matches found for regexp: ${options.symbolText}`, { option: 'symbol', rule: 'the regexp must match a function with samples' });
    }
  }

  /**
   * The listing's text, one line a piece, made as it is asked for; with `routines`, each routine
   * (and each line once its text is taken, calling `kept`) is added to it.
   */
  *pieces(routines?: ListRoutine[], kept?: () => void): Generator<string> {
    const { g, functions, options } = this;
    const value = (v: bigint) => formatValue(v, g.unit);
    const dot = (v: bigint) => (v === 0n ? '.' : value(v));
    yield `Total: ${value(g.total)}\n`;
    for (const { key: name, nodes: fnNodes } of functions) {
      const files = groupBy(
        fnNodes.filter((n) => n.info.file !== ''),
        (n) => n.info.file,
      );
      if (files.length === 0) {
        routines?.push({ name, file: '', flat: sum(fnNodes, (n) => n.flat), cum: sum(fnNodes, (n) => n.cum), lines: [], error: 'no source information' });
        yield `No source information for ${name}\n`;
        continue;
      }
      for (const { key: file, nodes } of files) {
        const routine: ListRoutine = { name, file, flat: sum(nodes, (n) => n.flat), cum: sum(nodes, (n) => n.cum), lines: [] };
        yield `ROUTINE ======================== ${name} in ${file}\n`;
        yield `${value(routine.flat).padStart(10)} ${value(routine.cum).padStart(10)} (flat, cum) ${formatPercentage(routine.cum, g.total)} of Total\n`;
        const lines = listedLines(nodes, () => options.readSource(file));
        let next = lines.next();
        for (; !next.done; next = lines.next()) {
          const l = next.value;
          yield `${dot(l.flat).padStart(10)} ${dot(l.cum).padStart(10)} ${String(l.line).padStart(6)}:${l.text}\n`;
          if (routines) {
            routine.lines.push(l);
            kept?.();
          }
        }
        if (next.value) {
          routine.error = next.value.error;
          yield ` Error: ${next.value.error}\n`;
        }
        routines?.push(routine);
      }
    }
  }
}
