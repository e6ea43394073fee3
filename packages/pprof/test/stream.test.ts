/**
 * The streamed decoder (`decodeProfileStream`) against the buffer decoder: same profiles, same
 * errors (code, rule, offset) for every fixture, every chunking and mutated inputs.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, ProfkitError, createRegistry, isProfkitError } from '@profkit/core/node';
import { seededRandom } from '@profkit/test-utils';
import adapter, { decodeProfile, decodeProfileStream, encodeProfile } from '../src/index.js';
import { codec, readStreamed } from '../src/codec.js';
import { PROTO_FIXTURES, everyFieldProfile, hasFixtures, meaning, outcome, pb, readFixture, str, type Outcome } from './helpers.js';

/** A re-openable stream of `bytes` in pieces of `size` bytes. */
function chunked(bytes: Uint8Array, size: number): () => AsyncIterable<Uint8Array> {
  return async function* () {
    for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, Math.min(bytes.length, i + size));
  };
}

async function streamOutcome(bytes: Uint8Array, size: number): Promise<Outcome> {
  try {
    const r = await decodeProfileStream(chunked(bytes, size), { file: 'in.pb' });
    return { ok: true, profile: r.profile, warnings: r.warnings };
  } catch (e) {
    if (!isProfkitError(e)) throw e;
    return { ok: false, code: e.code, rule: e.detail.rule, offset: e.detail.offset, message: e.message };
  }
}

const sample = everyFieldProfile;

describe('decodeProfileStream', () => {
  it('reads the same profile as decodeProfile for every chunk size', async () => {
    const bytes = sample();
    const want = outcome(() => decodeProfile(bytes, { file: 'in.pb' }));
    expect(want.ok).toBe(true);
    for (const size of [1, 2, 3, 5, 8, 13, 64, bytes.length]) expect(await streamOutcome(bytes, size)).toEqual(want);
  });

  it.skipIf(!hasFixtures)('reads every pprof fixture as decodeProfile does, in 4 KiB and 64 KiB chunks', async () => {
    for (const rel of PROTO_FIXTURES) {
      const raw = new Uint8Array(gunzipSync(readFixture(rel)));
      const want = outcome(() => decodeProfile(raw, { file: 'in.pb' }));
      for (const size of [4096, 65536]) {
        const got = await streamOutcome(raw, size);
        expect(got, `${rel} in ${size}-byte chunks`).toEqual(want);
      }
      if (want.ok && raw.length < 100_000) expect(meaning((await decodeProfileStream(chunked(raw, 777))).profile)).toEqual(meaning(decodeProfile(raw).profile));
    }
  });

  it('reports the errors of decodeProfile, at the same offsets, for truncated and mutated inputs', async () => {
    const bytes = encodeProfile(decodeProfile(sample()).profile);
    const rnd = seededRandom(4);
    let errors = 0;
    const inputs: Uint8Array[] = [];
    for (let cut = 0; cut < bytes.length; cut += 3) inputs.push(bytes.slice(0, cut));
    for (let k = 0; k < 300; k++) {
      const m = bytes.slice();
      for (let j = 0; j < 1 + Math.floor(rnd() * 3); j++) m[Math.floor(rnd() * m.length)] = Math.floor(rnd() * 256);
      inputs.push(m);
    }
    for (const input of inputs) {
      const want = outcome(() => decodeProfile(input, { file: 'in.pb' }));
      if (!want.ok) errors++;
      for (const size of [1, 7, 4096]) expect(await streamOutcome(input, size)).toEqual(want);
    }
    // The mutations must exercise the error paths, not only the happy one.
    expect(errors).toBeGreaterThan(100);
  });

  it('decodes the same at every byte alignment of the input (word-wise id counting)', () => {
    // Long packed location ids, so that the aligned-word counting of pass 1 is used.
    const ids = Array.from({ length: 500 }, (_v, i) => 1 + ((i * 7919) % 300) * (i % 3 === 0 ? 1 : 97));
    const bytes = pb([
      [1, [[1, 1], [2, 2]]],
      [2, [[1, { packed: ids }], [2, 5]]],
      [2, [[1, { packed: ids.slice(3, 400) }], [2, 6]]],
      ...Array.from({ length: 300 * 97 }, (_v, i) => [4, [[1, i + 1]]] as [number, [number, number][]]),
      [6, str('')],
      [6, str('samples')],
      [6, str('count')],
    ]);
    const want = decodeProfile(bytes).profile;
    expect(want.samples.locations.location_id.length).toBe(500 + 397);
    for (let shift = 1; shift < 8; shift++) {
      const padded = new Uint8Array(bytes.length + shift);
      padded.set(bytes, shift);
      expect(decodeProfile(padded.subarray(shift)).profile).toEqual(want);
    }
  });

  it('reads inputs shorter than a word at every alignment as typed errors (fuzzer crasher)', () => {
    for (let length = 1; length < 8; length++) {
      for (let offset = 0; offset < 4; offset++) {
        const bytes = new Uint8Array(new ArrayBuffer(16), offset, length).fill(0x0a);
        const got = outcome(() => decodeProfile(bytes));
        expect(got.ok, `${length} bytes at offset ${offset}`).toBe(false);
        expect(got.ok ? '' : got.code).toMatch(/^PROFKIT_E_/);
      }
    }
  });

  it('refuses an empty stream as decodeProfile refuses empty bytes', async () => {
    const got = await streamOutcome(new Uint8Array(0), 10);
    expect(got).toMatchObject({ ok: false, code: ErrorCodes.EMPTY_INPUT, rule: 'empty input file' });
  });

  it('refuses an input that reads differently the second time', async () => {
    const a = sample();
    // Changed so that pass 2 fails (fewer sample types), and changed in one string only.
    const fewerTypes = pb([[1, [[1, 1], [2, 2]]], [2, [[1, 1], [2, 3]]], [4, [[1, 1]]], [6, str('')], [6, str('a')], [6, str('b')]]);
    const oneByte = a.slice();
    oneByte[oneByte.length - 30] ^= 1;
    expect(outcome(() => decodeProfile(oneByte)).ok).toBe(true);
    for (const b of [fewerTypes, oneByte]) {
      let opened = 0;
      const open = () => chunked(opened++ === 0 ? a : b, 16)();
      const e = await decodeProfileStream(open, { file: 'moving.pb' }).catch((x: unknown) => x);
      expect(isProfkitError(e) && e.code).toBe(ErrorCodes.PARSE);
      expect(isProfkitError(e) && e.detail.rule).toBe('streamed input must read the same twice');
      expect(isProfkitError(e) && e.detail.file).toBe('moving.pb');
    }
  });

  it('keeps interleaved decodes apart (two streams and a buffer decode at once)', async () => {
    const a = sample();
    const raw = hasFixtures ? new Uint8Array(gunzipSync(readFixture(PROTO_FIXTURES[2]!))) : a;
    const slow = (bytes: Uint8Array) =>
      async function* () {
        for (let i = 0; i < bytes.length; i += 97) {
          await new Promise((r) => setImmediate(r));
          // A buffer decode between two chunks of the streams must not disturb them.
          decodeProfile(a);
          yield bytes.slice(i, i + 97);
        }
      };
    const [x, y] = await Promise.all([decodeProfileStream(slow(a)), decodeProfileStream(slow(raw))]);
    expect(x.profile).toEqual(decodeProfile(a).profile);
    expect(y.profile).toEqual(decodeProfile(raw).profile);
  });

  it('applies the read limits while streaming', async () => {
    const e = await decodeProfileStream(chunked(sample(), 5), { limits: { maxSamples: 1 } }).catch((x: unknown) => x);
    expect(isProfkitError(e) && e.code).toBe(ErrorCodes.LIMIT);
    expect(isProfkitError(e) && e.detail.option).toBe('maxSamples');
  });

  it('gives the registry the same profile streamed (default) or whole (read option stream=false)', async () => {
    const registry = createRegistry([adapter]);
    const bytes = sample();
    const streamed = await registry.read(bytes, { fileName: 'x.pb' });
    const whole = await registry.read(bytes, { fileName: 'x.pb', options: { stream: false } });
    expect(meaning(streamed.profile)).toEqual(meaning(whole.profile));
    const bad = await registry.read(bytes, { fileName: 'x.pb', options: { stream: 'yes' } }).catch((x: unknown) => x);
    expect(isProfkitError(bad) && bad.detail.option).toBe('stream');
  });
});

describe('the adapter\'s streamed read', () => {
  /** An uncompressed input of `bytes` in 7-byte chunks that counts how often its chunks are opened and closed. */
  function countingInput(bytes: Uint8Array) {
    const counts = { opened: 0, closed: 0 };
    async function* counted(pieces: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
      try {
        yield* pieces;
      } finally {
        counts.closed++;
      }
    }
    const input = {
      fileName: 'x.pb',
      gzipped: false,
      bytes: async () => bytes,
      chunks: () => {
        counts.opened++;
        return counted(chunked(bytes, 7)());
      },
    };
    return { input, counts };
  }

  it('reads and inflates its input once (within the bound, the collected chunks are decoded as one buffer)', async () => {
    const bytes = sample();
    const { input, counts } = countingInput(bytes);
    const r = await codec.read!(input, { format: 'pprof' });
    expect(counts.opened).toBe(1);
    expect(counts.closed).toBe(1);
    expect(meaning(r.profile)).toEqual(meaning(decodeProfile(bytes).profile));
  });

  it('reports a corrupt gzip input as a decompression error even when its first inflated bytes are no profile', async () => {
    // 1 MiB that the decoder refuses at once (wire type 7), in a gzip stream whose CRC-32 is
    // wrong: the inflating fails only at the end. Go's reader (gzip first) reports the gzip error;
    // a read that decoded chunks as they arrive must still read to the end before failing.
    const gz = new Uint8Array(gzipSync(new Uint8Array(1 << 20).fill(0x07)));
    gz[gz.length - 8] ^= 0xff;
    for (const stream of [true, false]) {
      const e = await createRegistry([adapter]).read(gz, { fileName: 'bad.pb.gz', format: 'pprof', options: { stream } }).catch((x: unknown) => x);
      expect(isProfkitError(e) && e.code, `stream=${stream}`).toBe(ErrorCodes.DECOMPRESS);
    }
  });

  it('stops at an aborted signal, collecting one buffer or streaming, and closes the input', async () => {
    const bytes = sample();
    // Within the bound the abort meets the collecting; with 20 bytes, the streamed first pass.
    for (const [bound, abortAt] of [[1 << 20, 3], [20, 5]] as const) {
      const controller = new AbortController();
      let closed = 0;
      async function* abortingAfterTwo(): AsyncGenerator<Uint8Array> {
        try {
          let n = 0;
          for await (const piece of chunked(bytes, 7)()) {
            if (++n === abortAt) controller.abort(new ProfkitError(ErrorCodes.ABORTED, 'aborted'));
            yield piece;
          }
        } finally {
          closed++;
        }
      }
      const input = { fileName: 'x.pb', gzipped: false, bytes: async () => bytes, chunks: abortingAfterTwo };
      const e = await readStreamed(input, { format: 'pprof', signal: controller.signal }, bound).then(() => undefined, (err: unknown) => err);
      expect(isProfkitError(e) && e.code).toBe(ErrorCodes.ABORTED);
      expect(closed).toBe(1);
    }
  });

  it('beyond the bound, replays the chunks it collected as the first pass and reads the input again for the second', async () => {
    const bytes = sample();
    const { input, counts } = countingInput(bytes);
    // A bound of 20 bytes: three 7-byte chunks are collected before the streamed decode takes over.
    const r = await readStreamed(input, { format: 'pprof' }, 20);
    expect(counts.opened).toBe(2);
    expect(counts.closed).toBe(2);
    expect(meaning(r.profile)).toEqual(meaning(decodeProfile(bytes).profile));
  });
});
