/**
 * `convert --read-option/--write-option`: format options reach the adapter's reader and writer
 * (checked on real adapters of the workspace: rprof's aggregate option, pprof's compress option).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProfileBuilder } from '@profkit/core/node';
import { parseFormatOptions } from '../src/commands/shared.js';
import { loadRegistry } from '../src/config.js';
import { profkit, repoRoot } from './views-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-convert-options-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const example = join(repoRoot, 'examples/r/fib.Rprof.out');

describe('parseFormatOptions', () => {
  it('parses booleans, integers and strings, and rejects a pair without =', () => {
    expect(parseFormatOptions(['a=true', 'b=false', 'n=12', 's=x=y', 'big=12345678901234567'], 'write-option')).toEqual({
      a: true,
      b: false,
      n: 12,
      s: 'x=y',
      big: '12345678901234567',
    });
    expect(parseFormatOptions(undefined, 'read-option')).toEqual({});
    expect(() => parseFormatOptions(['novalue'], 'read-option')).toThrow(/KEY=VALUE/);
  });
});

describe('convert passes format options', () => {
  it('--write-option compress=false writes raw protobuf even for a .pb.gz name; the default gzips', async () => {
    const raw = join(tmp, 'raw.pb.gz');
    const gz = join(tmp, 'default.pb.gz');
    expect((await profkit(['convert', example, raw, '--write-option', 'compress=false', '--quiet'])).code).toBe(0);
    expect((await profkit(['convert', example, gz, '--quiet'])).code).toBe(0);
    const rawBytes = readFileSync(raw);
    const gzBytes = readFileSync(gz);
    expect([gzBytes[0], gzBytes[1]]).toEqual([0x1f, 0x8b]);
    expect([rawBytes[0], rawBytes[1]]).not.toEqual([0x1f, 0x8b]);
    // Both read back to the same totals.
    const a = JSON.parse((await profkit(['info', raw, '--json'])).stdout);
    const b = JSON.parse((await profkit(['info', gz, '--json'])).stdout);
    expect(a.sampleTypes).toEqual(b.sampleTypes);
  });

  it('--read-option aggregate=true merges identical Rprof stacks (fewer samples, same totals)', async () => {
    const plain = JSON.parse((await profkit(['info', example, '--json'])).stdout);
    const out = join(tmp, 'agg.pb.gz');
    expect((await profkit(['convert', example, out, '--read-option', 'aggregate=true', '--quiet'])).code).toBe(0);
    const agg = JSON.parse((await profkit(['info', out, '--json'])).stdout);
    expect(agg.samples).toBeLessThan(plain.samples);
    expect(agg.sampleTypes.map((t: { total: string }) => t.total)).toEqual(plain.sampleTypes.map((t: { total: string }) => t.total));
  });

  it('--read-option reaches the reader of info, validate and the view commands too', async () => {
    const out = join(tmp, 'fib.pb.gz');
    expect((await profkit(['convert', example, out, '--quiet'])).code).toBe(0);
    // pprof's reader refuses a stream option that is not a boolean: proof that the option got there.
    for (const cmd of [['info'], ['validate'], ['top'], ['tree'], ['folded'], ['flame', '-o', join(tmp, 'f.html')]]) {
      const bad = await profkit([cmd[0]!, out, ...cmd.slice(1), '--read-option', 'stream=sometimes']);
      expect(bad.code, cmd[0]).toBe(2);
      expect(bad.stderr, cmd[0]).toContain('read option stream must be true or false');
      const good = await profkit([cmd[0]!, out, ...cmd.slice(1), '--read-option', 'stream=false']);
      expect(good.code, `${cmd[0]}: ${good.stderr}`).toBe(0);
    }
    const whole = JSON.parse((await profkit(['info', out, '--json', '--read-option', 'stream=false'])).stdout);
    const streamed = JSON.parse((await profkit(['info', out, '--json'])).stdout);
    expect(whole.sampleTypes).toEqual(streamed.sampleTypes);
    expect(whole.samples).toBe(streamed.samples);
  });

  it('a malformed pair is a one-line usage error (exit 2)', async () => {
    const r = await profkit(['convert', example, join(tmp, 'x.pb.gz'), '--write-option', 'compress']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('KEY=VALUE');
  });
});

describe('--version and output names', () => {
  it('--version answers on every command, before argument checks and before an adapter command runs', async () => {
    for (const args of [['info', '--version'], ['convert', '--version'], ['serve', 'nonexistent-file', '--version'], ['fuchsia-sampler', 'serve', '--version']]) {
      const r = await profkit(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^profkit \d+\.\d+\.\d+ \(@profkit\/core /);
    }
  });

  it('flame refuses an output name that is neither .html nor .svg instead of writing HTML into it', async () => {
    const out = join(tmp, 'graph.png');
    const r = await profkit(['flame', example, '-o', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('.html or .svg');
    expect(() => readFileSync(out)).toThrow();
  });
});

describe('--limit', () => {
  it('parses sizes and names, and rejects unknown limits and malformed values', async () => {
    const { parseLimits } = await import('../src/cli.js');
    expect(parseLimits(['maxSamples=1e3', 'maxDecompressedBytes=2GiB', 'maxStringLength=512k'])).toEqual({
      maxSamples: 1000,
      maxDecompressedBytes: 2 * 1024 ** 3,
      maxStringLength: 512_000,
    });
    expect(() => parseLimits(['maxWidgets=3'])).toThrow(/unknown limit/);
    expect(() => parseLimits(['maxSamples=lots'])).toThrow(/NAME=N/);
  });

  it('a lowered limit reaches the reader and its error names the option; raising it reads the file', async () => {
    const low = await profkit(['info', example, '--limit', 'maxSamples=10']);
    expect(low.code).toBe(1);
    expect(low.stderr).toContain('maxSamples');
    expect(low.stderr).toContain('PROFKIT_E_LIMIT');
    expect(low.stderr.trim().split('\n')).toHaveLength(1);
    const ok = await profkit(['info', example, '--limit', 'maxSamples=100000', '--json']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).samples).toBeGreaterThan(10);
  });
});

describe('convert validates the profile once', () => {
  it('a validation warning of the input is reported once (the read validated it; the write does not again)', async () => {
    // A mapping that starts after its limit: a warning of the validator, not an error.
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const mappingId = b.internMapping({ memoryStart: 0x9000n, memoryLimit: 0x1000n, filename: '/bin/app' });
    b.addSample([b.addLocation({ address: 0x9100n, mappingId, functionId: b.internFunction({ name: 'main' }), line: 1 })], [1n]);
    const { registry } = await loadRegistry({ cwd: repoRoot, adapters: ['@profkit/pprof'], discover: false });
    const input = join(tmp, 'bad-mapping.pb.gz');
    await registry.write(b.build(), input, { validate: false });
    const r = await profkit(['convert', input, join(tmp, 'bad-mapping-out.pb.gz'), '--json']);
    expect(r.code).toBe(0);
    const codes = (JSON.parse(r.stdout).warnings as { code: string }[]).map((w) => w.code);
    expect(codes.filter((c) => c === 'PROFKIT_MAPPING_RANGE')).toHaveLength(1);
  });
});
