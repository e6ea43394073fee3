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
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { DeflateAhead, PlannedWrite, Profile } from '@profkit/core';
import { ErrorCodes, createRegistry, isProfkitError, type ReadInput } from '@profkit/core/node';
import adapter from '../src/index.js';
import { DEFLATE_AHEAD_MIN_BYTES, decodeProfile, encodeProfile, readStreamed } from '../src/codec.js';
import { ProfileDecoder } from '../src/decode.js';
import { bigProfile, varint } from './helpers.js';

/** Every deflating started ahead, to see what the writes took from them. */
const started: DeflateAhead[] = [];
/** The gzip implementation core says it is (the browser build's 'pako' for one test). */
const implementation = vi.hoisted(() => ({ name: undefined as string | undefined }));
/** Calls of startDeflateAheadOfArriving, and whether it acts as where no worker thread can start. */
const arriving = vi.hoisted(() => ({ calls: 0, noWorkers: false }));
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
    startDeflateAheadOfArriving: (buffer: Uint8Array, level: number) => {
      arriving.calls++;
      if (arriving.noWorkers) return undefined;
      const ahead = core.startDeflateAheadOfArriving(buffer, level);
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

/** Blocks this thread until `done()` (a worker thread works meanwhile), at most 30 s. */
function waitFor(done: () => boolean): boolean {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; !done() && waited < 30_000; waited += 5) Atomics.wait(pause, 0, 0, 5);
  return done();
}

const claimsOf = (ahead: DeflateAhead | undefined) => (ahead as unknown as { claims: Int32Array }).claims;
const cancelledFlag = (ahead: DeflateAhead | undefined) => Atomics.load(claimsOf(ahead), claimsOf(ahead).length - 1);

describe('the read decodes and deflates while the inflated bytes arrive (readStreamed)', () => {
  // 4.3 MB: past the 2 MiB from which the block size (512 KiB) is known before the end.
  const raw = encodeProfile(bigProfile(70_000));
  const CHUNK = 256 << 10;

  /** A read input yielding `raw` in 256 KiB chunks (as core's inflate does); `beforeChunk(i)` runs before chunk `i` is yielded. */
  function chunkedInput(beforeChunk: (i: number) => void = () => undefined): ReadInput {
    return {
      fileName: 'in.pb',
      gzipped: true,
      bytes: async () => raw,
      async *chunks() {
        for (let i = 0; i * CHUNK < raw.length; i++) {
          beforeChunk(i);
          yield raw.subarray(i * CHUNK, Math.min(raw.length, (i + 1) * CHUNK));
        }
      },
    };
  }
  const lastChunk = Math.ceil(raw.length / CHUNK) - 1;
  /** `r` is what decodeProfile makes of `raw`: the same warnings, and a profile encoding to the same (canonical) bytes. */
  const expectDecodedAsRaw = (r: { profile: Profile; warnings: unknown }) => {
    const want = decodeProfile(raw, { file: 'in.pb' });
    expect(r.warnings).toEqual(want.warnings);
    expect(Buffer.from(encodeProfile(r.profile)).equals(Buffer.from(encodeProfile(want.profile)))).toBe(true);
  };

  afterEach(() => vi.restoreAllMocks());

  it('runs pass 1 on the chunks before the last one arrives, and decodes what decodeProfile decodes', async () => {
    const index = vi.spyOn(ProfileDecoder.prototype, 'index');
    let indexedBeforeLast = 0;
    const r = await readStreamed(chunkedInput((i) => i === lastChunk && (indexedBeforeLast = index.mock.calls.length)), { format: 'pprof' });
    expect(indexedBeforeLast).toBe(lastChunk);
    expectDecodedAsRaw(r);
  });

  it('for a planned pprof write, a worker deflates the first blocks before the last chunk arrives; the write takes them all', async () => {
    started.length = 0;
    let claimedBeforeLast = false;
    const r = await readStreamed(
      chunkedInput((i) => {
        // Block 0 is whole with bytes after it from chunk 2 on, and the block size is known from 2 MiB (chunk 8).
        if (i === lastChunk) claimedBeforeLast = waitFor(() => started.length === 1 && Atomics.load(claimsOf(started[0]), 0) !== 0);
      }),
      { format: 'pprof', plannedWrite: PPROF_WRITE },
    );
    expect(claimedBeforeLast).toBe(true);
    const output = join(dir, 'arrived.pb.gz');
    const registry = createRegistry([adapter]);
    await registry.write(r.profile, output, { validate: false });
    expect(started[0]!.blocksTaken).toBe(Math.ceil(raw.length / (512 << 10)));
    await registry.write(decodeProfile(raw).profile, join(dir, 'plain.pb.gz'), { validate: false });
    expect(readFileSync(output).equals(readFileSync(join(dir, 'plain.pb.gz')))).toBe(true);
  });

  it('a limit hit mid-stream (maxDecompressedBytes) after the deflating started: the limit error, the worker stopped', async () => {
    started.length = 0;
    const path = join(dir, 'limit.pb.gz');
    writeFileSync(path, gzipSync(raw));
    const read = createRegistry([adapter]).read(path, { format: 'pprof', plannedWrite: PPROF_WRITE, limits: { maxDecompressedBytes: 3 << 20 } });
    const error = await read.then(() => undefined, (e: unknown) => e);
    expect(isProfkitError(error) && [error.code, error.detail.option]).toEqual([ErrorCodes.LIMIT, 'maxDecompressedBytes']);
    expect(started).toHaveLength(1);
    expect(cancelledFlag(started[0])).toBe(1);
  });

  it('an abort mid-stream: the abort reason, the worker stopped; a corrupt profile: decodeProfile\'s error, the worker stopped', async () => {
    started.length = 0;
    const controller = new AbortController();
    const aborted = readStreamed(chunkedInput((i) => i === 12 && controller.abort(new Error('stop'))), { format: 'pprof', plannedWrite: PPROF_WRITE, signal: controller.signal });
    await expect(aborted).rejects.toThrow('stop');
    expect(started).toHaveLength(1);
    expect(cancelledFlag(started[0])).toBe(1);

    started.length = 0;
    const corrupt = raw.slice();
    corrupt[raw.length - 3] = 0xff; // inside the last fields: pass 1 fails only on the last chunk or in finish
    const input: ReadInput = { ...chunkedInput(), async *chunks() {
      for (let at = 0; at < corrupt.length; at += CHUNK) yield corrupt.subarray(at, Math.min(corrupt.length, at + CHUNK));
    } };
    const want = (() => { try { decodeProfile(corrupt, { file: 'in.pb' }); } catch (e) { return e; } })();
    expect(isProfkitError(want)).toBe(true);
    await expect(readStreamed(input, { format: 'pprof', plannedWrite: PPROF_WRITE })).rejects.toEqual(want);
    expect(cancelledFlag(started[0])).toBe(1);
  });

  it('an input stored past the one-buffer bound (storedBytes, a big gzip file): streamed from the start, nothing indexed or deflated in vain', async () => {
    started.length = 0;
    const index = vi.spyOn(ProfileDecoder.prototype, 'index');
    const r = await readStreamed({ ...chunkedInput(), storedBytes: (3 << 20) + 1 }, { format: 'pprof', plannedWrite: PPROF_WRITE }, 3 << 20);
    expectDecodedAsRaw(r);
    expect(index).not.toHaveBeenCalled();
    expect(started).toEqual([]);
    // Stored within the bound: collected and indexed as it arrives.
    await readStreamed({ ...chunkedInput(), storedBytes: raw.length }, { format: 'pprof' });
    expect(index).toHaveBeenCalled();
  });

  it('where no worker thread can start: tried once (not at every chunk), the read decodes as without the plan', async () => {
    arriving.calls = 0;
    arriving.noWorkers = true;
    try {
      const r = await readStreamed(chunkedInput(), { format: 'pprof', plannedWrite: PPROF_WRITE });
      expectDecodedAsRaw(r);
      expect(arriving.calls).toBe(1);
    } finally {
      arriving.noWorkers = false;
    }
  });

  it('an allocation failing while the bytes are collected: that error, and the input closed before the read fails', async () => {
    let closed = false;
    const input: ReadInput = { ...chunkedInput(), async *chunks() {
      try {
        yield* chunkedInput().chunks();
      } finally {
        closed = true;
      }
    } };
    // The joining buffer is allocated at the second chunk.
    vi.stubGlobal('SharedArrayBuffer', class {
      constructor() {
        throw new RangeError('Array buffer allocation failed');
      }
    });
    let closedWhenFailed: boolean | undefined;
    try {
      const failed = readStreamed(input, { format: 'pprof', plannedWrite: PPROF_WRITE }).catch((e: unknown) => ((closedWhenFailed = closed), e));
      expect(await failed).toEqual(new RangeError('Array buffer allocation failed'));
    } finally {
      vi.unstubAllGlobals();
    }
    expect(closedWhenFailed).toBe(true);
  });

  it("a one-buffer bound past 2^31-1 bytes (the deflating worker's Int32 progress counter): nothing deflated ahead, the same profile", async () => {
    started.length = 0;
    arriving.calls = 0;
    // Only the pages written are resident: the 2 GiB buffer costs the 4.3 MB read into it.
    const r = await readStreamed(chunkedInput(), { format: 'pprof', plannedWrite: PPROF_WRITE }, 2 ** 31);
    expectDecodedAsRaw(r);
    expect(arriving.calls).toBe(0);
    expect(started).toEqual([]);
  });

  it('an input past the one-buffer bound: read as a stream (the same profile), the deflating ahead stopped', async () => {
    started.length = 0;
    const r = await readStreamed(chunkedInput(), { format: 'pprof', plannedWrite: PPROF_WRITE }, 3 << 20);
    expectDecodedAsRaw(r);
    expect(started).toHaveLength(1);
    expect(cancelledFlag(started[0])).toBe(1);
  });
});
