/**
 * The profkit profile data model.
 *
 * The five required tables (`meta`, `sample_types`, `samples`, `locations`, `functions`) carry
 * exactly the columns of the R package `profile` (data format 1.0). Everything else pprof's
 * `profile.proto` can hold lives in extensions whose names start with `.`, following R's rule
 * that dotted names are extensions: extension columns inside a table (`locations['.address']`)
 * and extension components of the profile (`profile['.mappings']`).
 *
 * Storage is columnar (struct of arrays): each table is an object of equally long columns, most
 * of them typed arrays, so a profile with millions of frames costs a few bytes per frame rather
 * than one JS object per row. Row views for convenient reading live in `views.ts`, and
 * `ProfileBuilder` (in `builder.ts`) is the readable way to produce a profile.
 *
 * Conventions shared by every table:
 * - ids are unsigned integers in 1..2^32-1 stored in `Uint32Array`; 0 means "none" (R's NA,
 *   pprof's reserved id 0). Readers meeting larger ids renumber them (meaning is kept; ids are
 *   not meaning).
 * - 64-bit quantities (sample values, addresses, label numbers, time) are `bigint` in
 *   `BigInt64Array`/`BigUint64Array` columns, never silently truncated.
 * - source lines, columns and start lines are exact integers in `Float64Array` (checked to be
 *   safe integers by readers); 0 means unknown.
 * - strings are plain JS strings; `''` means absent.
 */

/** Version of the in-memory data model, stored in `meta` (key `version`). */
export const DATA_FORMAT_VERSION = '1.0';

/** `meta`: exactly one row, key `version`. */
export interface MetaTable {
  key: string[];
  value: string[];
}

/** `sample_types`: one row per value slot of every sample (pprof's `sample_type`). */
export interface SampleTypesTable {
  type: string[];
  unit: string[];
}

/**
 * A list column of location ids in compressed-sparse-row form: the stack of sample `i` is
 * `location_id.subarray(offsets[i], offsets[i + 1])`, innermost (leaf) frame first.
 */
export interface StackColumn {
  /** `length + 1` entries, non-decreasing, `offsets[0] === 0`. */
  offsets: Uint32Array;
  location_id: Uint32Array;
}

/** `samples`: one row per sample. */
export interface SamplesTable {
  /** R's `value`: the values of sample type 0 (R's single `samples/count` type). */
  value: BigInt64Array;
  /** R's `locations` list column: each sample's stack, innermost first. */
  locations: StackColumn;
  /**
   * One value column per row of `sample_types`; `['.values'][0]` is the same array as `value`.
   * Holds pprof's several values per sample without loss.
   */
  '.values': BigInt64Array[];
  /**
   * Labels of sample `i` are rows `['.label_offsets'][i] .. ['.label_offsets'][i+1]` of the
   * profile's `.labels` table. Absent when no sample has labels.
   */
  '.label_offsets'?: Uint32Array;
}

/** `locations`: one row per location (a program counter, or a source position). */
export interface LocationsTable {
  location_id: Uint32Array;
  /**
   * R's `function_id`: the function of the location's innermost line; 0 = NA (a location with
   * no line information, e.g. an unsymbolized address).
   */
  function_id: Uint32Array;
  /** R's `line`: the source line of the innermost line, 0 = unknown. */
  line: Float64Array;
  /** Source column of the innermost line (pprof `Line.column`), 0 = unknown. */
  '.column': Float64Array;
  /** Instruction address (pprof `Location.address`), 0 = unknown. */
  '.address': BigUint64Array;
  /** Mapping the address falls in (`.mappings.mapping_id`), 0 = unknown. */
  '.mapping_id': Uint32Array;
  /** pprof `Location.is_folded`: several symbols share this address (1 = true). */
  '.is_folded': Uint8Array;
  /**
   * Inline frames: the location's further `Line`s (the callers the innermost line was inlined
   * into, innermost to outermost) are rows `['.inline_offsets'][i] .. [i+1]` of the profile's
   * `.inline_lines` table. The innermost line itself is the row's `function_id`/`line`/`.column`.
   */
  '.inline_offsets': Uint32Array;
}

/** `functions`: one row per function. */
export interface FunctionsTable {
  function_id: Uint32Array;
  /** Human-readable (demangled) name; never `''`. */
  name: string[];
  /** System (mangled) name; never `''`. */
  system_name: string[];
  /** Source file, `''` = unknown. */
  filename: string[];
  /** First line of the function in its file, 0 = unknown. */
  start_line: Float64Array;
}

/** `.inline_lines`: pprof `Line`s beyond the first of each location (see `locations`). */
export interface InlineLinesTable {
  function_id: Uint32Array;
  line: Float64Array;
  column: Float64Array;
}

/** `.mappings`: memory mappings of binaries (pprof `Mapping`). */
export interface MappingsTable {
  mapping_id: Uint32Array;
  memory_start: BigUint64Array;
  memory_limit: BigUint64Array;
  file_offset: BigUint64Array;
  filename: string[];
  build_id: string[];
  has_functions: Uint8Array;
  has_filenames: Uint8Array;
  has_line_numbers: Uint8Array;
  has_inline_frames: Uint8Array;
}

/**
 * `.labels`: sample labels (pprof `Label`). A label is numeric when `is_num` is 1 (then `num`
 * and the optional `num_unit` apply), a string label otherwise (then `str` applies).
 */
export interface LabelsTable {
  key: string[];
  str: string[];
  num: BigInt64Array;
  num_unit: string[];
  is_num: Uint8Array;
}

/** pprof `ValueType`. */
export interface ValueType {
  type: string;
  unit: string;
}

/** Profile-level facts of `profile.proto` (component `.profile`). */
export interface ProfileFacts {
  /** Kind of events between samples, e.g. cpu/nanoseconds; `undefined` = not set. */
  period_type?: ValueType;
  /** Events between samples (informational). */
  period: bigint;
  /** Collection time, ns since the Unix epoch; 0 = unknown. */
  time_nanos: bigint;
  /** Profile duration in ns; 0 = unknown. */
  duration_nanos: bigint;
  /** Free-form human comments. */
  comments: string[];
  /** pprof `drop_frames` regexp, `''` = none. */
  drop_frames: string;
  /** pprof `keep_frames` regexp, `''` = none. */
  keep_frames: string;
  /** Type name of the preferred sample type, `''` = the last one (pprof's rule). */
  default_sample_type: string;
  /** Documentation URL for this profile type, `''` = none. */
  doc_url: string;
}

/**
 * A format-specific extension: data other formats have no place for (Rprof's interval and
 * memory columns, gperftools' sampling rate, ...). `profile['.extensions'][name]`, where `name`
 * is the owning adapter's name (`rprof`, `gperftools-heap`...).
 *
 * - `facts`: JSON-compatible scalar facts about the whole profile (bigint allowed).
 * - `samples`: columns aligned with the `samples` table (same length). Operations that subset or
 *   reorder samples carry them; operations that merge samples drop them (documented per
 *   operation).
 * - `tables`: free-standing tables of their own.
 */
export interface FormatExtension {
  facts?: Record<string, FactValue>;
  samples?: Record<string, Column>;
  tables?: Record<string, Record<string, Column>>;
}

export type FactValue = string | number | boolean | bigint | null | FactValue[] | { [key: string]: FactValue };

/** Any column type a table may hold. */
export type Column =
  | Uint8Array
  | Uint32Array
  | Int32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array
  | string[];

/** A profile. Plain data: create with `ProfileBuilder` or `createProfile`, inspect freely. */
export interface Profile {
  meta: MetaTable;
  sample_types: SampleTypesTable;
  samples: SamplesTable;
  locations: LocationsTable;
  functions: FunctionsTable;
  '.inline_lines': InlineLinesTable;
  '.mappings': MappingsTable;
  '.labels': LabelsTable;
  '.profile': ProfileFacts;
  '.extensions': Record<string, FormatExtension>;
}

/** Names of the five tables R's `profile` package requires, in its order. */
export const R_TABLES = ['meta', 'sample_types', 'samples', 'locations', 'functions'] as const;

/** Number of rows of each table. */
export function sampleCount(p: Profile): number {
  return p.samples.value.length;
}
export function locationCount(p: Profile): number {
  return p.locations.location_id.length;
}
export function functionCount(p: Profile): number {
  return p.functions.function_id.length;
}
export function mappingCount(p: Profile): number {
  return p['.mappings'].mapping_id.length;
}
export function sampleTypeCount(p: Profile): number {
  return p.sample_types.type.length;
}
