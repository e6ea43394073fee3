/**
 * Text targets: the PostgreSQL script (DDL + INSERTs in one transaction) and per-table CSV.
 * Both are produced as streams of chunks so a large profile never becomes one giant string.
 */

import { type Profile, type Warning } from '@profkit/core/node';
import { encodeValue, profileToTables, type DbValue, type TableData } from './relational.js';
import { createIndexStatements, createTableStatements, q } from './schema.js';

const enc = new TextEncoder();
/** Rows per INSERT statement in the PostgreSQL script. */
const PG_ROWS_PER_INSERT = 1000;
/** Approximate size of the chunks the generators yield. */
const CHUNK_CHARS = 1 << 20;

function pgLiteral(type: string, v: DbValue, onNul: () => void): string {
  if (v === null) return 'NULL';
  switch (type) {
    case 'bool':
      return v ? 'TRUE' : 'FALSE';
    case 'text': {
      let s = v as string;
      if (s.includes('\u0000')) {
        onNul();
        s = s.replace(/\u0000/g, '\ufffd');
      }
      return "'" + s.replace(/'/g, "''") + "'";
    }
    case 'real': {
      const n = v as number;
      return Number.isFinite(n) ? String(n) : `'${n > 0 ? 'Infinity' : n < 0 ? '-Infinity' : 'NaN'}'`;
    }
    default:
      return String(v);
  }
}

export interface PostgresScriptOptions {
  /** profile_id of the profile in the script; default 1. Pick a free one to add to a database that has profiles. */
  profileId?: number;
  name?: string;
  /** Emit `CREATE TABLE IF NOT EXISTS` (default true, so the script also appends to an existing schema). */
  ifNotExists?: boolean;
}

/** The PostgreSQL script: schema (idempotent by default) and the profile's rows, in one transaction. */
export function postgresScript(profile: Profile, options: PostgresScriptOptions = {}): { chunks: Iterable<Uint8Array>; warnings: Warning[] } {
  const tables = profileToTables(profile, { profileId: options.profileId ?? 1, name: options.name });
  const warnings: Warning[] = [];
  // Said up front (the script itself is produced lazily, after this function returns).
  let nul = 0;
  for (const t of tables) {
    t.table.columns.forEach((c, i) => {
      if (c.type !== 'text') return;
      const col = t.columns[i]!;
      for (let r = 0; r < t.rowCount; r++) {
        const v = col[r];
        if (typeof v === 'string' && v.includes('\u0000')) nul++;
      }
    });
  }
  if (nul > 0) warnings.push({ code: 'PROFKIT_W_DM_NUL', message: `PostgreSQL text cannot hold NUL characters: replaced them by U+FFFD in ${nul} value(s)` });
  const onNul = () => undefined;
  const ine = options.ifNotExists ?? true;
  function* gen(): Generator<Uint8Array> {
    let buf = '-- profkit dm-export: the relational model of a profile, for PostgreSQL (psql -v ON_ERROR_STOP=1 -f FILE)\n';
    buf += 'BEGIN;\n';
    for (const s of createTableStatements('postgresql', { ifNotExists: ine })) buf += s + ';\n';
    for (const s of createIndexStatements({ ifNotExists: ine })) buf += s + ';\n';
    for (const t of tables) {
      if (t.rowCount === 0) continue;
      const head = `INSERT INTO ${q(t.table.name)} (${t.table.columns.map((c) => q(c.name)).join(', ')}) VALUES\n`;
      const types = t.table.columns.map((c) => c.type);
      for (let r = 0; r < t.rowCount; r += PG_ROWS_PER_INSERT) {
        buf += head;
        const end = Math.min(t.rowCount, r + PG_ROWS_PER_INSERT);
        for (let x = r; x < end; x++) {
          let row = '(';
          for (let c = 0; c < types.length; c++) {
            if (c > 0) row += ', ';
            row += pgLiteral(types[c]!, encodePg(types[c]!, t.columns[c]![x]!), onNul);
          }
          buf += row + (x === end - 1 ? ');\n' : '),\n');
        }
        if (buf.length >= CHUNK_CHARS) {
          yield enc.encode(buf);
          buf = '';
        }
      }
    }
    buf += 'COMMIT;\n';
    // Planner statistics, so joins over freshly loaded tables get hash/merge plans.
    buf += `ANALYZE ${tables.map((t) => q(t.table.name)).join(', ')};\n`;
    yield enc.encode(buf);
  }
  return { chunks: gen(), warnings };
}

function encodePg(type: string, v: DbValue): DbValue {
  const e = encodeValue(type as never, v);
  return type === 'bool' && e !== null ? e === 1 : e;
}

function csvField(type: string, v: DbValue): string {
  if (v === null) return '';
  if (type === 'bool') return v ? 'true' : 'false';
  if (type === 'text') return '"' + (v as string).replace(/"/g, '""') + '"';
  if (type === 'real') {
    const n = v as number;
    return Number.isFinite(n) ? String(n) : n > 0 ? 'inf' : n < 0 ? '-inf' : 'nan';
  }
  return String(v);
}

/**
 * One table as CSV (RFC 4180): a header line, then one line per row. Text is always quoted, so
 * `""` is the empty string and an empty field is NULL; booleans are `true`/`false`; uint64 values
 * are written as the same-bit int64 (as in every target).
 */
export function* tableCsv(t: TableData): Generator<Uint8Array> {
  const types = t.table.columns.map((c) => c.type);
  let buf = t.table.columns.map((c) => c.name).join(',') + '\n';
  for (let r = 0; r < t.rowCount; r++) {
    let line = '';
    for (let c = 0; c < types.length; c++) {
      if (c > 0) line += ',';
      line += csvField(types[c]!, encodeCsv(types[c]!, t.columns[c]![r]!));
    }
    buf += line + '\n';
    if (buf.length >= CHUNK_CHARS) {
      yield enc.encode(buf);
      buf = '';
    }
  }
  yield enc.encode(buf);
}

function encodeCsv(type: string, v: DbValue): DbValue {
  return encodePg(type, v);
}
