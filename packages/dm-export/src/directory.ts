/**
 * Directory targets: one CSV file or one Parquet file per table. Parquet files are written by
 * DuckDB (`COPY ... TO ... (FORMAT parquet)`) from tables loaded through its appender with
 * explicit column types, so 64-bit values stay exact. Both directories are read back with DuckDB
 * (CSV with the schema's column types imposed, no type guessing), which makes them a storage
 * format like the SQLite database.
 */

import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEFAULT_LIMITS, ErrorCodes, ProfkitError, assertValid, ioError, limitError, writeFileAtomic, type Profile, type ReadLimits, type Warning } from '@profkit/core/node';
import {
  DM_ERRORS,
  checkReferences,
  checkSchema,
  chooseProfileId,
  encodeValue,
  listIds,
  profileToTables,
  referenceKeyColumns,
  tablesToProfile,
  type DbValue,
  type RowSource,
  type TableMeasure,
} from './relational.js';
import { loadDuckDB } from './engines.js';
import { TABLES, q, sqlType, type ColumnType, type TableDef } from './schema.js';
import { tableCsv } from './text.js';

export type DirectoryFormat = 'csv' | 'parquet';

export interface DirectoryWriteOptions {
  /** profile_id of the rows; default 1 (pick distinct ids to combine directories). */
  profileId?: number;
  name?: string;
  /** Called after each table's file is written (progress): table name and row count. */
  onTable?: (table: string, rows: number) => void;
}

/** A connection of `@duckdb/node-api`. */
export type DuckDBConnection = import('@duckdb/node-api').DuckDBConnection;

async function duckdb(): Promise<{ connect(settings?: Record<string, string>): Promise<{ conn: DuckDBConnection; close(): void }> }> {
  const mod = await loadDuckDB();
  return {
    async connect(settings = {}) {
      const inst = await mod.DuckDBInstance.create(':memory:', { threads: '2', ...settings });
      const conn = await inst.connect();
      return {
        conn,
        close() {
          conn.closeSync();
          inst.closeSync();
        },
      };
    },
  };
}

/**
 * An in-memory DuckDB instance and its connection, for `readDirectory`'s `connection` option when
 * many directories are read (one start-up instead of one per read). `settings` are DuckDB
 * configuration options (default `threads: '2'`), e.g. `{ threads: '1', memory_limit: '1GB' }`.
 * Call `close()` when done.
 */
export async function openDuckDB(settings: Record<string, string> = {}): Promise<{ connection: DuckDBConnection; close(): void }> {
  const db = await (await duckdb()).connect(settings);
  return { connection: db.conn, close: () => db.close() };
}

function ensureDir(dir: string): void {
  try {
    if (existsSync(dir)) {
      if (!statSync(dir).isDirectory()) throw new ProfkitError(ErrorCodes.IO, `${dir} exists and is not a directory`, { file: dir });
    } else mkdirSync(dir, { recursive: true });
  } catch (e) {
    if (e instanceof ProfkitError) throw e;
    throw ioError(e, dir, 'creating');
  }
}

/** Writes one CSV file per table (`<table>.csv`) into `dir`. */
export async function writeCsvDir(profile: Profile, dir: string, options: DirectoryWriteOptions = {}): Promise<{ files: string[]; warnings: Warning[] }> {
  ensureDir(dir);
  const files: string[] = [];
  for (const t of profileToTables(profile, { profileId: options.profileId ?? 1, name: options.name })) {
    const f = join(dir, `${t.table.name}.csv`);
    await writeFileAtomic(f, tableCsv(t));
    files.push(f);
    options.onTable?.(t.table.name, t.rowCount);
  }
  return { files, warnings: [] };
}

function sqlString(s: string): string {
  return "'" + s.replace(/'/g, "''") + "'";
}

function csvColumns(t: TableDef): string {
  return '{' + t.columns.map((c) => `${sqlString(c.name)}: ${sqlString(sqlType(c, 'duckdb'))}`).join(', ') + '}';
}

function readCsvSql(t: TableDef, file: string): string {
  return `read_csv(${sqlString(file)}, header = true, delim = ',', quote = '"', escape = '"', auto_detect = false, allow_quoted_nulls = false, columns = ${csvColumns(t)})`;
}

/** Rows per DuckDB data chunk (DuckDB's vector size). */
const CHUNK_ROWS = 2048;

/**
 * Writes one Parquet file per table (`<table>.parquet`, zstd) into `dir`: each table is loaded
 * into an in-memory DuckDB table through DuckDB's appender, in data chunks of 2,048 rows built
 * column by column, then written with `COPY ... TO ... (FORMAT parquet)`.
 */
export async function writeParquetDir(profile: Profile, dir: string, options: DirectoryWriteOptions = {}): Promise<{ files: string[]; warnings: Warning[] }> {
  ensureDir(dir);
  const mod = await loadDuckDB();
  const duckType: Record<string, import('@duckdb/node-api').DuckDBType> = { BIGINT: mod.BIGINT, INTEGER: mod.INTEGER, VARCHAR: mod.VARCHAR, BOOLEAN: mod.BOOLEAN, 'DOUBLE PRECISION': mod.DOUBLE };
  const db = await (await duckdb()).connect();
  const files: string[] = [];
  try {
    for (const t of profileToTables(profile, { profileId: options.profileId ?? 1, name: options.name })) {
      const name = t.table.name;
      const sqlTypes = t.table.columns.map((c) => sqlType(c, 'duckdb'));
      await db.conn.run(`CREATE TABLE ${q(name)} (${t.table.columns.map((c, i) => `${q(c.name)} ${sqlTypes[i]}`).join(', ')})`);
      const appender = await db.conn.createAppender(name);
      const types = sqlTypes.map((x) => duckType[x]!);
      const kinds = t.table.columns.map((c) => c.type);
      for (let r = 0; r < t.rowCount; r += CHUNK_ROWS) {
        const end = Math.min(t.rowCount, r + CHUNK_ROWS);
        const columns = t.columns.map((col, ci) => {
          const kind = kinds[ci]!;
          const big = sqlTypes[ci] === 'BIGINT';
          const out = new Array<import('@duckdb/node-api').DuckDBValue>(end - r);
          for (let x = r; x < end; x++) {
            const v = encodeValue(kind, col[x]!);
            out[x - r] = v === null ? null : kind === 'bool' ? v === 1 : big ? BigInt(v as number | bigint) : (v as number | string);
          }
          return out;
        });
        const chunk = mod.DuckDBDataChunk.create(types, end - r);
        chunk.setColumns(columns);
        appender.appendDataChunk(chunk);
      }
      appender.closeSync();
      const target = resolve(dir, `${name}.parquet`);
      const part = resolve(dir, `.${name}.parquet.profkit-tmp-${process.pid}`);
      try {
        await db.conn.run(`COPY ${q(name)} TO ${sqlString(part)} (FORMAT parquet, COMPRESSION zstd)`);
        renameSync(part, target);
      } finally {
        rmSync(part, { force: true });
      }
      await db.conn.run(`DROP TABLE ${q(name)}`);
      files.push(target);
      options.onTable?.(name, t.rowCount);
    }
    return { files, warnings: [] };
  } catch (e) {
    if (e instanceof ProfkitError) throw e;
    throw new ProfkitError(ErrorCodes.IO, `writing Parquet files into ${dir} failed: ${(e as Error).message}`, { file: dir }, { cause: e });
  } finally {
    db.close();
  }
}

const INTEGER_TYPES = ['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT', 'UHUGEINT'];

/** DuckDB types a Parquet column may have for each logical column type (anything else is not ours). */
const ACCEPTED_TYPES: Record<ColumnType, string[]> = {
  id: INTEGER_TYPES,
  ref: INTEGER_TYPES,
  pos: INTEGER_TYPES,
  int: INTEGER_TYPES,
  int64: INTEGER_TYPES,
  uint64: INTEGER_TYPES,
  bool: ['BOOLEAN', ...INTEGER_TYPES],
  real: ['DOUBLE', 'FLOAT', ...INTEGER_TYPES],
  text: ['VARCHAR'],
};

function duckRowSource(conn: DuckDBConnection, dir: string, format: DirectoryFormat): RowSource {
  const fileOf = (t: string) => join(dir, `${t}.${format}`);
  const rel = (t: string) => (format === 'parquet' ? `read_parquet(${sqlString(fileOf(t))})` : readCsvSql(TABLES.find((x) => x.name === t)!, fileOf(t)));
  const where = (profileId: number | undefined) => (profileId === undefined ? '' : ` WHERE profile_id = ${Number(profileId)}`);
  const wrap = async <T>(what: string, table: string, f: () => Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (e) {
      if (e instanceof ProfkitError) throw e;
      throw new ProfkitError(DM_ERRORS.DATA, `${what} ${fileOf(table)} failed: ${(e as Error).message}`, { file: fileOf(table), table, rule: `a readable ${format} file of the dm-export schema` }, { cause: e });
    }
  };
  /** Like `wrap` for a query over several tables: the error names the table whose file DuckDB names. */
  const wrapAmong = async <T>(what: string, tables: string[], f: () => Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (e) {
      if (e instanceof ProfkitError) throw e;
      const msg = (e as Error).message ?? '';
      return wrap(what, tables.find((t) => msg.includes(fileOf(t))) ?? tables[0]!, () => Promise.reject(e));
    }
  };
  /** Columns of each table holding text (VARCHAR): the schema's for CSV, the file's for Parquet. */
  const textColumns = new Map<string, Set<string>>();
  const len = (table: string, c: string) => {
    const text = textColumns.get(table) ?? new Set(TABLES.find((x) => x.name === table)!.columns.filter((x) => x.type === 'text').map((x) => x.name));
    return text.has(c) ? `strlen(${q(c)})` : '0';
  };
  const measureSql = (table: string, columns: string[], profileId: number | undefined) =>
    `SELECT ${sqlString(table)} AS t, count(*)::BIGINT AS n, [${columns.map((c) => `coalesce(max(${len(table, c)}), 0)::BIGINT`).join(', ')}] AS maxes, ` +
    `(${columns.map((c) => `coalesce(sum(${len(table, c)}), 0)`).join(' + ')})::BIGINT AS text FROM ${rel(table)}${where(profileId)}`;
  /**
   * Runs one query over several tables' files (fewer round trips than one query per table). When
   * it fails, DuckDB's message names the file: that table's error is thrown; without a name,
   * `undefined` sends the caller back to one query per table.
   */
  const batch = async (what: string, tables: string[], sql: string): Promise<unknown[][] | undefined> => {
    try {
      return (await conn.runAndReadAll(sql)).getRowsJS() as unknown[][];
    } catch (e) {
      const msg = (e as Error).message ?? '';
      const table = tables.find((t) => msg.includes(fileOf(t)));
      if (table === undefined) return undefined;
      throw new ProfkitError(DM_ERRORS.DATA, `${what} ${fileOf(table)} failed: ${msg}`, { file: fileOf(table), table, rule: `a readable ${format} file of the dm-export schema` }, { cause: e });
    }
  };
  /** Parquet: every table's columns and types, described in one query on first use. */
  let described: Promise<Map<string, { name: string; type: string }[]> | undefined> | undefined;
  const describeAll = async () => {
    const present = TABLES.map((t) => t.name).filter((t) => existsSync(fileOf(t)));
    const sql = present.map((t) => `SELECT ${sqlString(t)} AS t, column_name, column_type FROM (DESCRIBE SELECT * FROM ${rel(t)})`).join(' UNION ALL ');
    const rows = present.length > 0 ? await batch('reading the schema of', present, sql) : [];
    if (!rows) return undefined;
    const out = new Map<string, { name: string; type: string }[]>(present.map((t) => [t, []]));
    for (const [t, name, type] of rows) out.get(String(t))!.push({ name: String(name), type: String(type) });
    return out;
  };
  /** Every table's measure for one profile, in one query on first use. */
  let measured: { profileId: number; all: Promise<Map<string, TableMeasure> | undefined> } | undefined;
  const measureAll = async (profileId: number) => {
    const tables = TABLES.map((t) => t.name);
    const sql = TABLES.map((t) => measureSql(t.name, t.columns.slice(1).map((c) => c.name), profileId)).join(' UNION ALL ');
    const rows = await batch('measuring', tables, sql);
    if (!rows) return undefined;
    return new Map(rows.map(([t, n, maxes, text]) => [String(t), { rows: Number(n), maxBytes: (maxes as unknown[]).map(Number), textBytes: Number(text) }]));
  };
  return {
    file: dir,
    compressed: format === 'parquet',
    async storedRows() {
      // count(*) of a Parquet file is answered from its row groups' metadata.
      const present = TABLES.map((t) => t.name).filter((t) => existsSync(fileOf(t)));
      const sql = present.map((t) => `SELECT ${sqlString(t)} AS t, count(*)::BIGINT AS n FROM ${rel(t)}`).join(' UNION ALL ');
      const rows = present.length === 0 ? [] : await batch('counting the rows of', present, sql);
      if (rows) return new Map(rows.map(([t, n]) => [String(t), Number(n)]));
      const out = new Map<string, number>();
      for (const t of present) out.set(t, await wrap('counting the rows of', t, async () => Number((await conn.runAndReadAll(`SELECT count(*) FROM ${rel(t)}`)).getRows()[0]![0])));
      return out;
    },
    async tables() {
      return new Set(TABLES.map((t) => t.name).filter((t) => existsSync(fileOf(t))));
    },
    async columns(table) {
      const def = TABLES.find((x) => x.name === table)!;
      if (format === 'csv') {
        // Explicit columns are imposed when reading; check the header line names them.
        return wrap('reading the header of', table, async () => {
          const r = await conn.runAndReadAll(`SELECT * FROM read_csv(${sqlString(fileOf(table))}, header = false, all_varchar = true, auto_detect = false, columns = {'line': 'VARCHAR'}, delim = '\u0001', quote = '', escape = '') LIMIT 1`);
          const first = r.getRows()[0]?.[0];
          const header = typeof first === 'string' ? first.replace(/\r$/, '').split(',') : [];
          const expected = def.columns.map((c) => c.name);
          // Columns are read by position with the schema's types: the header must be exactly the schema's.
          if (header.length > 0 && header.join(',') !== expected.join(',')) {
            throw new ProfkitError(DM_ERRORS.SCHEMA, `${fileOf(table)}: the header is not the schema's columns in order (${expected.join(',')})`, {
              file: fileOf(table),
              line: 1,
              table,
              rule: 'CSV header = the table columns, in schema order',
            });
          }
          textColumns.set(table, new Set(def.columns.filter((c) => c.type === 'text').map((c) => c.name)));
          return header;
        });
      }
      described ??= describeAll();
      const all = await described;
      return wrap('reading the schema of', table, async () => {
        const cols =
          all?.get(table) ?? (await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${rel(table)}`)).getRowObjects().map((o) => ({ name: String(o.column_name), type: String(o.column_type) }));
        // Values of other types (decimals, lists, structs, blobs...) are not ours: refuse them
        // before any row is read.
        for (const c of def.columns) {
          const have = cols.find((x) => x.name === c.name);
          if (have && !ACCEPTED_TYPES[c.type].includes(have.type)) {
            throw new ProfkitError(DM_ERRORS.SCHEMA, `${fileOf(table)}: column ${c.name} has type ${have.type}, expected ${c.type === 'text' ? 'VARCHAR' : c.type === 'real' ? 'DOUBLE' : c.type === 'bool' ? 'BOOLEAN' : 'an integer type'}`, {
              file: fileOf(table),
              table,
              column: c.name,
              rule: 'column types of the dm-export schema',
            });
          }
        }
        textColumns.set(table, new Set(cols.filter((x) => x.type === 'VARCHAR').map((x) => x.name)));
        return cols.map((x) => x.name);
      });
    },
    async profileIds() {
      return wrap('reading', 'profiles', async () => {
        const r = await conn.runAndReadAll(`SELECT DISTINCT profile_id FROM ${rel('profiles')} ORDER BY 1`);
        return r.getRows().map((x) => Number(x[0]));
      });
    },
    async measure(table, columns, profileId) {
      if (profileId !== undefined) {
        if (measured?.profileId !== profileId) measured = { profileId, all: measureAll(profileId) };
        const m = (await measured.all)?.get(table);
        if (m && m.maxBytes!.length === columns.length) return m;
      }
      return wrap('measuring', table, async () => {
        const [[, n, maxes, text]] = (await conn.runAndReadAll(measureSql(table, columns, profileId))).getRowsJS() as unknown[][] as [unknown, unknown, unknown[], unknown][];
        return { rows: Number(n), maxBytes: maxes.map(Number), textBytes: Number(text) };
      });
    },
    async largestGroup(table, column, profileId, atLeast) {
      return wrap('reading', table, async () => {
        const sql = `SELECT ${q(column)}, count(*) AS n FROM ${rel(table)}${where(profileId)} GROUP BY ${q(column)} HAVING count(*) > ${Math.floor(atLeast)} ORDER BY n DESC LIMIT 1`;
        const row = (await conn.runAndReadAll(sql)).getRows()[0];
        return row ? { key: row[0] as DbValue, rows: Number(row[1]) } : undefined;
      });
    },
    async rows(table, columns, profileId, _bigints) {
      const t = TABLES.find((x) => x.name === table)!;
      return wrap('reading', table, async () => {
        const r = await conn.runAndReadAll(`SELECT ${columns.map(q).join(', ')} FROM ${rel(table)}${where(profileId)} ORDER BY ${t.primaryKey.map(q).join(', ')}`);
        return r.getRows() as DbValue[][];
      });
    },
    async orphanProfileId(table) {
      return wrapAmong('checking the references of', [table.name, 'profiles'], async () => {
        const sql = `SELECT profile_id FROM ${rel(table.name)} WHERE profile_id IS NULL OR profile_id NOT IN (SELECT profile_id FROM ${rel('profiles')} WHERE profile_id IS NOT NULL) LIMIT 1`;
        const row = (await conn.runAndReadAll(sql)).getRows()[0];
        return row ? (row[0] as DbValue) : undefined;
      });
    },
    async danglingReference(table, fk, profileId) {
      return wrapAmong('checking the references of', [table.name, fk.table], async () => {
        const own = fk.columns.filter((c) => c !== 'profile_id');
        const sql =
          `SELECT ${referenceKeyColumns(table, fk).map((c) => `c.${q(c)}`).join(', ')} FROM ${rel(table.name)} AS c WHERE c.profile_id = ${Number(profileId)} ` +
          own.map((c) => `AND c.${q(c)} IS NOT NULL `).join('') +
          `AND NOT EXISTS (SELECT 1 FROM ${rel(fk.table)} AS p WHERE ${fk.columns.map((c, i) => `p.${q(fk.refColumns[i]!)} = c.${q(c)}`).join(' AND ')}) ` +
          `ORDER BY ${table.primaryKey.map((c) => `c.${q(c)}`).join(', ')} LIMIT 1`;
        const row = (await conn.runAndReadAll(sql)).getRows()[0];
        return row as DbValue[] | undefined;
      });
    },
  };
}

export interface DirectoryReadOptions {
  /** `parquet` or `csv`; default: parquet when `profiles.parquet` exists. */
  format?: DirectoryFormat;
  /** Which profile to read; default: the only one, or the last (highest profile_id). */
  profileId?: number | string;
  /**
   * Read limits (core's `READ_LIMITS` by default): `maxInputBytes` (the table files together),
   * `maxSamples`, `maxFramesPerStack`, `maxStringLength` (any text value) and, for Parquet, whose
   * files are compressed, `maxDecompressedBytes` (the decoded rows: 8 bytes per value plus the
   * text). Exceeding one is a `PROFKIT_E_LIMIT` error naming the option.
   */
  limits?: ReadLimits;
  /**
   * A DuckDB connection (`@duckdb/node-api`) to read with, kept open: reading many directories
   * through one instance saves starting DuckDB for each (about 50 ms). Only `SELECT`s over the
   * files run on it. Default: a private in-memory instance, closed after the read.
   */
  connection?: DuckDBConnection;
}

/** The table files together are at most `maxInputBytes`. */
function checkDirectorySize(dir: string, format: DirectoryFormat, limits: ReadLimits | undefined): void {
  const max = limits?.maxInputBytes && limits.maxInputBytes > 0 ? limits.maxInputBytes : DEFAULT_LIMITS.maxInputBytes;
  let total = 0;
  for (const t of TABLES) {
    const f = join(dir, `${t.name}.${format}`);
    try {
      if (existsSync(f)) total += statSync(f).size;
    } catch (e) {
      throw ioError(e, f, 'reading');
    }
  }
  if (total > max) throw limitError('maxInputBytes', `the ${format} files of ${dir} (${total} bytes)`, max, { file: dir });
}

/** Reads a profile back from a directory written by `writeCsvDir` or `writeParquetDir`. */
export async function readDirectory(dir: string, options: DirectoryReadOptions = {}): Promise<{ profile: Profile; profileId: number; name: string; warnings: Warning[] }> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new ProfkitError(ErrorCodes.IO, `${dir} is not a directory`, { file: dir });
  const format = options.format ?? (existsSync(join(dir, 'profiles.parquet')) ? 'parquet' : 'csv');
  checkDirectorySize(dir, format, options.limits);
  const own = options.connection ? undefined : await (await duckdb()).connect();
  try {
    const src = duckRowSource(options.connection ?? own!.conn, dir, format);
    await checkSchema(src);
    const { profileId, all } = await chooseProfileId(src, options.profileId, options.limits);
    await checkReferences(src, profileId);
    const { profile, name } = await tablesToProfile(src, profileId, options.limits);
    // Rules the rows cannot express (e.g. non-empty function names) are the validator's.
    assertValid(profile, dir);
    const warnings: Warning[] = [];
    if (options.profileId === undefined && all.length > 1) {
      warnings.push({ code: 'PROFKIT_W_DM_SEVERAL_PROFILES', message: `${dir} holds ${all.length} profiles (${listIds(all)}); read the last, profile_id ${profileId}`, detail: { file: dir } });
    }
    return { profile, profileId, name, warnings };
  } finally {
    own?.close();
  }
}
