/**
 * Read limits on every import path (SQLite bytes, SQLite file through the registry, Parquet
 * directory, CSV directory): each limit is checked with a small value just below what the input
 * needs (a PROFKIT_E_LIMIT naming the option) and with the exact value it needs (the read
 * succeeds), so every test fails without its check.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { DuckDBInstance } from '@duckdb/node-api';
import { ProfileBuilder, createRegistry, isProfkitError, type Profile, type ReadLimits } from '@profkit/core/node';
import { DM_ERRORS, dmExportAdapter, openDuckDB, profileToTables, readDirectory, readSqlite, writeCsvDir, writeParquetDir, writeSqlite } from '../src/index.js';
import { haveCli, runCli } from '@profkit/test-utils';
import { meaning } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'dm-export-limits-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const LONG = 'x'.repeat(40);
/** 20 characters, 40 UTF-8 bytes: the limit counts bytes. */
const LONG_UTF8 = '\u00e9'.repeat(20);

type Long = 'function name' | 'system name' | 'file name' | 'label key' | 'label str' | 'label unit' | 'mapping file' | 'build id' | 'comment' | 'sample type';

/** 3 samples, the deepest of 4 frames; every string at most 12 bytes except the one `long` names. */
function profile(long?: Long): Profile {
  const s = (k: Long, short: string) => (long === k ? (k === 'label str' ? LONG_UTF8 : LONG) : short);
  const b = new ProfileBuilder({
    sampleTypes: [{ type: s('sample type', 'cpu'), unit: 'nanoseconds' }],
    facts: { comments: [s('comment', 'a comment')] },
  });
  const m = b.internMapping({ memoryStart: 0x1000n, memoryLimit: 0x9000n, filename: s('mapping file', '/bin/app'), buildId: s('build id', 'abc123') });
  const fMain = b.internFunction({ name: s('function name', 'main'), systemName: s('system name', '_main'), filename: s('file name', 'main.c') });
  const fWork = b.internFunction({ name: 'work', filename: 'work.c' });
  const lMain = b.internLocation({ functionId: fMain, line: 3, address: 0x1010n, mappingId: m });
  const lWork = b.internLocation({ functionId: fWork, line: 7, address: 0x1020n, mappingId: m });
  b.addSample([lWork, lWork, lWork, lMain], [10], [{ key: s('label key', 'thread'), str: s('label str', 'w1') }]);
  b.addSample([lWork, lMain], [20], [{ key: 'bytes', num: 5, unit: s('label unit', 'bytes') }]);
  b.addSample([lMain], [30]);
  return b.build();
}

interface ImportPath {
  name: string;
  /** Writes the profile in this path's format; returns what `read` takes. */
  write(p: Profile, tag: string): Promise<unknown>;
  read(x: unknown, limits: ReadLimits): Promise<Profile>;
}

const registry = createRegistry([dmExportAdapter]);

const PATHS: ImportPath[] = [
  {
    name: 'SQLite bytes',
    write: async (p) => writeSqlite(p).bytes,
    read: async (x, limits) => (await readSqlite(x as Uint8Array, { limits })).profile,
  },
  {
    name: 'SQLite file (registry)',
    write: async (p, tag) => {
      const f = join(tmp, `${tag}.sqlite`);
      writeFileSync(f, writeSqlite(p).bytes);
      return f;
    },
    read: async (x, limits) => (await registry.read(x as string, { limits })).profile,
  },
  {
    name: 'Parquet directory',
    write: async (p, tag) => {
      const d = join(tmp, `${tag}-parquet`);
      await writeParquetDir(p, d);
      return d;
    },
    read: async (x, limits) => (await readDirectory(x as string, { format: 'parquet', limits })).profile,
  },
  {
    name: 'CSV directory',
    write: async (p, tag) => {
      const d = join(tmp, `${tag}-csv`);
      await writeCsvDir(p, d);
      return d;
    },
    read: async (x, limits) => (await readDirectory(x as string, { format: 'csv', limits })).profile,
  },
];

async function expectLimit(read: Promise<unknown>, option: string, message?: string): Promise<Record<string, unknown>> {
  const e = await read.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e, `expected PROFKIT_E_LIMIT (${option})`).toBeDefined();
  if (!isProfkitError(e)) throw e;
  expect(e.code, e.message).toBe('PROFKIT_E_LIMIT');
  expect(e.detail.option).toBe(option);
  expect(e.message).toContain(`limits.${option}`);
  if (message !== undefined) expect(e.message).toContain(message);
  return e.detail;
}

describe.each(PATHS)('read limits: $name', (path) => {
  let base: unknown;
  const inputs = new Map<Long, unknown>();
  const tag = path.name.replace(/\W+/g, '-');
  const input = async (long?: Long) => {
    if (!long) return (base ??= await path.write(profile(), `${tag}-base`));
    if (!inputs.has(long)) inputs.set(long, await path.write(profile(long), `${tag}-${long.replace(/\W+/g, '-')}`));
    return inputs.get(long);
  };

  it('maxSamples: 3 samples read with maxSamples=3, fail with 2', async () => {
    const x = await input();
    expect(meaning(await path.read(x, { maxSamples: 3 }))).toEqual(meaning(profile()));
    const d = await expectLimit(path.read(x, { maxSamples: 2 }), 'maxSamples');
    expect(d.table).toBe('samples');
  });

  it('maxFramesPerStack: a 4-frame sample reads with 4, fails with 3 (naming the sample)', async () => {
    const x = await input();
    await path.read(x, { maxFramesPerStack: 4 });
    const d = await expectLimit(path.read(x, { maxFramesPerStack: 3 }), 'maxFramesPerStack');
    expect(d.key).toBe('profile_id=1, sample_id=1');
  });

  const columns: [Long, string][] = [
    ['function name', 'functions.name'],
    ['system name', 'functions.system_name'],
    ['file name', 'functions.filename'],
    ['label key', 'labels.key'],
    ['label str', 'labels.str'],
    ['label unit', 'labels.num_unit'],
    ['mapping file', 'mappings.filename'],
    ['build id', 'mappings.build_id'],
    ['comment', 'profile_comments.comment'],
    ['sample type', 'sample_types.type'],
  ];

  it('maxStringLength: the short strings read with 12 bytes', async () => {
    expect(meaning(await path.read(await input(), { maxStringLength: 12 }))).toEqual(meaning(profile()));
  });

  it.each(columns)('maxStringLength: a 40-byte %s (%s) reads with 40, fails with 39', async (long, column) => {
    const x = await input(long);
    await path.read(x, { maxStringLength: 40 });
    const d = await expectLimit(path.read(x, { maxStringLength: 39 }), 'maxStringLength');
    expect(`${String(d.table)}.${String(d.column)}`).toBe(column);
  });

  it('maxInputBytes: the input read with its size, fails with one byte less', async () => {
    const x = await input();
    const size = await inputSize(x);
    await path.read(x, { maxInputBytes: size });
    await expectLimit(path.read(x, { maxInputBytes: size - 1 }), 'maxInputBytes');
  });
});

async function inputSize(x: unknown): Promise<number> {
  if (x instanceof Uint8Array) return x.length;
  const { statSync, readdirSync } = await import('node:fs');
  const p = x as string;
  if (statSync(p).isFile()) return statSync(p).size;
  return readdirSync(p).reduce((n, f) => n + statSync(join(p, f)).size, 0);
}

describe('maxDecompressedBytes (Parquet: the decoded rows)', () => {
  it('counts 8 bytes per value plus the text of every row read', async () => {
    const p = profile();
    const dir = join(tmp, 'decoded-parquet');
    await writeParquetDir(p, dir);
    // The decoded size, from the rows the writer produced: 8 bytes per value (profile_id aside)
    // plus the UTF-8 bytes of the text values.
    let decoded = 0;
    for (const t of profileToTables(p, { profileId: 1 })) {
      decoded += t.rowCount * 8 * (t.table.columns.length - 1);
      t.table.columns.forEach((c, i) => {
        if (c.type !== 'text') return;
        for (let r = 0; r < t.rowCount; r++) {
          const v = t.columns[i]![r];
          if (typeof v === 'string') decoded += Buffer.byteLength(v, 'utf8');
        }
      });
    }
    expect(meaning((await readDirectory(dir, { limits: { maxDecompressedBytes: decoded } })).profile)).toEqual(meaning(p));
    const d = await expectLimit(readDirectory(dir, { limits: { maxDecompressedBytes: decoded - 1 } }), 'maxDecompressedBytes');
    // The last table read with rows (labels; the extension tables are empty) crosses the limit.
    expect(d.table).toBe('labels');
  });

  it('refuses a tiny Parquet file of 2,000,000 identical locations before fetching them', async () => {
    const dir = join(tmp, 'bomb-parquet');
    await writeParquetDir(profile(), dir);
    const file = join(dir, 'locations.parquet');
    rmSync(file);
    await duckRun(
      `COPY (SELECT 1::BIGINT AS profile_id, 1::BIGINT AS location_id, NULL::BIGINT AS function_id, 0::BIGINT AS line, 0::BIGINT AS column_number, 0::BIGINT AS address, NULL::BIGINT AS mapping_id, false AS is_folded FROM range(2000000)) TO '${file}' (FORMAT parquet, COMPRESSION zstd)`,
    );
    const { statSync } = await import('node:fs');
    expect(statSync(file).size).toBeLessThan(100_000);
    // 2,000,000 rows × 7 values × 8 bytes = 112 MB decoded from a file of a few KB: refused on
    // the stored row counts (metadata), before any column is scanned.
    const d = await expectLimit(readDirectory(dir, { limits: { maxDecompressedBytes: 32 * 2 ** 20 } }), 'maxDecompressedBytes', 'rows stored');
    expect(d.table).toBe('locations');
  });

  it('does not apply to SQLite and CSV, which are not compressed (their size is bounded by maxInputBytes)', async () => {
    const p = profile();
    expect(meaning((await readSqlite(writeSqlite(p).bytes, { limits: { maxDecompressedBytes: 64 } })).profile)).toEqual(meaning(p));
    const dir = join(tmp, 'decoded-csv');
    await writeCsvDir(p, dir);
    expect(meaning((await readDirectory(dir, { format: 'csv', limits: { maxDecompressedBytes: 64 } })).profile)).toEqual(meaning(p));
  });
});

async function duckRun(sql: string): Promise<void> {
  const inst = await DuckDBInstance.create(':memory:');
  const conn = await inst.connect();
  try {
    await conn.run(sql);
  } finally {
    conn.closeSync();
    inst.closeSync();
  }
}

describe('hostile databases', () => {
  it('a SQLite view named like a table is not that table (a view can compute endless rows)', async () => {
    const bytes = writeSqlite(profile()).bytes;
    const db = new Database(Buffer.from(bytes));
    db.pragma('foreign_keys = OFF');
    db.exec('DROP TABLE samples');
    // 3,000,000 computed samples from a database of a few pages.
    db.exec(
      'CREATE VIEW samples AS WITH RECURSIVE c(profile_id, sample_id, value) AS (SELECT 1, 1, 0 UNION ALL SELECT 1, sample_id + 1, 0 FROM c WHERE sample_id < 3000000) SELECT * FROM c',
    );
    const hostile = new Uint8Array(db.serialize());
    db.close();
    const e = await readSqlite(hostile, { limits: { maxSamples: 1000 } }).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(isProfkitError(e) && e.code).toBe(DM_ERRORS.SCHEMA);
    expect(isProfkitError(e) && e.detail.table).toBe('samples');
  });

  it('a Parquet column of another type (a list) is refused before any row is read', async () => {
    const dir = join(tmp, 'list-parquet');
    await writeParquetDir(profile(), dir);
    const file = join(dir, 'functions.parquet');
    rmSync(file);
    await duckRun(
      `COPY (SELECT 1::BIGINT AS profile_id, 1::BIGINT AS function_id, ['a', 'b'] AS name, '' AS system_name, '' AS filename, 0::BIGINT AS start_line) TO '${file}' (FORMAT parquet)`,
    );
    const e = await readDirectory(dir).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(isProfkitError(e) && e.code).toBe(DM_ERRORS.SCHEMA);
    expect(isProfkitError(e) && e.detail.column).toBe('name');
  });
});

describe('readDirectory with a reused DuckDB connection', () => {
  it('reads several directories through one instance, and leaves it open', async () => {
    const duck = await openDuckDB({ threads: '1' });
    try {
      const a = profile();
      const b = profile('function name');
      const da = join(tmp, 'reuse-a');
      const db = join(tmp, 'reuse-b');
      mkdirSync(da, { recursive: true });
      await writeParquetDir(a, da);
      await writeCsvDir(b, db);
      for (let i = 0; i < 2; i++) {
        expect(meaning((await readDirectory(da, { connection: duck.connection })).profile)).toEqual(meaning(a));
        expect(meaning((await readDirectory(db, { format: 'csv', connection: duck.connection })).profile)).toEqual(meaning(b));
      }
      // Limits apply through an injected connection too.
      await expectLimit(readDirectory(da, { connection: duck.connection, limits: { maxSamples: 1 } }), 'maxSamples');
      const r = await duck.connection.runAndReadAll('SELECT 42');
      expect(Number(r.getRows()[0]![0])).toBe(42);
    } finally {
      duck.close();
    }
  });
});

describe.skipIf(!haveCli('dm-export limits'))('the CLI --limit option', () => {
  it('reaches the SQLite reader (profkit convert) and profkit dm-export import', async () => {
    const db = join(tmp, 'cli.sqlite');
    writeFileSync(db, writeSqlite(profile()).bytes);
    const dir = join(tmp, 'cli-parquet');
    await writeParquetDir(profile(), dir);

    const ok = runCli(['convert', db, join(tmp, 'cli-ok.sql'), '--limit', 'maxSamples=3']);
    expect(ok.code, ok.stderr).toBe(0);
    const refused = runCli(['convert', db, join(tmp, 'cli-refused.sql'), '--limit', 'maxSamples=2']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('PROFKIT_E_LIMIT');
    expect(refused.stderr).toContain('limits.maxSamples');

    const imported = runCli(['dm-export', 'import', dir, join(tmp, 'cli-import-ok.sql'), '--limit', 'maxFramesPerStack=4']);
    expect(imported.code, imported.stderr).toBe(0);
    const deep = runCli(['dm-export', 'import', dir, join(tmp, 'cli-import-refused.sql'), '--limit', 'maxFramesPerStack=3']);
    expect(deep.code).toBe(1);
    expect(deep.stderr).toContain('PROFKIT_E_LIMIT');
    expect(deep.stderr).toContain('limits.maxFramesPerStack');
  });
});

describe('hostile databases: virtual tables', () => {
  it('a SQLite virtual table named like a table is not that table', async () => {
    const db = new Database(Buffer.from(writeSqlite(profile()).bytes));
    db.pragma('foreign_keys = OFF');
    db.exec('DROP TABLE meta');
    db.exec('CREATE VIRTUAL TABLE meta USING fts5(profile_id, key, value)');
    const hostile = new Uint8Array(db.serialize());
    db.close();
    const e = await readSqlite(hostile).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(isProfkitError(e) && e.code).toBe(DM_ERRORS.SCHEMA);
    expect(isProfkitError(e) && e.detail.table).toBe('meta');
  });
});
