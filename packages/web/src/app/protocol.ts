/**
 * The messages between the page (main.tsx) and the Web Worker (worker.ts), and the view state
 * the URL hash holds. Plain data only: what crosses `postMessage` is structured-cloned, so
 * bigints travel as decimal strings and the flame graph as typed arrays (transferred, not copied).
 */

/** Entry granularity of the top table (`profkit top --by`). */
export type ViewBy = 'function' | 'file' | 'line';

/** Which view the page shows. */
export type ViewName = 'top' | 'flame' | 'icicle' | 'peek' | 'sandwich' | 'graph' | 'source';

/**
 * The filters of `profkit top` the page offers (pprof -focus, -ignore, -hide, -show, -tagfocus,
 * -tagignore, -tagroot); '' = off. The tag filters are in pprof's syntax (`key=regexp`, or a
 * numeric range such as `bytes=1kb:`), the tag root comma-separated label keys.
 */
export interface ViewFilters {
  focus: string;
  ignore: string;
  hide: string;
  show: string;
  tagFocus: string;
  tagIgnore: string;
  tagRoot: string;
}

/** What the worker computes a view from: the options of `profkit top` the page has. */
export interface ViewOptions extends ViewFilters {
  /** Sample type index (`--sample-type`), -1 for the profile's default. */
  sampleType: number;
  by: ViewBy;
  /** Sort by cum (`--cum`) instead of flat. */
  cum: boolean;
  /** `--node-fraction`: hide entries whose cum is below this fraction of the total; -1 for pprof's default (0.005). */
  nodeFraction: number;
  /** The call graph's `--nodecount`: at most this many nodes (0 = all); -1 for pprof's default (80). */
  nodeCount: number;
}

/**
 * Which part of a view to compute: the table or the flame graph. Computed only when shown (a
 * flame tree of a large profile costs seconds; the first flame paint must not wait for the table).
 */
export type ViewPart = 'top' | 'flame' | 'peek' | 'sandwich' | 'graph' | 'source';

/**
 * The response header of a served gzip profile that says its inflated size, as its trailer's ISIZE
 * says it (the size mod 2^32): the worker sizes the buffer it inflates the download into from it
 * (the trailer is the last of the body to arrive). A hint only: the inflate checks the real size.
 */
export const INFLATED_SIZE_HEADER = 'x-profkit-gzip-isize';

/**
 * The first size of the buffer a gzip is inflated into, given its trailer's claim: core's rule
 * (`inflateBufferSize`, at most MAX_ANNOUNCED_INFLATE_RATIO times the compressed size), shared by
 * the worker's inflate, the server's inflated-size header and core's own gunzip.
 */
export { MAX_ANNOUNCED_INFLATE_RATIO, inflateBufferSize } from '@profkit/core';

/**
 * The query parameter (`?inflated=1`) that asks `profkit web` for a gzip profile inflated by
 * node:zlib (native, on the thread pool; Chromium's `DecompressionStream` took about a second of
 * the 1M-sample profile's first paint), and the response header that says it was (`1`): the body is
 * then the raw profile, with no Content-Length; a gzip error or core's `maxDecompressedBytes` on the
 * server aborts the response (never a short body), and the worker then reads the original bytes.
 */
export const INFLATED_PARAM = 'inflated';
export const INFLATED_HEADER = 'x-profkit-inflated';

/**
 * A profile the page hands to the worker (transferred, not copied), with the name format
 * detection may use: its bytes (a picked or dropped file), or the served file's body as it
 * arrives and its Content-Length (0 if unknown), which the worker inflates while it downloads
 * (`inflatedSize`: a gzip's inflated size as `profkit web` announces it from its trailer, a hint).
 */
export type ProfileInput =
  | { name: string; bytes: ArrayBuffer }
  | { name: string; stream: ReadableStream<Uint8Array>; size: number; inflatedSize?: number }
  /**
   * The served gzip file inflated by `profkit web` (`?inflated=1`): `stream` is the raw profile;
   * if it fails (the server aborted it: corrupt gzip, a limit), the worker reads `originalUrl` (absolute) as before.
   */
  | { name: string; stream: ReadableStream<Uint8Array>; size: 0; inflatedSize?: number; originalUrl: string };

/**
 * Where the source view's text comes from: `profkit web` serves the source files the profile
 * names at `url` (`?file=NAME`), looked up with its `--source-path`/`--trim-path` (which the
 * listing's file names depend on, as in `profkit list`); without it (the static build) the
 * lines show their costs without text, unless the user drops the file.
 */
export interface SourceAccess {
  url?: string;
  sourcePath: string;
  trimPath: string;
}

export type WorkerRequest =
  | { kind: 'load'; id: number; profile: ProfileInput; base?: ProfileInput; source?: SourceAccess }
  /** `fn`: the function (an entry name of the top table) the peek, sandwich and source parts are about. */
  | { kind: 'view'; id: number; options: ViewOptions; part: ViewPart; fn?: string }
  /**
   * The text of a source file the user dropped, by the listing's file name: sent once, kept by the
   * worker until the next `load` (a file dropped again replaces it). Not answered.
   */
  | { kind: 'source'; id: number; file: string; text: string };

/** A warning of the reader (or of drop_frames), as the CLI prints it. */
export interface ViewWarning {
  code: string;
  message: string;
}

export interface LoadedInfo {
  format: string;
  baseFormat?: string;
  /** `type/unit` of each sample type. */
  sampleTypes: { type: string; unit: string }[];
  defaultSampleType: number;
  samples: number;
  warnings: ViewWarning[];
}

/** One row of the top table: the values of `profkit top --json` and the strings of `profkit top`. */
export interface TopRow {
  name: string;
  inline: string;
  /** Exact values as decimal strings (bigints in the engine). */
  flat: string;
  cum: string;
  /** As `profkit top` prints them: values in the table's output unit, percentages with 2 decimals. */
  flatText: string;
  flatPercent: string;
  sumPercent: string;
  cumText: string;
  cumPercent: string;
}

export interface TopView {
  /** pprof's header lines (type, "Showing nodes accounting for …", dropped nodes). */
  header: string[];
  total: string;
  outputUnit: string;
  rows: TopRow[];
  /** Entries left out (below the node fraction), as the header's "Dropped N nodes" counts them. */
  dropped: number;
}

/**
 * The flame graph laid out in preorder (callers before callees, callees by name), one entry per
 * frame: its name (an index into `names`), depth, left offset and width in sample-value units.
 * `base` (diffs only) is the same frame's value in the base profile (0 when it is new there).
 */
export interface FlameLayout {
  names: string[];
  nameIndex: Int32Array;
  depth: Int32Array;
  start: Float64Array;
  value: Float64Array;
  self: Float64Array;
  base?: Float64Array;
  /**
   * The same values exact (the engine's bigints; the float arrays above are for drawing and lose
   * precision above 2^53): what the page prints.
   */
  exactValue: BigInt64Array;
  exactSelf: BigInt64Array;
  exactBase?: BigInt64Array;
  /**
   * Diffs whose base tree was cut (as the main flame graph, at this width in sample-value
   * units): frames marked 1 in `baseBelowCut` had a base value below it (their `base` says 0).
   */
  baseCut?: number;
  baseBelowCut?: Uint8Array;
  maxDepth: number;
  /**
   * Frames left out because they were narrower than `minWidth` of the total: the flame graph
   * (core's `cutFlameTree`) counts the outermost of them only, the sandwich every one.
   */
  elided: number;
  unit: string;
}

/** A call of the peek view: the other end's name and the call's value (`profkit peek --json`). */
export interface PeekCall {
  name: string;
  /** Exact value as a decimal string. */
  weight: string;
  /** As the text report prints it, in the output unit. */
  weightText: string;
  /** Share of the entry's cum, percent rounded to 4 decimals as in `--json`. */
  percentOfCum: number;
  inline: boolean;
}

/** The peek view: `profkit peek FILE '^fn$'` (text and the values of `--json`). */
export interface PeekView {
  /** The report as `profkit peek` prints it. */
  text: string;
  nodes: { name: string; flat: string; cum: string; callers: PeekCall[]; callees: PeekCall[] }[];
}

/**
 * The sandwich of one function: its callers as an inverted flame graph (the function is the
 * root, its callers above it) and its callees as a flame graph (the function is the root). Both
 * roots are the function's value over the samples through it (recursion counted once).
 */
export interface SandwichView {
  callers: FlameLayout;
  callees: FlameLayout;
}

/** One node of the call graph: `N<k>` of the DOT text, and its exact values. */
export interface GraphViewNode {
  id: string;
  name: string;
  flat: string;
  cum: string;
}

/** The call graph: `profkit graph --format dot` for the same options, laid out in the page. */
export interface GraphView {
  dot: string;
  nodes: GraphViewNode[];
}

/** One listed source line: exact values as decimal strings, and as `profkit list` prints them. */
export interface SourceViewLine {
  line: number;
  flat: string;
  cum: string;
  flatText: string;
  cumText: string;
  text: string;
}

/** One function in one file of the listing (`profkit list --json`'s routines). */
export interface SourceRoutine {
  name: string;
  file: string;
  flat: string;
  cum: string;
  lines: SourceViewLine[];
  /** Why there are no lines (the file could not be read, or no source information). */
  error?: string;
  /** True when the text is not known (static build, file not dropped): the lines carry only their costs. */
  noText?: boolean;
}

/** The source view: `profkit list FILE '^fn$'` (its text when every file was read, and its values). */
export interface SourceView {
  text: string;
  total: string;
  routines: SourceRoutine[];
}

export interface ViewResult {
  sampleType: number;
  sampleTypeName: string;
  unit: string;
  diff: boolean;
  /** The part asked for. */
  top?: TopView;
  flame?: FlameLayout;
  peek?: PeekView;
  sandwich?: SandwichView;
  graph?: GraphView;
  source?: SourceView;
}

export type WorkerResponse =
  | { kind: 'loaded'; id: number; info: LoadedInfo }
  | { kind: 'view'; id: number; result: ViewResult }
  | { kind: 'error'; id: number; code: string; message: string };
