/**
 * The messages between the page (main.tsx) and the Web Worker (worker.ts), and the view state
 * the URL hash holds. Plain data only: what crosses `postMessage` is structured-cloned, so
 * bigints travel as decimal strings and the flame graph as typed arrays (transferred, not copied).
 */

/** Entry granularity of the top table (`profkit top --by`). */
export type ViewBy = 'function' | 'file' | 'line';

/** Which view the page shows. */
export type ViewName = 'top' | 'flame' | 'icicle' | 'peek' | 'sandwich';

/** The filters of `profkit top` the page offers (pprof -focus, -ignore, -hide, -show); '' = off. */
export interface ViewFilters {
  focus: string;
  ignore: string;
  hide: string;
  show: string;
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
}

/**
 * Which part of a view to compute: the table or the flame graph. Computed only when shown (a
 * flame tree of a large profile costs seconds; the first flame paint must not wait for the table).
 */
export type ViewPart = 'top' | 'flame' | 'peek' | 'sandwich';

/** A profile the page hands to the worker: its bytes and the name format detection may use. */
export interface ProfileInput {
  name: string;
  bytes: ArrayBuffer;
}

export type WorkerRequest =
  | { kind: 'load'; id: number; profile: ProfileInput; base?: ProfileInput }
  /** `fn`: the function (an entry name of the top table) the peek and sandwich parts are about. */
  | { kind: 'view'; id: number; options: ViewOptions; part: ViewPart; fn?: string };

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
  maxDepth: number;
  /** Frames left out because they were narrower than `minWidth` of the total. */
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
}

export type WorkerResponse =
  | { kind: 'loaded'; id: number; info: LoadedInfo }
  | { kind: 'view'; id: number; result: ViewResult }
  | { kind: 'error'; id: number; code: string; message: string };
