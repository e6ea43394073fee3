import { describe, expect, it } from 'vitest';
import { assertValid, resolveStack, labelsOf, stackOf, type Profile } from '@profkit/core/node';
import { readLegacy, scaleHeapSample } from '../src/node.js';
import { bytes, catchError, localFixture } from './helpers.js';

/** Builds a binary CPU profile from slot values, independently of the writer. */
function cpuBytes(words: bigint[], size: 4 | 8, le: boolean, text = ''): Uint8Array {
  const t = new TextEncoder().encode(text);
  const out = new Uint8Array(words.length * size + t.length);
  const v = new DataView(out.buffer);
  words.forEach((w, i) => (size === 4 ? v.setUint32(i * size, Number(w), le) : v.setBigUint64(i * size, w, le)));
  out.set(t, words.length * size);
  return out;
}

function addresses(p: Profile, i: number): bigint[] {
  return resolveStack(p, i).map((f) => f.address);
}

function values(p: Profile, t: number): bigint[] {
  return Array.from(p.samples['.values'][t]!);
}

describe('heap text', () => {
  it('accepts %warn lines before the header and keeps them as warnings', () => {
    const r = readLegacy(localFixture('warn.heap'), { fileName: 'warn.heap' });
    assertValid(r.profile);
    expect(r.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_GPERFTOOLS_WARN_LINE', 'PROFKIT_W_GPERFTOOLS_WARN_LINE']);
    expect(r.warnings[0]!.message).toContain('Sampling is off');
    expect(r.profile['.extensions']['gperftools-heap']!.facts!.warn_lines).toEqual([
      '%warn Sampling is off: set TCMALLOC_SAMPLE_PARAMETER',
      '%warn heap profile will be empty',
    ]);
    // heap_v2/0: rate 0 means no unsampling; two sample types since the pairs agree.
    expect(r.profile.sample_types.type).toEqual(['objects', 'space']);
    expect(values(r.profile, 0)).toEqual([1n, 1n]);
    expect(values(r.profile, 1)).toEqual([100n, 200n]);
    // Every address is decremented by one, leaf included.
    expect(addresses(r.profile, 0)).toEqual([0x400fffn, 0x401fffn]);
  });

  it('reports errors after %warn lines with the line number of the file', () => {
    const e = catchError(() => readLegacy(bytes('%warn x\nheap profile: 1: 2 [1: 2] @ heap_v2/1\n 0: 5 [0: 5] @ 0x1\n'), { fileName: 'w.heap' }));
    expect(e.code).toBe('PROFKIT_E_PARSE');
    expect(e.message).toBe('inuse count was 0 but inuse bytes was 5');
    expect(e.detail).toMatchObject({ file: 'w.heap', line: 3 });
  });

  it('reads negative in-use values, empty stacks and four sample types', () => {
    const r = readLegacy(localFixture('negative.heap'));
    const p = r.profile;
    assertValid(p);
    expect(p.sample_types.type).toEqual(['alloc_objects', 'alloc_space', 'inuse_objects', 'inuse_space']);
    expect(p['.profile'].period).toBe(1n);
    expect(values(p, 0)).toEqual([4n, 5n, 0n]);
    expect(values(p, 1)).toEqual([1024n, 3072n, 0n]);
    expect(values(p, 2)).toEqual([-2n, 3n, 0n]);
    expect(values(p, 3)).toEqual([-128n, 1536n, 0n]);
    expect(stackOf(p, 1)).toHaveLength(0);
    // label bytes: inuse pair when its count is non-zero, else the alloc pair; 0 when both are 0.
    expect(labelsOf(p, 0)).toEqual([{ key: 'bytes', num: 64n }]);
    expect(labelsOf(p, 1)).toEqual([{ key: 'bytes', num: 512n }]);
    expect(labelsOf(p, 2)).toEqual([{ key: 'bytes', num: 0n }]);
  });

  it('merges adjacent mappings, skips non-executable ones and puts the main binary first', () => {
    const p = readLegacy(localFixture('negative.heap')).profile;
    const m = p['.mappings'];
    expect(m.filename).toEqual(['/usr/bin/app', '/lib/libc.so.6']);
    expect([m.memory_start[0], m.memory_limit[0], m.file_offset[0]]).toEqual([0x400000n, 0x500000n, 0n]);
    expect(Array.from(p.locations['.mapping_id'])).toEqual([1, 1, 1]);
  });

  it('assigns the fake [0, 2^64-1) mapping when no mapping covers an address', () => {
    const p = readLegacy(bytes('heap profile: 1: 8 [1: 8] @ heapprofile\n 1: 8 [1: 8] @ 0x401000 0x900000\n\nMAPPED_LIBRARIES:\n00400000-00500000 r-xp 00000000 00:00 0 /bin/a\n')).profile;
    const m = p['.mappings'];
    expect(m.filename).toEqual(['/bin/a', '']);
    expect(m.memory_limit[1]).toBe((1n << 64n) - 1n);
    expect(Array.from(p.locations['.mapping_id'])).toEqual([1, 2]);
  });

  it('puts a main binary found later first (shared libraries and [vdso] are not main)', () => {
    const p = readLegacy(
      bytes('heap profile: 1: 8 [1: 8] @ heapprofile\n 1: 8 [1: 8] @ 0x7f0000001000\n\nMAPPED_LIBRARIES:\n7f0000000000-7f0000100000 r-xp 00000000 00:00 0 /lib/x.so.1\n7fff0000000-7fff0001000 r-xp 00000000 00:00 0 [vdso]\n00400000-00500000 r-xp 00000000 00:00 0 /bin/main\n'),
    ).profile;
    expect(p['.mappings'].filename).toEqual(['/bin/main', '[vdso]', '/lib/x.so.1']);
  });

  it('applies google/pprof main-mapping heuristics: /anon_hugepage, 0x400000 rebase, extension by offset', () => {
    const heap = (maps: string, addrs: string) => readLegacy(bytes(`heap profile: 1: 8 [1: 8] @ heapprofile\n 1: 8 [1: 8] @ ${addrs}\n\nMAPPED_LIBRARIES:\n${maps}`)).profile['.mappings'];
    // A leading /anon_hugepage mapping adjacent to the next one is removed.
    let m = heap('00400000-00600000 r-xp 00000000 00:00 0 /anon_hugepage\n00600000-00700000 r-xp 00200000 00:00 0 /bin/app\n', '0x600100');
    expect(m.filename).toEqual(['/bin/app']);
    // The main mapping starting at 0x400000 + offset is rebased to 0x400000 with offset 0.
    m = heap('00401000-00500000 r-xp 00001000 00:00 0 /bin/app\n', '0x400100');
    expect([m.memory_start[0], m.file_offset[0], m.filename[0]]).toEqual([0x400000n, 0n, '/bin/app']);
    // An address just below a mapping with an offset extends that mapping down.
    m = heap('00600000-00700000 r-xp 00000000 00:00 0 /bin/app\n7f0000010000-7f0000020000 r-xp 00010000 00:00 0 /lib/x.so\n', '0x7f0000000100');
    expect([m.memory_start[1], m.file_offset[1], m.filename[1]]).toEqual([0x7f0000000000n, 0n, '/lib/x.so']);
  });

  it('unsamples heapz_v2 rows with the Poisson formula and truncates', () => {
    const r = readLegacy(bytes('heap profile: 2: 9360 [2: 9360] @ heapz_v2/524288\n 1: 9216 [1: 9216] @ 0x1000\n 1: 144 [1: 144] @ 0x2000\n'));
    const scale = (c: number, s: number) => 1 / (1 - Math.exp(-(s / c) / 524288));
    expect(values(r.profile, 0)).toEqual([BigInt(Math.trunc(1 * scale(1, 9216))), BigInt(Math.trunc(1 * scale(1, 144)))]);
    expect(values(r.profile, 1)).toEqual([BigInt(Math.trunc(9216 * scale(1, 9216))), BigInt(Math.trunc(144 * scale(1, 144)))]);
    // The spec's worked numbers (section 4.2).
    expect(values(r.profile, 0)).toEqual([57n, 3641n]);
    expect(values(r.profile, 1)).toEqual([528909n, 524360n]);
    expect(r.profile['.profile'].period).toBe(524288n);
    const facts = r.profile['.extensions']['gperftools-heap']!.facts!;
    expect(facts).toMatchObject({ format: 'gperftools-heap', heap_kind: 'heapz_v2', sampling: 'poisson', sampling_rate: 524288n });
    expect(Array.from(r.profile['.extensions']['gperftools-heap']!.samples!.raw_inuse_bytes as BigInt64Array)).toEqual([9216n, 144n]);
  });

  it('treats heap/2R (Go legacy heap) as sampled with R = value/2 and four types when the pairs differ', () => {
    const r = readLegacy(bytes('heap profile: 1: 524288 [3: 1572864] @ heap/1048576\n1: 524288 [3: 1572864] @ 0x1000\n'));
    expect(r.profile.sample_types.type).toEqual(['alloc_objects', 'alloc_space', 'inuse_objects', 'inuse_space']);
    expect(r.profile['.profile'].period).toBe(524288n);
    expect(r.profile.samples['.values'].map((c) => c[0])).toEqual([4n, 2488234n, 1n, 829411n]);
  });

  it('reads growth and growthz headers without unsampling', () => {
    for (const kind of ['growth', 'growthz']) {
      const r = readLegacy(bytes(`heap profile:      2:     4096 [     2:     4096] @ ${kind}\n     2:     4096 [     2:     4096] @ 0x401000\n`));
      expect(r.profile['.extensions']['gperftools-heap']!.facts!.heap_kind).toBe(kind);
      expect(values(r.profile, 1)).toEqual([4096n]);
      expect(r.profile['.profile'].period).toBe(1n);
    }
  });

  it('rejects malformed rows with the line number and the rule', () => {
    const e = catchError(() => readLegacy(bytes('heap profile: 1: 2 [1: 2] @ heapprofile\n1: 2 [1: 2] @ 0x1\ngarbage here\n'), { fileName: 'bad.heap' }));
    expect(e.code).toBe('PROFKIT_E_PARSE');
    expect(e.detail).toMatchObject({ file: 'bad.heap', line: 3 });
    expect(String(e.detail.rule)).toMatch(/heap rows/);
  });

  it('rejects addresses beyond 64 bits', () => {
    const e = catchError(() => readLegacy(bytes('heap profile: 1: 2 [1: 2] @ heapprofile\n1: 2 [1: 2] @ 0x10000000000000000\n')));
    expect(e.code).toBe('PROFKIT_E_PARSE');
    expect(e.message).toBe('failed to parse as hex 64-bit number: 0x10000000000000000');
    expect(e.detail.line).toBe(2);
  });

  it('rejects values beyond int64', () => {
    const e = catchError(() => readLegacy(bytes('heap profile: 1: 2 [1: 2] @ heapprofile\n1: 99999999999999999999 [1: 2] @ 0x1\n')));
    expect(e).toMatchObject({ code: 'PROFKIT_E_PARSE', detail: { line: 2 } });
  });

  it('keeps rows with the same stack separate unless asked to sum them', () => {
    const text = bytes('heap profile: 2: 16 [2: 16] @ heapprofile\n 1: 8 [1: 8] @ 0x1000\n 1: 8 [1: 8] @ 0x1000\n');
    expect(readLegacy(text).profile.samples.value.length).toBe(2);
    const summed = readLegacy(text, { sumSameStacks: true }).profile;
    expect(values(summed, 1)).toEqual([16n]);
    expect(summed['.extensions']['gperftools-heap']!.samples).toBeUndefined();
  });

  it('scaleHeapSample leaves rate <= 1 and zero pairs alone', () => {
    expect(scaleHeapSample(3n, 30n, 1n)).toEqual([3n, 30n]);
    expect(scaleHeapSample(0n, 0n, 524288n)).toEqual([0n, 0n]);
    expect(scaleHeapSample(2n, 0n, 524288n)).toEqual([0n, 0n]);
  });
});

describe('contention', () => {
  it('reads Go --- mutex: profiles with cycles/second conversion', () => {
    const r = readLegacy(localFixture('go.mutex'));
    const p = r.profile;
    assertValid(p);
    expect(r.format).toBe('gperftools-contention');
    expect(p.sample_types.type).toEqual(['contentions', 'delay']);
    expect(p['.profile'].period).toBe(5n);
    expect(values(p, 0)).toEqual([10n, 5n]);
    // delay ns = cycles * period / (cycles_per_second / 1e9)
    expect(values(p, 1)).toEqual([BigInt(Math.trunc((1000 * 5) / 2)), BigInt(Math.trunc((500 * 5) / 2))]);
    expect(p['.mappings'].filename).toEqual(['/usr/bin/app']);
    expect(addresses(p, 0)).toEqual([0x400fffn, 0x401fffn]);
  });

  it('leaves delays in cycles when cycles/second is missing (as google/pprof does)', () => {
    const p = readLegacy(localFixture('nocycles.contention')).profile;
    expect(values(p, 0)).toEqual([40n]);
    expect(values(p, 1)).toEqual([3000n]);
    expect(p['.extensions']['gperftools-heap']!.facts!.cycles_per_second).toBe(0n);
  });

  it('rejects unknown attributes as not a contention profile', () => {
    const e = catchError(() => readLegacy(bytes('--- contentionz 1 ---\nflavour = odd\n1 1 @ 0x1\n')));
    expect(e.code).toBe('PROFKIT_E_PARSE');
    expect(e.message).toMatch(/unrecognized profile format/);
  });

  it('reports a malformed row with its line', () => {
    const e = catchError(() => readLegacy(bytes('--- contention:\ncycles/second = 1000\nnot a row\n'), { fileName: 'c' }));
    expect(e).toMatchObject({ code: 'PROFKIT_E_PARSE', detail: { file: 'c', line: 3 } });
  });
});

describe('legacy binary CPU profile', () => {
  const stacks: bigint[][] = [
    [0x401010n, 0x402020n, 0x403030n],
    [0x401011n, 0x402021n],
    [0x401012n, 0x402022n, 0x403030n],
  ];
  const words = (period: bigint, java = false): bigint[] => [
    0n, 3n, java ? 1n : 0n, period, 0n,
    ...stacks.flatMap((s, i) => [BigInt(i + 1), BigInt(s.length), ...s]),
    0n, 1n, 0n,
  ];
  const maps = '00400000-00500000 r-xp 00000000 00:00 0          /usr/bin/prog\n';

  for (const size of [4, 8] as const) {
    for (const le of [true, false]) {
      it(`detects ${size * 8}-bit ${le ? 'little' : 'big'}-endian slots`, () => {
        const r = readLegacy(cpuBytes(words(2500n), size, le, maps), { fileName: 'x.prof' });
        const p = r.profile;
        assertValid(p);
        expect(r.format).toBe('gperftools-cpu');
        expect(p['.extensions']['gperftools-heap']!.facts).toMatchObject({ word_size: size, byte_order: le ? 'little' : 'big', period_us: 2500n, java: false, trailer: true });
        expect(p['.profile'].period).toBe(2_500_000n);
        expect(p['.profile'].period_type).toEqual({ type: 'cpu', unit: 'nanoseconds' });
        expect(values(p, 0)).toEqual([1n, 2n, 3n]);
        expect(values(p, 1)).toEqual([2_500_000n, 5_000_000n, 7_500_000n]);
        // Leaf kept, callers decremented.
        expect(addresses(p, 0)).toEqual([0x401010n, 0x40201fn, 0x40302fn]);
        expect(p['.mappings'].filename).toEqual(['/usr/bin/prog']);
      });
    }
  }

  it('handles addresses above 2^53 and a zero caller (wraps to 2^64-1) in both word sizes', () => {
    const big = 0xffffffffff600010n;
    const w = [0n, 3n, 0n, 10000n, 0n, 1n, 3n, big, big + 1n, 0n, 1n, 2n, 0x20000000000000n, 0x20000000000001n, 0n, 1n, 0n];
    const p = readLegacy(cpuBytes(w, 8, false)).profile;
    // Leaf big kept; caller big+1 adjusted to big, the same location; 0 - 1 wraps.
    expect(addresses(p, 0)).toEqual([big, big, (1n << 64n) - 1n]);
    expect(stackOf(p, 0)[0]).toBe(stackOf(p, 0)[1]);
    // 2^53 and 2^53 + 1 - 1: the same address reached through both key paths.
    expect(addresses(p, 1)).toEqual([0x20000000000000n, 0x20000000000000n]);
    expect(stackOf(p, 1)[0]).toBe(stackOf(p, 1)[1]);
    // (A second record with another caller, or the signal-frame heuristic would strip position 1.)
    const p4 = readLegacy(cpuBytes([0n, 3n, 0n, 10000n, 0n, 1n, 2n, 0xfffffff0n, 0n, 1n, 2n, 0x1000n, 0x2000n, 0n, 1n, 0n], 4, true)).profile;
    expect(addresses(p4, 0)).toEqual([0xfffffff0n, (1n << 64n) - 1n]);
  });

  it('removes a signal-handler frame shared by (almost) every sample at position 1', () => {
    const recs: bigint[] = [];
    for (let i = 0; i < 40; i++) recs.push(1n, 3n, 0x401000n + BigInt(i) * 16n, 0x7f0001n, 0x402000n + BigInt(i));
    const p = readLegacy(cpuBytes([0n, 3n, 0n, 10000n, 0n, ...recs, 0n, 1n, 0n], 8, true)).profile;
    for (let i = 0; i < 40; i++) expect(addresses(p, i)).toEqual([0x401000n + BigInt(i) * 16n, 0x402000n + BigInt(i) - 1n]);
  });

  it('keeps position 1 when samples do not agree on it', () => {
    const p = readLegacy(cpuBytes(words(10000n), 8, true)).profile;
    expect(stackOf(p, 0)).toHaveLength(3);
  });

  it('drops a duplicated leaf (pc reported again by the unwinder)', () => {
    const p = readLegacy(cpuBytes([0n, 3n, 0n, 10000n, 0n, 1n, 3n, 0x401000n, 0x401000n, 0x402000n, 2n, 2n, 0x501000n, 0x502000n, 0n, 1n, 0n], 8, true)).profile;
    expect(addresses(p, 0)).toEqual([0x401000n, 0x401fffn]);
    expect(addresses(p, 1)).toEqual([0x501000n, 0x501fffn]);
  });

  it('keeps zero-count records as samples and reads without a trailer (with a warning)', () => {
    const r = readLegacy(cpuBytes([0n, 3n, 0n, 10000n, 0n, 0n, 1n, 0x401000n, 2n, 1n, 0x402000n], 8, true));
    expect(values(r.profile, 0)).toEqual([0n, 2n]);
    expect(r.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_GPERFTOOLS_NO_TRAILER']);
    expect(r.profile['.extensions']['gperftools-heap']!.facts!.trailer).toBe(false);
  });

  it('reads Java CPU profiles: no address adjustment, symbols from the text after the trailer', () => {
    const w = [0n, 3n, 1n, 10000n, 0n, 5n, 2n, 0x1n, 0x2n, 0n, 1n, 0n];
    const r = readLegacy(cpuBytes(w, 4, true, '0x00000001 com.example.Foo.run (Foo.java:12)\n0x00000002 GC\n'));
    const p = r.profile;
    assertValid(p);
    expect(p['.extensions']['gperftools-heap']!.facts).toMatchObject({ java: true, variant: 'java' });
    const frames = resolveStack(p, 0);
    expect(frames.map((f) => [f.name, f.filename, f.line, f.address])).toEqual([
      ['com.example.Foo.run', 'Foo.java', 12, 0n],
      ['GC', '', 0, 0n],
    ]);
  });

  it('sums records of the same stack on request', () => {
    const w = [0n, 3n, 0n, 10000n, 0n, 2n, 2n, 0x401000n, 0x402000n, 3n, 2n, 0x401000n, 0x402000n, 0n, 1n, 0n];
    expect(readLegacy(cpuBytes(w, 8, true)).profile.samples.value.length).toBe(2);
    const p = readLegacy(cpuBytes(w, 8, true), { sumSameStacks: true }).profile;
    expect(values(p, 0)).toEqual([5n]);
    expect(values(p, 1)).toEqual([50_000_000n]);
  });

  it('rejects a record deeper than the bytes left, with its offset', () => {
    const e = catchError(() => readLegacy(cpuBytes([0n, 3n, 0n, 10000n, 0n, 1n, 1000000n, 0x401000n], 8, true), { fileName: 'cut.prof' }));
    expect(e.code).toBe('PROFKIT_E_TRUNCATED');
    expect(e.detail).toMatchObject({ file: 'cut.prof', offset: 40 });
  });

  it('rejects a record header cut in the middle', () => {
    const full = cpuBytes([0n, 3n, 0n, 10000n, 0n, 1n], 8, true);
    const e = catchError(() => readLegacy(full.subarray(0, 44)));
    expect(e).toMatchObject({ code: 'PROFKIT_E_TRUNCATED', detail: { offset: 40 } });
  });

  it('enforces maxRecords', () => {
    const e = catchError(() => readLegacy(cpuBytes(words(10000n), 8, true), { maxRecords: 2 }));
    expect(e).toMatchObject({ code: 'PROFKIT_E_LIMIT', detail: { option: 'maxRecords' } });
  });

  it('requires exactly 3 header slots as google/pprof does', () => {
    const e = catchError(() => readLegacy(cpuBytes([0n, 4n, 0n, 10000n, 0n, 0n, 0n, 1n, 0n], 8, true)));
    expect(e.code).toBe('PROFKIT_E_PARSE');
  });
});

describe('Java heapz / contentionz', () => {
  it('symbolizes the frame forms: file:line, (path), generated stub, bare names; unsamples heap rows at 512 KiB', () => {
    const text = [
      '--- heapz 1 ---',
      'format = java',
      'resolution = bytes',
      '  4096 2 @ 0x1 0x2 0x3 0x4',
      '',
      '0x00000001 com.example.A.f (A.java:12)',
      '0x00000002 com.example.B.g (/src/pkg/B.java)',
      '0x00000003 <generated stub/JIT code>',
      '0x00000004 GC',
      '',
    ].join('\n');
    const p = readLegacy(bytes(text)).profile;
    assertValid(p);
    expect(p.sample_types.type).toEqual(['inuse_objects', 'inuse_space']);
    expect(p['.profile'].period_type).toEqual({ type: '', unit: '' });
    expect(resolveStack(p, 0).map((f) => [f.name, f.filename, f.line, f.address])).toEqual([
      ['com.example.A.f', 'A.java', 12, 0n],
      ['com.example.B.g', 'B.java', 0, 0n],
      ['STUB', '', 0, 0n],
      ['GC', '', 0, 0n],
    ]);
    const k = 1 / (1 - Math.exp(-(4096 / 2) / 524288));
    expect(p.samples['.values'].map((c) => c[0])).toEqual([BigInt(Math.trunc(2 * k)), BigInt(Math.trunc(4096 * k))]);
    expect(labelsOf(p, 0)).toEqual([{ key: 'bytes', num: 2048n }]);
  });

  it('multiplies contention rows by the sampling period and reads the duration', () => {
    const text = '--- contentionz 1 ---\nformat = java\nresolution = microseconds\nsampling period = 10\nms since reset = 2000\n  30 3 @ 0x1\n0x1 com.example.Lock.wait (Lock.java:5)\n';
    const r = readLegacy(bytes(text));
    expect(r.format).toBe('gperftools-contention');
    const p = r.profile;
    expect(p.sample_types.unit).toEqual(['count', 'microseconds']);
    expect(p.samples['.values'].map((c) => c[0])).toEqual([30n, 300n]);
    expect(p['.profile'].duration_nanos).toBe(2_000_000_000n);
    expect(p['.profile'].period_type).toEqual({ type: 'contentions', unit: 'count' });
  });

  it('names the exact line of a bad row after 60,000 good ones (line numbers are counted as the rows go)', () => {
    // Counting every row's line from the start of the text was quadratic: about 13 s for 40k rows.
    const header = '--- heapz 1 ---\nformat = java\nresolution = bytes\n';
    const good = Array.from({ length: 60_000 }, (_, i) => `  64 1 @ 0x${(i + 1).toString(16)}\n`).join('');
    const bad = '  64 1 @ 0xfffffffffffffffffff\n';
    const e = catchError(() => readLegacy(bytes(`${header}${good}${bad}0x1 com.example.Main.run (Main.java:10)\n`), { maxSamples: 1_000_000 }));
    expect(e).toMatchObject({ code: 'PROFKIT_E_PARSE', detail: { line: 3 + 60_000 + 1 } });
    const ok = readLegacy(bytes(`${header}${good}\n0x1 com.example.Main.run (Main.java:10)\n`), { maxSamples: 1_000_000 }).profile;
    expect(ok.samples.value.length).toBe(60_000);
  });

  it('rejects a non-java format attribute as unrecognized', () => {
    const e = catchError(() => readLegacy(bytes('--- heapz 1 ---\nformat = cpp\n')));
    expect(e.message).toMatch(/unrecognized profile format/);
  });
});

describe('threadz and Go count profiles', () => {
  it('reads a goroutine count profile with the fake mapping', () => {
    const p = readLegacy(bytes('goroutine profile: total 3\n2 @ 0x401001 0x402002\n1 @ 0x401001\n')).profile;
    expect(p.sample_types.type).toEqual(['goroutine']);
    expect(values(p, 0)).toEqual([2n, 1n]);
    expect(addresses(p, 0)).toEqual([0x401000n, 0x402001n]);
    expect(p['.mappings'].memory_limit[0]).toBe((1n << 64n) - 1n);
  });

  it('reports malformed count rows with their line', () => {
    const e = catchError(() => readLegacy(bytes('goroutine profile: total 3\n2 @ 0x401001\nbad row\n')));
    expect(e).toMatchObject({ code: 'PROFKIT_E_PARSE', detail: { line: 3 } });
  });

  it('requires a memory map or end marker after the last thread', () => {
    const e = catchError(() => readLegacy(bytes('--- threadz 1 ---\n--- Thread 1 (name: main/1) stack: ---\n  0x401000\n')));
    expect(e).toMatchObject({ code: 'PROFKIT_E_PARSE', detail: { line: 3 } });
  });
});

describe('errors', () => {
  it('empty input', () => {
    expect(catchError(() => readLegacy(new Uint8Array(0), { fileName: 'e' }))).toMatchObject({ code: 'PROFKIT_E_EMPTY_INPUT', detail: { file: 'e' } });
  });
  it('unrecognized text', () => {
    const e = catchError(() => readLegacy(bytes('hello world\n'), { fileName: 'h' }));
    expect(e).toMatchObject({ code: 'PROFKIT_E_PARSE', detail: { file: 'h', line: 1 } });
  });
  it('a format the input is not', () => {
    const e = catchError(() => readLegacy(localFixture('go.mutex'), { format: 'gperftools-heap' }));
    expect(e.code).toBe('PROFKIT_E_PARSE');
  });
  it('an unknown format id', () => {
    expect(catchError(() => readLegacy(localFixture('go.mutex'), { format: 'pprof' })).code).toBe('PROFKIT_E_NO_ADAPTER');
  });
  it('a java heap without resolution', () => {
    const e = catchError(() => readLegacy(bytes('--- heapz 1 ---\nformat = java\n 10 2 @ 0x1\n')));
    expect(e.message).toMatch(/missing sample type/);
  });
});
