/** End to end through the profkit CLI (spawned), when it and the pprof adapter are built. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { readFoldedChunks, readRprofBytes, writeFolded } from '../src/index.js';
import { fixturesDir, haveShared, sharedFixture, stacks, values } from './helpers.js';

const repo = resolve(fixturesDir, '../../../..');
const bin = join(repo, 'packages/cli/dist/bin.js');
const pprofBuilt = existsSync(join(repo, 'packages/pprof/dist/index.js'));
const ready = existsSync(bin) && pprofBuilt && haveShared('r-profile/inst/samples/rprof/1.out');
if (!existsSync(bin) || !pprofBuilt) console.warn(`skipping CLI tests: ${bin} or @profkit/pprof is not built`);

const dir = mkdtempSync(join(tmpdir(), 'profkit-rprof-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function profkit(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: repo, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.skipIf(!ready)('profkit convert', () => {
  it('Rprof (gzip) → pprof → Rprof and folded keeps stacks and values', async () => {
    const src = readFileSync(sharedFixture('r-profile/inst/samples/rprof/1.out'));
    const gz = join(dir, '1.out.gz');
    writeFileSync(gz, gzipSync(src));
    const pb = join(dir, '1.pb.gz');
    const back = join(dir, 'back.out');
    const folded = join(dir, '1.folded');
    expect(profkit('convert', gz, pb, '--from', 'rprof').code).toBe(0);
    const r2 = profkit('convert', pb, back);
    expect(r2.code).toBe(0);
    expect(profkit('convert', gz, folded, '--from', 'rprof').code).toBe(0);
    const original = readRprofBytes(src).profile;
    const again = readRprofBytes(readFileSync(back)).profile;
    expect(stacks(again)).toEqual(stacks(original));
    expect(values(again)).toEqual(values(original));
    const f = readFileSync(folded, 'utf8');
    expect(f).toBe(writeFolded(original).text);
    const fp = (await readFoldedChunks([readFileSync(folded)])).profile;
    expect(fp.samples.value.reduce((a, b) => a + b, 0n)).toBe(22n);
  });

  it('reports a parse error with file and line', () => {
    const bad = join(dir, 'bad.out');
    writeFileSync(bad, 'sample.interval=20000\n"f" garbage\n');
    const r = profkit('convert', bad, join(dir, 'x.pb.gz'), '--from', 'rprof');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('bad.out');
    expect(r.stderr).toMatch(/line 2/);
  });
});
