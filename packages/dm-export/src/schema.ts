/**
 * The relational model of a profile: one description of every table, column, primary key,
 * foreign key, uniqueness constraint and index, from which the DDL of every target (SQLite,
 * PostgreSQL, DuckDB), the CSV headers and the diagrams are generated.
 *
 * Every table carries `profile_id`, so many profiles live in one database; every key starts with
 * it. Ids are the profile's own ids (1..2^32-1); a 0 ("none") reference is stored as NULL so
 * that foreign keys hold.
 */

/**
 * Logical column types:
 * - `id`: a model id (1..2^32-1), `ref`: an id referencing another table, NULL for none;
 * - `pos`: a 0- or 1-based position/ordinal (INTEGER);
 * - `int`: a safe integer (line, column, start line);
 * - `int64`: a signed 64-bit value (sample values, label numbers, time);
 * - `uint64`: an unsigned 64-bit value (addresses), stored as the signed 64-bit integer with the
 *   same bits (two's complement), because SQLite, PostgreSQL and Parquet readers have no
 *   portable unsigned 64-bit type;
 * - `bool`, `text`, `real`.
 */
export type ColumnType = 'id' | 'ref' | 'pos' | 'int' | 'int64' | 'uint64' | 'bool' | 'text' | 'real';

export interface ColumnDef {
  name: string;
  type: ColumnType;
  /** NULL allowed (always true for `ref`). */
  nullable?: boolean;
  doc: string;
}

export interface ForeignKeyDef {
  columns: string[];
  table: string;
  refColumns: string[];
}

export interface TableDef {
  name: string;
  doc: string;
  columns: ColumnDef[];
  primaryKey: string[];
  foreignKeys: ForeignKeyDef[];
  unique: string[][];
  /** Secondary indexes (beyond the primary key), for the example queries' joins. */
  indexes: string[][];
}

/** Version of the relational schema, stored as SQLite `user_version` and in `meta`-less form. */
export const SCHEMA_VERSION = 1;
/** SQLite `application_id` of profkit databases ("PRFK"), checked by `sniff`. */
export const SQLITE_APPLICATION_ID = 0x5052464b;

const pid: ColumnDef = { name: 'profile_id', type: 'id', doc: 'the profile this row belongs to' };
const toProfiles: ForeignKeyDef = { columns: ['profile_id'], table: 'profiles', refColumns: ['profile_id'] };
const toSamples: ForeignKeyDef = { columns: ['profile_id', 'sample_id'], table: 'samples', refColumns: ['profile_id', 'sample_id'] };

export const TABLES: readonly TableDef[] = [
  {
    name: 'profiles',
    doc: 'one row per profile: the profile-level facts of profile.proto',
    columns: [
      pid,
      { name: 'name', type: 'text', doc: 'free label, e.g. the source file name ("" = none)' },
      { name: 'period_type', type: 'text', nullable: true, doc: 'period type (NULL = not set)' },
      { name: 'period_unit', type: 'text', nullable: true, doc: 'period unit (NULL = not set)' },
      { name: 'period', type: 'int64', doc: 'events between samples' },
      { name: 'time_nanos', type: 'int64', doc: 'collection time, ns since the epoch (0 = unknown)' },
      { name: 'duration_nanos', type: 'int64', doc: 'duration in ns (0 = unknown)' },
      { name: 'drop_frames', type: 'text', doc: 'pprof drop_frames regexp ("" = none)' },
      { name: 'keep_frames', type: 'text', doc: 'pprof keep_frames regexp ("" = none)' },
      { name: 'default_sample_type', type: 'text', doc: 'type name of the preferred sample type ("" = last)' },
      { name: 'doc_url', type: 'text', doc: 'documentation URL ("" = none)' },
    ],
    primaryKey: ['profile_id'],
    foreignKeys: [],
    unique: [],
    indexes: [],
  },
  {
    name: 'profile_comments',
    doc: 'free-form comments of a profile, in order',
    columns: [pid, { name: 'position', type: 'pos', doc: '0-based order' }, { name: 'comment', type: 'text', doc: 'the comment' }],
    primaryKey: ['profile_id', 'position'],
    foreignKeys: [toProfiles],
    unique: [],
    indexes: [],
  },
  {
    name: 'meta',
    doc: "R's meta table (key/value, key `version` = data format version)",
    columns: [pid, { name: 'key', type: 'text', doc: 'key' }, { name: 'value', type: 'text', doc: 'value' }],
    primaryKey: ['profile_id', 'key'],
    foreignKeys: [toProfiles],
    unique: [],
    indexes: [],
  },
  {
    name: 'sample_types',
    doc: 'the value slots of every sample (pprof sample_type), in order',
    columns: [
      pid,
      { name: 'sample_type_id', type: 'pos', doc: '1-based index of the value slot' },
      { name: 'type', type: 'text', doc: 'e.g. samples, cpu, alloc_space' },
      { name: 'unit', type: 'text', doc: 'e.g. count, nanoseconds, bytes' },
    ],
    primaryKey: ['profile_id', 'sample_type_id'],
    foreignKeys: [toProfiles],
    unique: [],
    indexes: [],
  },
  {
    name: 'functions',
    doc: "R's functions table",
    columns: [
      pid,
      { name: 'function_id', type: 'id', doc: 'function id' },
      { name: 'name', type: 'text', doc: 'human-readable name' },
      { name: 'system_name', type: 'text', doc: 'system (mangled) name' },
      { name: 'filename', type: 'text', doc: 'source file ("" = unknown)' },
      { name: 'start_line', type: 'int', doc: 'first line (0 = unknown)' },
    ],
    primaryKey: ['profile_id', 'function_id'],
    foreignKeys: [toProfiles],
    unique: [],
    indexes: [['profile_id', 'name']],
  },
  {
    name: 'mappings',
    doc: 'memory mappings of binaries (pprof Mapping)',
    columns: [
      pid,
      { name: 'mapping_id', type: 'id', doc: 'mapping id' },
      { name: 'memory_start', type: 'uint64', doc: 'start address' },
      { name: 'memory_limit', type: 'uint64', doc: 'limit address' },
      { name: 'file_offset', type: 'uint64', doc: 'offset in the file' },
      { name: 'filename', type: 'text', doc: 'binary file name' },
      { name: 'build_id', type: 'text', doc: 'build id' },
      { name: 'has_functions', type: 'bool', doc: 'symbolized functions' },
      { name: 'has_filenames', type: 'bool', doc: 'symbolized file names' },
      { name: 'has_line_numbers', type: 'bool', doc: 'symbolized lines' },
      { name: 'has_inline_frames', type: 'bool', doc: 'symbolized inline frames' },
    ],
    primaryKey: ['profile_id', 'mapping_id'],
    foreignKeys: [toProfiles],
    unique: [],
    indexes: [],
  },
  {
    name: 'locations',
    doc: "R's locations table plus pprof's address, mapping and is_folded",
    columns: [
      pid,
      { name: 'location_id', type: 'id', doc: 'location id' },
      { name: 'function_id', type: 'ref', doc: 'function of the innermost line (NULL = unsymbolized)' },
      { name: 'line', type: 'int', doc: 'line of the innermost line (0 = unknown)' },
      { name: 'column_number', type: 'int', doc: 'column of the innermost line (0 = unknown)' },
      { name: 'address', type: 'uint64', doc: 'instruction address (0 = unknown)' },
      { name: 'mapping_id', type: 'ref', doc: 'mapping (NULL = unknown)' },
      { name: 'is_folded', type: 'bool', doc: 'several symbols share this address' },
    ],
    primaryKey: ['profile_id', 'location_id'],
    foreignKeys: [
      toProfiles,
      { columns: ['profile_id', 'function_id'], table: 'functions', refColumns: ['profile_id', 'function_id'] },
      { columns: ['profile_id', 'mapping_id'], table: 'mappings', refColumns: ['profile_id', 'mapping_id'] },
    ],
    unique: [],
    indexes: [['profile_id', 'function_id'], ['profile_id', 'mapping_id']],
  },
  {
    name: 'location_lines',
    doc: "every line of a location (pprof Location.line), innermost first: position 0 is the location's own line when it has a function, the rest are the lines it was inlined into",
    columns: [
      pid,
      { name: 'location_id', type: 'id', doc: 'the location' },
      { name: 'position', type: 'pos', doc: '0 = innermost' },
      { name: 'function_id', type: 'id', doc: 'function of this line' },
      { name: 'line', type: 'int', doc: 'source line (0 = unknown)' },
      { name: 'column_number', type: 'int', doc: 'source column (0 = unknown)' },
    ],
    primaryKey: ['profile_id', 'location_id', 'position'],
    foreignKeys: [
      { columns: ['profile_id', 'location_id'], table: 'locations', refColumns: ['profile_id', 'location_id'] },
      { columns: ['profile_id', 'function_id'], table: 'functions', refColumns: ['profile_id', 'function_id'] },
    ],
    unique: [],
    indexes: [['profile_id', 'function_id']],
  },
  {
    name: 'samples',
    doc: "R's samples table without the list column; sample_id is the 1-based row number",
    columns: [
      pid,
      { name: 'sample_id', type: 'id', doc: '1-based sample number (row order of the profile)' },
      { name: 'value', type: 'int64', nullable: true, doc: "R's value: the value of sample type 1 (NULL when there are no sample types)" },
    ],
    primaryKey: ['profile_id', 'sample_id'],
    foreignKeys: [toProfiles],
    unique: [],
    indexes: [],
  },
  {
    name: 'sample_values',
    doc: 'one row per sample and sample type',
    columns: [
      pid,
      { name: 'sample_id', type: 'id', doc: 'the sample' },
      { name: 'sample_type_id', type: 'pos', doc: 'the sample type' },
      { name: 'value', type: 'int64', doc: 'the value' },
    ],
    primaryKey: ['profile_id', 'sample_id', 'sample_type_id'],
    foreignKeys: [toSamples, { columns: ['profile_id', 'sample_type_id'], table: 'sample_types', refColumns: ['profile_id', 'sample_type_id'] }],
    unique: [],
    indexes: [],
  },
  {
    name: 'sample_locations',
    doc: 'the stack of each sample, with the frame position (0 = leaf); fixes R dm_from_profile losing stack order',
    columns: [
      pid,
      { name: 'sample_id', type: 'id', doc: 'the sample' },
      { name: 'position', type: 'pos', doc: '0 = innermost (leaf) frame' },
      { name: 'location_id', type: 'id', doc: 'the location' },
    ],
    primaryKey: ['profile_id', 'sample_id', 'position'],
    foreignKeys: [toSamples, { columns: ['profile_id', 'location_id'], table: 'locations', refColumns: ['profile_id', 'location_id'] }],
    unique: [],
    indexes: [['profile_id', 'location_id']],
  },
  {
    name: 'labels',
    doc: 'sample labels (pprof Label), in order per sample',
    columns: [
      pid,
      { name: 'sample_id', type: 'id', doc: 'the sample' },
      { name: 'position', type: 'pos', doc: '0-based order within the sample' },
      { name: 'key', type: 'text', doc: 'label key' },
      { name: 'str', type: 'text', nullable: true, doc: 'string value (NULL for numeric labels)' },
      { name: 'num', type: 'int64', nullable: true, doc: 'numeric value (NULL for string labels)' },
      { name: 'num_unit', type: 'text', nullable: true, doc: 'unit of a numeric label (NULL for string labels)' },
      { name: 'is_num', type: 'bool', doc: 'numeric label' },
    ],
    primaryKey: ['profile_id', 'sample_id', 'position'],
    foreignKeys: [toSamples],
    unique: [],
    indexes: [['profile_id', 'key']],
  },
  {
    name: 'extension_facts',
    doc: "format-specific facts (profile['.extensions'][adapter].facts), one JSON value per key",
    columns: [
      pid,
      { name: 'adapter', type: 'text', doc: 'owning adapter name' },
      { name: 'key', type: 'text', doc: 'fact name' },
      { name: 'value_json', type: 'text', doc: 'JSON; a bigint is {"$bigint":"digits"}' },
    ],
    primaryKey: ['profile_id', 'adapter', 'key'],
    foreignKeys: [toProfiles],
    unique: [],
    indexes: [],
  },
  {
    name: 'extension_columns',
    doc: 'format-specific columns: per-sample columns (scope samples) and columns of free-standing extension tables (scope table)',
    columns: [
      pid,
      { name: 'adapter', type: 'text', doc: 'owning adapter name' },
      { name: 'scope', type: 'text', doc: "'samples' or 'table'" },
      { name: 'table_name', type: 'text', doc: "the extension table ('' for scope samples)" },
      { name: 'column_name', type: 'text', doc: 'column name' },
      { name: 'column_type', type: 'text', doc: 'Uint8Array, Uint32Array, Int32Array, Float64Array, BigInt64Array, BigUint64Array or string' },
      { name: 'position', type: 'pos', doc: 'column order within its table' },
      { name: 'row_count', type: 'int', doc: 'number of rows of the column' },
    ],
    primaryKey: ['profile_id', 'adapter', 'scope', 'table_name', 'column_name'],
    foreignKeys: [toProfiles],
    unique: [['profile_id', 'adapter', 'scope', 'table_name', 'position']],
    indexes: [],
  },
  {
    name: 'extension_values',
    doc: 'the values of extension columns (row_number = sample_id for scope samples)',
    columns: [
      pid,
      { name: 'adapter', type: 'text', doc: 'owning adapter name' },
      { name: 'scope', type: 'text', doc: "'samples' or 'table'" },
      { name: 'table_name', type: 'text', doc: "the extension table ('' for scope samples)" },
      { name: 'column_name', type: 'text', doc: 'column name' },
      { name: 'row_number', type: 'pos', doc: '1-based row' },
      { name: 'int_value', type: 'int64', nullable: true, doc: 'value of integer columns (BigUint64Array: same bits)' },
      { name: 'real_value', type: 'real', nullable: true, doc: 'value of Float64Array columns' },
      { name: 'text_value', type: 'text', nullable: true, doc: 'value of string columns' },
    ],
    primaryKey: ['profile_id', 'adapter', 'scope', 'table_name', 'column_name', 'row_number'],
    foreignKeys: [
      {
        columns: ['profile_id', 'adapter', 'scope', 'table_name', 'column_name'],
        table: 'extension_columns',
        refColumns: ['profile_id', 'adapter', 'scope', 'table_name', 'column_name'],
      },
    ],
    unique: [],
    indexes: [],
  },
];

export const TABLE_NAMES: readonly string[] = TABLES.map((t) => t.name);

export function tableDef(name: string): TableDef {
  const t = TABLES.find((x) => x.name === name);
  if (!t) throw new Error(`no table ${name}`);
  return t;
}

export type Dialect = 'sqlite' | 'postgresql' | 'duckdb';

/** Double-quoted identifier (portable across SQLite, PostgreSQL and DuckDB). */
export function q(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

export function sqlType(c: ColumnDef, dialect: Dialect): string {
  switch (c.type) {
    case 'id':
    case 'ref':
    case 'int':
    case 'int64':
    case 'uint64':
      return dialect === 'sqlite' ? 'INTEGER' : 'BIGINT';
    case 'pos':
      return 'INTEGER';
    case 'bool':
      return dialect === 'sqlite' ? 'INTEGER' : 'BOOLEAN';
    case 'text':
      return dialect === 'duckdb' ? 'VARCHAR' : 'TEXT';
    case 'real':
      return dialect === 'sqlite' ? 'REAL' : 'DOUBLE PRECISION';
  }
}

function checks(t: TableDef, c: ColumnDef, dialect: Dialect): string {
  const col = q(c.name);
  if (c.type === 'bool' && dialect === 'sqlite') return ` CHECK (${col} IN (0, 1))`;
  if (c.type === 'id') return ` CHECK (${col} BETWEEN 1 AND 4294967295)`;
  if (c.type === 'ref') return ` CHECK (${col} IS NULL OR ${col} BETWEEN 1 AND 4294967295)`;
  if (c.type === 'pos') return ` CHECK (${col} >= 0)`;
  if (c.type === 'int') return ` CHECK (${col} >= 0)`;
  if (c.name === 'scope' && t.name.startsWith('extension_')) return ` CHECK (${col} IN ('samples', 'table'))`;
  return '';
}

/** `CREATE TABLE` statements for every table (in dependency order) for one dialect. */
export function createTableStatements(dialect: Dialect, options: { ifNotExists?: boolean } = {}): string[] {
  const ine = options.ifNotExists ? 'IF NOT EXISTS ' : '';
  return TABLES.map((t) => {
    const lines = t.columns.map((c) => {
      const notNull = c.type === 'ref' || c.nullable ? '' : ' NOT NULL';
      return `  ${q(c.name)} ${sqlType(c, dialect)}${notNull}${checks(t, c, dialect)}`;
    });
    lines.push(`  PRIMARY KEY (${t.primaryKey.map(q).join(', ')})`);
    for (const u of t.unique) lines.push(`  UNIQUE (${u.map(q).join(', ')})`);
    for (const fk of t.foreignKeys) {
      lines.push(`  FOREIGN KEY (${fk.columns.map(q).join(', ')}) REFERENCES ${q(fk.table)} (${fk.refColumns.map(q).join(', ')})`);
    }
    // SQLite: tables keyed by several columns are stored clustered by their key (no rowid b-tree
    // beside a key index): half the size, and reads in key order are sequential.
    const clustered = dialect === 'sqlite' && t.primaryKey.length > 1 ? ' WITHOUT ROWID' : '';
    return `CREATE TABLE ${ine}${q(t.name)} (\n${lines.join(',\n')}\n)${clustered}`;
  });
}

export function indexName(t: TableDef, cols: string[]): string {
  return `${t.name}_${cols.filter((c) => c !== 'profile_id').join('_')}_idx`;
}

/** `CREATE INDEX` statements for the secondary indexes. */
export function createIndexStatements(options: { ifNotExists?: boolean } = {}): string[] {
  const ine = options.ifNotExists ? 'IF NOT EXISTS ' : '';
  const out: string[] = [];
  for (const t of TABLES) for (const cols of t.indexes) out.push(`CREATE INDEX ${ine}${q(indexName(t, cols))} ON ${q(t.name)} (${cols.map(q).join(', ')})`);
  return out;
}
