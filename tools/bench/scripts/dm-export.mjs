#!/usr/bin/env node
// Benchmark of the dm-export targets (never run by the tests): generates a profile of N samples
// (default 200,000; stack depth 1..24, 2 sample types, 2,000 functions, inline frames, labels on
// 10% of samples), then times exporting it to SQLite, Parquet (and, for comparison, the other
// Parquet route we considered), CSV and the PostgreSQL script, and reading it back from SQLite
// and Parquet.
//   node packages/dm-export/bench/export-bench.mjs [samples] [--json]
import { mkdtempSync, rmSync, statSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProfileBuilder } from '@profkit/core/node';
import { spawnSync } from 'node:child_process';
import { TABLES, listProfiles, postgresScript, profileToTables, readDirectory, readSqlite, sqlType, writeCsvDir, writeParquetDir, writeSqlite, writeSqliteFile } from '@profkit/dm-export';

const n = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 200_000);
const json = process.argv.includes('--json');

function generate(n, nf = 2000) {
  let s = 12345;
  const rnd = () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return s / 2 ** 32;
  };
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }], facts: { period_type: { type: 'cpu', unit: 'nanoseconds' }, period: 10_000_000n } });
  const m = b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0x8000000n, filename: '/usr/bin/bench' });
  const fns = Array.from({ length: nf }, (_, i) => b.internFunction({ name: `pkg${i % 37}.fn_${i}`, filename: `src/pkg${i % 37}/file_${i % 91}.go`, startLine: i + 1 }));
  const locs = Array.from({ length: nf * 3 }, (_, i) =>
    b.internLocation({ functionId: fns[i % nf], line: 10 + Math.floor(i / nf), address: BigInt(0x400000 + i * 8), mappingId: m, inlinedInto: i % 11 === 0 ? [{ functionId: fns[(i * 7) % nf], line: 3 }] : undefined }),
  );
  for (let i = 0; i < n; i++) {
    const depth = 1 + Math.floor(rnd() * 24);
    const stack = [];
    for (let d = 0; d < depth; d++) stack.push(locs[Math.floor(rnd() * rnd() * locs.length)]);
    const c = 1 + Math.floor(rnd() * 3);
    b.addSample(stack, [c, BigInt(c) * 10_000_000n], i % 10 === 0 ? [{ key: 'goroutine', num: i % 97 }, { key: 'state', str: 'running' }] : undefined);
  }
  return b.build();
}

function dirSize(d) {
  return readdirSync(d).reduce((t, f) => t + statSync(join(d, f)).size, 0);
}

// Wall time and CPU time of this process (DuckDB's worker threads count in CPU time too). On a
// shared machine the wall time includes waiting for a core; the CPU time does not.
async function time(label, f) {
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const r = await f();
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(c0);
  return { label, seconds: Math.round(s * 100) / 100, cpuSeconds: Math.round((c.user + c.system) / 1e4) / 100, ...r };
}

// The alternative Parquet route, measured for comparison (not used by the adapter): our CSV
// files, bulk-loaded by DuckDB's CSV reader with the schema's column types, then COPY ... TO parquet.
async function parquetViaCsv(p, dir, csvDir) {
  const duck = await import('@duckdb/node-api');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(dir, { recursive: true });
  await writeCsvDir(p, csvDir);
  const inst = await duck.DuckDBInstance.create(':memory:', { threads: '2' });
  const conn = await inst.connect();
  const str = (x) => "'" + x.replace(/'/g, "''") + "'";
  try {
    for (const t of TABLES) {
      const columns = '{' + t.columns.map((c) => `${str(c.name)}: ${str(sqlType(c, 'duckdb'))}`).join(', ') + '}';
      const src = `read_csv(${str(join(csvDir, t.name + '.csv'))}, header = true, delim = ',', quote = '"', escape = '"', auto_detect = false, allow_quoted_nulls = false, columns = ${columns})`;
      await conn.run(`COPY (SELECT * FROM ${src}) TO ${str(join(dir, t.name + '.parquet'))} (FORMAT parquet, COMPRESSION zstd)`);
    }
  } finally {
    conn.closeSync();
    inst.closeSync();
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'dm-bench-'));
try {
  const gen = await time('generate profile', async () => ({ profile: generate(n) }));
  const p = gen.profile;
  const rows = profileToTables(p, { profileId: 1 }).reduce((t, x) => t + x.rowCount, 0);
  const results = [];
  let sqliteBytes;
  results.push(await time('SQLite write (in memory + serialize)', async () => {
    const r = writeSqlite(p);
    sqliteBytes = r.bytes;
    writeFileSync(join(tmp, 'p.sqlite'), r.bytes);
    return { bytes: r.bytes.length };
  }));
  results.push(await time('SQLite read back', async () => ({ samples: (await readSqlite(sqliteBytes)).profile.samples.value.length })));
  results.push(await time('SQLite append (2nd profile)', async () => ({ bytes: writeSqlite(p, { append: true, existing: sqliteBytes }).bytes.length })));
  // On disk (what `profkit dm-export append` and `convert --write-option append=true` do): copy,
  // append in one transaction, fsync, rename, under <db>.lock.
  const dbFile = join(tmp, 'disk.sqlite');
  results.push(await time('SQLite file: new database on disk', async () => {
    await writeSqliteFile(dbFile, { append: false }, async (add) => add(p));
    return { bytes: statSync(dbFile).size };
  }));
  results.push(await time('SQLite file: append 2nd profile on disk', async () => {
    await writeSqliteFile(dbFile, { append: true }, async (add) => add(p));
    return { bytes: statSync(dbFile).size };
  }));
  results.push(await time('SQLite file: read profile 1 (read-only)', async () => ({ samples: (await readSqlite(dbFile, { profileId: 1 })).profile.samples.value.length })));
  // Peak memory (VmHWM: process.resourceUsage().maxRSS of a forked child starts at the parent's
  // peak on Linux) of a fresh process adding a 1,000-sample profile to that database (on disk), and
  // of the in-memory route (load the file, deserialize, serialize, write): the on-disk peak does
  // not grow with the database size, the in-memory one does.
  const small = join(tmp, 'small.sqlite');
  writeFileSync(small, writeSqlite(generate(1000, 200)).bytes);
  const child = (code) => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', cwd: process.cwd() });
    if (r.status !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout);
  };
  const pre = `import { readFileSync, writeFileSync } from 'node:fs'; import { readSqlite, writeSqlite, writeSqliteFile } from '@profkit/dm-export'; const small = (await readSqlite(${JSON.stringify(small)})).profile; const hwm = () => Number(/VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]); const base = hwm();`;
  const post = `console.log(JSON.stringify({ baseMiB: Math.round(base / 1024), peakMiB: Math.round(hwm() / 1024) }));`;
  const disk = child(`${pre} await writeSqliteFile(${JSON.stringify(dbFile)}, { append: true }, async (add) => add(small)); ${post}`);
  const memCopy = join(tmp, 'mem.sqlite');
  const mem = child(`${pre} const w = writeSqlite(small, { append: true, existing: readFileSync(${JSON.stringify(dbFile)}) }); writeFileSync(${JSON.stringify(memCopy)}, w.bytes); ${post}`);
  const memory = { databaseMiB: Math.round(statSync(dbFile).size / 2 ** 20), profiles: listProfiles(dbFile).length, onDisk: disk, inMemory: mem };
  results.push(await time('Parquet directory write (DuckDB appender)', async () => {
    await writeParquetDir(p, join(tmp, 'pq'));
    return { bytes: dirSize(join(tmp, 'pq')) };
  }));
  results.push(await time('Parquet alternative: CSV → DuckDB COPY', async () => {
    await parquetViaCsv(p, join(tmp, 'pq-csv'), join(tmp, 'pq-csv-tmp'));
    return { bytes: dirSize(join(tmp, 'pq-csv')) };
  }));
  results.push(await time('Parquet read back (DuckDB)', async () => ({ samples: (await readDirectory(join(tmp, 'pq'))).profile.samples.value.length })));
  results.push(await time('CSV directory write', async () => {
    await writeCsvDir(p, join(tmp, 'csv'));
    return { bytes: dirSize(join(tmp, 'csv')) };
  }));
  results.push(await time('PostgreSQL script write', async () => {
    let bytes = 0;
    for (const c of postgresScript(p).chunks) bytes += c.length;
    return { bytes };
  }));
  const info = { samples: n, frames: p.samples.locations.location_id.length, rows, generateSeconds: gen.seconds, node: process.version };
  if (json) console.log(JSON.stringify({ info, results, memory }, null, 2));
  else {
    console.log(`dm-export bench: ${n} samples, ${info.frames} stack frames, ${rows} rows in all tables (generated in ${gen.seconds} s)`);
    console.log(`${'step'.padEnd(42)} ${'wall'.padStart(9)} ${'cpu'.padStart(9)}  size`);
    for (const r of results) console.log(`${r.label.padEnd(42)} ${String(r.seconds).padStart(7)} s ${String(r.cpuSeconds).padStart(7)} s${r.bytes ? `  ${(r.bytes / 1e6).toFixed(1)} MB` : ''}`);
    console.log(`append of a 1,000-sample profile to the ${memory.databaseMiB} MiB database in a fresh process, peak RSS (baseline after loading the profile): on disk ${memory.onDisk.peakMiB} MiB (${memory.onDisk.baseMiB}), in memory ${memory.inMemory.peakMiB} MiB (${memory.inMemory.baseMiB})`);
    console.log(`load average ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')} on ${(await import('node:os')).cpus().length} cores`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
