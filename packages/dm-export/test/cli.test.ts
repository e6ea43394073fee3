/** End to end through the real CLI (spawned), with the workspace's profkit.config.json. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRegistry, readInput, type Adapter } from '@profkit/core';
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
});
