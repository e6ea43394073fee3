/**
 * @profkit/dm-export: the profile as a relational model in SQLite, PostgreSQL, Parquet and CSV,
 * and the model's diagram. The default export is the adapter.
 */
import { dmExportAdapter } from './adapter.js';

export { dmExportAdapter, ADAPTER_NAME } from './adapter.js';
export * from './schema.js';
export { profileToTables, tablesToProfile, factToJson, factFromJson, DM_ERRORS, type TableData, type DbValue, type RowSource, type TableMeasure } from './relational.js';
export { writeSqlite, readSqlite, listProfiles, type SqliteWriteOptions, type SqliteReadOptions } from './sqlite.js';
export { writeSqliteFile, lockDatabase, type SqliteFileOptions, type AddProfile, type DatabaseLock, type LockOptions } from './sqlite-file.js';
export { postgresScript, tableCsv, type PostgresScriptOptions } from './text.js';
export { writeCsvDir, writeParquetDir, readDirectory, openDuckDB, type DirectoryFormat, type DirectoryWriteOptions, type DirectoryReadOptions, type DuckDBConnection } from './directory.js';
export { diagram, diagramDot, diagramMermaid, diagramSvg, diagramLayout, type DiagramFormat, type DiagramOptions, type DiagramView } from './diagram.js';
export { sniffDm } from './sniff.js';
export { exampleQueries, parseQueries, QUERIES_FILE, type ExampleQuery } from './queries.js';

export default dmExportAdapter;
