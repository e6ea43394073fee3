/**
 * The profile validator: every rule of R's `validate_profile` (data format 1.0), every rule of
 * google/pprof's `Profile.CheckValid`, and profkit's own rules for the parts of the model neither
 * has (CSR offsets, inline lines, labels, extensions). docs/data-model.md maps each rule to its
 * code.
 *
 * Unlike R's validator it reports every problem, not just the first, as structured values
 * (stable code, rule id, table, column, row). To keep a broken million-row table from producing
 * a million objects, at most `maxRowsPerRule` rows are listed per code, table and column,
 * followed by one summary problem with the count of the rest.
 *
 * Structural rules (types, column names, equal lengths) are checked with the shapes of
 * `schema.ts`; value and reference rules run as tight loops over the typed arrays, so validating
 * costs time linear in the size of the profile.
 */

import { ErrorCodes, ProfkitError } from './errors.js';
import { R_TABLES, type Profile } from './model.js';
import { COMPONENT_SCHEMAS, KNOWN_COLUMNS, PROFILE_COMPONENTS, SchemaCodes, isColumn, type ComponentName } from './schema.js';
import type { Shape, ShapeIssue } from './shape.js';
import { IdIndex } from './views.js';

/**
 * `profkit` (default): the general model, as pprof allows it: any number of sample types, any
 * int64 values (negative and zero too), extra `meta` rows.
 *
 * `strict-r`: additionally what the R package `profile` (format 1.0) requires, i.e. whether R
 * could read the profile: exactly one sample type `samples`/`count`, values that are R integers
 * greater than 0, `meta` exactly one row `version`, ids and lines that fit R's int32.
 */
export type ValidationMode = 'profkit' | 'strict-r';

export interface ValidateOptions {
  mode?: ValidationMode;
  /** Rows listed per code, table and column before the rest is only counted. Default 100. */
  maxRowsPerRule?: number;
  /**
   * The name of the reader (adapter) that has just produced this profile. The rules that reader
   * recorded as proven for it (`recordReaderProof`) are not checked again, as long as the
   * columns they read are still the very arrays the reader returned. For a profile straight from
   * that reader and not changed since: the registry's read sets it, nothing else should. Ignored
   * in `strict-r` mode. Whatever the option, a proof serves only the first validation of its
   * profile (see `recordReaderProof`).
   */
  trustReader?: string;
}

export type ProblemSeverity = 'error' | 'warning';

export interface Problem {
  /** Stable code, e.g. `R20_SAMPLE_VALUE_POSITIVE`, `PPROF_LOCATION_ID_ZERO`, `SCHEMA_COLUMN_TYPE`. */
  code: string;
  /** The rule broken: `R1`..`R41` (R's validate_profile), `pprof.CheckValid.N`, or `profkit.*`. */
  rule: string;
  /** Table or component, e.g. `samples`, `.mappings`, `.profile`, `.extensions`. */
  table: string;
  /** Column (or fact), e.g. `location_id`, `locations.offsets`, `.values[1]`. */
  column?: string;
  /** 0-based row of `table`; absent for problems about a whole table or column. */
  row?: number;
  /** One line, for people. */
  message: string;
  severity: ProblemSeverity;
}

export interface ValidationResult {
  /** True when there is no problem of severity `error` (warnings allowed). */
  ok: boolean;
  /** Listed problems, including one summary problem per capped code/table/column. */
  problems: Problem[];
  /** Number of errors found, including the ones only counted. */
  errorCount: number;
  /** Number of warnings found, including the ones only counted. */
  warningCount: number;
  /** Number of problems found but not listed (beyond `maxRowsPerRule`). */
  omitted: number;
}

/** Codes of the value and reference rules (the structural ones are `SchemaCodes`). */
export const ValidationCodes = {
  ...SchemaCodes,
  R8_META_ONE_ROW: 'R8_META_ONE_ROW',
  R9_META_KEY_VERSION: 'R9_META_KEY_VERSION',
  R10_META_VERSION_PARSE: 'R10_META_VERSION_PARSE',
  R14_SAMPLE_TYPES_ONE_ROW: 'R14_SAMPLE_TYPES_ONE_ROW',
  R15_SAMPLE_TYPE_SAMPLES: 'R15_SAMPLE_TYPE_SAMPLES',
  R16_SAMPLE_UNIT_COUNT: 'R16_SAMPLE_UNIT_COUNT',
  R18_SAMPLE_VALUE_INT32: 'R18_SAMPLE_VALUE_INT32',
  R20_SAMPLE_VALUE_POSITIVE: 'R20_SAMPLE_VALUE_POSITIVE',
  R24_SAMPLE_LOCATION_EXISTS: 'R24_SAMPLE_LOCATION_EXISTS',
  R29_LOCATION_ID_UNIQUE: 'R29_LOCATION_ID_UNIQUE',
  R30_LOCATION_FUNCTION_EXISTS: 'R30_LOCATION_FUNCTION_EXISTS',
  R31_LOCATION_LINE_NONNEGATIVE: 'R31_LOCATION_LINE_NONNEGATIVE',
  R38_FUNCTION_ID_UNIQUE: 'R38_FUNCTION_ID_UNIQUE',
  R39_FUNCTION_NAME_NONEMPTY: 'R39_FUNCTION_NAME_NONEMPTY',
  R40_FUNCTION_SYSTEM_NAME_NONEMPTY: 'R40_FUNCTION_SYSTEM_NAME_NONEMPTY',
  R41_FUNCTION_START_LINE_NONNEGATIVE: 'R41_FUNCTION_START_LINE_NONNEGATIVE',
  /** strict-r: an id or line does not fit R's integer (int32, 2^31-1 at most). */
  STRICT_R_INT32: 'STRICT_R_INT32',
  PPROF_MISSING_SAMPLE_TYPE: 'PPROF_MISSING_SAMPLE_TYPE',
  PPROF_VALUES_COUNT: 'PPROF_VALUES_COUNT',
  PPROF_SAMPLE_LOCATION_ZERO: 'PPROF_SAMPLE_LOCATION_ZERO',
  PPROF_MAPPING_ID_ZERO: 'PPROF_MAPPING_ID_ZERO',
  PPROF_DUPLICATE_MAPPING_ID: 'PPROF_DUPLICATE_MAPPING_ID',
  PPROF_FUNCTION_ID_ZERO: 'PPROF_FUNCTION_ID_ZERO',
  PPROF_LOCATION_ID_ZERO: 'PPROF_LOCATION_ID_ZERO',
  PPROF_LOCATION_MAPPING_EXISTS: 'PPROF_LOCATION_MAPPING_EXISTS',
  PPROF_LINE_FUNCTION_ZERO: 'PPROF_LINE_FUNCTION_ZERO',
  PPROF_LINE_FUNCTION_EXISTS: 'PPROF_LINE_FUNCTION_EXISTS',
  PROFKIT_META_DUPLICATE_KEY: 'PROFKIT_META_DUPLICATE_KEY',
  PROFKIT_VALUES_ALIAS: 'PROFKIT_VALUES_ALIAS',
  PROFKIT_CSR_NOT_MONOTONE: 'PROFKIT_CSR_NOT_MONOTONE',
  PROFKIT_NOT_SAFE_INTEGER: 'PROFKIT_NOT_SAFE_INTEGER',
  PROFKIT_LINE_NONNEGATIVE: 'PROFKIT_LINE_NONNEGATIVE',
  PROFKIT_FLAG_NOT_BOOLEAN: 'PROFKIT_FLAG_NOT_BOOLEAN',
  PROFKIT_INLINE_WITHOUT_LINE: 'PROFKIT_INLINE_WITHOUT_LINE',
  PROFKIT_LABEL_KIND: 'PROFKIT_LABEL_KIND',
  PROFKIT_LABEL_EMPTY_KEY: 'PROFKIT_LABEL_EMPTY_KEY',
  PROFKIT_DEFAULT_SAMPLE_TYPE_UNKNOWN: 'PROFKIT_DEFAULT_SAMPLE_TYPE_UNKNOWN',
  PROFKIT_MAPPING_RANGE: 'PROFKIT_MAPPING_RANGE',
  PROFKIT_ADDRESS_OUTSIDE_MAPPING: 'PROFKIT_ADDRESS_OUTSIDE_MAPPING',
  PROFKIT_EXTENSION_SAMPLES_LENGTH: 'PROFKIT_EXTENSION_SAMPLES_LENGTH',
} as const;

const C = ValidationCodes;

/** The five tables R requires; structural problems of these map to R's rules. */
const R_TABLE_SET = new Set<string>(R_TABLES);

/** R rule of a missing column (column-name rule) and of a wrongly typed column (type rule). */
const R_COLUMN_RULES: Record<string, Record<string, { missing: string; type: string }>> = {
  meta: { key: { missing: 'R5', type: 'R6' }, value: { missing: 'R5', type: 'R7' } },
  sample_types: { type: { missing: 'R11', type: 'R12' }, unit: { missing: 'R11', type: 'R13' } },
  samples: {
    value: { missing: 'R17', type: 'R18' },
    locations: { missing: 'R17', type: 'R19' },
    'locations.offsets': { missing: 'R21', type: 'R21' },
    'locations.location_id': { missing: 'R23', type: 'R22' },
  },
  locations: {
    location_id: { missing: 'R25', type: 'R26' },
    function_id: { missing: 'R25', type: 'R27' },
    line: { missing: 'R25', type: 'R28' },
  },
  functions: {
    function_id: { missing: 'R32', type: 'R33' },
    name: { missing: 'R32', type: 'R34' },
    system_name: { missing: 'R32', type: 'R35' },
    filename: { missing: 'R32', type: 'R36' },
    start_line: { missing: 'R32', type: 'R37' },
  },
};

/** R rule of an undotted column that is not one of the table's (R's column-name rules). */
const R_NAMES_RULE: Record<string, string> = { meta: 'R5', sample_types: 'R11', samples: 'R17', locations: 'R25', functions: 'R32' };

/** Known columns of each table (undotted extra columns are errors, dotted ones extensions). */
const TABLE_COLUMNS = KNOWN_COLUMNS;

const INT32_MAX = 2147483647;
const INT32_MAX_BIG = 2147483647n;

/** R's `package_version()`: at least two runs of ASCII digits separated by `.` or `-`. */
const R_VERSION = /^(?:[0-9]+[.-])+[0-9]+$/;

/** True when R's `package_version()` accepts `s` (see rule R10). */
export function isRPackageVersion(s: string): boolean {
  return R_VERSION.test(s);
}

const DEFAULT_MAX_ROWS = 100;

/** Collects problems, listing at most `max` per code/table/column and counting the rest. */
class Collector {
  readonly problems: Problem[] = [];
  private readonly groups = new Map<string, { n: number; code: string; rule: string; table: string; column: string | undefined; severity: ProblemSeverity }>();
  errorCount = 0;
  warningCount = 0;
  omitted = 0;

  constructor(private readonly max: number) {}

  add(severity: ProblemSeverity, code: string, rule: string, table: string, column: string | undefined, row: number | undefined, message: string | (() => string)): void {
    if (severity === 'error') this.errorCount++;
    else this.warningCount++;
    const key = code + '\u0000' + table + '\u0000' + (column ?? '');
    let g = this.groups.get(key);
    if (!g) {
      g = { n: 0, code, rule, table, column, severity };
      this.groups.set(key, g);
    }
    g.n++;
    if (g.n > this.max) {
      this.omitted++;
      return;
    }
    const p: Problem = { code, rule, table, message: typeof message === 'function' ? message() : message, severity };
    if (column !== undefined) p.column = column;
    if (row !== undefined) p.row = row;
    this.problems.push(p);
  }

  error(code: string, rule: string, table: string, column: string | undefined, row: number | undefined, message: string | (() => string)): void {
    this.add('error', code, rule, table, column, row, message);
  }

  warning(code: string, rule: string, table: string, column: string | undefined, row: number | undefined, message: string | (() => string)): void {
    this.add('warning', code, rule, table, column, row, message);
  }

  result(): ValidationResult {
    const problems = this.problems.slice();
    for (const g of this.groups.values()) {
      if (g.n <= this.max) continue;
      const p: Problem = {
        code: g.code,
        rule: g.rule,
        table: g.table,
        message: `${g.n - this.max} more rows of ${where(g.table, g.column)} break rule ${g.rule} (${g.code}); only the first ${this.max} are listed`,
        severity: g.severity,
      };
      if (g.column !== undefined) p.column = g.column;
      problems.push(p);
    }
    return { ok: this.errorCount === 0, problems, errorCount: this.errorCount, warningCount: this.warningCount, omitted: this.omitted };
  }
}

function where(table: string, column?: string, row?: number): string {
  return (column === undefined ? table : `${table}.${column}`) + (row === undefined ? '' : ` row ${row}`);
}

/** Quotes a user string for a one-line message. */
function q(s: string): string {
  const j = JSON.stringify(s.length > 80 ? s.slice(0, 77) + '...' : s);
  return j;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v);
}

/**
 * id → first row lookup over a Uint32 id column (views' `IdIndex`), built on first use: a
 * profile whose references a reader proved (see `recordReaderProof`) never needs it.
 */
class IdRows {
  private index: IdIndex | undefined;

  constructor(private readonly ids: Uint32Array) {}

  private lookup(): IdIndex {
    return (this.index ??= new IdIndex(this.ids));
  }

  /** Reports every zero id and every id that repeats an earlier row. */
  reportZeroAndDuplicates(onZero: (row: number) => void, onDuplicate: (row: number, id: number, firstRow: number) => void): void {
    const { ids } = this;
    const index = this.lookup();
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (id === 0) onZero(i);
      else {
        const first = index.get(id);
        if (first !== i) onDuplicate(i, id, first);
      }
    }
  }

  /** See `IdIndex.denseRows`. */
  get denseRows(): Int32Array | undefined {
    return this.lookup().denseRows;
  }

  /** First row with `id`, -1 if none (0 is never found). */
  row(id: number): number {
    return id > 0 ? this.lookup().get(id) : -1;
  }
}

// ---------------------------------------------------------------------------------------------
// Reader proofs: validating once.
//
// A reader such as the pprof decoder checks, while it builds a profile, much of what the value
// and reference rules check again: at a million samples, re-walking the 24.5M stack entries alone
// cost 0.07 s in Node and 0.3 s in a browser worker. A reader records what it proved; the
// registry's read, which validates the reader's result right after the reader returns, tells
// `validate` which reader that was (`trustReader`), and only then are proven rules skipped.
//
// Columns are typed arrays, which anyone holding the profile can change in place and which
// cannot be frozen, so a proof is not trusted later: it serves the first validation of its
// profile and is dropped by it, whatever that validation's options; a later validation (a
// write's, `profkit validate`, a caller's) checks everything. Within that first validation a
// rule is skipped only while every column its check reads is the very array the reader returned
// (a reader's options or an adapter that replaces a column lose the proof of its rules).

/**
 * A rule a reader can prove while building a profile (`recordReaderProof`), by the check of
 * `validate` it makes redundant:
 * - `samples.stacks`: `samples.locations.offsets` never decrease and every stack entry is a
 *   non-zero id that `locations` has (profkit.csr, pprof.CheckValid.4, R24);
 * - `samples.label_offsets`: `samples..label_offsets` never decrease (profkit.csr);
 * - `locations.ids`, `functions.ids`: ids are non-zero and unique (pprof.CheckValid.6/7, R29, R38);
 * - `locations.functions`: every non-zero `locations.function_id` is in `functions` (R30);
 * - `locations.inline`: `locations..inline_offsets` never decrease, and a location with inline
 *   lines has an innermost function (profkit.csr, profkit.inline);
 * - `inline_lines.functions`: every `.inline_lines.function_id` is non-zero and in `functions`
 *   (pprof.CheckValid.9);
 * - `functions.names`: names and system names are not empty (R39, R40);
 * - `labels.kind`: `.labels.is_num` is 0 or 1 and each label is a string or a number, not both
 *   (profkit.flag, profkit.label.kind);
 * - `flags`: the `.mappings` `has_*` flags and `locations..is_folded` are 0 or 1 (profkit.flag).
 */
export type ProvableRule =
  | 'samples.stacks'
  | 'samples.label_offsets'
  | 'locations.ids'
  | 'locations.functions'
  | 'locations.inline'
  | 'inline_lines.functions'
  | 'functions.ids'
  | 'functions.names'
  | 'labels.kind'
  | 'flags';

/** The columns (paths in the profile) each provable rule's check reads: the proof holds while they are the same arrays. */
const PROVABLE_COLUMNS: Record<ProvableRule, readonly (readonly string[])[]> = {
  'samples.stacks': [['samples', 'locations', 'offsets'], ['samples', 'locations', 'location_id'], ['locations', 'location_id']],
  'samples.label_offsets': [['samples', '.label_offsets']],
  'locations.ids': [['locations', 'location_id']],
  'locations.functions': [['locations', 'function_id'], ['functions', 'function_id']],
  'locations.inline': [['locations', '.inline_offsets'], ['locations', 'function_id']],
  'inline_lines.functions': [['.inline_lines', 'function_id'], ['functions', 'function_id']],
  'functions.ids': [['functions', 'function_id']],
  'functions.names': [['functions', 'name'], ['functions', 'system_name']],
  'labels.kind': [['.labels', 'is_num'], ['.labels', 'str'], ['.labels', 'num'], ['.labels', 'num_unit']],
  flags: [['.mappings', 'has_functions'], ['.mappings', 'has_filenames'], ['.mappings', 'has_line_numbers'], ['.mappings', 'has_inline_frames'], ['locations', '.is_folded']],
};

/** The columns `rule`'s check reads in `profile` (undefined where the profile has none). */
function provableColumns(profile: unknown, rule: ProvableRule): unknown[] {
  return PROVABLE_COLUMNS[rule].map((path) => valueAt(profile, path));
}

interface ReaderProof {
  reader: string;
  /** Rule → the columns its check reads, as the reader returned them. */
  columns: Map<ProvableRule, unknown[]>;
}

/** Proofs by profile object; weak, so an unvalidated profile's proof goes with it. */
const readerProofs = new WeakMap<object, ReaderProof>();

/**
 * Records that `reader` (the adapter's name) proved `rules` for `profile`, which it has just
 * built and is about to return unchanged. The registry's read then validates it without those
 * rules' checks (see `ValidateOptions.trustReader`). Call it last: a change after it (a column
 * replaced by another array) drops the proof of the rules reading that column, but a change in
 * place would go unseen by that one validation.
 */
export function recordReaderProof(profile: Profile, reader: string, rules: readonly ProvableRule[]): void {
  const columns = new Map<ProvableRule, unknown[]>();
  for (const rule of rules) columns.set(rule, provableColumns(profile, rule));
  readerProofs.set(profile, { reader, columns });
}

/** Whether a rule need not be checked (proven by the reader, its columns unchanged). */
type Proven = (rule: ProvableRule) => boolean;

const NOTHING_PROVEN: Proven = () => false;

/** Takes `profile`'s proof (one validation only) and says which rules it lets this validation skip. */
function takeReaderProof(profile: object, options: ValidateOptions): Proven {
  const proof = readerProofs.get(profile);
  if (proof === undefined) return NOTHING_PROVEN;
  readerProofs.delete(profile);
  if (options.trustReader === undefined || options.trustReader !== proof.reader || options.mode === 'strict-r') return NOTHING_PROVEN;
  return (rule) => {
    const then = proof.columns.get(rule);
    if (then === undefined) return false;
    const now = provableColumns(profile, rule);
    for (let i = 0; i < now.length; i++) if (now[i] !== then[i]) return false;
    return true;
  };
}

/**
 * Validates a profile and returns every problem found (see `ValidationResult`). Never throws on
 * bad input: anything, including non-objects, yields problems.
 */
export function validate(profile: unknown, options: ValidateOptions = {}): ValidationResult {
  const strict = options.mode === 'strict-r';
  const c = new Collector(Math.max(1, Math.floor(options.maxRowsPerRule ?? DEFAULT_MAX_ROWS)));

  if (!isObject(profile)) {
    c.error(C.PROFILE_TYPE, 'R1', 'profile', undefined, undefined, `a profile must be an object of tables, got ${describeType(profile)}`);
    return c.result();
  }
  const proven = takeReaderProof(profile, options);

  // Components: presence, kind, shape, unknown names.
  const shapeOk = new Set<ComponentName>();
  for (const name of PROFILE_COMPONENTS) {
    const rTable = R_TABLE_SET.has(name);
    const v = profile[name];
    if (v === undefined) {
      c.error(C.MISSING_TABLE, rTable ? 'R4' : 'profkit.schema', name, undefined, undefined, `the profile has no ${name} ${rTable ? 'table' : 'component'}`);
      continue;
    }
    if (!isObject(v)) {
      c.error(C.TABLE_TYPE, rTable ? 'R3' : 'profkit.schema', name, undefined, undefined, `${name} must be an object (of columns), got ${describeType(v)}`);
      continue;
    }
    const known = TABLE_COLUMNS[name];
    if (known) {
      for (const key of Object.keys(v)) {
        if (known.includes(key) || key.startsWith('.')) continue;
        c.error(C.UNKNOWN_COLUMN, R_NAMES_RULE[name] ?? 'profkit.schema', name, key, undefined, `${name} has a column ${q(key)} that is not one of ${known.filter((k) => !k.startsWith('.')).join(', ')}; extension columns must start with "."`);
      }
    }
    const parsed = (COMPONENT_SCHEMAS[name] as Shape<unknown>).safeParse(v);
    if (parsed.success) shapeOk.add(name);
    else for (const issue of parsed.error.issues) reportSchemaIssue(c, name, v, issue);
  }
  for (const key of Object.keys(profile)) {
    if (key.startsWith('.') || (PROFILE_COMPONENTS as string[]).includes(key)) continue;
    c.error(C.UNKNOWN_COMPONENT, 'R4', key, undefined, undefined, `the profile has a component ${q(key)} that is not one of meta, sample_types, samples, locations, functions; extension components must start with "."`);
  }

  const p = profile as unknown as Profile;
  const has = (n: ComponentName) => shapeOk.has(n);

  if (has('meta')) checkMeta(c, p, strict);
  if (has('sample_types')) checkSampleTypes(c, p, strict, has('samples'), has('.profile'));

  // Id lookups (reporting zero and duplicate ids on the way).
  const fnRows = has('functions') ? checkFunctions(c, p, strict, proven) : undefined;
  const mapRows = has('.mappings') ? checkMappings(c, p, proven) : undefined;
  const locRows = has('locations') ? checkLocations(c, p, strict, fnRows, mapRows, has('.inline_lines'), proven) : undefined;
  if (has('.inline_lines')) checkInlineLines(c, p, fnRows, proven);
  if (has('samples')) checkSamples(c, p, strict, locRows, has('sample_types'), has('.labels'), has('.extensions'), proven);
  if (has('.labels')) checkLabels(c, p, proven);
  return c.result();
}

/**
 * Throws `ProfkitError(PROFKIT_E_INVALID_PROFILE)` when `validate()` finds an error (warnings do
 * not throw). The message names the first error and the number of errors; `detail.problems` has
 * the full list, `detail.file` the file when given.
 */
export function assertValid(profile: unknown, file?: string, options: ValidateOptions = {}): asserts profile is Profile {
  const r = validate(profile, options);
  if (r.ok) return;
  const first = r.problems.find((x) => x.severity === 'error')!;
  const more = r.errorCount - 1;
  const message =
    `invalid profile: ${where(first.table, first.column, first.row)}: ${first.message} [${first.code}, rule ${first.rule}]` +
    (more > 0 ? ` (and ${more} more error${more === 1 ? '' : 's'})` : '');
  throw new ProfkitError(ErrorCodes.INVALID_PROFILE, message, {
    file,
    rule: first.rule,
    table: first.table,
    column: first.column,
    row: first.row,
    errorCount: r.errorCount,
    problems: r.problems,
  });
}

function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name}`;
  return typeof v;
}

function valueAt(obj: unknown, path: readonly PropertyKey[]): unknown {
  let v = obj;
  for (const k of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

function reportSchemaIssue(c: Collector, table: ComponentName, value: unknown, issue: ShapeIssue): void {
  const column = issue.path.length ? issue.path.map(String).join('.') : undefined;
  const params = issue.code === 'custom' ? (issue.params as { code?: string } | undefined) : undefined;
  const rTable = R_TABLE_SET.has(table);
  if (table === '.profile') {
    c.error(C.FACT_TYPE, 'profkit.schema', table, column, undefined, `fact ${column ?? ''} of .profile: ${issue.message}`);
    return;
  }
  if (table === '.extensions') {
    c.error(params?.code ?? C.EXTENSION_SHAPE, 'profkit.schema', table, column, undefined, `format extension ${column ?? ''}: ${issue.message}`);
    return;
  }
  if (params?.code) {
    const code = params.code;
    const rule = code === C.CSR_SHAPE ? 'profkit.csr' : code === C.COLUMN_LENGTH && rTable && !column?.startsWith('.') ? 'R3' : 'profkit.schema';
    c.error(code, rule, table, column, undefined, issue.message);
    return;
  }
  const missing = valueAt(value, issue.path) === undefined;
  const rules = column !== undefined ? R_COLUMN_RULES[table]?.[column] : undefined;
  const rule = rules ? (missing ? rules.missing : rules.type) : 'profkit.schema';
  if (missing) c.error(C.MISSING_COLUMN, rule, table, column, undefined, `${where(table, column)} is missing`);
  else c.error(C.COLUMN_TYPE, rule, table, column, undefined, `${where(table, column)} has the wrong type: ${issue.message}`);
}

// ---------------------------------------------------------------------------------------------
// Value and reference rules, one function per table. Each runs only when the table's shape is
// valid, so the loops can trust column types and lengths.

function checkMeta(c: Collector, p: Profile, strict: boolean): void {
  const { key, value } = p.meta;
  const seen = new Map<string, number>();
  for (let i = 0; i < key.length; i++) {
    const first = seen.get(key[i]!);
    if (first !== undefined) c.error(C.PROFKIT_META_DUPLICATE_KEY, 'profkit.meta.keys', 'meta', 'key', i, () => `meta key ${q(key[i]!)} repeats row ${first}; keys must be unique`);
    else seen.set(key[i]!, i);
  }
  if (strict) {
    if (key.length !== 1) c.error(C.R8_META_ONE_ROW, 'R8', 'meta', undefined, undefined, `meta has ${key.length} rows; R requires exactly one (key "version")`);
    for (let i = 0; i < key.length; i++) {
      if (key[i] !== 'version') c.error(C.R9_META_KEY_VERSION, 'R9', 'meta', 'key', i, () => `meta key is ${q(key[i]!)}; R requires "version"`);
    }
  } else if (!seen.has('version')) {
    c.error(C.R9_META_KEY_VERSION, 'R9', 'meta', 'key', undefined, 'meta has no row with key "version"');
  }
  for (let i = 0; i < key.length; i++) {
    if (!strict && key[i] !== 'version') continue;
    if (!isRPackageVersion(value[i]!)) {
      c.error(C.R10_META_VERSION_PARSE, 'R10', 'meta', 'value', i, () => `version ${q(value[i]!)} is not a version R's package_version() accepts (two or more numbers separated by "." or "-", e.g. "1.0")`);
    }
  }
}

function checkSampleTypes(c: Collector, p: Profile, strict: boolean, samplesOk: boolean, factsOk: boolean): void {
  const { type, unit } = p.sample_types;
  if (samplesOk && type.length === 0 && p.samples.value.length > 0) {
    c.error(C.PPROF_MISSING_SAMPLE_TYPE, 'pprof.CheckValid.1', 'sample_types', undefined, undefined, `there are ${p.samples.value.length} samples but no sample type`);
  }
  if (strict) {
    if (type.length !== 1) c.error(C.R14_SAMPLE_TYPES_ONE_ROW, 'R14', 'sample_types', undefined, undefined, `sample_types has ${type.length} rows; R requires exactly one (samples/count)`);
    for (let i = 0; i < type.length; i++) {
      if (type[i] !== 'samples') c.error(C.R15_SAMPLE_TYPE_SAMPLES, 'R15', 'sample_types', 'type', i, () => `sample type is ${q(type[i]!)}; R requires "samples"`);
      if (unit[i] !== 'count') c.error(C.R16_SAMPLE_UNIT_COUNT, 'R16', 'sample_types', 'unit', i, () => `sample unit is ${q(unit[i]!)}; R requires "count"`);
    }
  }
  if (factsOk) {
    const d = p['.profile'].default_sample_type;
    if (d !== '' && !type.includes(d)) {
      c.warning(C.PROFKIT_DEFAULT_SAMPLE_TYPE_UNKNOWN, 'profkit.default_sample_type', '.profile', 'default_sample_type', undefined, `default_sample_type ${q(d)} names no sample type (${type.map(q).join(', ') || 'none'}); the last type is used instead`);
    }
  }
}

/** Checks a Float64 line-like column: safe integers, not negative, int32 in strict-r. */
function checkLineColumn(
  c: Collector,
  table: string,
  column: string,
  values: Float64Array,
  negative: { code: string; rule: string },
  strictRule: string | undefined,
): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!Number.isSafeInteger(v)) {
      c.error(C.PROFKIT_NOT_SAFE_INTEGER, 'profkit.integer', table, column, i, () => `${where(table, column, i)} is ${v}; it must be a safe integer (0 = unknown)`);
    } else if (v < 0) {
      c.error(negative.code, negative.rule, table, column, i, () => `${where(table, column, i)} is ${v}; it must be >= 0 (0 = unknown)`);
    } else if (strictRule !== undefined && v > INT32_MAX) {
      c.error(C.STRICT_R_INT32, strictRule, table, column, i, () => `${where(table, column, i)} is ${v}, more than R's largest integer 2147483647`);
    }
  }
}

function checkFlags(c: Collector, table: string, column: string, values: Uint8Array): void {
  for (let i = 0; i < values.length; i++) {
    if (values[i]! > 1) c.error(C.PROFKIT_FLAG_NOT_BOOLEAN, 'profkit.flag', table, column, i, () => `${where(table, column, i)} is ${values[i]}; flags are 0 or 1`);
  }
}

function checkIdsInt32(c: Collector, table: string, column: string, ids: Uint32Array, rule: string): void {
  for (let i = 0; i < ids.length; i++) {
    if (ids[i]! > INT32_MAX) c.error(C.STRICT_R_INT32, rule, table, column, i, () => `${where(table, column, i)} is ${ids[i]}, more than R's largest integer 2147483647`);
  }
}

/** Checks monotone offsets; returns true when offsets never decrease. */
function checkMonotone(c: Collector, table: string, column: string, offsets: Uint32Array): boolean {
  let ok = true;
  for (let i = 0; i + 1 < offsets.length; i++) {
    if (offsets[i + 1]! < offsets[i]!) {
      ok = false;
      c.error(C.PROFKIT_CSR_NOT_MONOTONE, 'profkit.csr', table, column, i, () => `${where(table, column, i)}: offsets decrease from ${offsets[i]} to ${offsets[i + 1]}`);
    }
  }
  return ok;
}

function checkFunctions(c: Collector, p: Profile, strict: boolean, proven: Proven): IdRows {
  const f = p.functions;
  const rows = new IdRows(f.function_id);
  if (!proven('functions.ids')) {
    rows.reportZeroAndDuplicates(
      (i) => c.error(C.PPROF_FUNCTION_ID_ZERO, 'pprof.CheckValid.6', 'functions', 'function_id', i, `functions.function_id row ${i} is 0; ids must be nonzero (0 means none)`),
      (i, id, first) => c.error(C.R38_FUNCTION_ID_UNIQUE, 'R38', 'functions', 'function_id', i, () => `function_id ${id} of row ${i} repeats row ${first}; ids must be unique`),
    );
  }
  if (!proven('functions.names')) {
    for (let i = 0; i < f.name.length; i++) {
      if (f.name[i] === '') c.error(C.R39_FUNCTION_NAME_NONEMPTY, 'R39', 'functions', 'name', i, () => `function ${f.function_id[i]} (row ${i}) has an empty name`);
      if (f.system_name[i] === '') c.error(C.R40_FUNCTION_SYSTEM_NAME_NONEMPTY, 'R40', 'functions', 'system_name', i, () => `function ${f.function_id[i]} (row ${i}) has an empty system_name`);
    }
  }
  checkLineColumn(c, 'functions', 'start_line', f.start_line, { code: C.R41_FUNCTION_START_LINE_NONNEGATIVE, rule: 'R41' }, strict ? 'R37' : undefined);
  if (strict) checkIdsInt32(c, 'functions', 'function_id', f.function_id, 'R33');
  return rows;
}

function checkMappings(c: Collector, p: Profile, proven: Proven): IdRows {
  const m = p['.mappings'];
  // Mappings are few; their ids are checked whatever a reader proved.
  const rows = new IdRows(m.mapping_id);
  rows.reportZeroAndDuplicates(
    (i) => c.error(C.PPROF_MAPPING_ID_ZERO, 'pprof.CheckValid.5', '.mappings', 'mapping_id', i, `.mappings.mapping_id row ${i} is 0; ids must be nonzero (0 means none)`),
    (i, id, first) => c.error(C.PPROF_DUPLICATE_MAPPING_ID, 'pprof.CheckValid.5', '.mappings', 'mapping_id', i, () => `mapping_id ${id} of row ${i} repeats row ${first}; ids must be unique`),
  );
  for (let i = 0; i < m.mapping_id.length; i++) {
    if (m.memory_start[i]! > m.memory_limit[i]!) {
      c.warning(C.PROFKIT_MAPPING_RANGE, 'profkit.mapping.range', '.mappings', 'memory_limit', i, () => `mapping ${m.mapping_id[i]} (row ${i}) starts at 0x${m.memory_start[i]!.toString(16)} after its limit 0x${m.memory_limit[i]!.toString(16)}`);
    }
  }
  if (!proven('flags')) {
    checkFlags(c, '.mappings', 'has_functions', m.has_functions);
    checkFlags(c, '.mappings', 'has_filenames', m.has_filenames);
    checkFlags(c, '.mappings', 'has_line_numbers', m.has_line_numbers);
    checkFlags(c, '.mappings', 'has_inline_frames', m.has_inline_frames);
  }
  return rows;
}

function checkLocations(c: Collector, p: Profile, strict: boolean, fnRows: IdRows | undefined, mapRows: IdRows | undefined, inlineOk: boolean, proven: Proven): IdRows {
  const l = p.locations;
  const n = l.location_id.length;
  const rows = new IdRows(l.location_id);
  if (!proven('locations.ids')) {
    rows.reportZeroAndDuplicates(
      (i) => c.error(C.PPROF_LOCATION_ID_ZERO, 'pprof.CheckValid.7', 'locations', 'location_id', i, `locations.location_id row ${i} is 0; ids must be nonzero (0 means none)`),
      (i, id, first) => c.error(C.R29_LOCATION_ID_UNIQUE, 'R29', 'locations', 'location_id', i, () => `location_id ${id} of row ${i} repeats row ${first}; ids must be unique`),
    );
  }
  if (fnRows && !proven('locations.functions')) {
    for (let i = 0; i < n; i++) {
      const f = l.function_id[i]!;
      if (f !== 0 && fnRows.row(f) < 0) c.error(C.R30_LOCATION_FUNCTION_EXISTS, 'R30', 'locations', 'function_id', i, () => `location ${l.location_id[i]} (row ${i}) refers to function_id ${f}, which is not in functions`);
    }
  }
  checkLineColumn(c, 'locations', 'line', l.line, { code: C.R31_LOCATION_LINE_NONNEGATIVE, rule: 'R31' }, strict ? 'R28' : undefined);
  checkLineColumn(c, 'locations', '.column', l['.column'], { code: C.PROFKIT_LINE_NONNEGATIVE, rule: 'profkit.line' }, undefined);
  if (strict) {
    checkIdsInt32(c, 'locations', 'location_id', l.location_id, 'R26');
    checkIdsInt32(c, 'locations', 'function_id', l.function_id, 'R27');
  }
  if (!proven('flags')) checkFlags(c, 'locations', '.is_folded', l['.is_folded']);
  if (mapRows) {
    const m = p['.mappings'];
    for (let i = 0; i < n; i++) {
      const id = l['.mapping_id'][i]!;
      if (id === 0) continue;
      const r = mapRows.row(id);
      if (r < 0) {
        c.error(C.PPROF_LOCATION_MAPPING_EXISTS, 'pprof.CheckValid.8', 'locations', '.mapping_id', i, () => `location ${l.location_id[i]} (row ${i}) refers to mapping_id ${id}, which is not in .mappings`);
        continue;
      }
      const a = l['.address'][i]!;
      const start = m.memory_start[r]!;
      const limit = m.memory_limit[r]!;
      if (a !== 0n && limit > start && (a < start || a >= limit)) {
        c.warning(C.PROFKIT_ADDRESS_OUTSIDE_MAPPING, 'profkit.address.mapping', 'locations', '.address', i, () => `location ${l.location_id[i]} (row ${i}) has address 0x${a.toString(16)} outside its mapping ${id} [0x${start.toString(16)}, 0x${limit.toString(16)})`);
      }
    }
  }
  const off = l['.inline_offsets'];
  const inlineProven = proven('locations.inline');
  const monotone = inlineProven || checkMonotone(c, 'locations', '.inline_offsets', off);
  if (inlineOk) {
    const rowsInline = p['.inline_lines'].function_id.length;
    if (off[n] !== rowsInline) {
      c.error(C.CSR_SHAPE, 'profkit.csr', 'locations', '.inline_offsets', undefined, `locations..inline_offsets ends at ${off[n]} but .inline_lines has ${rowsInline} rows`);
    }
  }
  if (monotone && !inlineProven) {
    for (let i = 0; i < n; i++) {
      if (off[i + 1]! > off[i]! && l.function_id[i] === 0) {
        c.error(C.PROFKIT_INLINE_WITHOUT_LINE, 'profkit.inline', 'locations', '.inline_offsets', i, () => `location ${l.location_id[i]} (row ${i}) has inline lines but no innermost line (function_id 0)`);
      }
    }
  }
  return rows;
}

function checkInlineLines(c: Collector, p: Profile, fnRows: IdRows | undefined, proven: Proven): void {
  const t = p['.inline_lines'];
  if (!proven('inline_lines.functions')) {
    for (let i = 0; i < t.function_id.length; i++) {
      const f = t.function_id[i]!;
      if (f === 0) c.error(C.PPROF_LINE_FUNCTION_ZERO, 'pprof.CheckValid.9', '.inline_lines', 'function_id', i, `.inline_lines.function_id row ${i} is 0; every line needs a function`);
      else if (fnRows && fnRows.row(f) < 0) c.error(C.PPROF_LINE_FUNCTION_EXISTS, 'pprof.CheckValid.9', '.inline_lines', 'function_id', i, () => `.inline_lines row ${i} refers to function_id ${f}, which is not in functions`);
    }
  }
  checkLineColumn(c, '.inline_lines', 'line', t.line, { code: C.PROFKIT_LINE_NONNEGATIVE, rule: 'profkit.line' }, undefined);
  checkLineColumn(c, '.inline_lines', 'column', t.column, { code: C.PROFKIT_LINE_NONNEGATIVE, rule: 'profkit.line' }, undefined);
}

function checkSamples(
  c: Collector,
  p: Profile,
  strict: boolean,
  locRows: IdRows | undefined,
  sampleTypesOk: boolean,
  labelsOk: boolean,
  extensionsOk: boolean,
  proven: Proven,
): void {
  const s = p.samples;
  const n = s.value.length;
  const values = s['.values'];
  if (sampleTypesOk && values.length !== p.sample_types.type.length) {
    c.error(C.PPROF_VALUES_COUNT, 'pprof.CheckValid.3', 'samples', '.values', undefined, `samples have ${values.length} value columns but there are ${p.sample_types.type.length} sample types`);
  }
  for (let k = 0; k < values.length; k++) {
    if (values[k]!.length !== n) c.error(C.PPROF_VALUES_COUNT, 'pprof.CheckValid.3', 'samples', `.values[${k}]`, undefined, `value column ${k} has ${values[k]!.length} rows but there are ${n} samples`);
  }
  const v0 = values[0];
  if (v0 !== undefined && v0 !== s.value && v0.length === n) {
    for (let i = 0; i < n; i++) {
      if (v0[i] !== s.value[i]) c.error(C.PROFKIT_VALUES_ALIAS, 'profkit.values.alias', 'samples', 'value', i, () => `samples.value row ${i} is ${s.value[i]} but .values[0] is ${v0[i]}; they must be the same column`);
    }
  }
  if (strict) {
    const v = s.value;
    for (let i = 0; i < n; i++) {
      const x = v[i]!;
      if (x <= 0n) c.error(C.R20_SAMPLE_VALUE_POSITIVE, 'R20', 'samples', 'value', i, () => `samples.value row ${i} is ${x}; R requires values > 0`);
      else if (x > INT32_MAX_BIG) c.error(C.R18_SAMPLE_VALUE_INT32, 'R18', 'samples', 'value', i, () => `samples.value row ${i} is ${x}, more than R's largest integer 2147483647`);
    }
  }

  // Stacks.
  const { offsets, location_id: ids } = s.locations;
  if (!proven('samples.stacks') && checkMonotone(c, 'samples', 'locations.offsets', offsets) && !(offsets.length === n + 1 && allKnownIds(ids, offsets[0]!, offsets[n]!, locRows, strict))) {
    for (let i = 0; i < n; i++) {
      const end = offsets[i + 1]!;
      for (let j = offsets[i]!; j < end; j++) {
        const id = ids[j]!;
        if (id === 0) c.error(C.PPROF_SAMPLE_LOCATION_ZERO, 'pprof.CheckValid.4', 'samples', 'locations.location_id', i, () => `sample ${i} has location id 0 at stack position ${j - offsets[i]!}`);
        else if (locRows && locRows.row(id) < 0) c.error(C.R24_SAMPLE_LOCATION_EXISTS, 'R24', 'samples', 'locations.location_id', i, () => `sample ${i} refers to location_id ${id} (stack position ${j - offsets[i]!}), which is not in locations`);
        else if (strict && id > INT32_MAX) c.error(C.STRICT_R_INT32, 'R22', 'samples', 'locations.location_id', i, () => `sample ${i} refers to location_id ${id}, more than R's largest integer 2147483647`);
      }
    }
  }

  // Labels.
  const lo = s['.label_offsets'];
  if (lo !== undefined) {
    if (!proven('samples.label_offsets')) checkMonotone(c, 'samples', '.label_offsets', lo);
    if (labelsOk) {
      const rows = p['.labels'].key.length;
      if (lo[n] !== rows) c.error(C.CSR_SHAPE, 'profkit.csr', 'samples', '.label_offsets', undefined, `samples..label_offsets ends at ${lo[n]} but .labels has ${rows} rows`);
    }
  } else if (labelsOk && p['.labels'].key.length > 0) {
    c.error(C.CSR_SHAPE, 'profkit.csr', 'samples', '.label_offsets', undefined, `.labels has ${p['.labels'].key.length} rows but samples have no .label_offsets`);
  }

  // Per-sample extension columns.
  if (extensionsOk) {
    for (const [name, ext] of Object.entries(p['.extensions'])) {
      for (const [col, data] of Object.entries(ext.samples ?? {})) {
        if (isColumn(data) && data.length !== n) {
          c.error(C.PROFKIT_EXTENSION_SAMPLES_LENGTH, 'profkit.extension.samples', '.extensions', `${name}.samples.${col}`, undefined, `extension column ${name}.samples.${col} has ${data.length} rows but there are ${n} samples`);
        }
      }
    }
  }
}

/**
 * Whether every stack entry in `ids[from, to)` is a known, non-zero location id (and, when
 * `strict`, at most R's largest integer): one tight pass over the dense id → row array. The
 * common (valid) case of millions of ids then costs no per-sample work; on any miss the caller
 * runs the per-sample loop that names the sample and the stack position.
 */
function allKnownIds(ids: Uint32Array, from: number, to: number, locRows: IdRows | undefined, strict: boolean): boolean {
  const dense = locRows?.denseRows;
  if (dense === undefined || to > ids.length) return false;
  const m = dense.length;
  const max = strict ? INT32_MAX : 0xffffffff;
  for (let j = from; j < to; j++) {
    const id = ids[j]!;
    if (id === 0 || id >= m || id > max || dense[id]! < 0) return false;
  }
  return true;
}

function checkLabels(c: Collector, p: Profile, proven: Proven): void {
  const t = p['.labels'];
  const kind = !proven('labels.kind');
  if (kind) checkFlags(c, '.labels', 'is_num', t.is_num);
  for (let i = 0; i < t.key.length; i++) {
    if (t.key[i] === '') c.warning(C.PROFKIT_LABEL_EMPTY_KEY, 'profkit.label.key', '.labels', 'key', i, `.labels row ${i} has an empty key`);
    if (!kind) continue;
    if (t.is_num[i] === 1) {
      if (t.str[i] !== '') c.error(C.PROFKIT_LABEL_KIND, 'profkit.label.kind', '.labels', 'str', i, () => `numeric label ${q(t.key[i]!)} (row ${i}) also has a string value ${q(t.str[i]!)}`);
    } else if (t.is_num[i] === 0) {
      if (t.num[i] !== 0n) c.error(C.PROFKIT_LABEL_KIND, 'profkit.label.kind', '.labels', 'num', i, () => `string label ${q(t.key[i]!)} (row ${i}) also has a number ${t.num[i]}`);
      if (t.num_unit[i] !== '') c.error(C.PROFKIT_LABEL_KIND, 'profkit.label.kind', '.labels', 'num_unit', i, () => `string label ${q(t.key[i]!)} (row ${i}) has a number unit ${q(t.num_unit[i]!)}`);
    }
  }
}
