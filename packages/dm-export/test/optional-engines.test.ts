/**
 * The native engines are optional peers: `npm install @profkit/dm-export` installs neither.
 * CSV, the PostgreSQL script, sniffing and diagrams must work without them and never try to load
 * them; SQLite and Parquet must fail with a typed error naming the exact `npm install`.
 *
 * "Not installed" is simulated in a child process (against the built package) by
 * `engines/block-engines.mjs`, preloaded with `--import`, which makes Node's module resolution
 * fail for both packages exactly as it does for a missing package, and reports each attempt.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliBin, runCli } from '@profkit/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { fixturesDir, haveFixtures, repoRoot } from './helpers.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const blocker = pathToFileURL(join(here, 'engines/block-engines.mjs')).href;
const script = join(here, 'engines/run.mjs');
const manifest = JSON.parse(readFileSync(join(here, '../package.json'), 'utf8')) as {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};
const ENGINES = ['better-sqlite3', '@duckdb/node-api'] as const;
const install = (pkg: (typeof ENGINES)[number]) => `npm install ${pkg}@${manifest.peerDependencies?.[pkg]}`;

const tmp = mkdtempSync(join(tmpdir(), 'dm-export-engines-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Outcome {
  ok?: unknown;
  error?: { code: string; message: string; install?: string };
}

/** Runs `engines/run.mjs MODE` against the built package, with the engines blocked or present. */
function run(mode: 'neutral' | 'sqlite' | 'parquet', blocked: boolean): { outcome: Outcome; stderr: string; status: number | null } {
  const r = spawnSync(process.execPath, [...(blocked ? ['--import', blocker] : []), script, mode, join(tmp, `${mode}-${blocked}`)], {
    cwd: here,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  return { outcome: (line.startsWith('{') ? JSON.parse(line) : { error: { code: 'no output', message: r.stderr } }) as Outcome, stderr: r.stderr, status: r.status };
}

describe('package.json: the native engines are optional peers', () => {
  it('neither engine is a dependency; both are optional peers (with a range) and devDependencies', () => {
    for (const pkg of ENGINES) {
      expect(manifest.dependencies?.[pkg], `${pkg} in dependencies`).toBeUndefined();
      expect(manifest.peerDependencies?.[pkg], `${pkg} peer range`).toMatch(/^\^\d/);
      expect(manifest.peerDependenciesMeta?.[pkg]?.optional, `${pkg} optional`).toBe(true);
      expect(manifest.devDependencies?.[pkg], `${pkg} dev range`).toBe(manifest.peerDependencies?.[pkg]);
    }
  });

  it('the built type declarations never import better-sqlite3 (a user needs no @types/better-sqlite3)', () => {
    const dist = join(here, '../dist');
    const declarations = readdirSync(dist).filter((f) => f.endsWith('.d.ts'));
    expect(declarations).toContain('index.d.ts');
    for (const f of declarations) expect(readFileSync(join(dist, f), 'utf8'), f).not.toMatch(/from ['"]better-sqlite3['"]|import\(['"]better-sqlite3['"]\)/);
  });
});

describe('without better-sqlite3 and @duckdb/node-api', () => {
  it('CSV export, the PostgreSQL script (function and codec), sniffing and diagrams work and never try to load an engine', () => {
    const r = run('neutral', true);
    expect(r.outcome.error, r.stderr).toBeUndefined();
    expect(r.outcome.ok).toEqual({ csvFiles: 15, samplesCsv: 'profile_id,sample_id,value', script: true, sniff: 'sqlite', diagram: true });
    expect(r.stderr).not.toContain('[blocked]');
  });

  it('writing SQLite fails with PROFKIT_E_UNSUPPORTED naming `npm install better-sqlite3@<peer range>`', () => {
    const r = run('sqlite', true);
    expect(r.stderr).toContain('[blocked] better-sqlite3');
    expect(r.outcome.error?.code).toBe('PROFKIT_E_UNSUPPORTED');
    expect(r.outcome.error?.message).toContain(`not installed`);
    expect(r.outcome.error?.message).toContain(install('better-sqlite3'));
    expect(r.outcome.error?.install).toBe(install('better-sqlite3'));
  });

  it('writing Parquet fails with PROFKIT_E_UNSUPPORTED naming `npm install @duckdb/node-api@<peer range>`', () => {
    const r = run('parquet', true);
    expect(r.stderr).toContain('[blocked] @duckdb/node-api');
    expect(r.outcome.error?.code).toBe('PROFKIT_E_UNSUPPORTED');
    expect(r.outcome.error?.message).toContain(install('@duckdb/node-api'));
    expect(r.outcome.error?.install).toBe(install('@duckdb/node-api'));
  });
});

describe('with the engines installed (the workspace has them as devDependencies)', () => {
  it('the same script writes SQLite and Parquet: the engines load lazily when present', () => {
    const sqlite = run('sqlite', false);
    expect(sqlite.outcome.error, sqlite.stderr).toBeUndefined();
    expect(sqlite.outcome.ok).toBeGreaterThan(4096);
    const parquet = run('parquet', false);
    expect(parquet.outcome.error, parquet.stderr).toBeUndefined();
    expect(parquet.outcome.ok).toBe(15);
  });
});

const input = join(fixturesDir, 'r-profile/inst/samples/proto/1.out.prof.pb.gz');
const why = !existsSync(cliBin) ? `${cliBin} not built` : !haveFixtures ? `${fixturesDir} not found` : undefined;
if (why) console.warn(`[dm-export] skipping the CLI part of the optional-engine test: ${why}`);

describe.skipIf(why !== undefined)('the CLI without the engines', () => {
  const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${blocker}`.trim() };
  const cli = (...args: string[]) => runCli(args, { cwd: repoRoot, env });

  it('`dm-export export --to csv` and `convert x.pb.gz x.sql` succeed without trying an engine', () => {
    const csv = cli('dm-export', 'export', input, join(tmp, 'cli-csv'), '--to', 'csv');
    expect(csv.code, csv.stderr).toBe(0);
    expect(readFileSync(join(tmp, 'cli-csv', 'samples.csv'), 'utf8')).toMatch(/^profile_id,sample_id,value\n1,/);
    const sql = cli('convert', input, join(tmp, 'cli.sql'));
    expect(sql.code, sql.stderr).toBe(0);
    expect(readFileSync(join(tmp, 'cli.sql'), 'utf8')).toContain('INSERT INTO "sample_locations"');
    expect(csv.stderr + sql.stderr).not.toContain('[blocked]');
  });

  it('`convert x.pb.gz x.sqlite` exits 4 and says the exact npm install', () => {
    const r = cli('convert', input, join(tmp, 'cli.sqlite'));
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain('PROFKIT_E_UNSUPPORTED');
    expect(r.stderr).toContain(install('better-sqlite3'));
    expect(existsSync(join(tmp, 'cli.sqlite'))).toBe(false);
  });
});
