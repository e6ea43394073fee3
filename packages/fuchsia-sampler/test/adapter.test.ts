import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { assertValid, createRegistry, locationRows, mappingRows, resolveStack, sampleRows, validate, type Profile } from '@profkit/core/node';
import pprofAdapter from '@profkit/pprof';
import fuchsiaSampler, {
  callsToJsonl,
  callsToRecording,
  encodeChannelMessage,
  frameRecord,
  FuchsiaErrorCodes as C,
  parseJsonl,
  recordingHeader,
  RecordKind,
  replayRecording,
  replayRecordingChunks,
  type SamplerCall,
} from '../src/node.js';
import { expectError, expectRejects } from './helpers.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const registry = () => createRegistry([pprofAdapter, fuchsiaSampler]);
const enc = new TextEncoder();

function meaning(p: Profile): { stack: string[]; values: bigint[] }[] {
  return [...sampleRows(p)].map((s) => ({ stack: resolveStack(p, s.index).map((f) => `${f.address.toString(16)}`), values: s.values }));
}

describe('sniff and detection', () => {
  it('recognizes the binary magic and JSONL method lines, and nothing else', () => {
    const bin = readFileSync(fixture('upstream-example.fsrec'));
    expect(fuchsiaSampler.sniff(bin.subarray(0, 64), {})).toMatchObject({ score: 1, format: 'fuchsia-sampler' });
    const jl = readFileSync(fixture('upstream-example.fsrec.jsonl'));
    expect(fuchsiaSampler.sniff(jl, {})).toMatchObject({ format: 'fuchsia-sampler-jsonl' });
    expect(fuchsiaSampler.sniff(enc.encode('{"name":"x"}\n'), {})).toBe(0);
    expect(fuchsiaSampler.sniff(enc.encode('{"address":"0x1","method":"RecordDeallocation"}\n'), {})).toMatchObject({ format: 'fuchsia-sampler-jsonl' });
    expect(fuchsiaSampler.sniff(enc.encode('{"name":"x"}\n'), { fileName: 'a.fsrec.jsonl' })).toMatchObject({ score: 0.3 });
    expect(fuchsiaSampler.sniff(Uint8Array.of(0x0a, 0x04, 0x08, 0x01), {})).toBe(0);
    expect(fuchsiaSampler.sniff(enc.encode('FXSMPRE'), {})).toBe(0);
  });
  it('the registry detects and reads both forms into valid, identical profiles', async () => {
    const r = registry();
    const a = await r.read(fixture('upstream-example.fsrec'));
    const b = await r.read(fixture('upstream-example.fsrec.jsonl'));
    expect(a.format).toBe('fuchsia-sampler');
    expect(b.format).toBe('fuchsia-sampler-jsonl');
    assertValid(a.profile, 'upstream-example.fsrec');
    assertValid(b.profile, 'upstream-example.fsrec.jsonl');
    expect(validate(a.profile, { mode: 'profkit' }).ok).toBe(true);
    expect(meaning(a.profile)).toEqual(meaning(b.profile));
    expect(meaning(a.profile)).toEqual([
      { stack: ['3e8', '5dc'], values: [132n, 131573n, 132n, 131573n, 0n, 0n] },
      { stack: ['3e8', '5dc'], values: [0n, 0n, 1311n, 131122n, 0n, 0n] },
      { stack: ['bb8', 'bb9'], values: [0n, 0n, 0n, 0n, 1311n, 131122n] },
    ]);
  });
  it('read options: raw values, a chosen partial profile, an out-of-range profile index', async () => {
    const r = registry();
    const raw = await r.read(fixture('upstream-example.fsrec'), { options: { unsample: false } });
    expect(meaning(raw.profile).map((s) => s.values)).toEqual([
      [1n, 1000n, 1n, 1000n, 0n, 0n],
      [0n, 0n, 1n, 100n, 0n, 0n],
      [0n, 0n, 0n, 0n, 1n, 100n],
    ]);
    const first = await r.read(fixture('upstream-example.fsrec'), { options: { profile: 0, partialThreshold: 2, unsample: false } });
    expect(first.profile['.extensions']['fuchsia-sampler']!.facts!.profile_kind).toBe('partial');
    await expectRejects(() => r.read(fixture('upstream-example.fsrec'), { options: { profile: 5 } }), 'PROFKIT_E_USAGE');
  });
  it('socket datagrams, socket close and a gen-1 record after it (binary and JSONL agree)', async () => {
    const r = registry();
    const a = await r.read(fixture('socket-mixed.fsrec'));
    const b = await r.read(fixture('socket-mixed.fsrec.jsonl'));
    assertValid(a.profile);
    expect(meaning(a.profile)).toEqual(meaning(b.profile));
    const facts = a.profile['.extensions']['fuchsia-sampler']!.facts!;
    expect(facts.process_name).toBe('sock_proc');
    expect(facts.build_ids).toEqual(['aabbccddeeff00112233445566778899aabbccdd']);
    expect([...mappingRows(a.profile)].map((m) => m.buildId)).toEqual(['aabbccddeeff00112233445566778899aabbccdd']);
    const mapped = [...locationRows(a.profile)].filter((l) => l.mappingId !== 0).map((l) => l.address);
    expect(mapped.sort()).toEqual([0x10010n, 0x10020n, 0x10030n, 0x10040n]);
  });
});

describe('recording container errors', () => {
  const good = callsToRecording([{ method: 'RecordAllocation', address: 1n, stackTrace: { stackFrames: BigUint64Array.of(5n) }, size: 3n }]);
  const with8 = (b: Uint8Array, at: number, v: number) => {
    const c = b.slice();
    c[at] = v;
    return c;
  };
  it('bad magic, version, reserved bytes', () => {
    expectError(() => replayRecording(with8(good, 0, 0x47), { format: 'fuchsia-sampler', file: 'x' }), C.RECORDING);
    const e = expectError(() => replayRecording(with8(good, 8, 2), { file: 'x' }), C.RECORDING);
    expect(e.detail).toMatchObject({ file: 'x', offset: 8 });
    expectError(() => replayRecording(with8(good, 12, 1)), C.RECORDING);
  });
  it('unknown kind, reserved record bytes, oversize record, truncated record, padding, socket-closed payload', () => {
    expect(expectError(() => replayRecording(with8(good, 16, 9)), C.RECORDING).detail.offset).toBe(16);
    expectError(() => replayRecording(with8(good, 17, 1)), C.RECORDING);
    const big = good.slice();
    new DataView(big.buffer).setUint32(20, 70000, true);
    expect(expectError(() => replayRecording(big), C.RECORDING).detail.rule).toMatch(/maxRecordBytes/);
    expectError(() => replayRecording(good.subarray(0, good.length - 8)), C.RECORDING);
    expectError(() => replayRecording(good.subarray(0, 10)), C.RECORDING);
    const padded = Uint8Array.from([...recordingHeader(), ...frameRecord(RecordKind.CHANNEL, Uint8Array.of(1, 2, 3))]);
    padded[padded.length - 1] = 7;
    expectError(() => replayRecording(padded), C.RECORDING);
    const closed = Uint8Array.from([...recordingHeader(), 3, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expectError(() => replayRecording(closed), C.RECORDING);
  });
  it('a malformed channel message reports its absolute file offset', () => {
    const msg = encodeChannelMessage({ method: 'RecordAllocation', address: 1n, stackTrace: { stackFrames: BigUint64Array.of(1n) }, size: 1n }, { generation: 1 });
    msg[7] = 9; // magic
    const bytes = Uint8Array.from([...recordingHeader(), ...frameRecord(RecordKind.CHANNEL, msg)]);
    const e = expectError(() => replayRecording(bytes, { file: 'bad.fsrec' }), C.HEADER);
    expect(e.detail).toMatchObject({ file: 'bad.fsrec', offset: 16 + 8 + 7 });
  });
  it('undecodable datagrams and unknown variants are dropped and counted, as upstream', () => {
    const bytes = Uint8Array.from([
      ...recordingHeader(),
      ...frameRecord(RecordKind.DATAGRAM, Uint8Array.of(0, 1, 2, 0, 0, 0, 0, 0, 1)),
      ...frameRecord(RecordKind.DATAGRAM, Uint8Array.of(0, 1, 2, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
    ]);
    const r = replayRecording(bytes, { file: 'd.fsrec' });
    expect(r.profiles[0]!.profile['.extensions']['fuchsia-sampler']!.facts!.dropped_datagrams).toBe(2);
    expect(r.warnings.length).toBe(2);
    expect(r.warnings[0]!.detail!.offset).toBeGreaterThanOrEqual(24);
  });
  it('empty input', () => {
    expectError(() => replayRecording(new Uint8Array(0)), 'PROFKIT_E_EMPTY_INPUT');
  });
});

describe('JSONL errors name the line', () => {
  const cases: [string, RegExp][] = [
    ['{"method":"RecordAllocation",', /invalid JSON/],
    ['[1,2]', /JSON object/],
    ['{"method":"Nope"}', /unknown method/],
    ['{"method":"RecordAllocation","address":-1}', /non-negative/],
    ['{"method":"RecordAllocation","address":"0x10000000000000000"}', /integer/],
    ['{"method":"RecordAllocation","address":1.5}', /safe integer/],
    ['{"method":"SetProcessInfo","process_name":"' + 'x'.repeat(33) + '"}', /longer than 32/],
    ['{"method":"SetProcessInfo","module_map":[{"build_id":"' + '00'.repeat(21) + '"}]}', /more than 20/],
    ['{"method":"SetProcessInfo","module_map":[{"build_id":"xyz"}]}', /hex/],
    ['{"method":"SetProcessInfo","via":"socket"}', /socket/],
    ['{"method":"RecordAllocation","via":"pigeon"}', /via/],
    ['{"method":"RecordAllocation","generation":4}', /generation/],
    ['{"event":"boom"}', /unknown event/],
    ['{"method":"RecordAllocation","stack_trace":"x"}', /stack_trace/],
  ];
  for (const [line, msg] of cases) {
    it(line.slice(0, 60), () => {
      const e = expectError(() => parseJsonl(`# comment\n\n${line}\n`, 'h.jsonl'), C.JSONL);
      expect(e.detail).toMatchObject({ file: 'h.jsonl', line: 3 });
      expect(e.message).toMatch(msg);
    });
  }
  it('invalid UTF-8', () => {
    expectError(() => replayRecording(Uint8Array.of(0x7b, 0xff, 0x7d), { format: 'fuchsia-sampler-jsonl' }), C.JSONL);
  });
});

describe('writing a profile back to a recording replays its live allocations', () => {
  const calls: SamplerCall[] = [
    { method: 'SetProcessInfo', processName: 'writer', moduleMap: [{ buildId: Uint8Array.of(0xde, 0xad, 0xbe, 0xef), executableSegments: [{ startAddress: 0x1000n, size: 0x1000n, relativeAddress: 0n }] }] },
    { method: 'RecordAllocation', address: 0x10n, stackTrace: { stackFrames: BigUint64Array.of(0x1100n, 0x1200n) }, size: 48n },
    { method: 'RecordAllocation', address: 0x20n, stackTrace: { stackFrames: BigUint64Array.of(0x1100n, 0x1200n) }, size: 4096n },
    { method: 'RecordAllocation', address: 0x30n, stackTrace: { stackFrames: BigUint64Array.of(0x1300n) }, size: 100n },
    { method: 'RecordDeallocation', address: 0x30n, stackTrace: { stackFrames: BigUint64Array.of(0x1400n) } },
  ];
  const liveOnly = (p: Profile) => meaning(p).filter((s) => s.values[0]! > 0n);
  for (const format of ['fuchsia-sampler', 'fuchsia-sampler-jsonl'] as const) {
    for (const unsample of [false, true]) {
      it(`${format}, ${unsample ? 'unsampled' : 'raw'} profile`, async () => {
        const original = replayRecording(callsToRecording(calls), { unsample }).profiles[0]!.profile;
        const r = registry();
        const w = await r.serialize(original, { format });
        expect(w.warnings.map((x) => x.code)).toContain('FUCHSIA_LIVE_ONLY');
        const back = await r.read(w.data as Uint8Array, { options: { unsample } });
        assertValid(back.profile);
        expect(back.format).toBe(format);
        expect(liveOnly(back.profile)).toEqual(liveOnly(original));
        expect(back.profile['.extensions']['fuchsia-sampler']!.facts!.process_name).toBe('writer');
        expect([...mappingRows(back.profile)].map((m) => [m.memoryStart, m.memoryLimit, m.fileOffset, m.buildId])).toEqual([[0x1000n, 0x2000n, 0n, 'deadbeef']]);
        // Addresses of the live allocations are kept.
        expect([...(back.profile['.extensions']['fuchsia-sampler']!.samples!.address as BigUint64Array)].filter((a) => a)).toEqual([0x10n, 0x20n]);
      });
    }
  }
  it('a raw profile with several objects per sample replays that many allocations', async () => {
    const r = registry();
    const s = (await r.read(fixture('upstream-example.fsrec'), { options: { unsample: false } })).profile;
    // Double the residual objects/bytes of the live sample: 2 objects, 2000 bytes.
    s.samples['.values'][0]![0] = 2n;
    s.samples['.values'][1]![0] = 2001n;
    delete s['.extensions']['fuchsia-sampler'];
    const w = await r.serialize(s, { format: 'fuchsia-sampler' });
    const back = replayRecording(w.data as Uint8Array, { unsample: false }).profiles[0]!.profile;
    expect(liveOnly(back).map((x) => x.values.slice(0, 2))).toEqual([
      [1n, 1001n],
      [1n, 1000n],
    ]);
  });
  it('a profile without live-heap sample types cannot be written', async () => {
    const r = registry();
    const p = (await r.read(fixture('upstream-example.fsrec'))).profile;
    p.sample_types.type = p.sample_types.type.map((t) => 'x' + t);
    await expectRejects(() => r.serialize(p, { format: 'fuchsia-sampler', validate: false }), 'PROFKIT_E_UNSUPPORTED');
  });
});

describe('streaming reads (bounded memory) agree with whole-buffer reads', () => {
  async function* chunked(b: Uint8Array, size: number) {
    for (let i = 0; i < b.length; i += size) yield b.subarray(i, Math.min(b.length, i + size));
  }
  const calls: SamplerCall[] = [{ method: 'SetProcessInfo', processName: 'stream', moduleMap: [{ buildId: Uint8Array.of(7), executableSegments: [{ startAddress: 0n, size: 1n << 40n, relativeAddress: 0n }] }] }];
  for (let i = 0; i < 1500; i++) {
    calls.push({ method: 'RecordAllocation', address: BigInt(i + 1), stackTrace: { stackFrames: BigUint64Array.of(BigInt(0x100 + (i % 37)), 0x9999n) }, size: BigInt(i % 300) });
    if (i % 2) calls.push({ method: 'RecordDeallocation', address: BigInt(i), stackTrace: { stackFrames: BigUint64Array.of(BigInt(0x500 + (i % 11))) } });
  }
  const forms = { binary: callsToRecording(calls, { generation: 1 }), datagrams: callsToRecording(calls, { datagrams: true }), jsonl: enc.encode('# c\n' + callsToJsonl(calls).replace(/\n$/, '')) };
  for (const [name, bytes] of Object.entries(forms)) {
    it(`${name}: chunks of 13 and 4096 bytes; partial profiles identical`, async () => {
      const want = replayRecording(bytes, { partialThreshold: 40 });
      expect(want.profiles.length).toBeGreaterThan(3);
      for (const size of [13, 4096]) {
        const got = await replayRecordingChunks(chunked(bytes, size), { partialThreshold: 40 });
        expect(got.format).toBe(want.format);
        expect(got.profiles.map((p) => [p.kind, p.iteration, JSON.stringify(meaning(p.profile), (_k, v) => (typeof v === 'bigint' ? String(v) : v))])).toEqual(
          want.profiles.map((p) => [p.kind, p.iteration, JSON.stringify(meaning(p.profile), (_k, v) => (typeof v === 'bigint' ? String(v) : v))]),
        );
      }
    });
  }
  it('one byte at a time', async () => {
    for (const f of ['upstream-example.fsrec', 'socket-mixed.fsrec', 'socket-mixed.fsrec.jsonl']) {
      const bytes = readFileSync(fixture(f));
      const got = await replayRecordingChunks(chunked(bytes, 1));
      expect(meaning(got.profiles[0]!.profile)).toEqual(meaning(replayRecording(bytes).profiles[0]!.profile));
    }
  });
  it('errors while streaming keep their offsets and lines', async () => {
    const bad = forms.binary.slice();
    bad[16] = 9;
    expect((await expectRejects(() => replayRecordingChunks(chunked(bad, 5), { file: 's' }), C.RECORDING)).detail.offset).toBe(16);
    await expectRejects(() => replayRecordingChunks(chunked(forms.binary.subarray(0, forms.binary.length - 3), 1000)), C.RECORDING);
    const j = enc.encode('{"method":"SetProcessInfo"}\n{"method":"Nope"}\n');
    expect((await expectRejects(() => replayRecordingChunks(chunked(j, 3)), C.JSONL)).detail.line).toBe(2);
    // Invalid UTF-8 split across chunks, and a line above the bound.
    const u = Uint8Array.from([...enc.encode('{"method":"SetProcessInfo","process_name":"'), 0xe2, 0x28, 0xa1, ...enc.encode('"}\n')]);
    await expectRejects(() => replayRecordingChunks(chunked(u, 2)), C.JSONL);
    const long = enc.encode('{"method":"SetProcessInfo","process_name":"' + 'x'.repeat(5000));
    expect((await expectRejects(() => replayRecordingChunks(chunked(long, 512), { maxLineBytes: 1000 }), C.JSONL)).detail.option).toBe('maxLineBytes');
    await expectRejects(() => replayRecordingChunks(chunked(new Uint8Array(0), 1)), 'PROFKIT_E_EMPTY_INPUT');
  });
});
