/** End to end through the profkit CLI (spawned), when the CLI has been built. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeProfile, parsePprof } from '../src/codec.js';
import { fixture, hasFixtures, meaning, repoRoot } from './helpers.js';

const bin = join(repoRoot, 'packages/cli/dist/bin.js');
const haveCli = existsSync(bin);
if (!haveCli) console.warn(`skipping CLI tests: ${bin} is absent (build @profkit/cli first)`);

describe.skipIf(!haveCli || !hasFixtures)('profkit convert (CLI, spawned)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'profkit-pprof-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: repoRoot, encoding: 'utf8' });

  it('converts a Go runtime profile to raw .pb and back to .pb.gz, keeping the bytes canonical', () => {
    const input = fixture('pprof/internal/report/testdata/sample.cpu');
    const raw = join(dir, 'sample.pb');
    const gz = join(dir, 'sample.pb.gz');
    const a = cli('convert', input, raw);
    expect(a.status, a.stderr).toBe(0);
    const b = cli('convert', raw, gz);
    expect(b.status, b.stderr).toBe(0);
    const rawBytes = readFileSync(raw);
    expect(rawBytes[0]).toBe(0x0a); // not gzip: raw by the .pb name
    expect(gunzipSync(readFileSync(gz)).equals(rawBytes)).toBe(true);
    const original = parsePprof(new Uint8Array(readFileSync(input))).profile;
    expect(Buffer.from(encodeProfile(original)).equals(rawBytes)).toBe(true);
    expect(meaning(parsePprof(new Uint8Array(rawBytes)).profile)).toEqual(meaning(original));
  });

  it('reports a legacy heap profile as not pprof when forced (--from pprof), with exit code and message', () => {
    const r = cli('convert', fixture('pprof/profile/testdata/cppbench.heap'), join(dir, 'x.pb.gz'), '--from', 'pprof');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/type mismatch|unknown wire type/);
  });
});
