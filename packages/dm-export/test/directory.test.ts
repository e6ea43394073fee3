import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { isProfkitError } from '@profkit/core/node';
import { DM_ERRORS, TABLES, exampleQueries, profileToTables, readDirectory, writeCsvDir, writeParquetDir } from '../src/index.js';
import { meaning, richProfile, syntheticProfile } from './helpers.js';
import { modelTopSelf, tuples } from './model-queries.js';

const tmp = mkdtempSync(join(tmpdir(), 'dm-export-dir-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function duck<T>(f: (run: (sql: string) => Promise<Record<string, unknown>[]>) => Promise<T>): Promise<T> {
  const inst = await DuckDBInstance.create(':memory:');
  const conn = await inst.connect();
  try {
    return await f(async (sql) => (await conn.runAndReadAll(sql)).getRowObjects() as Record<string, unknown>[]);
  } finally {
    conn.closeSync();
    inst.closeSync();
  }
}

describe('Parquet directory', () => {
  const p = richProfile();
  const dir = join(tmp, 'parquet');

  it('writes one Parquet file per table that DuckDB reads with the right row counts and types', async () => {
    const w = await writeParquetDir(p, dir, { profileId: 4, name: 'rich' });
    expect(readdirSync(dir).sort()).toEqual(TABLES.map((t) => `${t.name}.parquet`).sort());
    expect(w.files).toHaveLength(TABLES.length);
    const expectedRows = Object.fromEntries(profileToTables(p, { profileId: 4 }).map((t) => [t.table.name, t.rowCount]));
    await duck(async (run) => {
      for (const t of TABLES) {
        const [r] = await run(`SELECT count(*) AS n, count(DISTINCT profile_id) AS ids FROM read_parquet('${join(dir, t.name + '.parquet')}')`);
        expect(Number(r!.n), t.name).toBe(expectedRows[t.name]);
      }
      const types = await run(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${join(dir, 'sample_values.parquet')}'))`);
      expect(types.map((r) => [r.column_name, r.column_type])).toEqual([
        ['profile_id', 'BIGINT'],
        ['sample_id', 'BIGINT'],
        ['sample_type_id', 'INTEGER'],
        ['value', 'BIGINT'],
      ]);
      // 64-bit values are exact; uint64 addresses keep their bits.
      const big = await run(`SELECT value FROM read_parquet('${join(dir, 'sample_values.parquet')}') WHERE sample_id = 3 AND sample_type_id = 2`);
      expect(big[0]!.value).toBe(9007199254740993n);
      const lim = await run(`SELECT memory_limit FROM read_parquet('${join(dir, 'mappings.parquet')}') ORDER BY mapping_id`);
      expect(BigInt.asUintN(64, lim[1]!.memory_limit as bigint)).toBe(0xffffffffffffffffn);
      // '' and NULL stay distinct.
      const labels = await run(`SELECT str, num FROM read_parquet('${join(dir, 'labels.parquet')}') ORDER BY sample_id, position`);
      expect(labels.map((r) => r.str)).toEqual(['worker-1', null, '', null, 'main']);
    });
  });

  it('reads the profile back from the directory', async () => {
    const back = await readDirectory(dir);
    expect(back.profileId).toBe(4);
    expect(back.name).toBe('rich');
    expect(meaning(back.profile)).toEqual(meaning(p));
  });

  it('answers the example queries through DuckDB over the Parquet files', async () => {
    const q = exampleQueries().find((x) => x.name === 'top_functions_self')!;
    const s = syntheticProfile(1500, 5, 40);
    const d2 = join(tmp, 'parquet-synth');
    await writeParquetDir(s, d2);
    const rows = await duck(async (run) => {
      for (const t of TABLES) await run(`CREATE VIEW ${t.name} AS SELECT * FROM read_parquet('${join(d2, t.name + '.parquet')}')`);
      return run(q.sql.replace(/:profile_id/g, '1').replace(/:sample_type/g, "'cpu'"));
    });
    expect(tuples(rows)).toEqual(modelTopSelf(s, 'cpu'));
  });
});

describe('empty tables', () => {
  it('writes and reads back a profile whose tables are mostly empty, in both formats', async () => {
    const { createProfile } = await import('@profkit/core/node');
    const empty = createProfile({ sample_types: { type: ['samples'], unit: ['count'] } });
    for (const format of ['parquet', 'csv'] as const) {
      const d = join(tmp, `empty-${format}`);
      await (format === 'parquet' ? writeParquetDir : writeCsvDir)(empty, d);
      expect(meaning((await readDirectory(d, { format })).profile)).toEqual(meaning(empty));
    }
  });
});

describe('CSV directory', () => {
  const p = richProfile();
  const dir = join(tmp, 'csv');

  it('writes one RFC 4180 CSV file per table with a header line', async () => {
    await writeCsvDir(p, dir);
    expect(readdirSync(dir).sort()).toEqual(TABLES.map((t) => `${t.name}.csv`).sort());
    const fn = readFileSync(join(dir, 'functions.csv'), 'utf8').split('\n');
    expect(fn[0]).toBe('profile_id,function_id,name,system_name,filename,start_line');
    expect(fn).toContain('1,6,"name with , ""comma"" ; and \u00e9\u4e2d","name with , ""comma"" ; and \u00e9\u4e2d","",0');
  });

  it('reads the profile back (NULL vs empty string, quotes, newlines, 64-bit values)', async () => {
    const back = await readDirectory(dir, { format: 'csv' });
    expect(meaning(back.profile)).toEqual(meaning(p));
  });

  it('reports a damaged file with the file and table', async () => {
    const bad = join(tmp, 'csv-bad');
    await writeCsvDir(p, bad);
    writeFileSync(join(bad, 'samples.csv'), 'profile_id,sample_id,value\n1,one,2\n');
    try {
      await readDirectory(bad, { format: 'csv' });
      expect.unreachable();
    } catch (e) {
      expect(isProfkitError(e)).toBe(true);
      expect((e as { code: string }).code).toBe(DM_ERRORS.DATA);
      expect((e as { detail: Record<string, unknown> }).detail).toMatchObject({ file: join(bad, 'samples.csv'), table: 'samples' });
    }
    await writeCsvDir(p, bad);
    writeFileSync(join(bad, 'meta.csv'), 'profile_id,value,key\n1,"1.0","version"\n');
    try {
      await readDirectory(bad, { format: 'csv' });
      expect.unreachable();
    } catch (e) {
      expect((e as { code: string }).code).toBe(DM_ERRORS.SCHEMA);
      expect((e as { detail: Record<string, unknown> }).detail).toMatchObject({ file: join(bad, 'meta.csv'), line: 1, table: 'meta' });
    }
    await writeCsvDir(p, bad);
    rmSync(join(bad, 'labels.csv'));
    try {
      await readDirectory(bad, { format: 'csv' });
      expect.unreachable();
    } catch (e) {
      expect((e as { code: string }).code).toBe(DM_ERRORS.SCHEMA);
      expect((e as { detail: Record<string, unknown> }).detail).toMatchObject({ table: 'labels' });
    }
  });
});
