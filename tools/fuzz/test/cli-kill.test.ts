import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRegistry, sampleCount, type Profile } from '@profkit/core/node';
import pprofAdapter from '@profkit/pprof';
import rprofAdapter from '@profkit/rprof';
import { repoRoot } from '../src/targets.js';

// `profkit convert` killed with SIGKILL at several moments of a conversion whose output replaces
// an existing file: afterwards the output is the old profile or the complete new one (read and
// compared by meaning), and the only possible leftover is the killed writer's temporary file.

const bin = join(repoRoot, 'packages/cli/bin/profkit.js');
const haveCli = existsSync(join(repoRoot, 'packages/cli/dist/cli.js')) && existsSync(bin);
if (!haveCli) console.warn(`CLI kill test skipped: ${bin} (or its dist) is missing; build packages/cli`);

const registry = createRegistry([pprofAdapter, rprofAdapter]);
const tmp = mkdtempSync(join(tmpdir(), 'profkit-cli-kill-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A folded input big enough that converting it takes a while (many distinct stacks). */
function bigFolded(lines: number): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(`main;mod${i % 97};fn${i % 1009};leaf${i} ${1 + (i % 13)}`);
  return out.join('\n') + '\n';
}

function total(p: Profile): bigint {
  let t = 0n;
  for (const v of p.samples['.values'][0] ?? []) t += BigInt(v);
  return t;
}

function convert(input: string, output: string, killAfterMs: number | undefined): Promise<{ killed: boolean; pid: number; code: number | null; stderr: string }> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, [bin, 'convert', input, output, '--quiet'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let killed = false;
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => {
      killed = child.exitCode === null;
      child.kill('SIGKILL');
    }, killAfterMs);
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', fail);
    child.on('exit', (code) => {
      clearTimeout(timer);
      clearTimeout(guard);
      ok({ killed, pid: child.pid!, code, stderr });
    });
  });
}

describe.skipIf(!haveCli)('profkit convert killed mid-write', () => {
  const input = join(tmp, 'big.folded');
  writeFileSync(input, bigFolded(120_000));
  const expected = registry.read(input, { format: 'folded' }).then((r) => ({ samples: sampleCount(r.profile), total: total(r.profile) }));
  const oldBytes = (async () => {
    const small = await registry.read(new TextEncoder().encode('old;profile 7\n'), { format: 'folded' });
    return (await registry.serialize(small.profile, { format: 'pprof' })).data as Uint8Array;
  })();

  it('completes when not killed, and never leaves temporary files', async () => {
    const out = join(tmp, 'done', 'out.pb.gz');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(tmp, 'done'));
    writeFileSync(out, await oldBytes);
    const t0 = performance.now();
    const r = await convert(input, out, undefined);
    fullRunMs = performance.now() - t0;
    expect(r.code, r.stderr).toBe(0);
    const p = (await registry.read(out)).profile;
    expect({ samples: sampleCount(p), total: total(p) }).toEqual(await expected);
    expect(readdirSync(join(tmp, 'done'))).toEqual(['out.pb.gz']);
  });

  // Kill points as fractions of the measured uninterrupted run: the late ones land in the
  // write (gzip, temporary file, fsync, rename) or just after it.
  let fullRunMs = 1000;
  for (const f of [0.05, 0.4, 0.7, 0.85, 0.92, 0.97, 1.0]) {
    it(`killed at ${f * 100}% of a full run: the output is the old profile or the complete new one`, async () => {
      const ms = Math.round(f * fullRunMs);
      const dir = join(tmp, `k${f}`);
      const { mkdirSync } = await import('node:fs');
      mkdirSync(dir);
      const out = join(dir, 'out.pb.gz');
      const old = await oldBytes;
      writeFileSync(out, old);
      const r = await convert(input, out, ms);
      const now = readFileSync(out);
      if (Buffer.compare(now, Buffer.from(old)) !== 0) {
        const p = (await registry.read(out)).profile;
        expect({ samples: sampleCount(p), total: total(p) }).toEqual(await expected);
      } else {
        expect(r.killed).toBe(true);
      }
      const leftovers = readdirSync(dir).filter((f) => f !== 'out.pb.gz');
      expect(leftovers.length).toBeLessThanOrEqual(r.killed ? 1 : 0);
      for (const f of leftovers) expect(f).toMatch(new RegExp(`^\\.profkit-tmp-out\\.pb\\.gz-${r.pid}-`));
    });
  }
});
