/**
 * Shapes of the profile tables (see `model.ts`, `shape.ts` and docs/data-model.md).
 *
 * The shapes work at column level: a column is checked to be the right typed array (or an array
 * of strings) with `instanceOf`, never row by row with objects, so checking the shape of a
 * table with millions of rows costs a handful of type tests. Each table schema also checks, in a
 * refinement that runs once its columns have the right types, that its columns are equally long
 * and that its compressed-sparse-row offset columns have the right shape (`rows + 1` entries,
 * starting at 0). Value and reference rules (unique ids, existing referenced rows, monotone
 * offsets, ...) are not the shapes' job: `validate()` runs them as tight loops over the typed arrays.
 *
 * Custom issues raised by the refinements carry `params: { code, column }` with a stable
 * `SCHEMA_*` code that `validate()` reports as is.
 */

import type { Column, FactValue } from './model.js';
import * as s from './shape.js';

/** Stable codes of the structural (schema) problems. */
export const SchemaCodes = {
  /** The profile is not an object. */
  PROFILE_TYPE: 'SCHEMA_PROFILE_TYPE',
  /** A required table / component is missing. */
  MISSING_TABLE: 'SCHEMA_MISSING_TABLE',
  /** A table / component is not an object of the right kind. */
  TABLE_TYPE: 'SCHEMA_TABLE_TYPE',
  /** A component whose name does not start with `.` is not one of the model's. */
  UNKNOWN_COMPONENT: 'SCHEMA_UNKNOWN_COMPONENT',
  /** A required column is missing. */
  MISSING_COLUMN: 'SCHEMA_MISSING_COLUMN',
  /** A column whose name does not start with `.` is not one of the table's. */
  UNKNOWN_COLUMN: 'SCHEMA_UNKNOWN_COLUMN',
  /** A column has the wrong type (e.g. a `Float64Array` where ids need a `Uint32Array`). */
  COLUMN_TYPE: 'SCHEMA_COLUMN_TYPE',
  /** The columns of a table are not equally long. */
  COLUMN_LENGTH: 'SCHEMA_COLUMN_LENGTH',
  /** An offsets column does not have `rows + 1` entries starting at 0 and ending at the child length. */
  CSR_SHAPE: 'SCHEMA_CSR_SHAPE',
  /** A profile fact (`.profile`) is missing or has the wrong type or range. */
  FACT_TYPE: 'SCHEMA_FACT_TYPE',
  /** A format extension (`.extensions[name]`) does not have the FormatExtension shape. */
  EXTENSION_SHAPE: 'SCHEMA_EXTENSION_SHAPE',
} as const;

export type SchemaCode = (typeof SchemaCodes)[keyof typeof SchemaCodes];

/** True when `v` is an array whose every element is a string (one tight loop, no shape per row). */
export function isStringColumn(v: unknown): v is string[] {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== 'string') return false;
  return true;
}

/** Column schemas, one per column type of the model. */
export const uint8ColumnSchema = s.instanceOf<Uint8Array>(Uint8Array);
export const uint32ColumnSchema = s.instanceOf<Uint32Array>(Uint32Array);
export const int32ColumnSchema = s.instanceOf<Int32Array>(Int32Array);
export const float64ColumnSchema = s.instanceOf<Float64Array>(Float64Array);
export const bigInt64ColumnSchema = s.instanceOf<BigInt64Array>(BigInt64Array);
export const bigUint64ColumnSchema = s.instanceOf<BigUint64Array>(BigUint64Array);
export const stringColumnSchema = s.custom<string[]>(isStringColumn, 'Invalid input: expected an array of strings');

/** Any column a table may hold (`Column` in model.ts). */
export const columnSchema: s.Shape<Column> = s.union<Column>([
  uint8ColumnSchema,
  uint32ColumnSchema,
  int32ColumnSchema,
  float64ColumnSchema,
  bigInt64ColumnSchema,
  bigUint64ColumnSchema,
  stringColumnSchema,
]);

/** True when `v` is one of the model's column types. */
export function isColumn(v: unknown): v is Column {
  return (
    v instanceof Uint8Array ||
    v instanceof Uint32Array ||
    v instanceof Int32Array ||
    v instanceof Float64Array ||
    v instanceof BigInt64Array ||
    v instanceof BigUint64Array ||
    isStringColumn(v)
  );
}

function lengthOf(v: unknown): number {
  return (v as { length: number }).length;
}

function issue(addIssue: s.AddIssue, code: SchemaCode, path: (string | number)[], message: string): void {
  addIssue({ path, message, params: { code, column: path.join('.') } });
}


/** Known columns of each table component, in the model's order (dotted ones are extensions). */
export const KNOWN_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  meta: ['key', 'value'],
  sample_types: ['type', 'unit'],
  samples: ['value', 'locations', '.values', '.label_offsets'],
  locations: ['location_id', 'function_id', 'line', '.column', '.address', '.mapping_id', '.is_folded', '.inline_offsets'],
  functions: ['function_id', 'name', 'system_name', 'filename', 'start_line'],
  '.inline_lines': ['function_id', 'line', 'column'],
  '.mappings': [
    'mapping_id',
    'memory_start',
    'memory_limit',
    'file_offset',
    'filename',
    'build_id',
    'has_functions',
    'has_filenames',
    'has_line_numbers',
    'has_inline_frames',
  ],
  '.labels': ['key', 'str', 'num', 'num_unit', 'is_num'],
};

/**
 * Checks that `columns` have the length of `reference`, that `offsets` columns have `rows + 1`
 * entries starting at 0, and that extra dotted columns are columns of the table's length.
 */
function tableShape(reference: string, columns: readonly string[], offsets: readonly string[] = []) {
  const known = new Set([reference, ...columns, ...offsets]);
  return (t: Record<string, unknown>, ctx: s.AddIssue): void => {
    const n = lengthOf(t[reference]);
    for (const c of columns) {
      const len = lengthOf(t[c]);
      if (len !== n) issue(ctx, SchemaCodes.COLUMN_LENGTH, [c], `column ${c} has ${len} rows but ${reference} has ${n}`);
    }
    for (const c of offsets) {
      const o = t[c] as Uint32Array | undefined;
      if (o === undefined) continue;
      if (o.length !== n + 1) issue(ctx, SchemaCodes.CSR_SHAPE, [c], `offsets column ${c} has ${o.length} entries but must have rows + 1 = ${n + 1}`);
      else if (o[0] !== 0) issue(ctx, SchemaCodes.CSR_SHAPE, [c], `offsets column ${c} must start at 0, starts at ${o[0]}`);
    }
    for (const key of Object.keys(t)) {
      if (known.has(key) || !key.startsWith('.')) continue;
      const v = t[key];
      if (!isColumn(v)) issue(ctx, SchemaCodes.COLUMN_TYPE, [key], `extension column ${key} is not a typed array or an array of strings`);
      else if (v.length !== n) issue(ctx, SchemaCodes.COLUMN_LENGTH, [key], `extension column ${key} has ${v.length} rows but ${reference} has ${n}`);
    }
  };
}

export const MetaTableSchema = s.refine(
  s.object({ key: stringColumnSchema, value: stringColumnSchema }),
  tableShape('key', ['value']),
);

export const SampleTypesTableSchema = s.refine(
  s.object({ type: stringColumnSchema, unit: stringColumnSchema }),
  tableShape('type', ['unit']),
);

/** The stack list column of `samples` in CSR form. */
export const StackColumnSchema = s.refine(
  s.object({ offsets: uint32ColumnSchema, location_id: uint32ColumnSchema }),
  (stack, ctx) => {
    const o = stack.offsets;
    if (o.length === 0) issue(ctx, SchemaCodes.CSR_SHAPE, ['offsets'], 'offsets column locations.offsets is empty; it must have rows + 1 entries');
    else if (o[0] !== 0) issue(ctx, SchemaCodes.CSR_SHAPE, ['offsets'], `offsets column locations.offsets must start at 0, starts at ${o[0]}`);
    else if (o[o.length - 1] !== stack.location_id.length) {
      issue(ctx, SchemaCodes.CSR_SHAPE, ['offsets'], `offsets column locations.offsets ends at ${o[o.length - 1]} but locations.location_id has ${stack.location_id.length} entries`);
    }
  },
);

export const SamplesTableSchema = s.refine(
  s.object({
    value: bigInt64ColumnSchema,
    locations: StackColumnSchema,
    '.values': s.array(bigInt64ColumnSchema),
    '.label_offsets': s.optional(uint32ColumnSchema),
  }),
  (t, ctx) => {
    const n = t.value.length;
    if (t.locations.offsets.length !== n + 1) {
      issue(ctx, SchemaCodes.CSR_SHAPE, ['locations', 'offsets'], `offsets column locations.offsets has ${t.locations.offsets.length} entries but must have rows + 1 = ${n + 1}`);
    }
    // `.values` lengths are checked by validate() (pprof CheckValid rule 3); `locations` is a
    // list column with its own shape.
    tableShape('value', [], ['.label_offsets'])(withoutKeys(t, ['locations', '.values']), ctx);
  },
);

export const LocationsTableSchema = s.refine(
  s.object({
    location_id: uint32ColumnSchema,
    function_id: uint32ColumnSchema,
    line: float64ColumnSchema,
    '.column': float64ColumnSchema,
    '.address': bigUint64ColumnSchema,
    '.mapping_id': uint32ColumnSchema,
    '.is_folded': uint8ColumnSchema,
    '.inline_offsets': uint32ColumnSchema,
  }),
  tableShape('location_id', ['function_id', 'line', '.column', '.address', '.mapping_id', '.is_folded'], ['.inline_offsets']),
);

export const FunctionsTableSchema = s.refine(
  s.object({
    function_id: uint32ColumnSchema,
    name: stringColumnSchema,
    system_name: stringColumnSchema,
    filename: stringColumnSchema,
    start_line: float64ColumnSchema,
  }),
  tableShape('function_id', ['name', 'system_name', 'filename', 'start_line']),
);

export const InlineLinesTableSchema = s.refine(
  s.object({ function_id: uint32ColumnSchema, line: float64ColumnSchema, column: float64ColumnSchema }),
  tableShape('function_id', ['line', 'column']),
);

export const MappingsTableSchema = s.refine(
  s.object({
    mapping_id: uint32ColumnSchema,
    memory_start: bigUint64ColumnSchema,
    memory_limit: bigUint64ColumnSchema,
    file_offset: bigUint64ColumnSchema,
    filename: stringColumnSchema,
    build_id: stringColumnSchema,
    has_functions: uint8ColumnSchema,
    has_filenames: uint8ColumnSchema,
    has_line_numbers: uint8ColumnSchema,
    has_inline_frames: uint8ColumnSchema,
  }),
  tableShape('mapping_id', KNOWN_COLUMNS['.mappings']!.slice(1)),
);

export const LabelsTableSchema = s.refine(
  s.object({ key: stringColumnSchema, str: stringColumnSchema, num: bigInt64ColumnSchema, num_unit: stringColumnSchema, is_num: uint8ColumnSchema }),
  tableShape('key', ['str', 'num', 'num_unit', 'is_num']),
);

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const int64 = s.bigintIn(INT64_MIN, INT64_MAX);

export const ValueTypeSchema = s.object({ type: s.string(), unit: s.string() });

export const ProfileFactsSchema = s.object({
  period_type: s.optional(ValueTypeSchema),
  period: int64,
  time_nanos: int64,
  duration_nanos: int64,
  comments: stringColumnSchema,
  drop_frames: s.string(),
  keep_frames: s.string(),
  default_sample_type: s.string(),
  doc_url: s.string(),
});

/** Deepest nesting accepted in extension facts (guards against cycles and runaway recursion). */
export const MAX_FACT_DEPTH = 64;

/**
 * True when `v` is a `FactValue`: JSON-compatible data plus bigint, no cycles, at most
 * `MAX_FACT_DEPTH` levels deep, numbers finite.
 */
export function isFactValue(v: unknown, depth = 0, seen: WeakSet<object> = new WeakSet()): v is FactValue {
  if (v === null || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'bigint') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (typeof v !== 'object' || depth >= MAX_FACT_DEPTH || seen.has(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) return false;
  seen.add(v);
  const values = Array.isArray(v) ? v : Object.values(v);
  for (let i = 0; i < values.length; i++) if (!isFactValue(values[i], depth + 1, seen)) return false;
  seen.delete(v);
  return true;
}

export const factValueSchema = s.custom<FactValue>(
  (v) => isFactValue(v),
  `Invalid input: expected JSON-compatible data (bigint allowed), finite numbers, no cycles, at most ${MAX_FACT_DEPTH} levels`,
);

/** A free-standing extension table: columns of equal length. */
export const ExtensionTableSchema = s.refine(s.record(columnSchema), (t, ctx) => {
  const keys = Object.keys(t);
  if (keys.length === 0) return;
  const n = t[keys[0]!]!.length;
  for (const k of keys.slice(1)) {
    if (t[k]!.length !== n) issue(ctx, SchemaCodes.COLUMN_LENGTH, [k], `column ${k} has ${t[k]!.length} rows but ${keys[0]} has ${n}`);
  }
});

export const FormatExtensionSchema = s.object({
  facts: s.optional(s.record(factValueSchema)),
  samples: s.optional(s.record(columnSchema)),
  tables: s.optional(s.record(ExtensionTableSchema)),
});

/** True for `{}`-like objects (not arrays, typed arrays, class instances). */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

export const ExtensionsSchema = s.record(
  s.pipe(s.custom<Record<string, unknown>>(isPlainObject, 'Invalid input: a format extension must be a plain object'), FormatExtensionSchema),
  s.string(/^./su, 'a format name is not empty'),
);

/** Schema of every component of a profile, by component name. */
export const COMPONENT_SCHEMAS = {
  meta: MetaTableSchema,
  sample_types: SampleTypesTableSchema,
  samples: SamplesTableSchema,
  locations: LocationsTableSchema,
  functions: FunctionsTableSchema,
  '.inline_lines': InlineLinesTableSchema,
  '.mappings': MappingsTableSchema,
  '.labels': LabelsTableSchema,
  '.profile': ProfileFactsSchema,
  '.extensions': ExtensionsSchema,
} as const;

export type ComponentName = keyof typeof COMPONENT_SCHEMAS;

/** The components every profile has: R's five tables, then profkit's dotted ones. */
export const PROFILE_COMPONENTS = Object.keys(COMPONENT_SCHEMAS) as ComponentName[];

/**
 * The shape of a whole profile (types and table-local lengths only). `validate()` adds the value
 * and reference rules; use it rather than this schema to check a profile.
 */
export const ProfileSchema = s.object(COMPONENT_SCHEMAS);

function withoutKeys(t: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(t)) if (!keys.includes(k)) out[k] = t[k];
  return out;
}
