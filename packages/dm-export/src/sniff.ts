/**
 * Cheap detection of profkit SQLite databases: the 16-byte SQLite header, then our
 * `application_id` (header offset 68) or, for databases whose header was not stamped, the
 * names of our tables in the schema page. No imports of the SQLite engine.
 */

import type { SniffHints, SniffResult } from '@profkit/core/node';
import { SQLITE_APPLICATION_ID } from './schema.js';

const MAGIC = 'SQLite format 3\u0000';

export function isSqliteHeader(head: Uint8Array): boolean {
  if (head.length < 16) return false;
  for (let i = 0; i < 16; i++) if (head[i] !== MAGIC.charCodeAt(i)) return false;
  return true;
}

export function sniffDm(head: Uint8Array, _hints: SniffHints): SniffResult {
  if (!isSqliteHeader(head)) return 0;
  if (head.length >= 72) {
    const appId = ((head[68]! << 24) | (head[69]! << 16) | (head[70]! << 8) | head[71]!) >>> 0;
    if (appId === SQLITE_APPLICATION_ID) return { score: 1, format: 'sqlite', reason: 'SQLite database with the profkit application_id' };
  }
  const text = Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString('latin1');
  if (createsTable(text, 'profiles') && ['profile_comments', 'sample_locations', 'location_lines', 'sample_values'].some((t) => createsTable(text, t))) {
    return { score: 0.9, format: 'sqlite', reason: 'SQLite database with the dm-export tables' };
  }
  // Some other SQLite database: ours is the only SQLite reader, so say so with a low score.
  return { score: 0.1, format: 'sqlite', reason: 'a SQLite database, but not (recognizably) a profkit export' };
}

/** Whether the schema text (page 1 of the file) has a `CREATE TABLE <name> (`, in any quoting. */
function createsTable(text: string, name: string): boolean {
  return new RegExp(`CREATE TABLE (?:IF NOT EXISTS )?["\`\\[]?${name}["\`\\]]?\\s*\\(`, 'i').test(text);
}
