/**
 * Directory targets: one CSV file or one Parquet file per table. Parquet files are written by
 * DuckDB (`COPY ... TO ... (FORMAT parquet)`) from tables loaded through its appender with
 * explicit column types, so 64-bit values stay exact. Both directories are read back with DuckDB
 * (CSV with the schema's column types imposed, no type guessing), which makes them a storage
 * format like the SQLite database.
 */

import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ErrorCodes, ProfkitError, assertValid, ioError, writeFileAtomic, type Profile, type Warning } from '@profkit/core';
import {
  DM_ERRORS,
  checkSchema,
  chooseProfileId,
  encodeValue,
  profileToTables,
  tablesToProfile,
  type DbValue,
  type RowSource,
} from './relational.js';
import { TABLES, q, sqlType, type TableDef } from './schema.js';
import { tableCsv } from './text.js';

export type DirectoryFormat = 'csv' | 'parquet';

export interface DirectoryWriteOptions {
  /** profile_id of the rows; default 1 (pick distinct ids to combine directories). */
  profileId?: number;
  name?: string;
  /** Called after each table's file is written (progress): table name and row count. */
  onTable?: (table: string, rows: number) => void;
}

type DuckDBConnection = import('@duckdb/node-api').DuckDBConnection;

async function duckdb(): Promise<{ connect(): Promise<{ conn: DuckDBConnection; close(): void }> }> {
  let mod: typeof import('@duckdb/node-api');
  try {
    mod = await import('@duckdb/node-api');
  } catch (e) {
    throw new ProfkitError(ErrorCodes.UNSUPPORTED, `the DuckDB engine (npm package @duckdb/node-api) cannot be loaded: ${(e as Error).message}`, {
      rule: '@duckdb/node-api is installed',
    });
  }
  return {
    async connect() {
      const inst = await mod.DuckDBInstance.create(':memory:', { threads: '2' });
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
  const mod = await import('@duckdb/node-api').catch((e: Error) => {
    throw new ProfkitError(ErrorCodes.UNSUPPORTED, `the DuckDB engine (npm package @duckdb/node-api) cannot be loaded: ${e.message}`, { rule: '@duckdb/node-api is installed' });
  });
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

function duckRowSource(conn: DuckDBConnection, dir: string, format: DirectoryFormat): RowSource {
  const fileOf = (t: string) => join(dir, `${t}.${format}`);
  const rel = (t: string) => (format === 'parquet' ? `read_parquet(${sqlString(fileOf(t))})` : readCsvSql(TABLES.find((x) => x.name === t)!, fileOf(t)));
  const wrap = async <T>(what: string, table: string, f: () => Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (e) {
      if (e instanceof ProfkitError) throw e;
      throw new ProfkitError(DM_ERRORS.DATA, `${what} ${fileOf(table)} failed: ${(e as Error).message}`, { file: fileOf(table), table, rule: `a readable ${format} file of the dm-export schema` }, { cause: e });
    }
  };
  return {
    file: dir,
    async tables() {
      return new Set(TABLES.map((t) => t.name).filter((t) => existsSync(fileOf(t))));
    },
    async columns(table) {
      if (format === 'csv') {
        // Explicit columns are imposed when reading; check the header line names them.
        return wrap('reading the header of', table, async () => {
          const r = await conn.runAndReadAll(`SELECT * FROM read_csv(${sqlString(fileOf(table))}, header = false, all_varchar = true, auto_detect = false, columns = {'line': 'VARCHAR'}, delim = '\u0001', quote = '', escape = '') LIMIT 1`);
          const first = r.getRows()[0]?.[0];
          const header = typeof first === 'string' ? first.replace(/\r$/, '').split(',') : [];
          const expected = TABLES.find((x) => x.name === table)!.columns.map((c) => c.name);
          // Columns are read by position with the schema's types: the header must be exactly the schema's.
          if (header.length > 0 && header.join(',') !== expected.join(',')) {
            throw new ProfkitError(DM_ERRORS.SCHEMA, `${fileOf(table)}: the header is not the schema's columns in order (${expected.join(',')})`, {
              file: fileOf(table),
              line: 1,
              table,
              rule: 'CSV header = the table columns, in schema order',
            });
          }
          return header;
        });
      }
      return wrap('reading the schema of', table, async () => {
        const r = await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${rel(table)}`);
        return r.getRowObjects().map((o) => String(o.column_name));
      });
    },
    async profileIds() {
      return wrap('reading', 'profiles', async () => {
        const r = await conn.runAndReadAll(`SELECT DISTINCT profile_id FROM ${rel('profiles')} ORDER BY 1`);
        return r.getRows().map((x) => Number(x[0]));
      });
    },
    async rows(table, columns, profileId, _bigints) {
      const t = TABLES.find((x) => x.name === table)!;
      return wrap('reading', table, async () => {
        const r = await conn.runAndReadAll(`SELECT ${columns.map(q).join(', ')} FROM ${rel(table)} WHERE profile_id = ${Number(profileId)} ORDER BY ${t.primaryKey.map(q).join(', ')}`);
        return r.getRows() as DbValue[][];
      });
    },
  };
}

/** Reads a profile back from a directory written by `writeCsvDir` or `writeParquetDir`. */
export async function readDirectory(
  dir: string,
  options: { format?: DirectoryFormat; profileId?: number | string } = {},
): Promise<{ profile: Profile; profileId: number; name: string; warnings: Warning[] }> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new ProfkitError(ErrorCodes.IO, `${dir} is not a directory`, { file: dir });
  const format = options.format ?? (existsSync(join(dir, 'profiles.parquet')) ? 'parquet' : 'csv');
  const db = await (await duckdb()).connect();
  try {
    const src = duckRowSource(db.conn, dir, format);
    await checkSchema(src);
    const { profileId, all } = await chooseProfileId(src, options.profileId);
    const { profile, name } = await tablesToProfile(src, profileId);
    // Rules the rows cannot express (e.g. non-empty function names) are the validator's.
    assertValid(profile, dir);
    const warnings: Warning[] = [];
    if (options.profileId === undefined && all.length > 1) {
      warnings.push({ code: 'PROFKIT_W_DM_SEVERAL_PROFILES', message: `${dir} holds ${all.length} profiles; read the last, profile_id ${profileId}`, detail: { file: dir } });
    }
    return { profile, profileId, name, warnings };
  } finally {
    db.close();
  }
}
