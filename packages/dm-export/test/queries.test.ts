import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import type BetterSqlite3 from 'better-sqlite3';
import { exampleQueries, writeSqlite } from '../src/index.js';
import { richProfile, syntheticProfile } from './helpers.js';
import { modelCallers, modelDiff, modelTopSelf, modelTopTotal, tuples, type Row } from './model-queries.js';

const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;

const a = syntheticProfile(3000, 1, 60);
const b = syntheticProfile(3000, 2, 60);
const rich = richProfile();
let bytes = writeSqlite(a).bytes;
bytes = writeSqlite(b, { append: true, existing: bytes }).bytes;
bytes = writeSqlite(rich, { append: true, existing: bytes }).bytes;

const queries = Object.fromEntries(exampleQueries().map((q) => [q.name, q]));

function run(name: string, params: Record<string, unknown>): Row[] {
  const db = new Database(Buffer.from(bytes), { readonly: true });
  try {
    return db.prepare(queries[name]!.sql).safeIntegers(true).all(params) as Row[];
  } finally {
    db.close();
  }
}

describe('example queries of sql/queries.sql on SQLite', () => {
  it('parses the file: four named, documented queries with parameters', () => {
    expect(Object.keys(queries)).toEqual(['top_functions_self', 'top_functions_total', 'callers', 'diff_by_function']);
    for (const q of Object.values(queries)) {
      expect(q.description.length).toBeGreaterThan(20);
      expect(q.params).toContain('profile_id');
    }
  });

  it('top functions by self value match the model', () => {
    for (const [pid, p, t] of [[1, a, 'cpu'], [3, rich, 'alloc_objects']] as const) {
      const expected = modelTopSelf(p, t);
      expect(expected.length).toBeGreaterThan(2);
      expect(tuples(run('top_functions_self', { profile_id: pid, sample_type: t }))).toEqual(expected);
    }
  });

  it('top functions by total value match the model (inline frames and recursion counted once)', () => {
    for (const [pid, p, t] of [[1, a, 'cpu'], [3, rich, 'alloc_objects']] as const) {
      const expected = modelTopTotal(p, t);
      expect(expected.length).toBeGreaterThan(2);
      expect(tuples(run('top_functions_total', { profile_id: pid, sample_type: t }))).toEqual(expected);
    }
  });

  it('callers of a function match the model', () => {
    const cases: [number, typeof a, string, string][] = [
      [1, a, 'cpu', modelTopSelf(a, 'cpu')[0]![0]],
      [3, rich, 'alloc_objects', 'recurse'],
      [3, rich, 'alloc_objects', 'inlined_helper'],
      [3, rich, 'alloc_objects', 'work'],
    ];
    for (const [pid, p, t, fn] of cases) {
      const expected = modelCallers(p, t, fn);
      expect(expected.length, fn).toBeGreaterThan(0);
      expect(tuples(run('callers', { profile_id: pid, sample_type: t, function_name: fn })), fn).toEqual(expected);
    }
    // recursion: recurse is its own caller; inline: inlined_helper is called by inlined_outer.
    expect(modelCallers(rich, 'alloc_objects', 'recurse').map((r) => r[0]).sort()).toEqual(['recurse', 'work']);
    expect(modelCallers(rich, 'alloc_objects', 'inlined_helper').map((r) => r[0])).toContain('inlined_outer');
  });

  it('the diff of two profiles by function matches the model', () => {
    const expected = modelDiff(a, b, 'cpu');
    expect(expected.some((r) => r[3] !== 0n)).toBe(true);
    expect(tuples(run('diff_by_function', { base_profile_id: 1, profile_id: 2, sample_type: 'cpu' }))).toEqual(expected);
  });
});
