/**
 * Issue 17 (convert ahead of Go): a read told of the pprof write that follows (`plannedWrite`, as
 * `profkit convert` plans it) deflates the bytes it read on the thread pool while it decodes them,
 * and the write takes the blocks its encoding repeats byte for byte. The output must be exactly
 * the one written without it, for canonical input, for input that encodes to other bytes, and for
 * a profile changed between the read and the write.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { DeflateAhead, PlannedWrite, Profile } from '@profkit/core';
import { createRegistry } from '@profkit/core/node';
import adapter from '../src/index.js';
import { DEFLATE_AHEAD_MIN_BYTES, encodeProfile } from '../src/codec.js';
import { bigProfile, varint } from './helpers.js';

/** Every deflating started ahead, to see what the writes took from them. */
const started: DeflateAhead[] = [];
/** The gzip implementation core says it is (the browser build's 'pako' for one test). */
const implementation = vi.hoisted(() => ({ name: undefined as string | undefined }));
vi.mock('@profkit/core', async (importOriginal) => {
  const core = await importOriginal<typeof import('@profkit/core')>();
  return {
    ...core,
    get GZIP_IMPLEMENTATION() {
      return implementation.name ?? core.GZIP_IMPLEMENTATION;
    },
    startDeflateAhead: (expected: Uint8Array, level: number) => {
      const ahead = core.startDeflateAhead(expected, level);
      if (ahead) started.push(ahead);
      return ahead;
    },
  };
});

const dir = mkdtempSync(join(tmpdir(), 'profkit-deflate-ahead-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PPROF_WRITE: PlannedWrite = { adapter: 'pprof', format: 'pprof', fileName: 'out.pb.gz' };

/** Reads `raw` (gzipped into a file) with `plannedWrite`, lets `change` alter the profile, writes it (with the planned options): the output and the deflating started. */
async function convert(raw: Uint8Array, plannedWrite: PlannedWrite | undefined, change: (p: Profile) => Profile = (p) => p): Promise<{ written: Buffer; ahead?: DeflateAhead; profile: Profile }> {
  const input = join(dir, 'in.pb.gz');
  writeFileSync(input, gzipSync(raw));
  const registry = createRegistry([adapter]);
  started.length = 0;
  const r = await registry.read(input, { format: 'pprof', ...(plannedWrite ? { plannedWrite } : {}) });
  const profile = change(r.profile);
  const output = join(dir, 'out.pb.gz');
  await registry.write(profile, output, { inputs: [input], validate: false, options: plannedWrite?.options });
  return { written: readFileSync(output), ahead: started[0], profile };
}

describe('a read told of the pprof write that follows', () => {
  // Canonical bytes (profkit's encoder writes what Go's does): 1.8 MB, 7 blocks of 256 KiB
  // (core's deflateBlockBytes: at least 4 blocks, each a power of two from 128 to 512 KiB).
  const canonical = encodeProfile(bigProfile(30_000));
  const BLOCKS = Math.ceil(canonical.length / (256 << 10));

  it('deflates the canonical input ahead: the write takes every block, and writes what it writes without', async () => {
    const ahead = await convert(canonical, PPROF_WRITE);
    const plain = await convert(canonical, undefined);
    expect(plain.ahead).toBeUndefined();
    expect(ahead.ahead?.blocksTaken).toBe(BLOCKS);
    expect(ahead.written.equals(plain.written)).toBe(true);
    expect(gunzipSync(ahead.written).equals(canonical)).toBe(true);
  });

  it('deflates nothing ahead for an input under DEFLATE_AHEAD_MIN_BYTES (a thread costs more than its deflating saves), the same output', async () => {
    const small = encodeProfile(bigProfile(1_000));
    expect(small.length).toBeLessThan(DEFLATE_AHEAD_MIN_BYTES);
    expect(canonical.length).toBeGreaterThanOrEqual(DEFLATE_AHEAD_MIN_BYTES);
    const ahead = await convert(small, PPROF_WRITE);
    expect(ahead.ahead).toBeUndefined();
    expect(gunzipSync(ahead.written).equals(small)).toBe(true);
  });

  it('input that encodes to other bytes (an unknown field first): nothing taken, the canonical output', async () => {
    const unknownFirst = new Uint8Array([...varint(100 << 3), ...varint(1), ...canonical]); // field 100, varint 1
    const ahead = await convert(unknownFirst, PPROF_WRITE);
    expect(ahead.ahead?.blocksTaken).toBe(0);
    expect(gunzipSync(ahead.written).equals(canonical)).toBe(true);
    expect(ahead.written.equals((await convert(unknownFirst, undefined)).written)).toBe(true);
  });

  it('a profile changed in place between the read and the write (a value of sample 20,000): the blocks before the change are taken, the output is its own encoding', async () => {
    const change = (p: Profile) => {
      const values = p.samples['.values'][0]!;
      values[20_000] = values[20_000]! === 1n ? 2n : 1n; // same varint size: the same length
      return p;
    };
    const ahead = await convert(canonical, PPROF_WRITE, change);
    const taken = ahead.ahead!.blocksTaken;
    expect(taken).toBeGreaterThan(0);
    expect(taken).toBeLessThan(BLOCKS);
    expect(gunzipSync(ahead.written).equals(encodeProfile(ahead.profile))).toBe(true);
    expect(ahead.written.equals((await convert(canonical, undefined, change)).written)).toBe(true);
  });

  it('a profile derived from the one read (a comment added, as convert --add-comment does): its write ends the deflating, and writes its own encoding', async () => {
    const withComment = (p: Profile): Profile => ({ ...p, '.profile': { ...p['.profile'], comments: [...p['.profile'].comments, 'added'] } });
    const ahead = await convert(canonical, PPROF_WRITE, withComment);
    expect(ahead.ahead?.blocksTaken).toBe(0);
    expect(gunzipSync(ahead.written).equals(encodeProfile(ahead.profile))).toBe(true);
  });

  it('deflates nothing ahead for a write that does not gzip at the same level, or of another format', async () => {
    for (const plannedWrite of [
      { ...PPROF_WRITE, fileName: 'out.pb' },
      { ...PPROF_WRITE, options: { compress: false } },
      { ...PPROF_WRITE, options: { level: 'x' } },
      { ...PPROF_WRITE, adapter: 'speedscope', format: 'speedscope' },
    ]) {
      started.length = 0;
      await createRegistry([adapter]).read(join(dir, 'in.pb.gz'), { format: 'pprof', plannedWrite });
      expect(started).toEqual([]);
    }
    // A level of its own: deflated ahead at that level, and taken by the write at it.
    const level9 = await convert(canonical, { ...PPROF_WRITE, options: { level: 9 } });
    expect(level9.ahead?.level).toBe(9);
    expect(level9.ahead?.blocksTaken).toBe(BLOCKS);
    expect(level9.written[8]).toBe(2); // XFL of level 9
    expect(gunzipSync(level9.written).equals(canonical)).toBe(true);
  });

  it('without node:zlib (the browser build, where SharedArrayBuffer may not exist): nothing deflated ahead, the read as without the plan', async () => {
    implementation.name = 'pako';
    vi.stubGlobal('SharedArrayBuffer', undefined);
    try {
      const planned = await convert(canonical, PPROF_WRITE);
      expect(planned.ahead).toBeUndefined();
      expect(gunzipSync(planned.written).equals(canonical)).toBe(true);
    } finally {
      vi.unstubAllGlobals();
      implementation.name = undefined;
    }
  });
});
