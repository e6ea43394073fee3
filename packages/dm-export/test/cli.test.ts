/** End to end through the real CLI (spawned), with the workspace's adapters (found by discovery). */
import { execFileSync } from 'node:child_process';
import { runCli, runCliAsync } from '@profkit/test-utils';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRegistry, readInput, type Adapter } from '@profkit/core/node';
import { diagramMermaid, dmExportAdapter, listProfiles } from '../src/index.js';
import { cliBin as bin } from '@profkit/test-utils';
import { fixturesDir, haveFixtures, meaning, repoRoot } from './helpers.js';

const pprof = (await import('@profkit/pprof').catch(() => undefined)) as { default?: Adapter } | undefined;
const why = !existsSync(bin) ? `${bin} not built` : !pprof?.default ? '@profkit/pprof not built' : !haveFixtures ? `${fixturesDir} not found` : undefined;
if (why) console.warn(`[dm-export] skipping the CLI end-to-end test: ${why}`);

describe.skipIf(why !== undefined)('profkit CLI end to end', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'dm-export-cli-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const run = (...args: string[]) => execFileSync(process.execPath, [bin, ...args], { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  const input = join(fixturesDir, 'r-profile/inst/samples/proto/1.out.prof.pb.gz');

  it('profkit convert x.pb.gz x.sqlite, then x.sqlite y.pb.gz, keeps the meaning', async () => {
    const registry = createRegistry([pprof!.default!, dmExportAdapter]);
    run('convert', input, join(tmp, 'x.sqlite'));
    run('convert', join(tmp, 'x.sqlite'), join(tmp, 'y.pb.gz'));
    const original = (await registry.read(input)).profile;
    expect(meaning((await registry.read(join(tmp, 'x.sqlite'))).profile)).toEqual(meaning(original));
    expect(meaning((await registry.read(join(tmp, 'y.pb.gz'))).profile)).toEqual(meaning(original));
    expect(run('detect', join(tmp, 'x.sqlite'))).toMatch(/sqlite \(adapter dm-export/);
    run('convert', input, join(tmp, 'x.sql'));
    const sql = readFileSync(join(tmp, 'x.sql'), 'utf8');
    expect(sql.startsWith('-- profkit dm-export')).toBe(true);
    expect(sql).toContain('INSERT INTO "sample_locations"');
  });

  it('profkit dm-export append / list / diagram', async () => {
    const db = join(tmp, 'all.db');
    run('dm-export', 'append', db, input, join(tmp, 'y.pb.gz'));
    expect(listProfiles(await readInput(db)).map((r) => r.profileId)).toEqual([1, 2]);
    expect(run('dm-export', 'list', db).split('\n')[1]).toMatch(/^2\t24\t2\t/);
    expect(run('dm-export', 'diagram', '--format', 'mermaid')).toBe(diagramMermaid());
    run('dm-export', 'diagram', '--out', join(tmp, 'm.svg'));
    expect(readFileSync(join(tmp, 'm.svg'), 'utf8')).toMatch(/^<svg /);
  });

  const cli = (...args: string[]) => runCli(args, { cwd: repoRoot });

  it('profkit convert --write-option append=true adds a second profile; --read-option profileId chooses one', async () => {
    const registry = createRegistry([pprof!.default!, dmExportAdapter]);
    const db = join(tmp, 'appended.sqlite');
    const other = join(tmp, 'y.pb.gz');
    if (!existsSync(other)) run('convert', input, other);
    for (const src of [input, other]) {
      const r = cli('convert', src, db, '--write-option', 'append=true');
      expect(r.code, r.stderr).toBe(0);
    }
    expect(listProfiles(db).map((r) => r.profileId)).toEqual([1, 2]);
    expect(existsSync(`${db}.lock`)).toBe(false);
    const first = join(tmp, 'first.pb.gz');
    const r = cli('convert', db, first, '--read-option', 'profileId=1');
    expect(r.code, r.stderr).toBe(0);
    expect(meaning((await registry.read(first)).profile)).toEqual(meaning((await registry.read(input)).profile));
    const missing = cli('convert', db, join(tmp, 'none.pb.gz'), '--read-option', 'profileId=3');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/\[PROFKIT_E_DM_NO_PROFILE\]/);
  });

  it('concurrent appends from separate processes keep every profile', async () => {
    const db = join(tmp, 'concurrent.sqlite');
    const runs = await Promise.all([
      runCliAsync(['dm-export', 'append', db, input, '--name', 'p1'], { cwd: repoRoot }),
      runCliAsync(['dm-export', 'append', db, input, '--name', 'p2'], { cwd: repoRoot }),
      runCliAsync(['convert', input, db, '--write-option', 'append=true', '--write-option', 'name=p3'], { cwd: repoRoot }),
      runCliAsync(['convert', input, db, '--write-option', 'append=true', '--write-option', 'name=p4'], { cwd: repoRoot }),
    ]);
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    expect(listProfiles(db).map((r) => r.name).sort()).toEqual(['p1', 'p2', 'p3', 'p4']);
    expect(listProfiles(db).map((r) => r.profileId)).toEqual([1, 2, 3, 4]);
    expect(existsSync(`${db}.lock`)).toBe(false);
  });

  it('errors are one line with their code and the documented exit code; --json documents are versioned', () => {
    const db = join(tmp, 'all.db');
    const text = join(tmp, 'notes.txt');
    writeFileSync(text, 'just some notes, not a profile\n');
    const cases: [string[], number, RegExp][] = [
      [['dm-export', 'append', join(tmp, 'u.sqlite'), text], 4, /\[PROFKIT_E_UNKNOWN_FORMAT\]\n$/],
      [['dm-export', 'append', db], 2, /^profkit: dm-export append: needs DB.sqlite and at least one PROFILE.* \[PROFKIT_E_USAGE\]\n$/],
      [['dm-export', 'diagram', '--json'], 2, /has no --json output .*\[PROFKIT_E_USAGE\]\n$/],
      [['dm-export', 'export', input, join(tmp, 'q'), '--to', 'xml'], 2, /--to must be sqlite, sql, parquet or csv, not xml \[PROFKIT_E_USAGE\]\n$/],
      [['dm-export', 'list', join(tmp, 'nope.sqlite')], 3, /no such file \[PROFKIT_E_IO\]\n$/],
      [['dm-export', 'list', input], 1, /\[PROFKIT_E_DM_NOT_SQLITE\]\n$/],
    ];
    for (const [args, code, line] of cases) {
      const r = cli(...args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(code);
      expect(r.stderr).toMatch(line);
      expect(r.stdout).toBe('');
    }
    // The failed append left nothing behind: no database, no lock, no temporary copy.
    expect(readdirSync(tmp).filter((f) => f.startsWith('u.sqlite') || f.startsWith('.profkit-tmp-'))).toEqual([]);
    const list = cli('dm-export', 'list', db, '--json');
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({ schema: 'profkit.dm-export.list/1', database: db, profiles: listProfiles(db) });
  });
});
