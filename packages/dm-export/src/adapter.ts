import { defineAdapter } from '@profkit/core/node';
import { commands } from './commands.js';
import { sniffDm } from './sniff.js';
import { PACKAGE_VERSION } from './version.js';

export const ADAPTER_NAME = 'dm-export';

/**
 * The dm-export adapter: the profile as a relational model. `sqlite` is a real storage format
 * (read and write, `--append`); `sql` writes a PostgreSQL script; `parquet` and `csv` are
 * directories of one file per table, written and read by the `profkit dm-export export/import`
 * commands (a directory is not a single file the registry can stream).
 */
export const dmExportAdapter = defineAdapter({
  name: ADAPTER_NAME,
  packageName: '@profkit/dm-export',
  version: PACKAGE_VERSION,
  description: 'the profile as a relational model (R dm_from_profile, done for real databases): SQLite, PostgreSQL SQL, Parquet, CSV; diagrams',
  formats: [
    { id: 'sqlite', title: 'SQLite database of the relational model', extensions: ['.sqlite', '.db'], binary: true, read: true, write: true, mediaTypes: ['application/vnd.sqlite3'] },
    { id: 'sql', title: 'PostgreSQL script (DDL + INSERTs) of the relational model', extensions: ['.sql'], binary: false, read: false, write: true, mediaTypes: ['application/sql'] },
    { id: 'parquet', title: 'directory of Parquet files, one per table (profkit dm-export export/import)', extensions: [], binary: true, read: false, write: false },
    { id: 'csv', title: 'directory of CSV files, one per table (profkit dm-export export/import)', extensions: [], binary: false, read: false, write: false },
  ],
  sniff: sniffDm,
  async load() {
    return (await import('./codec.js')).codec;
  },
  commands,
});
