/**
 * Decompression bombs and endless input (issue 15, item 2): the reader's limits fire while it
 * streams, after consuming about what the limit allows, and memory follows the distinct stacks.
 * The whole-process test measures the CLI's peak RSS on a gzip bomb with the default limits.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as zlib from 'node:zlib';
import { constants as zc, deflateRawSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { isProfkitError, type ProfkitError } from '@profkit/core/node';
import { readRprofBytes, readRprofChunks } from '../src/index.js';
import { fixturesDir } from './helpers.js';

const enc = (s: string) => new TextEncoder().encode(s);

/** An endless Rprof stream: `head`, then `line` forever, in chunks of `per` lines; counts the lines taken. */
function endless(head: string, line: string, per = 1000) {
  const taken = { lines: 0 };
  async function* gen(): AsyncGenerator<Uint8Array> {
    yield enc(head);
    const chunk = enc(line.repeat(per));
    for (;;) {
      taken.lines += per;
      yield chunk;
    }
  }
  return { taken, source: gen() };
}

async function limitOf(p: Promise<unknown>): Promise<ProfkitError> {
  try {
    await p;
  } catch (e) {
    if (isProfkitError(e)) return e;
    throw e;
  }
  throw new Error('expected a limit error');
}

describe('Rprof limits fire while streaming', () => {
  it('maxSamples stops an endless stream of samples after about maxSamples lines', async () => {
    const { taken, source } = endless('sample.interval=20000\n', '"f" "g" \n');
    const e = await limitOf(readRprofChunks(source, { limits: { maxSamples: 50_000 } }));
    expect(e.code).toBe('PROFKIT_E_LIMIT');
    expect(e.detail.option).toBe('maxSamples');
    expect(taken.lines).toBe(51_000);
  });

  it('maxTotalFrames bounds the frames of all samples together (the profile location column)', async () => {
    const { taken, source } = endless('sample.interval=20000\n', '"a" "b" "c" "d" \n');
    const e = await limitOf(readRprofChunks(source, { limits: { maxTotalFrames: 40_000 } }));
    expect(e.detail.option).toBe('maxTotalFrames');
    expect(e.detail.line).toBe(10_002); // sample 10,001 (line 10,002) brings 40,004 frames
    expect(taken.lines).toBe(11_000);
  });

  it('maxRunLines stops an endless stream of header or #File lines, which make no samples', async () => {
    for (const line of ['sample.interval=20000\n', '#File 1: a.R\n']) {
      const { taken, source } = endless('line profiling: sample.interval=20000\n', line);
      const e = await limitOf(readRprofChunks(source, { limits: { maxRunLines: 5000 } }));
      expect(e.detail.option).toBe('maxRunLines');
      expect(taken.lines).toBe(5000);
    }
  });

  it('a line of many frames stops at frame maxFramesPerStack + 1, not after splitting the whole line', () => {
    const text = 'sample.interval=20000\n' + '"f" '.repeat(50_000) + '\n';
    let e: ProfkitError | undefined;
    try {
      readRprofBytes(enc(text), { limits: { maxFramesPerStack: 1000 } });
    } catch (err) {
      e = err as ProfkitError;
    }
    expect(e?.detail.option).toBe('maxFramesPerStack');
    expect(e?.detail.column).toBe(1000 * 4 + 1); // the quote of frame 1001
  });

  it('maxLineLength defaults to 16 Mi characters', () => {
    const text = 'sample.interval=20000\n"' + 'a'.repeat(16 * 1024 * 1024) + '" \n';
    let e: ProfkitError | undefined;
    try {
      readRprofBytes(enc(text), { limits: { maxStringLength: 64 * 1024 * 1024 } });
    } catch (err) {
      e = err as ProfkitError;
    }
    expect(e?.detail.option).toBe('maxLineLength');
  });

  it('repeated stacks are interned: many samples of one stack keep exact per-sample columns', async () => {
    const text = 'memory profiling: GC profiling: sample.interval=1000\n' + ':10:5:100:0:"f" "g" \n:12:5:90:1:"<GC>" "f" "g" \n'.repeat(3) + 'sample.interval=2000\n"f" "g" \n';
    const { profile: p } = await readRprofChunks([enc(text)]);
    const ext = p['.extensions']!.rprof!.samples!;
    expect([...p.samples.locations.offsets]).toEqual([0, 2, 4, 6, 8, 10, 12, 14]);
    expect([...p.samples['.values'][0]!]).toEqual([1n, 1n, 1n, 1n, 1n, 1n, 1n]);
    expect([...p.samples['.values'][1]!]).toEqual([1000000n, 1000000n, 1000000n, 1000000n, 1000000n, 1000000n, 2000000n]);
    // summaryRprof: 8·Δsmall + 8·Δbig + Δnodes, clamped at 0, per run.
    expect([...p.samples['.values'][2]!]).toEqual([0n, 16n, 10n, 16n, 10n, 16n, 0n]);
    expect([...(ext.gc as Uint8Array)]).toEqual([0, 1, 0, 1, 0, 1, 0]);
    expect([...(ext.run as Uint32Array)]).toEqual([0, 0, 0, 0, 0, 0, 1]);
    expect([...(ext.dups as Float64Array)]).toEqual([0, 1, 0, 1, 0, 1, 0]);
  });
});

/** A gzip member of `header` then `line` × `k` × `reps` (one deflate block, repeated; valid CRC). */
function gzipBomb(header: string, line: string, k: number, reps: number): Uint8Array {
  const crc32 = (zlib as unknown as { crc32?: (d: Uint8Array, v?: number) => number }).crc32;
  const block = Buffer.from(line.repeat(k));
  const head = deflateRawSync(Buffer.from(header), { finishFlush: zc.Z_FULL_FLUSH });
  const body = deflateRawSync(block, { finishFlush: zc.Z_FULL_FLUSH });
  const parts: Uint8Array[] = [Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff), head];
  for (let i = 0; i < reps; i++) parts.push(body);
  const trailer = Buffer.alloc(8);
  if (crc32) {
    let c = crc32(Buffer.from(header));
    for (let i = 0; i < reps; i++) c = crc32(block, c);
    trailer.writeUInt32LE(c >>> 0, 0);
  }
  trailer.writeUInt32LE((header.length + block.length * reps) % 2 ** 32, 4);
  parts.push(deflateRawSync(Buffer.alloc(0)), trailer);
  return Buffer.concat(parts);
}

const repo = resolve(fixturesDir, '../../../..');
const bin = join(repo, 'packages/cli/dist/bin.js');

describe.skipIf(!existsSync(bin))('the CLI on a gzip bomb, default limits', () => {
  const dir = mkdtempSync(join(tmpdir(), 'profkit-rprof-bomb-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // Reports the process's peak RSS (kB) on exit, whatever ends it.
  const rssProbe = `data:text/javascript,process.on('exit',()=>process.stderr.write('\\nPEAK_RSS_KB='+process.resourceUsage().maxRSS+'\\n'))`;

  function run(args: string[], input?: Uint8Array) {
    const r = spawnSync(process.execPath, ['--import', rssProbe, bin, ...args], { cwd: repo, encoding: 'utf8', input, maxBuffer: 1 << 24 });
    const rss = Number(/PEAK_RSS_KB=(\d+)/.exec(r.stderr)?.[1] ?? NaN) * 1024;
    return { code: r.status, stderr: r.stderr, rss };
  }

  // 3 MB of gzip inflating to 1.5 GB: 167M samples of a 2-frame stack. Before, it reached
  // maxSamples (then 100M) at 3.5-4 GB of RSS; now maxSamples (5M) stops it, as soon as it passes.
  const bomb = gzipBomb('sample.interval=20000\n', '"f" "g" \n', 116_508, 1430);

  it('info on the file stops with a typed limit error, under 1 GiB', () => {
    const file = join(dir, 'bomb.out.gz');
    writeFileSync(file, bomb);
    const r = run(['info', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/limits\.maxSamples\) \[PROFKIT_E_LIMIT\]/);
    expect(r.rss).toBeLessThan(1024 ** 3);
  }, 120_000);

  it('info on stdin streams it the same way', () => {
    const r = run(['info', '-'], bomb);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/limits\.maxSamples\) \[PROFKIT_E_LIMIT\]/);
    expect(r.rss).toBeLessThan(1024 ** 3);
  }, 120_000);
});

describe('readRprofBytes of a gzip', () => {
  it('honours maxDecompressedBytes from its limits', () => {
    const gz = gzipBomb('sample.interval=20000\n', '"f" \n', 10_000, 100); // 5 MB inflated
    let e: ProfkitError | undefined;
    try {
      readRprofBytes(gz, { limits: { maxDecompressedBytes: 1 << 20 } });
    } catch (err) {
      e = err as ProfkitError;
    }
    expect(e?.detail.option).toBe('maxDecompressedBytes');
  });
});
