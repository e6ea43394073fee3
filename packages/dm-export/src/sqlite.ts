/**
 * The SQLite target: a real SQLite database (better-sqlite3), foreign keys enforced, every
 * constraint declared, secondary indexes for the common joins. Writing loads the tables in one
 * transaction with prepared multi-row INSERT statements; reading fetches each table ordered by
 * its primary key and rebuilds the profile (`relational.ts`).
 */

import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DEFAULT_LIMITS, ErrorCodes, ProfkitError, assertValid, ioError, limitError, type Profile, type ReadLimits, type Warning } from '@profkit/core/node';
import type BetterSqlite3 from 'better-sqlite3';
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
  type TableData,
} from './relational.js';
import { loadSqlite } from './engines.js';
import { SCHEMA_VERSION, SQLITE_APPLICATION_ID, TABLES, createIndexStatements, createTableStatements, q } from './schema.js';

type Database = BetterSqlite3.Database;

/** Rows per multi-row INSERT statement (SQLite allows 32766 bound parameters). */
const ROWS_PER_STATEMENT = 256;

export interface SqliteWriteOptions {
  /** Add the profile to `existing` (a database written before) instead of creating a new one. */
  append?: boolean;
  /** The existing database's bytes (required with `append`, unless empty/new). */
  existing?: Uint8Array;
  /** profile_id to use; default: 1 for a new database, max(profile_id)+1 when appending. */
  profileId?: number;
  /** `profiles.name`. */
  name?: string;
  /** File name for messages. */
  file?: string;
  /**
   * Page size of a new database in bytes (a power of two, 512..65536; default SQLite's 4096).
   * Every table and index takes at least one page: 512 makes a small profile's database about
   * 8 times smaller. Ignored when appending.
   */
  pageSize?: number;
}

/** Rows between two progress reports of `insertTable`. */
const PROGRESS_ROWS = 16_384;

function insertTable(db: Database, data: TableData, progress?: (rows: number) => void): void {
  const t = data.table;
  const ncol = t.columns.length;
  const types = t.columns.map((c) => c.type);
  const head = `INSERT INTO ${q(t.name)} (${t.columns.map((c) => q(c.name)).join(', ')}) VALUES `;
  const tuple = '(' + new Array(ncol).fill('?').join(', ') + ')';
  const many = db.prepare(head + new Array(ROWS_PER_STATEMENT).fill(tuple).join(', '));
  const one = db.prepare(head + tuple);
  const params: DbValue[] = new Array(ncol * ROWS_PER_STATEMENT);
  const cols = data.columns;
  let r = 0;
  for (; r + ROWS_PER_STATEMENT <= data.rowCount; r += ROWS_PER_STATEMENT) {
    let j = 0;
    for (let x = r; x < r + ROWS_PER_STATEMENT; x++) for (let c = 0; c < ncol; c++) params[j++] = encodeValue(types[c]!, cols[c]![x]!);
    many.run(params);
    if (progress && (r + ROWS_PER_STATEMENT) % PROGRESS_ROWS === 0) progress(PROGRESS_ROWS);
  }
  const reported = progress ? r - (r % PROGRESS_ROWS) : 0;
  const row: DbValue[] = new Array(ncol);
  for (; r < data.rowCount; r++) {
    for (let c = 0; c < ncol; c++) row[c] = encodeValue(types[c]!, cols[c]![r]!);
    one.run(row);
  }
  progress?.(data.rowCount - reported);
}

/**
 * Opens a database with foreign keys enforced: from bytes (deserialized in memory), from a file
 * path (on disk, never loaded whole), or a new empty in-memory one (`undefined`).
 * @internal (its type is better-sqlite3's: kept out of the published .d.ts, see tsconfig stripInternal)
 */
export function openDatabase(source: Uint8Array | string | undefined, file: string, readonly = false): Database {
  const Db = loadSqlite(); // better-sqlite3 is an optional peer, loaded only here (engines.ts)
  let db: Database;
  try {
    db =
      typeof source === 'string'
        ? new Db(source, { readonly, fileMustExist: readonly })
        : source && source.length > 0
          ? new Db(Buffer.from(source.buffer, source.byteOffset, source.byteLength), { readonly })
          : new Db(':memory:');
    db.pragma('foreign_keys = ON');
    // Touch the schema so a corrupt file fails here, with a clear code.
    db.prepare('SELECT count(*) FROM sqlite_schema').get();
  } catch (e) {
    if (e instanceof ProfkitError) throw e;
    if (isSqliteIoFailure(e)) throw sqliteIoError(e, file, readonly ? 'reading' : 'opening');
    // better-sqlite3 checks the directory itself (a TypeError, without a SQLite code).
    if (typeof source === 'string' && !existsSync(dirname(resolve(source)))) {
      throw new ProfkitError(ErrorCodes.IO, `opening the SQLite database failed: no such directory ${dirname(resolve(source))}`, { file, errno: 'ENOENT' }, { cause: e });
    }
    throw new ProfkitError(DM_ERRORS.NOT_SQLITE, `not a readable SQLite database: ${(e as Error).message}`, { file, offset: 0, rule: 'SQLite database file format' }, { cause: e });
  }
  return db;
}

/**
 * Whether a SQLite error (better-sqlite3's `code`, the extended result code) is a failure of the
 * disk or the file rather than of the data: a full disk or quota (SQLITE_FULL), an I/O error
 * (SQLITE_IOERR_*), a file that cannot be opened (SQLITE_CANTOPEN_*) or is read-only
 * (SQLITE_READONLY_*). Those are `PROFKIT_E_IO` (exit 3), never a broken profile.
 */
export function isSqliteIoFailure(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^SQLITE_(FULL|IOERR|CANTOPEN|READONLY)(_|$)/.test(code);
}

function sqliteIoError(e: unknown, file: string, doing: string): ProfkitError {
  const err = e as { code: string; message: string };
  return new ProfkitError(ErrorCodes.IO, `${doing} the SQLite database failed: ${err.message} (${err.code})`, { file, errno: err.code, rule: 'the database file can be written' }, { cause: e });
}

function hasOurSchema(db: Database): boolean {
  const row = db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table' AND name IN ('profiles', 'sample_locations')").get() as { n: number };
  return row.n === 2;
}

/** Writes a profile into a SQLite database; returns the database bytes and the profile_id used. */
export function writeSqlite(profile: Profile, options: SqliteWriteOptions = {}): { bytes: Uint8Array; profileId: number; warnings: Warning[] } {
  const file = options.file ?? '<sqlite>';
  const existing = options.append ? options.existing : undefined;
  const fresh = !existing || existing.length === 0;
  if (options.pageSize !== undefined && (!Number.isInteger(options.pageSize) || options.pageSize < 512 || options.pageSize > 65536 || (options.pageSize & (options.pageSize - 1)) !== 0)) {
    throw new ProfkitError(ErrorCodes.USAGE, `pageSize must be a power of two in 512..65536, got ${options.pageSize}`, { option: 'pageSize' });
  }
  const db = openDatabase(existing, file);
  try {
    // Before the first table is created (a new database's page size is fixed then).
    if (fresh && options.pageSize !== undefined) db.pragma(`page_size = ${options.pageSize}`);
    db.pragma('journal_mode = MEMORY');
    db.pragma('synchronous = OFF');
    // Index builds sort in memory rather than in temp files.
    db.pragma('temp_store = MEMORY');
    db.pragma('cache_size = -262144');
    const profileId = insertProfile(db, profile, { profileId: options.profileId, name: options.name, file, nonEmpty: !!existing && existing.length > 0 });
    const buf = db.serialize();
    return { bytes: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), profileId, warnings: [] };
  } finally {
    db.close();
  }
}

/**
 * Adds one profile to an open database (creating the schema when the database is empty), in one
 * transaction; returns the profile_id used. `nonEmpty`: the database came from an existing file
 * (so tables that are not ours make it foreign). `onRows` (progress) is called with the rows
 * loaded so far and the profile's total, every 16,384 rows and at the end of each table.
 * @internal
 */
export function insertProfile(
  db: Database,
  profile: Profile,
  options: { profileId?: number; name?: string; file: string; nonEmpty: boolean; onRows?: (done: number, total: number) => void },
): number {
  const file = options.file;
  const fresh = !hasOurSchema(db);
  if (!fresh) {
    // Throws a PROFKIT_E_DM_SCHEMA when an existing database is not (fully) ours.
    checkSchemaSync(db, file);
  } else if (options.nonEmpty) {
    const n = (db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table'").get() as { n: number }).n;
    if (n > 0) {
      throw new ProfkitError(DM_ERRORS.SCHEMA, 'cannot append: the database has tables but not the profkit dm-export schema', {
        file,
        rule: 'append only to a database written by dm-export',
      });
    }
  }
  const maxId = fresh ? 0 : Number((db.prepare('SELECT coalesce(max(profile_id), 0) AS m FROM profiles').get() as { m: number }).m);
  const profileId = options.profileId ?? maxId + 1;
  if (!Number.isInteger(profileId) || profileId < 1 || profileId > 0xffffffff) {
    throw new ProfkitError(ErrorCodes.USAGE, `profileId ${profileId} is not an integer in 1..4294967295`, { file, option: 'profileId' });
  }
  if (!fresh && db.prepare('SELECT 1 FROM profiles WHERE profile_id = ?').get(profileId)) {
    throw new ProfkitError(ErrorCodes.USAGE, `profile_id ${profileId} already exists in the database`, { file, option: 'profileId', rule: 'profile_id is unique' });
  }
  const tables = profileToTables(profile, { profileId, name: options.name });
  const total = tables.reduce((n, t) => n + t.rowCount, 0);
  let loaded = 0;
  const onRows = options.onRows;
  const progress = onRows
    ? (rows: number) => {
        loaded += rows;
        onRows(loaded, total);
      }
    : undefined;
  const load = db.transaction(() => {
    if (fresh) {
      db.pragma(`application_id = ${SQLITE_APPLICATION_ID}`);
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
      for (const s of createTableStatements('sqlite')) db.exec(s);
    }
    for (const t of tables) insertTable(db, t, progress);
    // Foreign keys are enforced row by row (foreign_keys = ON): a dangling reference aborts the load.
    if (fresh) for (const s of createIndexStatements()) db.exec(s);
  });
  try {
    load();
  } catch (e) {
    if (e instanceof ProfkitError) throw e;
    const err = e as { code?: string; message: string };
    if (isSqliteIoFailure(e)) throw sqliteIoError(e, file, 'writing');
    throw new ProfkitError(ErrorCodes.INVALID_PROFILE, `the profile breaks a constraint of the relational model: ${err.message}`, {
      file,
      rule: err.code ?? 'SQLite constraint',
    }, { cause: e });
  }
  try {
    // Approximate statistics (sampled, bounded cost) for the query planner.
    db.pragma('analysis_limit = 1000');
    db.exec('ANALYZE');
  } catch (e) {
    if (isSqliteIoFailure(e)) throw sqliteIoError(e, file, 'writing');
    throw e;
  }
  return profileId;
}

function checkSchemaSync(db: Database, file: string): void {
  for (const t of TABLES) {
    const cols = new Set((db.prepare(`SELECT name FROM pragma_table_info(?)`).all(t.name) as { name: string }[]).map((r) => r.name));
    if (cols.size === 0) {
      throw new ProfkitError(DM_ERRORS.SCHEMA, `not a profkit relational export: table ${t.name} is missing`, { file, table: t.name, rule: 'every table of the dm-export schema exists' });
    }
    for (const c of t.columns) {
      if (!cols.has(c.name)) {
        throw new ProfkitError(DM_ERRORS.SCHEMA, `not a profkit relational export: column ${t.name}.${c.name} is missing`, {
          file,
          table: t.name,
          column: c.name,
          rule: 'every column of the dm-export schema exists',
        });
      }
    }
  }
}

/**
 * A `RowSource` over an open SQLite database. Only real tables count (not views, which could
 * compute endless rows, nor virtual tables): a view named like one of ours is a missing table.
 * @internal
 */
export function sqliteRowSource(db: Database, file: string): RowSource {
  let columnsOf: BetterSqlite3.Statement | undefined;
  /** Row counts of every table for one profile, fetched with one statement on the first `measure`. */
  let counts: { profileId: number; rows: Map<string, number> } | undefined;
  return {
    file,
    async tables() {
      return new Set(
        db.prepare("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table'").pluck(true).all() as string[],
      );
    },
    async columns(table) {
      columnsOf ??= db.prepare('SELECT name FROM pragma_table_info(?)').pluck(true);
      return columnsOf.all(table) as string[];
    },
    async profileIds() {
      const rows = db.prepare('SELECT profile_id FROM profiles ORDER BY profile_id').raw(true).all() as [number][];
      return rows.map((r) => Number(r[0]));
    },
    async measure(table, _columns, profileId) {
      // Rows only: the text of a SQLite file is bounded by its size, and checked as rows are converted.
      if (profileId === undefined) return { rows: Number(db.prepare(`SELECT count(*) FROM ${q(table)}`).pluck(true).get()) };
      if (counts?.profileId !== profileId) {
        const r = db.prepare(`SELECT ${TABLES.map((t) => `(SELECT count(*) FROM ${q(t.name)} WHERE "profile_id" = @id)`).join(', ')}`).raw(true).get({ id: profileId }) as number[];
        counts = { profileId, rows: new Map(TABLES.map((t, i) => [t.name, Number(r[i])])) };
      }
      return { rows: counts.rows.get(table)! };
    },
    async largestGroup(table, column, profileId, atLeast) {
      const sql = `SELECT ${q(column)}, count(*) AS n FROM ${q(table)} WHERE "profile_id" = ? GROUP BY ${q(column)} HAVING n > ? ORDER BY n DESC LIMIT 1`;
      const r = db.prepare(sql).raw(true).get(profileId, atLeast) as [DbValue, number] | undefined;
      return r ? { key: r[0], rows: Number(r[1]) } : undefined;
    },
    async rows(table, columns, profileId, bigints) {
      const t = TABLES.find((x) => x.name === table)!;
      const sql = `SELECT ${columns.map(q).join(', ')} FROM ${q(table)} WHERE "profile_id" = ? ORDER BY ${t.primaryKey.map(q).join(', ')}`;
      return db.prepare(sql).raw(true).safeIntegers(bigints).all(profileId) as DbValue[][];
    },
    async orphanProfileId(table) {
      const t = q(table.name);
      // With an index led by profile_id (ours: every primary key), walk the distinct ids through
      // it: one step per profile, not per row. Without one (a database made elsewhere), one scan.
      const sql = leadingIndexOn(db, table.name, 'profile_id')
        ? `WITH RECURSIVE ids(id) AS (SELECT (SELECT min("profile_id") FROM ${t}) UNION ALL SELECT (SELECT min("profile_id") FROM ${t} WHERE "profile_id" > ids.id) FROM ids WHERE ids.id IS NOT NULL) ` +
          `SELECT id FROM ids WHERE id IS NOT NULL AND id NOT IN (SELECT "profile_id" FROM "profiles" WHERE "profile_id" IS NOT NULL)`
        : `SELECT "profile_id" FROM ${t} WHERE "profile_id" NOT IN (SELECT "profile_id" FROM "profiles" WHERE "profile_id" IS NOT NULL)`;
      const r = db.prepare(`${sql} UNION ALL SELECT NULL WHERE EXISTS (SELECT 1 FROM ${t} WHERE "profile_id" IS NULL) LIMIT 1`).raw(true).safeIntegers(true).get() as [DbValue] | undefined;
      return r ? r[0] : undefined;
    },
    async danglingReference(table, fk, profileId) {
      // A LEFT JOIN rather than NOT EXISTS: SQLite then builds an automatic index when the parent
      // table has none (a database made elsewhere), instead of scanning it once per row.
      const own = fk.columns.filter((c) => c !== 'profile_id');
      const sql =
        `SELECT ${referenceKeyColumns(table, fk).map((c) => `c.${q(c)}`).join(', ')} FROM ${q(table.name)} AS c LEFT JOIN ${q(fk.table)} AS p ON ` +
        fk.columns.map((c, i) => `p.${q(fk.refColumns[i]!)} = c.${q(c)}`).join(' AND ') +
        ` WHERE c."profile_id" = ? ${own.map((c) => `AND c.${q(c)} IS NOT NULL `).join('')}AND p.${q(fk.refColumns[0]!)} IS NULL ORDER BY ${table.primaryKey.map((c) => `c.${q(c)}`).join(', ')} LIMIT 1`;
      return db.prepare(sql).raw(true).safeIntegers(true).get(profileId) as DbValue[] | undefined;
    },
  };
}

/** Whether some index of `table` (its primary key included) has `column` as its first column. */
function leadingIndexOn(db: Database, table: string, column: string): boolean {
  const indexes = db.prepare('SELECT name FROM pragma_index_list(?)').pluck(true).all(table) as string[];
  return indexes.some((ix) => db.prepare('SELECT name FROM pragma_index_info(?) WHERE seqno = 0').pluck(true).get(ix) === column);
}

export interface SqliteReadOptions {
  /** Which profile to read; default: the only one, or the last (highest profile_id). */
  profileId?: number | string;
  file?: string;
  /**
   * Read limits (core's `READ_LIMITS` by default): `maxInputBytes` (the database's size),
   * `maxSamples`, `maxFramesPerStack`, `maxStringLength` (any text value). Exceeding one is a
   * `PROFKIT_E_LIMIT` error naming the option.
   */
  limits?: ReadLimits;
}

/** The first `n` bytes of a file (fewer when it is shorter). */
function fileHead(path: string, n: number): Uint8Array {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buf = new Uint8Array(n);
    const got = readSync(fd, buf, 0, n, 0);
    return buf.subarray(0, got);
  } catch (e) {
    throw ioError(e, path, 'reading');
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function checkHeader(head: Uint8Array, file: string): void {
  if (head.length < 100 || Buffer.from(head.subarray(0, 16)).toString('latin1') !== 'SQLite format 3\u0000') {
    throw new ProfkitError(DM_ERRORS.NOT_SQLITE, 'not a SQLite database: the 16-byte header "SQLite format 3\\0" is missing', {
      file,
      offset: 0,
      rule: 'SQLite database header',
    });
  }
}

/** The database (bytes or file) is at most `maxInputBytes`: its tables are bounded by its size. */
function checkInputSize(source: Uint8Array | string, file: string, limits: ReadLimits | undefined): void {
  const max = limits?.maxInputBytes && limits.maxInputBytes > 0 ? limits.maxInputBytes : DEFAULT_LIMITS.maxInputBytes;
  let size: number;
  if (typeof source === 'string') {
    try {
      size = statSync(source).size;
    } catch (e) {
      throw ioError(e, source, 'reading');
    }
  } else size = source.length;
  if (size > max) throw limitError('maxInputBytes', `the database (${size} bytes)`, max, { file });
}

/**
 * Opens an existing database for reading: bytes are deserialized in memory; a path (string) is
 * opened read-only on disk, so memory does not grow with the database size.
 */
function openForReading(source: Uint8Array | string, file: string): Database {
  checkHeader(typeof source === 'string' ? fileHead(source, 100) : source, file);
  return openDatabase(source, file, true);
}

/** Reads one profile back from a SQLite database: its bytes, or a file path (opened read-only on disk). */
export async function readSqlite(source: Uint8Array | string, options: SqliteReadOptions = {}): Promise<{ profile: Profile; profileId: number; name: string; warnings: Warning[] }> {
  const file = options.file ?? (typeof source === 'string' ? source : '<sqlite>');
  checkInputSize(source, file, options.limits);
  const db = openForReading(source, file);
  try {
    return await readOpen(db, file, options);
  } catch (e) {
    // SQLite found a damaged page or record while reading; anything else is a bug of ours.
    if (e instanceof ProfkitError || (e as { name?: string }).name !== 'SqliteError') throw e;
    throw new ProfkitError(DM_ERRORS.NOT_SQLITE, `not a readable SQLite database: ${(e as Error).message}`, { file, rule: 'SQLite database file format', sqlite: (e as { code?: string }).code }, { cause: e });
  } finally {
    db.close();
  }
}

async function readOpen(db: Database, file: string, options: SqliteReadOptions): Promise<{ profile: Profile; profileId: number; name: string; warnings: Warning[] }> {
  {
    const src = sqliteRowSource(db, file);
    await checkSchema(src);
    const { profileId, all } = await chooseProfileId(src, options.profileId, options.limits);
    await checkReferences(src, profileId);
    const { profile, name } = await tablesToProfile(src, profileId, options.limits);
    // Rules the rows cannot express (e.g. non-empty function names) are the validator's.
    assertValid(profile, file);
    const warnings: Warning[] = [];
    if (options.profileId === undefined && all.length > 1) {
      warnings.push({
        code: 'PROFKIT_W_DM_SEVERAL_PROFILES',
        message: `the database holds ${all.length} profiles (${listIds(all)}); read the last, profile_id ${profileId} (choose with the read option profileId)`,
        detail: { file },
      });
    }
    return { profile, profileId, name, warnings };
  }
}

/**
 * The profiles stored in a database (its bytes, or a file path opened read-only on disk): id,
 * name, number of samples and of sample types.
 */
export function listProfiles(source: Uint8Array | string, file = typeof source === 'string' ? source : '<sqlite>'): { profileId: number; name: string; samples: number; sampleTypes: number }[] {
  const db = openForReading(source, file);
  try {
    checkSchemaSync(db, file);
    const rows = db
      .prepare(
        'SELECT p.profile_id AS profileId, p.name AS name, (SELECT count(*) FROM samples s WHERE s.profile_id = p.profile_id) AS samples, ' +
          '(SELECT count(*) FROM sample_types t WHERE t.profile_id = p.profile_id) AS sampleTypes FROM profiles p ORDER BY p.profile_id',
      )
      .all() as { profileId: number; name: string; samples: number; sampleTypes: number }[];
    return rows;
  } finally {
    db.close();
  }
}
