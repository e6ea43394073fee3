/**
 * The default (streamed) read of a gzip profile (`readStreamed`: inflated chunks collected into one
 * buffer, or replayed to the streamed decoder beyond its bound) must give exactly what inflating
 * the whole file and decoding it gives (`decodeProfile(gunzip(bytes))`),
 * profiles, warnings and errors (code, rule, offset, message) alike, and the same typed errors
 * and limits for corrupt, truncated, forged-trailer and multi-member gzip.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCodes, createRegistry, gunzipBounded, gunzipChunks, isProfkitError } from '@profkit/core/node';
import { seededRandom } from '@profkit/test-utils';
import adapter, { decodeProfile } from '../src/index.js';
import { readStreamed } from '../src/codec.js';
import { PROTO_FIXTURES, everyFieldProfile, hasFixtures, outcome, readFixture, type Outcome } from './helpers.js';

const FILE = 'in.pb.gz';

/** What inflating the whole gzip input and decoding it gives (the reference). */
function wholeOutcome(gz: Uint8Array): Outcome {
  return outcome(() => decodeProfile(gunzipBounded(gz, {}, FILE), { file: FILE }));
}

/** `readStreamed` over the input inflated by core's streaming gunzip, fed `size` compressed bytes at a time. */
async function collectedOutcome(gz: Uint8Array, size: number, wholeDecodeMaxBytes?: number): Promise<Outcome> {
  async function* compressed(): AsyncGenerator<Uint8Array> {
    for (let at = 0; at < gz.length; at += size) yield gz.slice(at, Math.min(gz.length, at + size));
  }
  const input = { fileName: FILE, gzipped: true, bytes: async () => gunzipBounded(gz, {}, FILE), chunks: () => gunzipChunks(compressed(), FILE) };
  try {
    const r = await readStreamed(input, { format: 'pprof' }, wholeDecodeMaxBytes);
    return { ok: true, profile: r.profile, warnings: r.warnings };
  } catch (e) {
    if (!isProfkitError(e)) throw e;
    return { ok: false, code: e.code, rule: e.detail.rule, offset: e.detail.offset, message: e.message };
  }
}

/** A valid profile of several MiB when inflated (many chunks of core's 256 KiB inflate output). */
function largeProfile(): Uint8Array {
  const raw = hasFixtures ? new Uint8Array(gunzipSync(readFixture('pprof/internal/proftest/testdata/large.cpu'))) : everyFieldProfile();
  return raw;
}

const dir = mkdtempSync(join(tmpdir(), 'profkit-read-collect-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The registry's read of `gz` written to a file (chunks read from disk, inflated on Node's thread pool). */
async function fileRead(gz: Uint8Array, limits: Record<string, number> = {}): Promise<{ code?: string; option?: unknown; profile?: unknown }> {
  const path = join(dir, 'p.pb.gz');
  writeFileSync(path, gz);
  try {
    const r = await createRegistry([adapter]).read(path, { format: 'pprof', limits });
    return { profile: r.profile };
  } catch (e) {
    if (!isProfkitError(e)) throw e;
    return { code: e.code, option: e.detail.option };
  }
}

describe('readStreamed of gzip input against decodeProfile(gunzip(bytes))', () => {
  it('reads a sample profile as decodeProfile(gunzip) does, in every compressed chunk size', async () => {
    const gz = new Uint8Array(gzipSync(everyFieldProfile()));
    const want = wholeOutcome(gz);
    expect(want.ok).toBe(true);
    for (const size of [1, 7, 64, gz.length]) expect(await collectedOutcome(gz, size), `chunks of ${size}`).toEqual(want);
  });

  it.skipIf(!hasFixtures)('reads every pprof fixture as decodeProfile(gunzip) does, within and beyond the one-buffer bound', async () => {
    for (const rel of PROTO_FIXTURES) {
      const gz = readFixture(rel);
      const want = wholeOutcome(gz);
      expect(await collectedOutcome(gz, 4096), `${rel}: one buffer`).toEqual(want);
      // A bound of 1,000 bytes: the collected buffer is replayed to the streamed decoder.
      expect(await collectedOutcome(gz, 4096, 1000), `${rel}: streamed beyond the bound`).toEqual(want);
    }
  });

  it('reads a multi-member gzip file as its members concatenated, as Go does', async () => {
    const raw = largeProfile();
    const cut = raw.length >> 1;
    const gz = new Uint8Array(Buffer.concat([gzipSync(raw.subarray(0, cut)), gzipSync(raw.subarray(cut))]));
    const want = outcome(() => decodeProfile(raw, { file: FILE }));
    expect(want.ok).toBe(true);
    expect(await collectedOutcome(gz, 65536)).toEqual(want);
  });

  it('reports the errors decodeProfile reports, at the same offsets, for truncated and mutated profiles in valid gzip', async () => {
    const raw = largeProfile();
    const rnd = seededRandom(23);
    for (let round = 0; round < 12; round++) {
      const bad = raw.slice(0, 1 + Math.floor(rnd() * raw.length));
      for (let k = 0; k < 3; k++) bad[Math.floor(rnd() * bad.length)] = Math.floor(rnd() * 256);
      const gz = new Uint8Array(gzipSync(bad));
      const want = wholeOutcome(gz);
      expect(await collectedOutcome(gz, 1 + Math.floor(rnd() * 65536)), `round ${round}`).toEqual(want);
    }
  });

  it('reports a truncated, corrupt or forged-trailer gzip file as gunzip does (a typed error, never a profile)', async () => {
    const raw = largeProfile();
    const gz = new Uint8Array(gzipSync(raw));
    const truncated = gz.slice(0, gz.length >> 1);
    const badCrc = gz.slice();
    badCrc[gz.length - 8]! ^= 0xff;
    const corruptDeflate = gz.slice();
    for (let i = 20; i < 40; i++) corruptDeflate[i] = 0xff;
    // Past the first inflated chunks, which pass 1 has run on by then (it keeps its error to the end).
    const corruptMidStream = gz.slice();
    for (let i = gz.length >> 1; i < (gz.length >> 1) + 20; i++) corruptMidStream[i] = 0xff;
    const forged = (isize: number) => {
      const out = gz.slice();
      new DataView(out.buffer).setUint32(out.length - 4, isize, true);
      return out;
    };
    const cases: [string, Uint8Array][] = [
      ['truncated', truncated],
      ['bad CRC-32', badCrc],
      ['corrupt deflate data', corruptDeflate],
      ['corrupt deflate data mid-stream', corruptMidStream],
      ['ISIZE forged small', forged(16)],
      ['ISIZE forged large', forged(0xffff_fff0)],
      ['ISIZE forged one short', forged(raw.length - 1)],
    ];
    for (const [name, input] of cases) {
      const want = wholeOutcome(input);
      expect(want.ok, name).toBe(false);
      const got = await collectedOutcome(input, 65536);
      expect(got.ok === false && got.code, name).toBe(want.ok === false && want.code);
      expect((await fileRead(input)).code, `${name}, read from a file`).toBe(want.ok === false && want.code);
    }
  });

  it('reads a file as decodeProfile(gunzip) does and keeps the decompressed and input size limits', async () => {
    const raw = largeProfile();
    const gz = new Uint8Array(gzipSync(raw));
    const read = await fileRead(gz);
    expect(read.code).toBeUndefined();
    const want = wholeOutcome(gz);
    expect(want.ok && read.profile).toEqual(want.ok && want.profile);
    expect(await fileRead(gz, { maxDecompressedBytes: raw.length - 1 })).toEqual({ code: ErrorCodes.LIMIT, option: 'maxDecompressedBytes' });
    expect((await fileRead(gz, { maxDecompressedBytes: raw.length })).code).toBeUndefined();
    expect(await fileRead(raw, { maxInputBytes: raw.length - 1 })).toEqual({ code: ErrorCodes.LIMIT, option: 'maxInputBytes' });
  });
});
