/**
 * Issue 15 item 10: a SQLite database whose rows break a foreign key of the relational model was
 * read silently when the broken rows were not among the rows the reader converts (rows of a
 * profile missing from `profiles`). Every foreign key of schema.ts is now checked, one query each:
 * a violation is PROFKIT_E_DM_DATA naming the table, the row and the foreign key.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isProfkitError } from '@profkit/core/node';
import type BetterSqlite3 from 'better-sqlite3';
import { DM_ERRORS, TABLES, readDirectory, readSqlite, writeCsvDir, writeSqlite } from '../src/index.js';
import { meaning, richProfile } from './helpers.js';

const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
const q = (s: string) => `"${s}"`;
const good = writeSqlite(richProfile()).bytes;

/** Rewrites the database with `sql` applied, constraints off (to forge broken databases). */
function tamper(bytes: Uint8Array, sql: string): Uint8Array {
  const db = new Database(Buffer.from(bytes));
  db.pragma('foreign_keys = OFF');
  db.exec(sql);
  const out = new Uint8Array(db.serialize());
  db.close();
  return out;
}

async function dataError(bytes: Uint8Array): Promise<{ message: string; detail: Record<string, unknown> }> {
  try {
    await readSqlite(bytes, { file: 'bad.sqlite' });
  } catch (e) {
    if (isProfkitError(e) && e.code === DM_ERRORS.DATA) return { message: e.message, detail: e.detail };
    throw e;
  }
  throw new Error('read succeeded');
}

const rule = (table: string, fk: { columns: string[]; table: string; refColumns: string[] }) => `foreign key ${table}(${fk.columns.join(', ')}) references ${fk.table}(${fk.refColumns.join(', ')})`;

describe('foreign keys of SQLite input', () => {
  it('the two cases of the issue: a sample value of a missing sample type, samples of a missing profile', async () => {
    const a = await dataError(tamper(good, 'UPDATE sample_values SET sample_type_id = 99 WHERE sample_id = 2 AND sample_type_id = 3'));
    expect(a.message).toBe('sample_values row (profile_id=1, sample_id=2, sample_type_id=99): no sample_types row (profile_id=1, sample_type_id=99) [foreign key sample_values(profile_id, sample_type_id) references sample_types(profile_id, sample_type_id)]');
    expect(a.detail).toMatchObject({ file: 'bad.sqlite', table: 'sample_values', key: 'profile_id=1, sample_id=2, sample_type_id=99', references: 'sample_types' });
    const b = await dataError(tamper(good, 'INSERT INTO samples SELECT 42, sample_id, value FROM samples'));
    expect(b.message).toBe('samples row (profile_id=42): no profiles row (profile_id=42) [foreign key samples(profile_id) references profiles(profile_id)]');
    expect(b.detail).toMatchObject({ table: 'samples', key: 'profile_id=42', rule: 'foreign key samples(profile_id) references profiles(profile_id)' });
  });

  // Every table but profiles: a copy of one of its rows under a profile_id with no profiles row.
  for (const t of TABLES.filter((x) => x.name !== 'profiles')) {
    it(`rows of ${t.name} whose profile has no profiles row`, async () => {
      const cols = t.columns.slice(1).map((c) => q(c.name)).join(', ');
      const e = await dataError(tamper(good, `INSERT INTO ${q(t.name)} SELECT 7, ${cols} FROM ${q(t.name)} LIMIT 1`));
      expect(e.detail).toMatchObject({ table: t.name, key: 'profile_id=7', rule: `foreign key ${t.name}(profile_id) references profiles(profile_id)` });
    });
  }

  // Every other foreign key: one row of profile 1 made to point at a parent that does not exist.
  const references = TABLES.flatMap((t) => t.foreignKeys.filter((fk) => fk.table !== 'profiles').map((fk) => ({ t, fk })));
  it('lists the references of the model', () => {
    expect(references.map(({ t, fk }) => `${t.name}->${fk.table}`)).toEqual([
      'locations->functions',
      'locations->mappings',
      'location_lines->locations',
      'location_lines->functions',
      'sample_values->samples',
      'sample_values->sample_types',
      'sample_locations->samples',
      'sample_locations->locations',
      'labels->samples',
      'extension_values->extension_columns',
    ]);
  });
  for (const { t, fk } of references) {
    it(`a dangling ${t.name} -> ${fk.table} reference`, async () => {
      const col = fk.columns[fk.columns.length - 1]!;
      const text = t.columns.find((c) => c.name === col)!.type === 'text';
      const missing = text ? "'no such'" : '99999';
      // The first row (by primary key) with the column set; its key picks it for the UPDATE.
      const db = new Database(Buffer.from(good), { readonly: true });
      const pk = db.prepare(`SELECT ${t.primaryKey.map(q).join(', ')} FROM ${q(t.name)} WHERE ${q(col)} IS NOT NULL ORDER BY 1 LIMIT 1`).raw(true).get() as unknown[];
      db.close();
      const where = t.primaryKey.map((c, i) => `${q(c)} = ${typeof pk[i] === 'string' ? `'${pk[i]}'` : String(pk[i])}`).join(' AND ');
      const e = await dataError(tamper(good, `UPDATE ${q(t.name)} SET ${q(col)} = ${missing} WHERE ${where}`));
      expect(e.detail).toMatchObject({ table: t.name, rule: rule(t.name, fk), references: fk.table });
      expect(String(e.detail.key)).toContain(`${col}=${text ? 'no such' : '99999'}`);
    });
  }

  it('a location without mapping or function (NULL) references nothing, and reads', async () => {
    const bytes = tamper(good, 'UPDATE locations SET mapping_id = NULL WHERE location_id = 1');
    const back = await readSqlite(bytes);
    expect(back.profile.locations.location_id.length).toBe(6);
  });

  it('the rows of another profile are checked when that profile is read', async () => {
    const two = tamper(good, `${TABLES.map((t) => `INSERT INTO ${q(t.name)} SELECT 2, ${t.columns.slice(1).map((c) => q(c.name)).join(', ')} FROM ${q(t.name)} WHERE profile_id = 1;`).join(' ')} UPDATE sample_values SET sample_type_id = 99 WHERE profile_id = 2 AND sample_id = 1 AND sample_type_id = 1`);
    expect(meaning((await readSqlite(two, { profileId: 1 })).profile)).toEqual(meaning(richProfile()));
    const e = await dataError(two).catch(() => undefined);
    expect(e?.detail).toMatchObject({ table: 'sample_values', key: 'profile_id=2, sample_id=1, sample_type_id=99' });
  });

  it('tables without any index (a database made by another tool) are checked too', async () => {
    // CREATE TABLE … AS SELECT makes tables without primary key or index.
    const plain = TABLES.map((t) => `ALTER TABLE ${q(t.name)} RENAME TO ${q(t.name + '_old')}; CREATE TABLE ${q(t.name)} AS SELECT * FROM ${q(t.name + '_old')}; DROP TABLE ${q(t.name + '_old')};`).join(' ');
    const unindexed = tamper(good, plain);
    expect(meaning((await readSqlite(unindexed)).profile)).toEqual(meaning(richProfile()));
    const a = await dataError(tamper(unindexed, 'INSERT INTO labels SELECT 5, sample_id, position, key, str, num, num_unit, is_num FROM labels LIMIT 1'));
    expect(a.detail).toMatchObject({ table: 'labels', key: 'profile_id=5' });
    const b = await dataError(tamper(unindexed, 'UPDATE sample_locations SET location_id = 77 WHERE sample_id = 3 AND position = 0'));
    expect(b.detail).toMatchObject({ table: 'sample_locations', key: 'profile_id=1, sample_id=3, position=0, location_id=77' });
    const c = await dataError(tamper(unindexed, 'INSERT INTO meta VALUES (NULL, \'k\', \'v\')'));
    expect(c.detail).toMatchObject({ table: 'meta', key: 'profile_id=null' });
  });
});

describe('foreign keys of a CSV directory (same checks through DuckDB)', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'dm-export-refs-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  let n = 0;
  /** A CSV export of the rich profile with `line` appended to `table`.csv. */
  async function csvWith(table: string, line: string): Promise<string> {
    const dir = join(tmp, `d${n++}`);
    await writeCsvDir(richProfile(), dir);
    appendFileSync(join(dir, `${table}.csv`), line + '\n');
    return dir;
  }
  async function directoryError(dir: string): Promise<Record<string, unknown>> {
    const e = await readDirectory(dir, { format: 'csv' }).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(isProfkitError(e) && e.code).toBe(DM_ERRORS.DATA);
    return isProfkitError(e) ? e.detail : {};
  }

  it('samples of a missing profile', async () => {
    const dir = await csvWith('samples', '9,1,3');
    expect(await directoryError(dir)).toMatchObject({ table: 'samples', key: 'profile_id=9', rule: 'foreign key samples(profile_id) references profiles(profile_id)' });
  });

  it('a sample value of a missing sample type', async () => {
    const dir = await csvWith('sample_values', '1,1,77,5');
    const last = readFileSync(join(dir, 'sample_values.csv'), 'utf8').trim().split('\n').at(-1);
    expect(last).toBe('1,1,77,5');
    expect(await directoryError(dir)).toMatchObject({ table: 'sample_values', key: 'profile_id=1, sample_id=1, sample_type_id=77', references: 'sample_types' });
  });
});
