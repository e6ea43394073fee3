import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { ProfileBuilder, assertValid, createProfile, isProfkitError, type Profile } from '@profkit/core/node';
import type BetterSqlite3 from 'better-sqlite3';
import { DM_ERRORS, SQLITE_APPLICATION_ID, TABLES, listProfiles, readSqlite, sniffDm, writeSqlite } from '../src/index.js';
import { meaning, richProfile, syntheticProfile } from './helpers.js';

const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;

function open(bytes: Uint8Array, readonly = true): BetterSqlite3.Database {
  return new Database(Buffer.from(bytes), { readonly });
}

async function expectCode(p: Promise<unknown> | (() => unknown), code: string): Promise<Record<string, unknown>> {
  try {
    if (typeof p === 'function') p();
    else await p;
  } catch (e) {
    expect(isProfkitError(e), String(e)).toBe(true);
    expect((e as { code: string }).code).toBe(code);
    return (e as { detail: Record<string, unknown> }).detail;
  }
  throw new Error(`expected ${code}`);
}

/** Rewrites a database with `sql` applied, constraints off (to forge broken databases). */
function tamper(bytes: Uint8Array, sql: string): Uint8Array {
  const db = open(bytes, false);
  db.pragma('foreign_keys = OFF');
  db.pragma('ignore_check_constraints = ON');
  db.exec(sql);
  const out = db.serialize();
  db.close();
  return new Uint8Array(out);
}

describe('SQLite round trip', () => {
  it('keeps the meaning of a profile with every feature', async () => {
    const p = richProfile();
    const { bytes, profileId } = writeSqlite(p);
    expect(profileId).toBe(1);
    const back = await readSqlite(bytes, { file: 'rich.sqlite' });
    assertValid(back.profile, 'rich.sqlite');
    expect(back.warnings).toEqual([]);
    expect(meaning(back.profile)).toEqual(meaning(p));
    // Values beyond 2^53 and negative values survive exactly.
    expect(back.profile.samples['.values'][1]![2]).toBe(9007199254740993n);
    expect(back.profile.samples['.values'][1]![4]).toBe(-(2n ** 63n));
    expect(back.profile['.mappings'].memory_limit).toContain(0xffffffffffffffffn);
  });

  it('keeps the meaning of an empty profile and of one without sample types', async () => {
    for (const p of [createProfile(), createProfile({ sample_types: { type: ['samples'], unit: ['count'] } })]) {
      const back = await readSqlite(writeSqlite(p).bytes);
      expect(meaning(back.profile)).toEqual(meaning(p));
    }
  });

  it('keeps a synthetic profile of 2,000 samples', async () => {
    const p = syntheticProfile(2000, 7);
    const back = await readSqlite(writeSqlite(p).bytes);
    assertValid(back.profile);
    expect(meaning(back.profile)).toEqual(meaning(p));
  });
});

describe('SQLite database quality', () => {
  const { bytes } = writeSqlite(richProfile());

  it('passes integrity_check and foreign_key_check, and is stamped', () => {
    const db = open(bytes);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.pragma('foreign_key_check')).toEqual([]);
    expect(db.pragma('application_id', { simple: true })).toBe(SQLITE_APPLICATION_ID | 0);
    db.close();
    expect(bytes.subarray(0, 16).toString()).toBe(Uint8Array.from(Buffer.from('SQLite format 3\u0000')).toString());
  });

  it('declares every primary key, foreign key, unique constraint and index of the schema', () => {
    const db = open(bytes);
    for (const t of TABLES) {
      const info = db.prepare('SELECT name, pk FROM pragma_table_info(?)').all(t.name) as { name: string; pk: number }[];
      const pk = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
      expect(pk, t.name).toEqual(t.primaryKey);
      const fks = db.prepare('SELECT id, seq, "table", "from", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq').all(t.name) as { id: number; table: string; from: string; to: string }[];
      const grouped = new Map<number, { table: string; columns: string[]; refColumns: string[] }>();
      for (const f of fks) {
        const g = grouped.get(f.id) ?? { table: f.table, columns: [], refColumns: [] };
        g.columns.push(f.from);
        g.refColumns.push(f.to);
        grouped.set(f.id, g);
      }
      const sortKey = (x: { table: string; columns: string[] }) => x.table + ':' + x.columns.join(',');
      expect([...grouped.values()].sort((a, b) => sortKey(a).localeCompare(sortKey(b))), t.name).toEqual(
        t.foreignKeys.map((f) => ({ table: f.table, columns: f.columns, refColumns: f.refColumns })).sort((a, b) => sortKey(a).localeCompare(sortKey(b))),
      );
      const idx = db.prepare('SELECT name, "unique", origin FROM pragma_index_list(?)').all(t.name) as { name: string; unique: number; origin: string }[];
      const cols = (name: string) => (db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').all(name) as { name: string }[]).map((r) => r.name);
      const uniques = idx.filter((i) => i.origin === 'u').map((i) => cols(i.name));
      expect(uniques, t.name).toEqual(t.unique);
      const created = idx.filter((i) => i.origin === 'c').map((i) => cols(i.name));
      expect(created.sort(), t.name).toEqual([...t.indexes].sort());
    }
    db.close();
  });

  it('enforces the foreign keys (a dangling reference is refused)', () => {
    const db = open(bytes, false);
    db.pragma('foreign_keys = ON');
    expect(() => db.prepare('INSERT INTO sample_locations (profile_id, sample_id, position, location_id) VALUES (1, 1, 99, 424242)').run()).toThrow(/FOREIGN KEY/);
    expect(() => db.prepare('INSERT INTO locations (profile_id, location_id, function_id, line, column_number, address, mapping_id, is_folded) VALUES (1, 999, 777, 0, 0, 0, NULL, 0)').run()).toThrow(/FOREIGN KEY/);
    expect(() => db.prepare('INSERT INTO sample_locations (profile_id, sample_id, position, location_id) VALUES (1, 1, 0, 1)').run()).toThrow(/UNIQUE|PRIMARY/);
    expect(() => db.prepare("INSERT INTO extension_columns VALUES (1, 'test-ext', 'samples', '', 'other', 'string', 0, 6)").run()).toThrow(/UNIQUE/);
    db.close();
  });

  it('uses its indexes for the example joins', () => {
    const db = open(bytes);
    const plan = db.prepare('EXPLAIN QUERY PLAN SELECT * FROM sample_locations WHERE profile_id = 1 AND location_id = 3').all() as { detail: string }[];
    expect(plan.map((r) => r.detail).join(' ')).toMatch(/sample_locations_location_id_idx/);
    db.close();
  });

  it('stores stack order as positions (the leaf first), unlike R dm_from_profile', () => {
    const db = open(bytes);
    const rows = db.prepare('SELECT position, f.name FROM sample_locations sl JOIN locations l USING (profile_id, location_id) JOIN functions f USING (profile_id, function_id) WHERE sl.sample_id = 2 ORDER BY position').all() as { position: number; name: string }[];
    expect(rows.map((r) => r.name)).toEqual(['recurse', 'recurse', 'recurse', 'work', 'main']);
    expect(rows.map((r) => r.position)).toEqual([0, 1, 2, 3, 4]);
    db.close();
  });
});

describe('append and profile_id', () => {
  it('adds profiles to an existing database and reads each back by profile_id', async () => {
    const a = richProfile();
    const b = syntheticProfile(300, 3);
    const one = writeSqlite(a, { name: 'a.pb.gz' });
    const two = writeSqlite(b, { append: true, existing: one.bytes, name: 'b.pb.gz' });
    expect(two.profileId).toBe(2);
    const three = writeSqlite(a, { append: true, existing: two.bytes, profileId: 10 });
    expect(three.profileId).toBe(10);
    const bytes = three.bytes;
    expect(meaning((await readSqlite(bytes, { profileId: 1 })).profile)).toEqual(meaning(a));
    expect(meaning((await readSqlite(bytes, { profileId: 2 })).profile)).toEqual(meaning(b));
    const last = await readSqlite(bytes);
    expect(last.profileId).toBe(10);
    expect(last.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_DM_SEVERAL_PROFILES']);
    expect(listProfiles(bytes).map((r) => [r.profileId, r.name, r.samples])).toEqual([
      [1, 'a.pb.gz', a.samples.value.length],
      [2, 'b.pb.gz', b.samples.value.length],
      [10, '', a.samples.value.length],
    ]);
    const db = open(bytes);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.pragma('foreign_key_check')).toEqual([]);
    db.close();
  });

  it('refuses a profile_id that exists, and appending to a foreign database', async () => {
    const one = writeSqlite(richProfile());
    await expectCode(() => writeSqlite(richProfile(), { append: true, existing: one.bytes, profileId: 1 }), 'PROFKIT_E_USAGE');
    const other = new Database(':memory:');
    other.exec('CREATE TABLE t (x)');
    const foreign = new Uint8Array(other.serialize());
    other.close();
    await expectCode(() => writeSqlite(richProfile(), { append: true, existing: foreign }), DM_ERRORS.SCHEMA);
  });
});

describe('errors name the file, the table, the row and the rule', () => {
  const good = writeSqlite(richProfile()).bytes;

  it('rejects input that is not SQLite', async () => {
    const d = await expectCode(readSqlite(new TextEncoder().encode('this is not a database at all, not even close; '.repeat(4)), { file: 'x.db' }), DM_ERRORS.NOT_SQLITE);
    expect(d).toMatchObject({ file: 'x.db', offset: 0 });
    // Right header, garbage after it.
    const broken = good.slice(0, 4096);
    broken.fill(0x41, 100, 4096);
    await expectCode(readSqlite(broken, { file: 'broken.db' }), DM_ERRORS.NOT_SQLITE);
  });

  it('rejects a SQLite database without our schema', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE profiles (profile_id INTEGER)');
    const bytes = new Uint8Array(db.serialize());
    db.close();
    const d = await expectCode(readSqlite(bytes, { file: 'other.db' }), DM_ERRORS.SCHEMA);
    expect(d).toMatchObject({ file: 'other.db', table: 'profiles', column: 'name' });
    expect(String(d.rule)).toMatch(/every column/);
    const noColumn = tamper(good, 'ALTER TABLE locations DROP COLUMN is_folded');
    expect(await expectCode(readSqlite(noColumn), DM_ERRORS.SCHEMA)).toMatchObject({ table: 'locations', column: 'is_folded' });
  });

  it('rejects an unknown profile_id and an empty database', async () => {
    expect(await expectCode(readSqlite(good, { profileId: 5, file: 'g.db' }), DM_ERRORS.NO_PROFILE)).toMatchObject({ file: 'g.db' });
    await expectCode(readSqlite(tamper(good, 'DELETE FROM extension_values; DELETE FROM extension_columns; DELETE FROM extension_facts; DELETE FROM labels; DELETE FROM sample_locations; DELETE FROM sample_values; DELETE FROM samples; DELETE FROM location_lines; DELETE FROM locations; DELETE FROM functions; DELETE FROM mappings; DELETE FROM meta; DELETE FROM sample_types; DELETE FROM profile_comments; DELETE FROM profiles')), DM_ERRORS.NO_PROFILE);
  });

  const cases: [string, string, RegExp][] = [
    ['a gap in stack positions', 'UPDATE sample_locations SET position = 7 WHERE sample_id = 2 AND position = 1', /positions of a sample/],
    // dangling references are found by the foreign-key queries before the rows are read
    ['a dangling location in a stack', 'UPDATE sample_locations SET location_id = 4000 WHERE sample_id = 1 AND position = 0', /^foreign key sample_locations\(profile_id, location_id\) references locations/],
    ['a dangling function', 'UPDATE locations SET function_id = 999 WHERE location_id = 1', /^foreign key locations\(profile_id, function_id\) references functions/],
    ['an id out of range', 'UPDATE functions SET function_id = 0 WHERE function_id = 6; UPDATE locations SET function_id = 0 WHERE function_id = 6; UPDATE location_lines SET function_id = 0 WHERE function_id = 6', /not in 1\.\./],
    ['a missing sample value', 'DELETE FROM sample_values WHERE sample_id = 3 AND sample_type_id = 2', /one value per sample type/],
    ['a sample_id gap', 'DELETE FROM sample_values WHERE sample_id = 6; DELETE FROM sample_locations WHERE sample_id = 6; UPDATE samples SET sample_id = 9 WHERE sample_id = 6', /1, 2, 3/],
    ['a line that is not an integer', "UPDATE locations SET line = 'x' WHERE location_id = 1", /line is not an integer/],
    ['own line missing from location_lines', 'DELETE FROM location_lines WHERE location_id = 1', /own line at position 0/],
    ['own line differing from the location row', 'UPDATE location_lines SET line = 99 WHERE location_id = 1 AND position = 0', /position 0 equals the location row/],
    ['lines under a location without function', 'UPDATE locations SET function_id = NULL WHERE location_id = 1', /without a function .* has no lines/],
    ['bad JSON in a fact', "UPDATE extension_facts SET value_json = '{' WHERE key = 'label'", /value_json is JSON/],
    ['a bad extension column type', "UPDATE extension_columns SET column_type = 'Int8Array' WHERE column_name = 'flags'", /known column type/],
    ['a numeric label without num', 'UPDATE labels SET num = NULL WHERE is_num = 1', /numeric label has num/],
    ['a value out of the column type range', "UPDATE extension_values SET int_value = 300 WHERE column_name = 'flags' AND row_number = 1", /fits in Uint8Array/],
  ];
  for (const [what, sql, rule] of cases) {
    it(`rejects ${what} with PROFKIT_E_DM_DATA`, async () => {
      const d = await expectCode(readSqlite(tamper(good, sql), { file: 'bad.db' }), DM_ERRORS.DATA);
      expect(d.file).toBe('bad.db');
      expect(typeof d.table).toBe('string');
      expect(String(d.key)).toMatch(/profile_id=1/);
      expect(String(d.rule)).toMatch(rule);
    });
  }

  it('rejects rows that break a rule of the validator (empty function name) with PROFKIT_E_INVALID_PROFILE', async () => {
    const d = await expectCode(readSqlite(tamper(good, "UPDATE functions SET name = '' WHERE function_id = 1"), { file: 'bad.db' }), 'PROFKIT_E_INVALID_PROFILE');
    expect(d.file).toBe('bad.db');
  });

  it('refuses to write a profile with dangling references', async () => {
    const p: Profile = richProfile();
    p.samples.locations.location_id[0] = 12345;
    await expectCode(() => writeSqlite(p), 'PROFKIT_E_INVALID_PROFILE');
  });
});

describe('sniff', () => {
  it('recognizes our databases by application_id and the schema, and other SQLite files weakly', () => {
    const ours = writeSqlite(new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] }).build()).bytes;
    expect(sniffDm(ours.subarray(0, 4096), {})).toMatchObject({ score: 1, format: 'sqlite' });
    const unstamped = ours.slice(0, 4096);
    unstamped.fill(0, 68, 72);
    const s = sniffDm(unstamped, {}) as { score: number };
    expect(s.score).toBeGreaterThan(0.5);
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (x)');
    const other = new Uint8Array(db.serialize());
    db.close();
    expect((sniffDm(other, {}) as { score: number }).score).toBeLessThan(0.5);
    expect(sniffDm(new TextEncoder().encode('-- profkit dm-export'), {})).toBe(0);
    expect(sniffDm(new Uint8Array(0), {})).toBe(0);
  });
});

describe('damaged databases', () => {
  it('never crash or hang: every mutated database reads or fails with a ProfkitError', async () => {
    const good = writeSqlite(syntheticProfile(200, 4, 20)).bytes;
    let seed = 99;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    let failed = 0;
    for (let k = 0; k < 60; k++) {
      const bad = good.slice();
      // Flip a few bytes past the 100-byte header (header damage is covered above).
      for (let j = 0; j < 1 + Math.floor(rnd() * 8); j++) bad[100 + Math.floor(rnd() * (bad.length - 100))] ^= 1 + Math.floor(rnd() * 255);
      let r: Awaited<ReturnType<typeof readSqlite>>;
      try {
        r = await readSqlite(bad, { file: `mutant-${k}.db` });
      } catch (e) {
        expect(isProfkitError(e), `mutant ${k}: ${String(e)}`).toBe(true);
        expect((e as { detail: { file?: string } }).detail.file).toBe(`mutant-${k}.db`);
        failed++;
        continue;
      }
      // A database the reader accepts yields a valid profile.
      assertValid(r.profile, `mutant-${k}.db`);
    }
    // Some mutations hit unused space or free pages; many must be caught.
    expect(failed).toBeGreaterThan(0);
  });
});
