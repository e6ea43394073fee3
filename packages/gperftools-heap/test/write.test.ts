import { describe, expect, it } from 'vitest';
import { ProfileBuilder, assertValid, formatPprofDump, resolveStack, sampleTypes, type Profile } from '@profkit/core/node';
import gperftoolsHeapAdapter, { readLegacy, writeCpuProfile, writeHeapText, formatMapsLine } from '../src/node.js';
import { catchError, haveShared, sharedFixture } from './helpers.js';

function heapProfile(types: [string, string][]): Profile {
  const b = new ProfileBuilder({ sampleTypes: types.map(([type, unit]) => ({ type, unit })) });
  const m = b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0x500000n, filename: '/usr/bin/app' });
  const l1 = b.internLocation({ address: 0x401000n, mappingId: m });
  const l2 = b.internLocation({ address: 0x402000n, mappingId: m });
  const l3 = b.internLocation({ address: 0x7f0000001234n, mappingId: m });
  if (types.length === 4) {
    b.addSample([l1, l2], [12n, 4096n, 1n, 9216n]);
    b.addSample([l3], [3n, 96n, 0n, 0n]);
  } else {
    b.addSample([l1, l2], [1n, 9216n]);
    b.addSample([l3], [2n, 96n]);
  }
  return b.build();
}

/** What a profile means: per sample, its values and resolved frame addresses/names. */
function meaning(p: Profile): string[] {
  const types = sampleTypes(p).map((t) => `${t.type}/${t.unit}`);
  return Array.from({ length: p.samples.value.length }, (_, i) => {
    const vals = p.samples['.values'].map((c, t) => `${types[t]}=${c[i]}`).join(' ');
    const frames = resolveStack(p, i).map((f) => `${f.name || '0x' + f.address.toString(16)}@${f.filename}:${f.line}`).join(';');
    return `${vals} | ${frames}`;
  });
}

describe('heap text writer', () => {
  it('writes the heap profiler layout byte for byte', () => {
    const { text, warnings } = writeHeapText(heapProfile([['alloc_objects', 'count'], ['alloc_space', 'bytes'], ['inuse_objects', 'count'], ['inuse_space', 'bytes']]));
    expect(warnings).toEqual([]);
    expect(text).toBe(
      'heap profile:      1:     9216 [    15:     4192] @ heapprofile\n' +
        '     1:     9216 [    12:     4096] @ 0x00401001 0x00402001\n' +
        '     0:        0 [     3:       96] @ 0x7f0000001235\n' +
        '\n' +
        'MAPPED_LIBRARIES:\n' +
        '00400000-00500000 r-xp 00000000 00:00 0           /usr/bin/app\n',
    );
  });

  it('writes tcmalloc heap_v2 (%p frames, one pair twice) and growth headers', () => {
    const p = heapProfile([['objects', 'count'], ['space', 'bytes']]);
    const v2 = writeHeapText(p, { kind: 'heap_v2' });
    expect(v2.text.split('\n').slice(0, 3)).toEqual([
      'heap profile:      3:     9312 [     3:     9312] @ heap_v2/0',
      '     1:     9216 [     1:     9216] @ 0x401001 0x402001',
      '     2:       96 [     2:       96] @ 0x7f0000001235',
    ]);
    const g = writeHeapText(p, { kind: 'growth' });
    expect(g.text.split('\n')[0]).toBe('heap profile:      3:     9312 [     3:     9312] @ growth');
  });

  it('refuses to claim sampling for values that are already unsampled', () => {
    const r = writeHeapText(heapProfile([['objects', 'count'], ['space', 'bytes']]), { kind: 'heap_v2', samplePeriod: 524288 });
    expect(r.text.startsWith('heap profile:      3:     9312 [     3:     9312] @ heap_v2/0\n')).toBe(true);
    expect(r.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_GPERFTOOLS_UNSAMPLED']);
  });

  it('formats maps lines as gperftools ProcMapsIterator::FormatLine', () => {
    expect(formatMapsLine(0x5649de2c0000n, 0x5649de2c1000n, 0x1000n, '/tmp/w', 'r-xp', 2148986)).toBe('5649de2c0000-5649de2c1000 r-xp 00001000 00:00 2148986     /tmp/w\n');
  });

  it('says what the format cannot hold (labels, comments, build ids)', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'objects', unit: 'count' }, { type: 'space', unit: 'bytes' }], facts: { comments: ['hello'] } });
    const m = b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0x500000n, filename: '/bin/a', buildId: 'abc' });
    b.addSample([b.internLocation({ address: 0x401000n, mappingId: m })], [1n, 8n], [{ key: 'thread', str: 'main' }, { key: 'bytes', num: 8n }]);
    const codes = writeHeapText(b.build()).warnings.map((w) => w.code);
    expect(codes).toEqual(['PROFKIT_W_GPERFTOOLS_LABELS_DROPPED', 'PROFKIT_W_GPERFTOOLS_FACTS_DROPPED', 'PROFKIT_W_GPERFTOOLS_BUILD_IDS_DROPPED']);
  });

  it('rejects profiles without heap sample types', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const e = catchError(() => writeHeapText(b.build()));
    expect(e.code).toBe('PROFKIT_E_UNSUPPORTED');
    expect(e.message).toMatch(/samples/);
  });

  it('gives locations without addresses synthetic ones, with a warning', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'objects', unit: 'count' }, { type: 'space', unit: 'bytes' }] });
    const f = b.internFunction({ name: 'main' });
    const l = b.internLocation({ functionId: f });
    b.addSample([l], [1n, 8n]);
    const r = writeHeapText(b.build());
    expect(r.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_GPERFTOOLS_SYMBOLS_DROPPED', 'PROFKIT_W_GPERFTOOLS_SYNTHETIC_ADDRESSES']);
    const back = readLegacy(new TextEncoder().encode(r.text)).profile;
    expect(Array.from(back.samples['.values'][1]!)).toEqual([8n]);
    expect(back.locations['.address'][0]).not.toBe(0n);
  });
});

describe('binary CPU writer', () => {
  function cpuProfile(): Profile {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }], facts: { period_type: { type: 'cpu', unit: 'nanoseconds' }, period: 4_000_000n } });
    const m = b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0x500000n, filename: '/usr/bin/app' });
    const a = b.internLocation({ address: 0x401010n, mappingId: m });
    const c = b.internLocation({ address: 0x40201fn, mappingId: m });
    const d = b.internLocation({ address: 0x40302fn, mappingId: m });
    const e = b.internLocation({ address: 0x40403fn, mappingId: m });
    // Different callers at position 1, or the reader's signal-frame heuristic would drop them.
    b.addSample([a, c], [3n, 12_000_000n]);
    b.addSample([d, e], [1n, 4_000_000n]);
    return b.build();
  }

  for (const size of [4, 8] as const) {
    for (const le of [true, false]) {
      it(`writes header, records, trailer and maps (${size * 8}-bit ${le ? 'LE' : 'BE'})`, () => {
        const { bytes, warnings } = writeCpuProfile(cpuProfile(), { wordSize: size, littleEndian: le });
        expect(warnings).toEqual([]);
        const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        const w = (i: number) => (size === 4 ? BigInt(v.getUint32(i * size, le)) : v.getBigUint64(i * size, le));
        const slots = Array.from({ length: 16 }, (_, i) => w(i));
        // period 4 ms = 4000 µs; leaf as is, callers +1 (undoing the reader's -1).
        expect(slots).toEqual([0n, 3n, 0n, 4000n, 0n, 3n, 2n, 0x401010n, 0x402020n, 1n, 2n, 0x40302fn, 0x404040n, 0n, 1n, 0n]);
        expect(new TextDecoder().decode(bytes.subarray(16 * size))).toBe('00400000-00500000 r-xp 00000000 00:00 0           /usr/bin/app\n');
        const back = readLegacy(bytes).profile;
        assertValid(back);
        expect(meaning(back)).toEqual(meaning(cpuProfile()));
      });
    }
  }

  it('refuses addresses that do not fit 32-bit slots', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    b.addSample([b.internLocation({ address: 0x7f0000000000n })], [1n]);
    const e = catchError(() => writeCpuProfile(b.build(), { wordSize: 4 }));
    expect(e.code).toBe('PROFKIT_E_UNSUPPORTED');
  });

  it('refuses negative counts and non-CPU profiles', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    b.addSample([b.internLocation({ address: 0x1000n })], [-1n]);
    expect(catchError(() => writeCpuProfile(b.build())).code).toBe('PROFKIT_E_UNSUPPORTED');
    const h = new ProfileBuilder({ sampleTypes: [{ type: 'space', unit: 'bytes' }] });
    expect(catchError(() => writeCpuProfile(h.build())).code).toBe('PROFKIT_E_UNSUPPORTED');
  });
});

describe.skipIf(!haveShared)('round trips legacy -> profile -> legacy -> profile', () => {
  for (const name of ['cppbench.heap', 'cppbench.growth']) {
    it(`${name}: identical dump (raw rows kept, same kind and rate)`, () => {
      const a = readLegacy(sharedFixture(`pprof/profile/testdata/${name}`)).profile;
      const w = writeHeapText(a);
      expect(w.warnings).toEqual([]);
      const b = readLegacy(new TextEncoder().encode(w.text)).profile;
      expect(formatPprofDump(b)).toBe(formatPprofDump(a));
    });
  }

  it('does not write stale raw rows once values were changed', () => {
    const a = readLegacy(sharedFixture('pprof/profile/testdata/cppbench.heap')).profile;
    // Values doubled in place (as a scaling operation would), per-sample raw columns carried.
    for (const c of a.samples['.values']) for (let i = 0; i < c.length; i++) c[i] = c[i]! * 2n;
    const w = writeHeapText(a);
    const lines = w.text.split('\n');
    expect(lines[0]!.endsWith('@ heap_v2/0')).toBe(true);
    expect(lines[1]!.startsWith(`   114:  1057818 [   114:  1057818] @ 0xc635c8 `)).toBe(true);
    const b = readLegacy(new TextEncoder().encode(w.text)).profile;
    expect(Array.from(b.samples['.values'][1]!)).toEqual(Array.from(a.samples['.values'][1]!));
  });

  it('gobench.heap (Go heap/1048576) round-trips through the Go legacy layout', () => {
    const a = readLegacy(sharedFixture('pprof/profile/testdata/gobench.heap')).profile;
    const w = writeHeapText(a);
    const lines = w.text.split('\n');
    const header = /^heap profile: (\d+): (\d+) \[(\d+): (\d+)\] @ heap\/1048576$/.exec(lines[0]!);
    expect(header).not.toBeNull();
    // Header totals are the sums of the (unpadded, as Go writes them) rows.
    const sums = [0n, 0n, 0n, 0n];
    for (const l of lines.slice(1)) {
      const m = /^(-?\d+): (-?\d+) \[(\d+): (\d+)\] @/.exec(l);
      if (m) for (let k = 0; k < 4; k++) sums[k]! += BigInt(m[k + 1]!);
    }
    expect(header!.slice(1).map(BigInt)).toEqual(sums);
    expect(lines[1]).toBe('1: 524288 [3: 1572864] @ 0x420cef 0x422151 0x4221da 0x41dc0d 0x41db48 0x74920f 0x6295ac 0x629855 0x462769 0x419320');
    const b = readLegacy(new TextEncoder().encode(w.text)).profile;
    expect(formatPprofDump(b)).toBe(formatPprofDump(a));
  });

  it('gobench.heap written as heapprofile keeps the (unsampled) values', () => {
    const a = readLegacy(sharedFixture('pprof/profile/testdata/gobench.heap')).profile;
    const b = readLegacy(new TextEncoder().encode(writeHeapText(a, { kind: 'heapprofile' }).text)).profile;
    expect(meaning(b)).toEqual(meaning(a));
    expect(b['.profile'].period).toBe(1n);
  });

  for (const name of ['cppbench.cpu', 'gobench.cpu', 'go.crc32.cpu']) {
    it(`${name}: same samples and locations after a CPU write`, () => {
      const a = readLegacy(sharedFixture(`pprof/profile/testdata/${name}`)).profile;
      const w = writeCpuProfile(a);
      expect(w.warnings).toEqual([]);
      const b = readLegacy(w.bytes, { keepSignalFrames: true }).profile;
      expect(formatPprofDump(b)).toBe(formatPprofDump(a));
    });
  }
});

describe('adapter codec', () => {
  it('reads and writes through the adapter contract', async () => {
    const codec = await gperftoolsHeapAdapter.load!();
    const p = heapProfile([['objects', 'count'], ['space', 'bytes']]);
    const w = await codec.write!(p, { format: 'gperftools-heap', options: { kind: 'growth' } });
    const data = w.data as Uint8Array;
    const r = await codec.read(
      { fileName: 'x.growth', gzipped: false, bytes: async () => data, chunks: async function* () { yield data; } },
      { format: 'gperftools-heap' },
    );
    expect(r.format).toBe('gperftools-heap');
    expect(meaning(r.profile)).toEqual(meaning(p));
    await expect(codec.write!(p, { format: 'gperftools-contention' })).rejects.toMatchObject({ code: 'PROFKIT_E_UNSUPPORTED' });
    await expect(codec.write!(p, { format: 'gperftools-heap', options: { kind: 'bogus' } })).rejects.toMatchObject({ code: 'PROFKIT_E_USAGE' });
  });
});
