/**
 * The PostgreSQL script against a real server on loopback, started here in a temp directory
 * (apt-get install postgresql). Skips with a message naming the missing tool.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { which as onPath } from '@profkit/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLES, exampleQueries, postgresScript, profileToTables } from '../src/index.js';
import { richProfile, syntheticProfile } from './helpers.js';
import { modelCallers, modelDiff, modelTopSelf, modelTopTotal } from './model-queries.js';

/** `cmd` on PATH, or in Debian's versioned /usr/lib/postgresql/<version>/bin. */
function which(cmd: string): string | undefined {
  const found = onPath(cmd);
  if (found) return found;
  const lib = '/usr/lib/postgresql';
  if (existsSync(lib)) {
    for (const v of readdirSync(lib).sort().reverse()) {
      const p = join(lib, v, 'bin', cmd);
      if (existsSync(p)) return p;
    }
  }
  return undefined;
}

const initdb = which('initdb');
const pgCtl = which('pg_ctl');
const psqlBin = which('psql');
const isRoot = process.getuid?.() === 0;
const pgUser = isRoot ? (spawnSync('id', ['-u', 'postgres']).status === 0 ? 'postgres' : undefined) : undefined;
const missing = !initdb || !pgCtl || !psqlBin ? 'PostgreSQL (initdb, pg_ctl, psql; apt-get install postgresql)' : isRoot && !pgUser ? 'a postgres system user (root cannot run the server)' : undefined;
if (missing) console.warn(`[dm-export] skipping the PostgreSQL interop tests: ${missing} not found`);

describe.skipIf(missing !== undefined)('PostgreSQL script on a real server', () => {
  let dir = '';
  let port = 0;
  const asPg = (file: string, args: string[]) => (isRoot ? execFileSync('runuser', ['-u', pgUser!, '--', file, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 90_000 }) : execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 90_000 }));
  const psql = (args: string[]) => execFileSync(psqlBin!, ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-X', '-q', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28, timeout: 60_000 });
  const query = (sql: string): string[][] =>
    psql(['-A', '-t', '-F', '\t', '-c', sql])
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => l.split('\t'));
  const load = (file: string) => psql(['-f', file]);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dm-export-pg-'));
    chmodSync(dir, 0o755);
    if (isRoot) {
      const uid = Number(execFileSync('id', ['-u', pgUser!], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', pgUser!], { encoding: 'utf8' }).trim());
      chownSync(dir, uid, gid);
    }
    port = await new Promise<number>((ok) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => ok(p));
      });
    });
    asPg(initdb!, ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
    asPg(pgCtl!, ['-D', join(dir, 'data'), '-l', join(dir, 'log'), '-w', '-t', '60', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`, 'start']);
  }, 120_000);

  afterAll(() => {
    if (dir && existsSync(join(dir, 'data', 'postmaster.pid'))) {
      try {
        asPg(pgCtl!, ['-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const a = syntheticProfile(2000, 11, 50);
  const b = syntheticProfile(2000, 12, 50);
  const rich = richProfile();
  const scriptFile = (name: string, p: typeof a, profileId: number) => {
    const f = join(dir, name);
    writeFileSync(f, Buffer.concat([...postgresScript(p, { profileId, name }).chunks]));
    chmodSync(f, 0o644);
    return f;
  };

  it('loads the script (schema + rows) and appends further profiles with other profile_ids', () => {
    load(scriptFile('a.sql', a, 1));
    load(scriptFile('b.sql', b, 2));
    load(scriptFile('rich.sql', rich, 3));
    for (const [pid, p] of [[1, a], [2, b], [3, rich]] as const) {
      for (const t of profileToTables(p, { profileId: pid })) {
        const [[n]] = query(`SELECT count(*) FROM "${t.table.name}" WHERE profile_id = ${pid}`) as [[string]];
        expect(Number(n), `${t.table.name} of profile ${pid}`).toBe(t.rowCount);
      }
    }
  });

  it('declares every primary key, foreign key, unique constraint and index', () => {
    const rows = query("SELECT conrelid::regclass::text, contype, count(*) FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND contype IN ('p', 'f', 'u') GROUP BY 1, 2 ORDER BY 1, 2");
    const got = new Map(rows.map(([t, c, n]) => [`${t}:${c}`, Number(n)]));
    for (const t of TABLES) {
      expect(got.get(`${t.name}:p`), t.name).toBe(1);
      expect(got.get(`${t.name}:f`) ?? 0, t.name).toBe(t.foreignKeys.length);
      expect(got.get(`${t.name}:u`) ?? 0, t.name).toBe(t.unique.length);
    }
    const idx = query("SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexname LIKE '%_idx'").map((r) => r[0]);
    expect(idx.length).toBe(TABLES.reduce((n, t) => n + t.indexes.length, 0));
  });

  it('enforces the constraints: a duplicate profile_id or a dangling reference is refused', () => {
    expect(() => load(scriptFile('dup.sql', a, 1))).toThrow(/duplicate key|unique/i);
    expect(() => psql(['-c', 'INSERT INTO sample_locations VALUES (1, 1, 999, 4242)'])).toThrow(/foreign key/i);
    // The failed script rolled back as a whole: profile 1 is unchanged.
    const [[n]] = query('SELECT count(*) FROM samples WHERE profile_id = 1') as [[string]];
    expect(Number(n)).toBe(a.samples.value.length);
  });

  it('keeps 64-bit values, uint64 bits, NULLs and odd text exactly', () => {
    expect(query('SELECT value FROM sample_values WHERE profile_id = 3 AND sample_id = 5 ORDER BY sample_type_id')).toEqual([['4'], [String(-(2n ** 63n))], [String(2n ** 63n - 1n)]]);
    expect(query('SELECT memory_limit FROM mappings WHERE profile_id = 3 ORDER BY mapping_id').map((r) => BigInt.asUintN(64, BigInt(r[0]!)))).toEqual([0x800000n, 0xffffffffffffffffn]);
    expect(query("SELECT count(*) FROM labels WHERE profile_id = 3 AND str IS NULL AND is_num")).toEqual([['2']]);
    expect(query('SELECT name FROM functions WHERE profile_id = 3 AND function_id = 6')).toEqual([['name with , "comma" ; and \u00e9\u4e2d']]);
  });

  const sql = Object.fromEntries(exampleQueries().map((q) => [q.name, q.sql]));
  const bind = (text: string, params: Record<string, string | number>) => text.replace(/:([a-z_]+)/g, (_m, k: string) => (typeof params[k] === 'number' ? String(params[k]) : `'${String(params[k]).replace(/'/g, "''")}'`));
  const asTuples = (rows: string[][]) => rows.map((r) => r.map((v, i) => (i === 0 ? v : BigInt(v))));

  it('runs the example queries of sql/queries.sql with the same answers as the model', () => {
    expect(asTuples(query(bind(sql.top_functions_self!, { profile_id: 1, sample_type: 'cpu' })))).toEqual(modelTopSelf(a, 'cpu'));
    expect(asTuples(query(bind(sql.top_functions_total!, { profile_id: 3, sample_type: 'alloc_objects' })))).toEqual(modelTopTotal(rich, 'alloc_objects'));
    expect(asTuples(query(bind(sql.callers!, { profile_id: 3, sample_type: 'alloc_objects', function_name: 'recurse' })))).toEqual(modelCallers(rich, 'alloc_objects', 'recurse'));
    expect(asTuples(query(bind(sql.diff_by_function!, { base_profile_id: 1, profile_id: 2, sample_type: 'cpu' })))).toEqual(modelDiff(a, b, 'cpu'));
  });
});

describe('PostgreSQL script text', () => {
  it('warns up front about NUL characters, which PostgreSQL text cannot hold, and replaces them', () => {
    const p = richProfile();
    p.functions.name[0] = 'ma\u0000in';
    const { chunks, warnings } = postgresScript(p);
    expect(warnings.map((w) => w.code)).toEqual(['PROFKIT_W_DM_NUL']);
    const text = Buffer.concat([...chunks]).toString('utf8');
    expect(text).toContain("'ma\ufffdin'");
    expect(text).not.toContain('\u0000');
    expect(postgresScript(richProfile()).warnings).toEqual([]);
  });
});
