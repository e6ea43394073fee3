import { errorCodeOf } from '@profkit/test-utils';
import { describe, expect, it } from 'vitest';
import {
  ErrorCodes,
  ProfileBuilder,
  ProfileIndex,
  compact,
  formatPprofDump,
  locationRow,
  mappingRow,
  merge,
  resolveStack,
  sampleRow,
  validate,
  type Profile,
} from '../src/node/index.js';

const TYPES = [
  { type: 'samples', unit: 'count' },
  { type: 'cpu', unit: 'nanoseconds' },
];

/** Meaning of every sample: frame names (leaf first), values, labels. */
function meaning(p: Profile) {
  const idx = new ProfileIndex(p);
  return Array.from({ length: p.samples.value.length }, (_, i) => ({
    stack: resolveStack(p, i, idx).map((f) => f.name),
    values: p.samples['.values'].map((c) => c[i]!),
    labels: sampleRow(p, i).labels,
  }));
}

const codeOf = errorCodeOf;

/** Profile 1: main binary at 0x400000, foo/main. */
function profile1(): Profile {
  const b = new ProfileBuilder({
    sampleTypes: TYPES,
    facts: {
      period_type: { type: 'cpu', unit: 'nanoseconds' },
      period: 10n,
      time_nanos: 0n,
      duration_nanos: 100n,
      comments: ['c1', 'shared'],
      drop_frames: 'malloc',
      default_sample_type: '',
      doc_url: '',
    },
  });
  const m = b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0x500000n, filename: '/bin/app', buildId: 'abc', hasFunctions: true });
  const main = b.internFunction({ name: 'main', filename: 'main.c' });
  const foo = b.internFunction({ name: 'foo', filename: 'foo.c' });
  const lMain = b.internLocation({ functionId: main, line: 5, address: 0x402000n, mappingId: m });
  const lFoo = b.internLocation({ functionId: foo, line: 10, address: 0x401000n, mappingId: m });
  b.addSample([lFoo, lMain], [1, 10], [{ key: 'thread', str: 'a' }]);
  b.addSample([lMain], [2, 20]);
  return b.build();
}

/** Profile 2: same binary loaded at 0x800000, ids in another order, plus libc. */
function profile2(): Profile {
  const b = new ProfileBuilder({
    sampleTypes: TYPES,
    facts: {
      period_type: { type: 'cpu', unit: 'nanoseconds' },
      period: 30n,
      time_nanos: 2000n,
      duration_nanos: 50n,
      comments: ['shared', 'c2'],
      drop_frames: 'other',
      default_sample_type: 'cpu',
      doc_url: 'https://example.com/doc',
    },
  });
  const libc = b.internMapping({ memoryStart: 0x7f0000n, memoryLimit: 0x7f1000n, filename: '/lib/libc.so' });
  const m = b.internMapping({ memoryStart: 0x800000n, memoryLimit: 0x900000n, filename: '/other/path/app', buildId: 'abc', hasFunctions: true });
  const memcpy = b.internFunction({ name: 'memcpy' });
  const foo = b.internFunction({ name: 'foo', filename: 'foo.c' });
  const main = b.internFunction({ name: 'main', filename: 'main.c' });
  const lMemcpy = b.internLocation({ functionId: memcpy, address: 0x7f0010n, mappingId: libc });
  const lFoo = b.internLocation({ functionId: foo, line: 10, address: 0x801000n, mappingId: m });
  const lMain = b.internLocation({ functionId: main, line: 5, address: 0x802000n, mappingId: m });
  b.addSample([lFoo, lMain], [5, 50], [{ key: 'thread', str: 'a' }]);
  b.addSample([lFoo, lMain], [1, 1], [{ key: 'thread', str: 'b' }]);
  b.addSample([lMemcpy, lMain], [0, 0]);
  b.addSample([lMemcpy, lFoo, lMain], [3, 30]);
  return b.build();
}

describe('merge', () => {
  it('merges profiles with different ids and mapping starts, rebasing addresses', () => {
    const p1 = profile1();
    const p2 = profile2();
    const before = [formatPprofDump(p1), formatPprofDump(p2)];
    const m = merge([p1, p2]);
    expect(validate(m).ok).toBe(true);
    // Inputs untouched.
    expect([formatPprofDump(p1), formatPprofDump(p2)]).toEqual(before);
    expect(meaning(m)).toEqual([
      { stack: ['foo', 'main'], values: [6n, 60n], labels: [{ key: 'thread', str: 'a' }] },
      { stack: ['main'], values: [2n, 20n], labels: [] },
      { stack: ['foo', 'main'], values: [1n, 1n], labels: [{ key: 'thread', str: 'b' }] },
      { stack: ['memcpy', 'foo', 'main'], values: [3n, 30n], labels: [] },
    ]);
    // The app mapping of p2 is identified with p1's (same build id and size) and rebased.
    expect(m['.mappings'].mapping_id.length).toBe(2);
    expect(mappingRow(m, 0)).toMatchObject({ mappingId: 1, memoryStart: 0x400000n, filename: '/bin/app' });
    expect(mappingRow(m, 1)).toMatchObject({ mappingId: 2, memoryStart: 0x7f0000n, filename: '/lib/libc.so' });
    const rows = Array.from({ length: m.locations.location_id.length }, (_, r) => locationRow(m, r));
    expect(rows.map((r) => [r.locationId, r.address, r.mappingId])).toEqual([
      [1, 0x401000n, 1],
      [2, 0x402000n, 1],
      [3, 0x7f0010n, 2],
    ]);
    expect(Array.from(m.functions.function_id)).toEqual([1, 2, 3]);
    expect(m.functions.name).toEqual(['foo', 'main', 'memcpy']);
    // Headers.
    const f = m['.profile'];
    expect(f.period).toBe(30n);
    expect(f.duration_nanos).toBe(150n);
    expect(f.time_nanos).toBe(2000n);
    expect(f.comments).toEqual(['c1', 'shared', 'c2']);
    expect(f.drop_frames).toBe('malloc');
    expect(f.default_sample_type).toBe('cpu');
    expect(f.doc_url).toBe('https://example.com/doc');
  });

  it('treats labels per key as pprof does (order across keys does not matter)', () => {
    const b = new ProfileBuilder({ sampleTypes: [TYPES[0]!] });
    const l = b.internLocation({ functionId: b.internFunction({ name: 'f' }) });
    b.addSample([l], [1], [{ key: 'a', str: 'x' }, { key: 'n', num: 3, unit: 'bytes' }]);
    b.addSample([l], [2], [{ key: 'n', num: 3, unit: 'bytes' }, { key: 'a', str: 'x' }]);
    b.addSample([l], [4], [{ key: 'n', num: 3, unit: 'kilobytes' }, { key: 'a', str: 'x' }]);
    b.addSample([l], [8], [{ key: 'a', str: 'y' }, { key: 'a', str: 'x' }]);
    b.addSample([l], [16], [{ key: 'a', str: 'x' }, { key: 'a', str: 'y' }]);
    const m = compact(b.build());
    expect(meaning(m).map((s) => s.values[0])).toEqual([3n, 4n, 8n, 16n]);
  });

  it('uses the earliest nonzero time (fixing pprof time_nanos loop quirk)', () => {
    const withTime = (t: bigint) => {
      const b = new ProfileBuilder({ sampleTypes: [TYPES[0]!], facts: { time_nanos: t } });
      b.addSample([b.internLocation({ functionId: b.internFunction({ name: 'f' }) })], [1]);
      return b.build();
    };
    // pprof would give 0 for [5, 0] and 5 for [0, 5]; both are 5 here.
    expect(merge([withTime(5n), withTime(0n)])['.profile'].time_nanos).toBe(5n);
    expect(merge([withTime(0n), withTime(5n)])['.profile'].time_nanos).toBe(5n);
    expect(merge([withTime(7n), withTime(0n), withTime(3n)])['.profile'].time_nanos).toBe(3n);
    expect(merge([withTime(0n), withTime(0n)])['.profile'].time_nanos).toBe(0n);
  });

  it('does not merge multi-line locations that differ only in a non-last column (pprof stride bug)', () => {
    const b = new ProfileBuilder({ sampleTypes: [TYPES[0]!] });
    const inner = b.internFunction({ name: 'inner' });
    const outer = b.internFunction({ name: 'outer' });
    const l1 = b.internLocation({ functionId: inner, line: 1, column: 1, inlinedInto: [{ functionId: outer, line: 2 }] });
    const l2 = b.internLocation({ functionId: inner, line: 1, column: 2, inlinedInto: [{ functionId: outer, line: 2 }] });
    b.addSample([l1], [1]);
    b.addSample([l2], [10]);
    const m = merge([b.build()]);
    expect(m.locations.location_id.length).toBe(2);
    expect(Array.from(m.locations['.column'])).toEqual([1, 2]);
    expect(meaning(m).map((s) => s.values[0])).toEqual([1n, 10n]);
  });

  it('rejects incompatible profiles with PROFKIT_E_INCOMPATIBLE', () => {
    const a = new ProfileBuilder({ sampleTypes: TYPES }).build();
    const b = new ProfileBuilder({ sampleTypes: [TYPES[1]!, TYPES[0]!] }).build();
    const c = new ProfileBuilder({ sampleTypes: TYPES, facts: { period_type: { type: 'cpu', unit: 'nanoseconds' } } }).build();
    const d = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'microseconds' }] }).build();
    expect(codeOf(() => merge([a, b]))).toBe(ErrorCodes.INCOMPATIBLE);
    expect(codeOf(() => merge([a, c]))).toBe(ErrorCodes.INCOMPATIBLE);
    expect(codeOf(() => merge([a, d]))).toBe(ErrorCodes.INCOMPATIBLE);
    expect(codeOf(() => merge([]))).toBe(ErrorCodes.USAGE);
  });

  it('compatibilizes sample types by name when asked', () => {
    const a = new ProfileBuilder({ sampleTypes: [{ type: 'alloc', unit: 'bytes' }, { type: 'cpu', unit: 'nanoseconds' }, { type: 'samples', unit: 'count' }] });
    a.addSample([a.internLocation({ functionId: a.internFunction({ name: 'f' }) })], [1, 2, 3]);
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }], facts: { default_sample_type: 'samples' } });
    b.addSample([b.internLocation({ functionId: b.internFunction({ name: 'f' }) })], [10, 20]);
    const m = merge([a.build(), b.build()], { compatibilizeSampleTypes: true });
    expect(m.sample_types).toEqual({ type: ['cpu', 'samples'], unit: ['nanoseconds', 'count'] });
    expect(meaning(m)).toEqual([{ stack: ['f'], values: [22n, 13n], labels: [] }]);
    // a's default (none) is not a common type: it becomes the first common type.
    expect(m['.profile'].default_sample_type).toBe('cpu');
    expect(codeOf(() => merge([a.build(), new ProfileBuilder({ sampleTypes: [{ type: 'x', unit: 'y' }] }).build()], { compatibilizeSampleTypes: true }))).toBe(
      ErrorCodes.INCOMPATIBLE,
    );
  });

  it('garbage-collects samples that cancel out, and what only they used', () => {
    const mk = (sign: bigint) => {
      const b = new ProfileBuilder({ sampleTypes: [TYPES[0]!] });
      const main = b.internFunction({ name: 'main' });
      const gone = b.internFunction({ name: 'gone' });
      const lMain = b.internLocation({ functionId: main });
      b.addSample([b.internLocation({ functionId: gone }), lMain], [4n * sign]);
      if (sign > 0n) b.addSample([lMain], [1]);
      return b.build();
    };
    const m = merge([mk(1n), mk(-1n)]);
    expect(meaning(m)).toEqual([{ stack: ['main'], values: [1n], labels: [] }]);
    expect(m.functions.name).toEqual(['main']);
    expect(m.locations.location_id.length).toBe(1);
  });

  it('keeps format extensions: facts and tables always, per-sample columns only when no samples combine', () => {
    const b = new ProfileBuilder({ sampleTypes: [TYPES[0]!] });
    const f = b.internLocation({ functionId: b.internFunction({ name: 'f' }) });
    const g = b.internLocation({ functionId: b.internFunction({ name: 'g' }) });
    b.extension('fmt').facts = { rate: 7 };
    b.addSample([f], [1]);
    b.setSampleExtension('fmt', 'tick', 100);
    b.addSample([g], [0]);
    b.setSampleExtension('fmt', 'tick', 200);
    b.addSample([g], [2]);
    b.setSampleExtension('fmt', 'tick', 300);
    const p = b.build();
    const c = compact(p);
    expect(c['.extensions'].fmt!.facts).toEqual({ rate: 7 });
    expect(Array.from(c['.extensions'].fmt!.samples!.tick as Float64Array)).toEqual([100, 300]);
    const m = merge([p, p]);
    expect(m['.extensions'].fmt!.facts).toEqual({ rate: 7 });
    expect(m['.extensions'].fmt!.samples).toBeUndefined();
    expect(meaning(m).map((s) => s.values[0])).toEqual([2n, 4n]);
  });
});

describe('compact', () => {
  it('drops unreferenced rows, zero samples and renumbers in first-use order, keeping the main binary first', () => {
    const b = new ProfileBuilder({ sampleTypes: [TYPES[0]!] });
    const mainBin = b.internMapping({ memoryStart: 0x1000n, memoryLimit: 0x2000n, filename: '/bin/main' });
    const lib = b.internMapping({ memoryStart: 0x5000n, memoryLimit: 0x6000n, filename: '/lib/x.so' });
    const unused = b.internFunction({ name: 'unused' });
    const leaf = b.internFunction({ name: 'leaf' });
    const root = b.internFunction({ name: 'root' });
    b.internLocation({ functionId: unused, address: 0x1100n, mappingId: mainBin });
    const lRoot = b.internLocation({ functionId: root, address: 0x5100n, mappingId: lib });
    const lLeaf = b.internLocation({ functionId: leaf, address: 0x5200n, mappingId: lib });
    b.addSample([lLeaf, lRoot], [3]);
    b.addSample([lRoot], [0]);
    b.addSample([lLeaf, lRoot], [4]);
    const c = compact(b.build());
    expect(c['.mappings'].filename).toEqual(['/bin/main', '/lib/x.so']);
    expect(c.functions.name).toEqual(['leaf', 'root']);
    expect(Array.from(c.locations.location_id)).toEqual([1, 2]);
    expect(Array.from(c.locations['.address'])).toEqual([0x5200n, 0x5100n]);
    expect(meaning(c)).toEqual([{ stack: ['leaf', 'root'], values: [7n], labels: [] }]);
    expect(validate(c).ok).toBe(true);
  });
});
