/**
 * Profile ⇄ relational tables. `profileToTables` turns a profile into the columns of every table
 * of `schema.ts` (columnar, typed arrays where possible); `tablesToProfile` rebuilds the profile
 * from rows fetched from any engine, checking every rule the model needs (ids in range, unique,
 * references resolvable, positions contiguous) so that a database written by something else
 * cannot produce an invalid profile.
 */

import {
  DATA_FORMAT_VERSION,
  DEFAULT_LIMITS,
  ProfkitError,
  createProfile,
  limitError,
  limitValue,
  type Column,
  type ReadLimits,
  type FactValue,
  type FormatExtension,
  type Profile,
} from '@profkit/core/node';
import { TABLES, tableDef, type ColumnType, type ForeignKeyDef, type TableDef } from './schema.js';

/** A value as stored in or read from a database. */
export type DbValue = number | bigint | string | boolean | null;

/** The rows of one table, column by column. */
export interface TableData {
  table: TableDef;
  rowCount: number;
  /** One array per column of `table.columns`, in that order. */
  columns: ArrayLike<DbValue>[];
}

export const DM_ERRORS = {
  /** The database lacks a table or column of the profkit schema. */
  SCHEMA: 'PROFKIT_E_DM_SCHEMA',
  /** The requested profile_id is not in the database (or the database holds none). */
  NO_PROFILE: 'PROFKIT_E_DM_NO_PROFILE',
  /** A row breaks a rule of the model (id range, reference, position order...). */
  DATA: 'PROFKIT_E_DM_DATA',
  /** The input is not a SQLite database. */
  NOT_SQLITE: 'PROFKIT_E_DM_NOT_SQLITE',
} as const;

function filled<T>(n: number, v: T): T[] {
  return new Array<T>(n).fill(v);
}

function tableData(name: string, rowCount: number, columns: Record<string, ArrayLike<DbValue>>): TableData {
  const table = tableDef(name);
  return {
    table,
    rowCount,
    columns: table.columns.map((c) => {
      const col = columns[c.name];
      if (!col) throw new Error(`internal: column ${name}.${c.name} not produced`);
      if (col.length !== rowCount) throw new Error(`internal: column ${name}.${c.name} has ${col.length} rows, expected ${rowCount}`);
      return col;
    }),
  };
}

/** JSON text of a fact value; bigints become `{"$bigint":"digits"}`. */
export function factToJson(v: FactValue): string {
  return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? { $bigint: x.toString() } : x));
}

export function factFromJson(s: string): FactValue {
  return JSON.parse(s, (_k, x) => {
    if (x && typeof x === 'object' && !Array.isArray(x)) {
      const keys = Object.keys(x);
      if (keys.length === 1 && keys[0] === '$bigint' && typeof x.$bigint === 'string' && /^-?\d+$/.test(x.$bigint)) return BigInt(x.$bigint);
    }
    return x;
  }) as FactValue;
}

function columnTypeName(c: Column): string {
  if (Array.isArray(c)) return 'string';
  return (c as { constructor: { name: string } }).constructor.name;
}

export interface ToTablesOptions {
  profileId: number;
  /** Value of `profiles.name`. */
  name?: string;
}

/** The profile as rows of every table, in `TABLES` order (parents before children). */
export function profileToTables(p: Profile, options: ToTablesOptions): TableData[] {
  const id = options.profileId;
  const f = p['.profile'];
  const out: TableData[] = [];

  out.push(
    tableData('profiles', 1, {
      profile_id: [id],
      name: [options.name ?? ''],
      period_type: [f.period_type ? f.period_type.type : null],
      period_unit: [f.period_type ? f.period_type.unit : null],
      period: [f.period],
      time_nanos: [f.time_nanos],
      duration_nanos: [f.duration_nanos],
      drop_frames: [f.drop_frames],
      keep_frames: [f.keep_frames],
      default_sample_type: [f.default_sample_type],
      doc_url: [f.doc_url],
    }),
  );
  const nc = f.comments.length;
  out.push(tableData('profile_comments', nc, { profile_id: filled(nc, id), position: f.comments.map((_, i) => i), comment: f.comments }));
  const nm = p.meta.key.length;
  out.push(tableData('meta', nm, { profile_id: filled(nm, id), key: p.meta.key, value: p.meta.value }));
  const k = p.sample_types.type.length;
  out.push(
    tableData('sample_types', k, {
      profile_id: filled(k, id),
      sample_type_id: Array.from({ length: k }, (_, i) => i + 1),
      type: p.sample_types.type,
      unit: p.sample_types.unit,
    }),
  );
  const fn = p.functions;
  const nf = fn.function_id.length;
  out.push(
    tableData('functions', nf, {
      profile_id: filled(nf, id),
      function_id: fn.function_id,
      name: fn.name,
      system_name: fn.system_name,
      filename: fn.filename,
      start_line: fn.start_line,
    }),
  );
  const m = p['.mappings'];
  const nmap = m.mapping_id.length;
  out.push(
    tableData('mappings', nmap, {
      profile_id: filled(nmap, id),
      mapping_id: m.mapping_id,
      memory_start: m.memory_start,
      memory_limit: m.memory_limit,
      file_offset: m.file_offset,
      filename: m.filename,
      build_id: m.build_id,
      has_functions: m.has_functions,
      has_filenames: m.has_filenames,
      has_line_numbers: m.has_line_numbers,
      has_inline_frames: m.has_inline_frames,
    }),
  );
  const l = p.locations;
  const nl = l.location_id.length;
  out.push(
    tableData('locations', nl, {
      profile_id: filled(nl, id),
      location_id: l.location_id,
      function_id: l.function_id,
      line: l.line,
      column_number: l['.column'],
      address: l['.address'],
      mapping_id: l['.mapping_id'],
      is_folded: l['.is_folded'],
    }),
  );
  {
    const inl = p['.inline_lines'];
    let n = 0;
    for (let r = 0; r < nl; r++) n += (l.function_id[r] !== 0 ? 1 : 0) + l['.inline_offsets'][r + 1]! - l['.inline_offsets'][r]!;
    const locId = new Uint32Array(n);
    const pos = new Uint32Array(n);
    const fid = new Uint32Array(n);
    const line = new Float64Array(n);
    const col = new Float64Array(n);
    let j = 0;
    for (let r = 0; r < nl; r++) {
      let q = 0;
      if (l.function_id[r] !== 0) {
        locId[j] = l.location_id[r]!;
        pos[j] = q++;
        fid[j] = l.function_id[r]!;
        line[j] = l.line[r]!;
        col[j] = l['.column'][r]!;
        j++;
      }
      for (let x = l['.inline_offsets'][r]!; x < l['.inline_offsets'][r + 1]!; x++) {
        locId[j] = l.location_id[r]!;
        pos[j] = q++;
        fid[j] = inl.function_id[x]!;
        line[j] = inl.line[x]!;
        col[j] = inl.column[x]!;
        j++;
      }
    }
    out.push(tableData('location_lines', n, { profile_id: filled(n, id), location_id: locId, position: pos, function_id: fid, line, column_number: col }));
  }
  const s = p.samples;
  const ns = s.value.length;
  const sampleIds = new Uint32Array(ns);
  for (let i = 0; i < ns; i++) sampleIds[i] = i + 1;
  out.push(tableData('samples', ns, { profile_id: filled(ns, id), sample_id: sampleIds, value: k > 0 ? s['.values'][0]! : filled(ns, null) }));
  {
    const n = ns * k;
    const sid = new Uint32Array(n);
    const tid = new Uint32Array(n);
    const val = new BigInt64Array(n);
    let j = 0;
    for (let i = 0; i < ns; i++) {
      for (let t = 0; t < k; t++) {
        sid[j] = i + 1;
        tid[j] = t + 1;
        val[j] = s['.values'][t]![i]!;
        j++;
      }
    }
    out.push(tableData('sample_values', n, { profile_id: filled(n, id), sample_id: sid, sample_type_id: tid, value: val }));
  }
  {
    const { offsets, location_id } = s.locations;
    const n = location_id.length;
    const sid = new Uint32Array(n);
    const pos = new Uint32Array(n);
    for (let i = 0; i < ns; i++) {
      for (let x = offsets[i]!; x < offsets[i + 1]!; x++) {
        sid[x] = i + 1;
        pos[x] = x - offsets[i]!;
      }
    }
    out.push(tableData('sample_locations', n, { profile_id: filled(n, id), sample_id: sid, position: pos, location_id }));
  }
  {
    const lab = p['.labels'];
    const lo = s['.label_offsets'];
    const n = lo ? lo[ns]! - lo[0]! : 0;
    const sid = new Uint32Array(n);
    const pos = new Uint32Array(n);
    const key: string[] = new Array(n);
    const str: (string | null)[] = new Array(n);
    const num: (bigint | null)[] = new Array(n);
    const unit: (string | null)[] = new Array(n);
    const isNum = new Uint8Array(n);
    if (lo) {
      let j = 0;
      for (let i = 0; i < ns; i++) {
        for (let x = lo[i]!; x < lo[i + 1]!; x++) {
          sid[j] = i + 1;
          pos[j] = x - lo[i]!;
          key[j] = lab.key[x]!;
          const numeric = lab.is_num[x] === 1;
          isNum[j] = numeric ? 1 : 0;
          str[j] = numeric ? null : lab.str[x]!;
          num[j] = numeric ? lab.num[x]! : null;
          unit[j] = numeric ? lab.num_unit[x]! : null;
          j++;
        }
      }
    }
    out.push(tableData('labels', n, { profile_id: filled(n, id), sample_id: sid, position: pos, key, str, num, num_unit: unit, is_num: isNum }));
  }
  // Format extensions.
  const fa: string[] = [];
  const fk: string[] = [];
  const fv: string[] = [];
  const ec: Record<string, DbValue[]> = { adapter: [], scope: [], table_name: [], column_name: [], column_type: [], position: [], row_count: [] };
  const ev: Record<string, DbValue[]> = { adapter: [], scope: [], table_name: [], column_name: [], row_number: [], int_value: [], real_value: [], text_value: [] };
  const addColumns = (adapter: string, scope: 'samples' | 'table', tableName: string, cols: Record<string, Column>) => {
    let position = 0;
    for (const [name, col] of Object.entries(cols)) {
      const type = columnTypeName(col);
      ec.adapter!.push(adapter);
      ec.scope!.push(scope);
      ec.table_name!.push(tableName);
      ec.column_name!.push(name);
      ec.column_type!.push(type);
      ec.position!.push(position++);
      ec.row_count!.push(col.length);
      for (let r = 0; r < col.length; r++) {
        const v = (col as ArrayLike<number | bigint | string>)[r]!;
        ev.adapter!.push(adapter);
        ev.scope!.push(scope);
        ev.table_name!.push(tableName);
        ev.column_name!.push(name);
        ev.row_number!.push(r + 1);
        ev.int_value!.push(typeof v === 'bigint' ? BigInt.asIntN(64, v) : type === 'Float64Array' || type === 'string' ? null : (v as number));
        ev.real_value!.push(type === 'Float64Array' ? (v as number) : null);
        ev.text_value!.push(typeof v === 'string' ? v : null);
      }
    }
  };
  for (const [adapter, ext] of Object.entries(p['.extensions'])) {
    for (const [key, value] of Object.entries(ext.facts ?? {})) {
      fa.push(adapter);
      fk.push(key);
      fv.push(factToJson(value));
    }
    if (ext.samples) addColumns(adapter, 'samples', '', ext.samples);
    for (const [t, cols] of Object.entries(ext.tables ?? {})) addColumns(adapter, 'table', t, cols);
  }
  out.push(tableData('extension_facts', fa.length, { profile_id: filled(fa.length, id), adapter: fa, key: fk, value_json: fv }));
  const nec = ec.adapter!.length;
  out.push(tableData('extension_columns', nec, { profile_id: filled(nec, id), ...ec }));
  const nev = ev.adapter!.length;
  out.push(tableData('extension_values', nev, { profile_id: filled(nev, id), ...ev }));
  return out;
}

/** Converts a value of a logical column type to what a SQL engine stores (uint64 → same-bit int64, bool → 0/1, ref 0 → NULL). */
export function encodeValue(type: ColumnType, v: DbValue): DbValue {
  if (v === null) return null;
  switch (type) {
    case 'ref':
      return v === 0 ? null : v;
    case 'uint64':
      return BigInt.asIntN(64, v as bigint);
    case 'bool':
      return v === true || v === 1 ? 1 : 0;
    default:
      return v;
  }
}

// ---------------------------------------------------------------------------------------------
// Reading back.

/** What `RowSource.measure` reports about the rows of one table, before they are fetched. */
export interface TableMeasure {
  /** Number of rows. */
  rows: number;
  /**
   * Per column (in the order asked), the size in bytes of the largest text value (0 when the
   * column holds none). Absent when the source does not measure text (an uncompressed input,
   * whose text is bounded by its size): text values are then checked as the rows are converted.
   */
  maxBytes?: number[];
  /** Total bytes of the text values of the columns asked (with `maxBytes`). */
  textBytes?: number;
}

/** Fetches the rows of one table for one profile, ordered by its primary key. */
export interface RowSource {
  /** Human name of the input, for error messages. */
  file: string;
  /**
   * The input is compressed (Parquet): the decoded size of its rows counts against
   * `maxDecompressedBytes`, as the inflated bytes of a gzip input do.
   */
  compressed?: boolean;
  /**
   * For a compressed input: the rows stored per table in the whole input, from its metadata or a
   * count that decodes no value (checked against `maxDecompressedBytes` before any scan).
   */
  storedRows?(): Promise<Map<string, number>>;
  /** Names of the tables present. */
  tables(): Promise<Set<string>>;
  /** Column names of a table. */
  columns(table: string): Promise<string[]>;
  /** Distinct profile ids, ascending. */
  profileIds(): Promise<number[]>;
  /**
   * Counts the rows of `table` (where profile_id = `profileId`; every row when undefined) and,
   * for a compressed input, measures the text of `columns`, without fetching the rows: the
   * reader checks its limits before the rows are allocated.
   */
  measure(table: string, columns: string[], profileId: number | undefined): Promise<TableMeasure>;
  /**
   * The value of `column` that most rows of `table` (where profile_id = `profileId`) share, with
   * that number of rows, when it is above `atLeast` (e.g. the sample with the most frames).
   */
  largestGroup(table: string, column: string, profileId: number, atLeast: number): Promise<{ key: DbValue; rows: number } | undefined>;
  /**
   * Rows (as arrays in `columns` order) of `table` where profile_id = `profileId`, ordered by the
   * primary key. Integers may come as numbers unless `bigints` (the columns hold 64-bit values).
   */
  rows(table: string, columns: string[], profileId: number, bigints: boolean): Promise<DbValue[][]>;
  /**
   * A `profile_id` of `table` that has no `profiles` row (undefined when there is none): rows of
   * a missing profile. Optional: sources without it skip `checkReferences`.
   */
  orphanProfileId?(table: TableDef): Promise<DbValue | undefined>;
  /**
   * The first row of `table` of profile `profileId` (by primary key) whose foreign key `fk` has
   * no parent row, as the values of `referenceKeyColumns(table, fk)`; undefined when there is none.
   * A key with a NULL column references nothing (SQL's rule).
   */
  danglingReference?(table: TableDef, fk: ForeignKeyDef, profileId: number): Promise<DbValue[] | undefined>;
}

/** The columns that name a row in a reference error: its primary key, then the foreign key's other columns. */
export function referenceKeyColumns(table: TableDef, fk: ForeignKeyDef): string[] {
  return [...table.primaryKey, ...fk.columns.filter((c) => !table.primaryKey.includes(c))];
}

const TO_PROFILES: ForeignKeyDef = { columns: ['profile_id'], table: 'profiles', refColumns: ['profile_id'] };

/**
 * Checks every foreign key of the relational model (schema.ts) with one query each, not row by
 * row: no table has rows of a profile missing from `profiles` (anywhere in the input: such rows
 * would otherwise be ignored silently), and every other reference of profile `profileId` (a sample
 * value's sample type, a stack's location, a location's function and mapping, a line's location
 * and function, a label's sample, an extension value's column) has its parent row. The other
 * profiles' references are checked when they are read. A broken reference is `PROFKIT_E_DM_DATA`
 * naming the table, the row and the foreign key.
 */
export async function checkReferences(src: RowSource, profileId: number): Promise<void> {
  if (!src.orphanProfileId || !src.danglingReference) return;
  for (const t of TABLES) {
    if (t.name === 'profiles') continue;
    const orphan = await src.orphanProfileId(t);
    if (orphan !== undefined) throw referenceError(src.file, t, TO_PROFILES, ['profile_id'], [orphan]);
    for (const fk of t.foreignKeys) {
      if (fk.table === 'profiles') continue; // the orphan check above
      const row = await src.danglingReference(t, fk, profileId);
      if (row !== undefined) throw referenceError(src.file, t, fk, referenceKeyColumns(t, fk), row);
    }
  }
}

function referenceError(file: string, table: TableDef, fk: ForeignKeyDef, keyColumns: string[], values: DbValue[]): ProfkitError {
  const value = (c: string) => String(values[keyColumns.indexOf(c)]);
  const key = keyColumns.map((c) => `${c}=${value(c)}`).join(', ');
  const rule = `foreign key ${table.name}(${fk.columns.join(', ')}) references ${fk.table}(${fk.refColumns.join(', ')})`;
  const parent = fk.refColumns.map((c, i) => `${c}=${value(fk.columns[i]!)}`).join(', ');
  return new ProfkitError(DM_ERRORS.DATA, `${table.name} row (${key}): no ${fk.table} row (${parent}) [${rule}]`, { file, table: table.name, key, rule, references: fk.table });
}

function dataError(file: string, table: string, key: string, rule: string): ProfkitError {
  return new ProfkitError(DM_ERRORS.DATA, `${table} row (${key}): ${rule}`, { file, table, key, rule });
}

/** Checks the source has every table and column of the schema. */
export async function checkSchema(src: RowSource): Promise<void> {
  const have = await src.tables();
  for (const t of TABLES) {
    if (!have.has(t.name)) {
      throw new ProfkitError(DM_ERRORS.SCHEMA, `not a profkit relational export: table ${t.name} is missing`, {
        file: src.file,
        table: t.name,
        rule: 'every table of the dm-export schema exists',
      });
    }
    const cols = new Set(await src.columns(t.name));
    for (const c of t.columns) {
      if (!cols.has(c.name)) {
        throw new ProfkitError(DM_ERRORS.SCHEMA, `not a profkit relational export: column ${t.name}.${c.name} is missing`, {
          file: src.file,
          table: t.name,
          column: c.name,
          rule: 'every column of the dm-export schema exists',
        });
      }
    }
  }
}

/** The first ids of `all`, for messages (a database may hold many profiles). */
export function listIds(all: number[], max = 20): string {
  return all.length > max ? `${all.slice(0, max).join(', ')}, … (${all.length} in all)` : all.join(', ');
}

/**
 * The read limits applied to the tables of a relational input, checked on each table's measure
 * (`RowSource.measure`) before its rows are fetched: `maxStringLength` on every text value,
 * `maxSamples` on the samples, `maxFramesPerStack` on the frames of one sample and, for a
 * compressed input, `maxDecompressedBytes` on the decoded size of all the rows read (8 bytes per
 * value plus the bytes of the text). The other tables of an uncompressed input (SQLite, CSV) are
 * bounded by the input's size (`maxInputBytes`).
 */
class TableBudget {
  readonly maxString: number;
  readonly maxSamples: number;
  readonly maxFrames: number;
  readonly maxDecoded: number;
  decoded = 0;
  constructor(
    readonly src: RowSource,
    limits: ReadLimits | undefined,
  ) {
    this.maxString = limitValue(limits, 'maxStringLength');
    this.maxSamples = limitValue(limits, 'maxSamples');
    this.maxFrames = limitValue(limits, 'maxFramesPerStack');
    const d = limits?.maxDecompressedBytes;
    this.maxDecoded = typeof d === 'number' && d > 0 ? d : DEFAULT_LIMITS.maxDecompressedBytes;
  }

  /**
   * A compressed input's stored rows, all tables and profiles together, at 8 bytes per value
   * (text not counted yet) are within `maxDecompressedBytes`: checked before any column is
   * scanned, so a file of a few KB claiming billions of rows costs nothing.
   */
  async checkStored(): Promise<void> {
    if (!this.src.compressed || !this.src.storedRows) return;
    let total = 0;
    for (const [table, rows] of await this.src.storedRows()) {
      total += rows * 8 * (tableDef(table).columns.length - 1);
      if (total > this.maxDecoded) {
        throw limitError('maxDecompressedBytes', `the rows stored in ${this.src.file} (${total} bytes decoded at 8 per value, up to table ${table})`, this.maxDecoded, { file: this.src.file, table });
      }
    }
  }

  /** Measures `table` (its columns after profile_id) and checks the limits; returns its row count. */
  async measure(table: string, profileId: number | undefined): Promise<number> {
    const cols = tableDef(table).columns.slice(1);
    const m = await this.src.measure(table, cols.map((c) => c.name), profileId);
    const file = this.src.file;
    cols.forEach((c, i) => {
      const n = m.maxBytes?.[i] ?? 0;
      if (n > this.maxString) throw limitError('maxStringLength', `a value of ${table}.${c.name} of ${n} bytes`, this.maxString, { file, table, column: c.name });
    });
    if (this.src.compressed) {
      this.decoded += m.rows * 8 * cols.length + (m.textBytes ?? 0);
      if (this.decoded > this.maxDecoded) {
        throw limitError('maxDecompressedBytes', `the decoded rows (${this.decoded} bytes, 8 per value plus the text, up to table ${table})`, this.maxDecoded, { file, table });
      }
    }
    return m.rows;
  }
}

/** Picks the profile to read: the requested one, else the only one, else the last (with a note). */
export async function chooseProfileId(src: RowSource, requested: unknown, limits?: ReadLimits): Promise<{ profileId: number; all: number[] }> {
  // The input's size, then the profiles table, are checked (limits) before its ids are fetched.
  const budget = new TableBudget(src, limits);
  await budget.checkStored();
  await budget.measure('profiles', undefined);
  const all = await src.profileIds();
  if (requested !== undefined && requested !== null) {
    const want = Number(requested);
    if (!all.includes(want)) {
      throw new ProfkitError(DM_ERRORS.NO_PROFILE, `profile_id ${String(requested)} is not in the database (it holds ${all.length ? listIds(all) : 'no profiles'})`, {
        file: src.file,
        table: 'profiles',
        rule: 'the requested profile_id exists',
      });
    }
    return { profileId: want, all };
  }
  if (all.length === 0) {
    throw new ProfkitError(DM_ERRORS.NO_PROFILE, 'the database holds no profile', { file: src.file, table: 'profiles', rule: 'at least one profile' });
  }
  return { profileId: all[all.length - 1]!, all };
}

const MAX_ID = 0xffffffff;

class Conv {
  constructor(
    readonly file: string,
    /** `maxStringLength`: the most UTF-8 bytes of one text value. */
    readonly maxString: number,
    readonly table: string,
  ) {}
  /** Describes the row being converted; evaluated only when it fails (rows are many). */
  key: () => string = () => '';
  fail(rule: string): never {
    throw dataError(this.file, this.table, this.key(), rule);
  }
  big(v: DbValue, what: string): bigint {
    if (typeof v === 'bigint') return v;
    if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
    if (typeof v === 'boolean') return v ? 1n : 0n;
    return this.fail(`${what} is not an integer (${String(v)})`);
  }
  int(v: DbValue, what: string): number {
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
    const b = this.big(v, what);
    if (b < 0n || b > BigInt(Number.MAX_SAFE_INTEGER)) this.fail(`${what} ${b} is not a non-negative safe integer`);
    return Number(b);
  }
  id(v: DbValue, what: string): number {
    if (typeof v === 'number' && v >= 1 && v <= MAX_ID && Number.isInteger(v)) return v;
    const n = this.int(v, what);
    if (n < 1 || n > MAX_ID) this.fail(`${what} ${n} is not in 1..${MAX_ID}`);
    return n;
  }
  ref(v: DbValue, what: string): number {
    return v === null ? 0 : this.id(v, what);
  }
  text(v: DbValue, what: string): string {
    if (typeof v !== 'string') this.fail(`${what} is not text`);
    // UTF-8 takes 1 to 3 bytes per UTF-16 unit: count the bytes only when it matters.
    if (v.length * 3 > this.maxString) {
      const n = v.length > this.maxString ? v.length : Buffer.byteLength(v, 'utf8');
      if (n > this.maxString) throw limitError('maxStringLength', `a value of ${this.table}.${what} of ${v.length > this.maxString ? 'at least ' : ''}${n} bytes`, this.maxString, { file: this.file, table: this.table, column: what, key: this.key() });
    }
    return v;
  }
  bool(v: DbValue, what: string): number {
    if (v === true || v === 1 || v === 1n) return 1;
    if (v === false || v === 0 || v === 0n) return 0;
    return this.fail(`${what} is not a boolean (${String(v)})`);
  }
}

/**
 * Rebuilds the profile `profileId` from a row source (see `RowSource`). Each table is measured
 * and checked against `limits` (core's `READ_LIMITS` by default; see `TableBudget`) before its
 * rows are fetched: exceeding one is a `PROFKIT_E_LIMIT` error naming the option.
 */
export async function tablesToProfile(src: RowSource, profileId: number, limits?: ReadLimits): Promise<{ profile: Profile; name: string }> {
  const file = src.file;
  const budget = new TableBudget(src, limits);
  /** Rows of table `t`; `check` sees the measured row count before they are fetched. */
  const fetch = async (t: string, check?: (rows: number) => void | Promise<void>) => {
    const cols = tableDef(t).columns.slice(1);
    const n = await budget.measure(t, profileId);
    await check?.(n);
    return src.rows(t, cols.map((c) => c.name), profileId, cols.some((c) => c.type === 'int64' || c.type === 'uint64'));
  };

  const profRows = await fetch('profiles');
  const pc = new Conv(file, budget.maxString, 'profiles');
  pc.key = () => `profile_id=${profileId}`;
  const pr = profRows[0];
  if (!pr) throw new ProfkitError(DM_ERRORS.NO_PROFILE, `profile_id ${profileId} is not in the database`, { file, table: 'profiles' });
  const [name, periodType, periodUnit, period, timeNanos, durationNanos, drop, keep, defType, docUrl] = pr;
  if ((periodType === null) !== (periodUnit === null)) pc.fail('period_type and period_unit are both NULL or both set');
  const comments: string[] = [];
  {
    const c = new Conv(file, budget.maxString, 'profile_comments');
    for (const [pos, text] of await fetch('profile_comments')) {
      c.key = () => `profile_id=${profileId}, position=${String(pos)}`;
      if (c.int(pos, 'position') !== comments.length) c.fail('positions are 0, 1, 2... without gaps');
      comments.push(c.text(text, 'comment'));
    }
  }
  const meta = { key: [] as string[], value: [] as string[] };
  {
    const c = new Conv(file, budget.maxString, 'meta');
    for (const [k, v] of await fetch('meta')) {
      c.key = () => `profile_id=${profileId}, key=${String(k)}`;
      meta.key.push(c.text(k, 'key'));
      meta.value.push(c.text(v, 'value'));
    }
    if (!meta.key.includes('version')) {
      meta.key.unshift('version');
      meta.value.unshift(DATA_FORMAT_VERSION);
    }
  }
  const st = { type: [] as string[], unit: [] as string[] };
  {
    const c = new Conv(file, budget.maxString, 'sample_types');
    for (const [tid, type, unit] of await fetch('sample_types')) {
      c.key = () => `profile_id=${profileId}, sample_type_id=${String(tid)}`;
      if (c.int(tid, 'sample_type_id') !== st.type.length + 1) c.fail('sample_type_id is 1, 2, 3... without gaps');
      st.type.push(c.text(type, 'type'));
      st.unit.push(c.text(unit, 'unit'));
    }
  }
  const k = st.type.length;

  // functions
  const fnRows = await fetch('functions');
  const nf = fnRows.length;
  const functions = { function_id: new Uint32Array(nf), name: new Array<string>(nf), system_name: new Array<string>(nf), filename: new Array<string>(nf), start_line: new Float64Array(nf) };
  const fnIds = new Set<number>();
  {
    const c = new Conv(file, budget.maxString, 'functions');
    fnRows.forEach(([fid, nm, sys, fname, start], i) => {
      c.key = () => `profile_id=${profileId}, function_id=${String(fid)}`;
      const id = c.id(fid, 'function_id');
      if (fnIds.has(id)) c.fail('function_id is unique');
      fnIds.add(id);
      functions.function_id[i] = id;
      functions.name[i] = c.text(nm, 'name');
      functions.system_name[i] = c.text(sys, 'system_name');
      functions.filename[i] = c.text(fname, 'filename');
      functions.start_line[i] = c.int(start, 'start_line');
    });
  }
  // mappings
  const mapRows = await fetch('mappings');
  const nmap = mapRows.length;
  const mappings = {
    mapping_id: new Uint32Array(nmap),
    memory_start: new BigUint64Array(nmap),
    memory_limit: new BigUint64Array(nmap),
    file_offset: new BigUint64Array(nmap),
    filename: new Array<string>(nmap),
    build_id: new Array<string>(nmap),
    has_functions: new Uint8Array(nmap),
    has_filenames: new Uint8Array(nmap),
    has_line_numbers: new Uint8Array(nmap),
    has_inline_frames: new Uint8Array(nmap),
  };
  const mapIds = new Set<number>();
  {
    const c = new Conv(file, budget.maxString, 'mappings');
    mapRows.forEach(([mid, start, limit, off, fname, bid, hf, hfn, hl, hi], i) => {
      c.key = () => `profile_id=${profileId}, mapping_id=${String(mid)}`;
      const id = c.id(mid, 'mapping_id');
      if (mapIds.has(id)) c.fail('mapping_id is unique');
      mapIds.add(id);
      mappings.mapping_id[i] = id;
      mappings.memory_start[i] = BigInt.asUintN(64, c.big(start, 'memory_start'));
      mappings.memory_limit[i] = BigInt.asUintN(64, c.big(limit, 'memory_limit'));
      mappings.file_offset[i] = BigInt.asUintN(64, c.big(off, 'file_offset'));
      mappings.filename[i] = c.text(fname, 'filename');
      mappings.build_id[i] = c.text(bid, 'build_id');
      mappings.has_functions[i] = c.bool(hf, 'has_functions');
      mappings.has_filenames[i] = c.bool(hfn, 'has_filenames');
      mappings.has_line_numbers[i] = c.bool(hl, 'has_line_numbers');
      mappings.has_inline_frames[i] = c.bool(hi, 'has_inline_frames');
    });
  }
  // locations
  const locRows = await fetch('locations');
  const nl = locRows.length;
  const locations = {
    location_id: new Uint32Array(nl),
    function_id: new Uint32Array(nl),
    line: new Float64Array(nl),
    '.column': new Float64Array(nl),
    '.address': new BigUint64Array(nl),
    '.mapping_id': new Uint32Array(nl),
    '.is_folded': new Uint8Array(nl),
    '.inline_offsets': new Uint32Array(nl + 1),
  };
  const locRow = new Map<number, number>();
  {
    const c = new Conv(file, budget.maxString, 'locations');
    locRows.forEach(([lid, fid, line, col, addr, mid, folded], i) => {
      c.key = () => `profile_id=${profileId}, location_id=${String(lid)}`;
      const id = c.id(lid, 'location_id');
      if (locRow.has(id)) c.fail('location_id is unique');
      locRow.set(id, i);
      locations.location_id[i] = id;
      const f = c.ref(fid, 'function_id');
      if (f !== 0 && !fnIds.has(f)) c.fail(`function_id ${f} references a function of this profile`);
      locations.function_id[i] = f;
      locations.line[i] = c.int(line, 'line');
      locations['.column'][i] = c.int(col, 'column_number');
      locations['.address'][i] = BigInt.asUintN(64, c.big(addr, 'address'));
      const m = c.ref(mid, 'mapping_id');
      if (m !== 0 && !mapIds.has(m)) c.fail(`mapping_id ${m} references a mapping of this profile`);
      locations['.mapping_id'][i] = m;
      locations['.is_folded'][i] = c.bool(folded, 'is_folded');
    });
  }
  // location_lines → inline lines
  const inlF: number[] = [];
  const inlL: number[] = [];
  const inlC: number[] = [];
  {
    const c = new Conv(file, budget.maxString, 'location_lines');
    const rows = await fetch('location_lines');
    // Rows come ordered by (location_id, position); locations by location_id: group per location.
    const byLoc = new Map<number, DbValue[][]>();
    for (const r of rows) {
      c.key = () => `profile_id=${profileId}, location_id=${String(r[0])}, position=${String(r[1])}`;
      const lid = c.id(r[0]!, 'location_id');
      if (!locRow.has(lid)) c.fail(`location_id ${lid} references a location of this profile`);
      let list = byLoc.get(lid);
      if (!list) byLoc.set(lid, (list = []));
      if (c.int(r[1]!, 'position') !== list.length) c.fail('positions of a location are 0, 1, 2... without gaps');
      const f = c.id(r[2]!, 'function_id');
      if (!fnIds.has(f)) c.fail(`function_id ${f} references a function of this profile`);
      list.push([f, c.int(r[3]!, 'line'), c.int(r[4]!, 'column_number')]);
    }
    for (let i = 0; i < nl; i++) {
      const lid = locations.location_id[i]!;
      const list = byLoc.get(lid) ?? [];
      let start = 0;
      if (locations.function_id[i] === 0 && list.length > 0) {
        c.key = () => `profile_id=${profileId}, location_id=${lid}, position=0`;
        c.fail('a location without a function (function_id NULL) has no lines');
      }
      if (locations.function_id[i] !== 0) {
        const first = list[0];
        c.key = () => `profile_id=${profileId}, location_id=${lid}, position=0`;
        if (!first) c.fail("a location with a function has its own line at position 0");
        if (first[0] !== locations.function_id[i] || first[1] !== locations.line[i] || first[2] !== locations['.column'][i]) {
          c.fail('position 0 equals the location row (function_id, line, column_number)');
        }
        start = 1;
      }
      for (let j = start; j < list.length; j++) {
        inlF.push(list[j]![0] as number);
        inlL.push(list[j]![1] as number);
        inlC.push(list[j]![2] as number);
      }
      locations['.inline_offsets'][i + 1] = inlF.length;
    }
  }
  // samples
  const sRows = await fetch('samples', (n) => {
    if (n > budget.maxSamples) throw limitError('maxSamples', `${n} samples`, budget.maxSamples, { file, table: 'samples' });
  });
  const ns = sRows.length;
  {
    const c = new Conv(file, budget.maxString, 'samples');
    sRows.forEach(([sid], i) => {
      c.key = () => `profile_id=${profileId}, sample_id=${String(sid)}`;
      if (c.int(sid, 'sample_id') !== i + 1) c.fail('sample_id is 1, 2, 3... without gaps');
    });
  }
  const values = Array.from({ length: k }, () => new BigInt64Array(ns));
  {
    const c = new Conv(file, budget.maxString, 'sample_values');
    c.key = () => `profile_id=${profileId}`;
    const rows = await fetch('sample_values', (n) => {
      if (n !== ns * k) c.fail(`every sample has one value per sample type (${ns} samples × ${k} types = ${ns * k} rows, found ${n})`);
    });
    if (rows.length !== ns * k) c.fail(`every sample has one value per sample type (${ns} samples × ${k} types = ${ns * k} rows, found ${rows.length})`);
    let j = 0;
    for (let i = 0; i < ns; i++) {
      for (let t = 0; t < k; t++) {
        const r = rows[j++]!;
        c.key = () => `profile_id=${profileId}, sample_id=${String(r[0])}, sample_type_id=${String(r[1])}`;
        if (c.int(r[0]!, 'sample_id') !== i + 1 || c.int(r[1]!, 'sample_type_id') !== t + 1) c.fail('every sample has one value per sample type');
        const v = c.big(r[2]!, 'value');
        if (v < -(1n << 63n) || v >= 1n << 63n) c.fail('value fits in int64');
        values[t]![i] = v;
      }
    }
    const sc = new Conv(file, budget.maxString, 'samples');
    if (k > 0) {
      sRows.forEach(([sid, v], i) => {
        sc.key = () => `profile_id=${profileId}, sample_id=${String(sid)}`;
        if (v === null || sc.big(v, 'value') !== values[0]![i]) sc.fail('value equals the sample_values row of sample type 1');
      });
    }
  }
  const offsets = new Uint32Array(ns + 1);
  let stackIds: Uint32Array;
  {
    const c = new Conv(file, budget.maxString, 'sample_locations');
    const rows = await fetch('sample_locations', async () => {
      const big = await src.largestGroup('sample_locations', 'sample_id', profileId, budget.maxFrames);
      if (big) {
        throw limitError('maxFramesPerStack', `sample_id ${String(big.key)} with ${big.rows} frames`, budget.maxFrames, { file, table: 'sample_locations', key: `profile_id=${profileId}, sample_id=${String(big.key)}` });
      }
    });
    stackIds = new Uint32Array(rows.length);
    let prev = 0;
    let pos = 0;
    rows.forEach(([sid, p, lid], j) => {
      c.key = () => `profile_id=${profileId}, sample_id=${String(sid)}, position=${String(p)}`;
      const s = c.int(sid, 'sample_id');
      if (s < 1 || s > ns) c.fail(`sample_id ${s} references a sample of this profile`);
      if (s < prev) c.fail('rows are ordered by (sample_id, position)');
      if (s !== prev) {
        for (let x = prev; x < s; x++) offsets[x] = j;
        prev = s;
        pos = 0;
      }
      if (c.int(p, 'position') !== pos) c.fail('positions of a sample are 0, 1, 2... without gaps');
      pos++;
      const l = c.id(lid, 'location_id');
      if (!locRow.has(l)) c.fail(`location_id ${l} references a location of this profile`);
      stackIds[j] = l;
    });
    for (let x = prev; x <= ns; x++) offsets[x] = rows.length;
    offsets[0] = 0;
  }
  // labels
  const labRows = await fetch('labels');
  const labels = {
    key: new Array<string>(labRows.length),
    str: new Array<string>(labRows.length),
    num: new BigInt64Array(labRows.length),
    num_unit: new Array<string>(labRows.length),
    is_num: new Uint8Array(labRows.length),
  };
  let labelOffsets: Uint32Array | undefined;
  if (labRows.length > 0) {
    labelOffsets = new Uint32Array(ns + 1);
    const c = new Conv(file, budget.maxString, 'labels');
    let prev = 0;
    let pos = 0;
    labRows.forEach(([sid, p, key, str, num, unit, isNum], j) => {
      c.key = () => `profile_id=${profileId}, sample_id=${String(sid)}, position=${String(p)}`;
      const s = c.int(sid, 'sample_id');
      if (s < 1 || s > ns) c.fail(`sample_id ${s} references a sample of this profile`);
      if (s !== prev) {
        for (let x = prev; x < s; x++) labelOffsets![x] = j;
        prev = s;
        pos = 0;
      }
      if (c.int(p, 'position') !== pos) c.fail('positions of a sample are 0, 1, 2... without gaps');
      pos++;
      labels.key[j] = c.text(key, 'key');
      const numeric = c.bool(isNum, 'is_num');
      labels.is_num[j] = numeric;
      if (numeric) {
        if (num === null) c.fail('a numeric label has num');
        labels.num[j] = c.big(num, 'num');
        labels.num_unit[j] = unit === null ? '' : c.text(unit, 'num_unit');
        labels.str[j] = '';
      } else {
        if (str === null) c.fail('a string label has str');
        labels.str[j] = c.text(str, 'str');
        labels.num_unit[j] = '';
      }
    });
    for (let x = prev; x <= ns; x++) labelOffsets[x] = labRows.length;
    labelOffsets[0] = 0;
  }
  // extensions
  const extensions: Record<string, FormatExtension> = {};
  {
    const c = new Conv(file, budget.maxString, 'extension_facts');
    for (const [adapter, key, json] of await fetch('extension_facts')) {
      c.key = () => `profile_id=${profileId}, adapter=${String(adapter)}, key=${String(key)}`;
      const a = c.text(adapter, 'adapter');
      let v: FactValue = null;
      try {
        v = factFromJson(c.text(json, 'value_json'));
      } catch (e) {
        c.fail(`value_json is JSON (${(e as Error).message})`);
      }
      ((extensions[a] ??= {}).facts ??= {})[c.text(key, 'key')] = v;
    }
  }
  {
    const c = new Conv(file, budget.maxString, 'extension_columns');
    const colRows = await fetch('extension_columns');
    const valRows = await fetch('extension_values');
    // Order columns by (adapter, scope, table, position) to restore column order.
    const cols = colRows.map((r) => {
      c.key = () => `profile_id=${profileId}, adapter=${String(r[0])}, scope=${String(r[1])}, table_name=${String(r[2])}, column_name=${String(r[3])}`;
      return {
        adapter: c.text(r[0]!, 'adapter'),
        scope: c.text(r[1]!, 'scope'),
        table: c.text(r[2]!, 'table_name'),
        name: c.text(r[3]!, 'column_name'),
        type: c.text(r[4]!, 'column_type'),
        position: c.int(r[5]!, 'position'),
        rows: c.int(r[6]!, 'row_count'),
        key: c.key(),
      };
    });
    cols.sort((a, b) => (a.adapter < b.adapter ? -1 : a.adapter > b.adapter ? 1 : a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : a.table < b.table ? -1 : a.table > b.table ? 1 : a.position - b.position));
    const vals = new Map<string, DbValue[][]>();
    const vc = new Conv(file, budget.maxString, 'extension_values');
    for (const r of valRows) {
      const key = [r[0], r[1], r[2], r[3]].map(String).join('\u0000');
      let list = vals.get(key);
      if (!list) vals.set(key, (list = []));
      list.push(r);
    }
    for (const col of cols) {
      c.key = () => col.key;
      if (col.scope !== 'samples' && col.scope !== 'table') c.fail("scope is 'samples' or 'table'");
      if (col.scope === 'samples' && col.rows !== ns) c.fail(`a per-sample column has one row per sample (${ns})`);
      const list = vals.get([col.adapter, col.scope, col.table, col.name].join('\u0000')) ?? [];
      if (list.length !== col.rows) c.fail(`row_count ${col.rows} equals the number of extension_values rows (${list.length})`);
      const data: Column = makeColumn(col.type, col.rows) ?? c.fail(`column_type ${col.type} is a known column type`);
      list.forEach((r, i) => {
        vc.key = () => `${col.key}, row_number=${String(r[4])}`;
        if (vc.int(r[4]!, 'row_number') !== i + 1) vc.fail('row_number is 1, 2, 3... without gaps');
        setCell(data, col.type, i, r[5]!, r[6]!, r[7]!, vc);
      });
      const ext = (extensions[col.adapter] ??= {});
      if (col.scope === 'samples') (ext.samples ??= {})[col.name] = data;
      else ((ext.tables ??= {})[col.table] ??= {})[col.name] = data;
    }
    for (const [key, list] of vals) {
      if (!cols.some((col) => [col.adapter, col.scope, col.table, col.name].join('\u0000') === key)) {
        vc.key = () => `profile_id=${profileId}, ${key.split('\u0000').join(', ')}`;
        vc.fail('values belong to a column declared in extension_columns');
      }
      void list;
    }
  }

  const profile = createProfile({
    sample_types: st,
    samples: {
      value: values[0] ?? new BigInt64Array(0),
      locations: { offsets, location_id: stackIds },
      '.values': values,
      ...(labelOffsets ? { '.label_offsets': labelOffsets } : {}),
    },
    locations,
    functions,
    '.inline_lines': { function_id: Uint32Array.from(inlF), line: Float64Array.from(inlL), column: Float64Array.from(inlC) },
    '.mappings': mappings,
    '.labels': labels,
    '.profile': {
      ...(periodType !== null ? { period_type: { type: pc.text(periodType!, 'period_type'), unit: pc.text(periodUnit!, 'period_unit') } } : {}),
      period: pc.big(period!, 'period'),
      time_nanos: pc.big(timeNanos!, 'time_nanos'),
      duration_nanos: pc.big(durationNanos!, 'duration_nanos'),
      comments,
      drop_frames: pc.text(drop!, 'drop_frames'),
      keep_frames: pc.text(keep!, 'keep_frames'),
      default_sample_type: pc.text(defType!, 'default_sample_type'),
      doc_url: pc.text(docUrl!, 'doc_url'),
    },
    '.extensions': extensions,
  });
  profile.meta = meta;
  if (ns === 0 && k > 0) profile.samples.value = values[0]!;
  return { profile, name: pc.text(name!, 'name') };
}

function makeColumn(type: string, n: number): Column | undefined {
  switch (type) {
    case 'Uint8Array':
      return new Uint8Array(n);
    case 'Uint32Array':
      return new Uint32Array(n);
    case 'Int32Array':
      return new Int32Array(n);
    case 'Float64Array':
      return new Float64Array(n);
    case 'BigInt64Array':
      return new BigInt64Array(n);
    case 'BigUint64Array':
      return new BigUint64Array(n);
    case 'string':
      return new Array<string>(n).fill('');
    default:
      return undefined;
  }
}

function setCell(col: Column, type: string, i: number, iv: DbValue, rv: DbValue, tv: DbValue, c: Conv): void {
  if (type === 'string') {
    (col as string[])[i] = c.text(tv, 'text_value');
  } else if (type === 'Float64Array') {
    if (typeof rv !== 'number') c.fail('real_value is a number');
    (col as Float64Array)[i] = rv;
  } else if (type === 'BigInt64Array') {
    (col as BigInt64Array)[i] = c.big(iv, 'int_value');
  } else if (type === 'BigUint64Array') {
    (col as BigUint64Array)[i] = BigInt.asUintN(64, c.big(iv, 'int_value'));
  } else {
    const b = c.big(iv, 'int_value');
    const ok = type === 'Uint8Array' ? b >= 0n && b <= 255n : type === 'Uint32Array' ? b >= 0n && b <= 0xffffffffn : b >= -(2n ** 31n) && b < 2n ** 31n;
    if (!ok) c.fail(`int_value ${b} fits in ${type}`);
    (col as Uint8Array)[i] = Number(b);
  }
}
