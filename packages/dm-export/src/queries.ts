/**
 * The example queries of `sql/queries.sql` (embedded in docs/formats/dm-export.md and run by the
 * tests). Each query starts with a `-- name: <name>` line, followed by `-- ` comment lines
 * describing it; parameters are written `:name` (SQLite, DuckDB; psql users substitute them).
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface ExampleQuery {
  name: string;
  description: string;
  sql: string;
  /** Parameter names, without the colon. */
  params: string[];
}

/** Path of the queries file shipped with the package. */
export const QUERIES_FILE = fileURLToPath(new URL('../sql/queries.sql', import.meta.url));

export function parseQueries(text: string): ExampleQuery[] {
  const out: ExampleQuery[] = [];
  const parts = text.split(/^-- name: /m).slice(1);
  for (const part of parts) {
    const lines = part.split('\n');
    const name = lines[0]!.trim();
    const desc: string[] = [];
    let i = 1;
    for (; i < lines.length && lines[i]!.startsWith('--'); i++) desc.push(lines[i]!.replace(/^--\s?/, ''));
    const sql = lines.slice(i).join('\n').trim();
    const params = [...new Set([...sql.matchAll(/(?<!:):([a-z_]+)/g)].map((m) => m[1]!))];
    out.push({ name, description: desc.join(' ').trim(), sql, params });
  }
  return out;
}

/** The example queries, parsed from `sql/queries.sql`. */
export function exampleQueries(): ExampleQuery[] {
  return parseQueries(readFileSync(QUERIES_FILE, 'utf8'));
}
