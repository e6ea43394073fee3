import { existsSync } from 'node:fs';
import { ProfileBuilder, ProfileIndex, locationFrames, mappingRow, sampleRow, type Profile } from '@profkit/core/node';
import { repoRoot, sharedDir as sharedDirOf, sharedFixturesDir } from '@profkit/test-utils';

export { repoRoot };
export const sharedDir = sharedDirOf();
export const fixturesDir = sharedFixturesDir();
export const haveFixtures = existsSync(fixturesDir);

/** A profile using every feature of the model. */
export function richProfile(): Profile {
  const b = new ProfileBuilder({
    sampleTypes: [
      { type: 'alloc_objects', unit: 'count' },
      { type: 'alloc_space', unit: 'bytes' },
      { type: 'delta', unit: 'bytes' },
    ],
    facts: {
      period_type: { type: 'space', unit: 'bytes' },
      period: 524288n,
      time_nanos: 1_700_000_000_123_456_789n,
      duration_nanos: 10_000_000_000n,
      comments: ['first comment', 'second, with "quotes" and \'apostrophes\'\nand a newline'],
      drop_frames: 'runtime\\..*',
      keep_frames: '',
      default_sample_type: 'alloc_space',
      doc_url: 'https://example.com/doc',
    },
  });
  const mExe = b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0x800000n, fileOffset: 0n, filename: '/usr/bin/app', buildId: 'abc123', hasFunctions: true, hasFilenames: true, hasLineNumbers: true, hasInlineFrames: true });
  const mKernel = b.internMapping({ memoryStart: 0xffffffff80000000n, memoryLimit: 0xffffffffffffffffn, fileOffset: 0x1000n, filename: '[kernel]', buildId: '' });
  const fMain = b.internFunction({ name: 'main', filename: 'main.c', startLine: 10 });
  const fWork = b.internFunction({ name: 'work', systemName: '_Z4workv', filename: 'work.cc', startLine: 100 });
  const fInl = b.internFunction({ name: 'inlined_helper', filename: 'helper.h', startLine: 5 });
  const fInl2 = b.internFunction({ name: 'inlined_outer', filename: 'helper.h', startLine: 20 });
  const fRec = b.internFunction({ name: 'recurse', filename: 'rec.c' });
  const fWeird = b.internFunction({ name: 'name with , "comma" ; and \u00e9\u4e2d', filename: '' });
  const lMain = b.internLocation({ functionId: fMain, line: 12, column: 3, address: 0x401000n, mappingId: mExe });
  const lWork = b.internLocation({ functionId: fWork, line: 120, address: 0x402000n, mappingId: mExe });
  // Innermost line inlined_helper, inlined into inlined_outer, inlined into work.
  const lInl = b.internLocation({ functionId: fInl, line: 7, column: 9, address: 0x403000n, mappingId: mExe, inlinedInto: [{ functionId: fInl2, line: 22 }, { functionId: fWork, line: 130, column: 1 }] });
  const lRec = b.internLocation({ functionId: fRec, line: 3 });
  const lKernel = b.internLocation({ address: 0xffffffff81000000n, mappingId: mKernel });
  const lFolded = b.internLocation({ functionId: fWeird, line: 1, address: 0x404000n, mappingId: mExe, isFolded: true });
  b.addSample([lInl, lWork, lMain], [1, 1024, -5], [{ key: 'thread', str: 'worker-1' }, { key: 'bytes', num: 1024, unit: 'bytes' }]);
  b.addSample([lRec, lRec, lRec, lWork, lMain], [2, 2n ** 60n, -(2n ** 62n)], [{ key: 'thread', str: '' }]);
  b.addSample([lKernel, lWork, lMain], [3, 9007199254740993n, 0]);
  b.addSample([], [0, 0, 7]);
  b.addSample([lFolded, lMain], [4, -(2n ** 63n), 2n ** 63n - 1n], [{ key: 'n', num: -(2n ** 62n) }, { key: 'thread', str: 'main' }]);
  b.addSample([lWork, lMain], [5, 50, 5]);
  b.setSampleExtension('test-ext', 'weight', 0.5);
  b.setSampleExtension('test-ext', 'tag', 'last', '');
  const ext = b.extension('test-ext');
  ext.facts = { interval_us: 10000, big: 2n ** 70n, nested: { list: [1, 'two', true, null, 3n] }, label: 'x' };
  ext.tables = {
    files: { file_id: Uint32Array.from([1, 2]), path: ['a.R', ''], big: BigUint64Array.from([0n, 2n ** 64n - 1n]), signed: Int32Array.from([-1, 2 ** 31 - 1]), flags: Uint8Array.from([0, 255]), i64: BigInt64Array.from([-(2n ** 63n), 1n]) },
  };
  return b.build();
}

/** A synthetic profile of `n` samples over `nf` functions, deterministic (seeded). */
export function syntheticProfile(n: number, seed = 1, nf = 200): Profile {
  let s = seed >>> 0 || 1;
  const rnd = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }], facts: { period_type: { type: 'cpu', unit: 'nanoseconds' }, period: 10_000_000n } });
  const m = b.internMapping({ memoryStart: 0x1000n, memoryLimit: 0x10000000n, filename: '/bin/synthetic' });
  const fns = Array.from({ length: nf }, (_, i) => b.internFunction({ name: `fn_${i}`, filename: `src/file_${i % 17}.go`, startLine: i * 10 + 1 }));
  const locs = Array.from({ length: nf * 4 }, (_, i) =>
    b.internLocation({ functionId: fns[i % nf]!, line: (i % nf) * 10 + 2 + Math.floor(i / nf), address: BigInt(0x1000 + i * 16), mappingId: m, inlinedInto: i % 13 === 0 ? [{ functionId: fns[(i * 7) % nf]!, line: 5 }] : undefined }),
  );
  for (let i = 0; i < n; i++) {
    const depth = 1 + Math.floor(rnd() * 24);
    const stack: number[] = [];
    for (let d = 0; d < depth; d++) stack.push(locs[Math.floor(rnd() * rnd() * locs.length)]!);
    const c = 1 + Math.floor(rnd() * 3);
    b.addSample(stack, [c, BigInt(c) * 10_000_000n], i % 10 === 0 ? [{ key: 'goroutine', num: i % 7 }] : undefined);
  }
  return b.build();
}

/** The meaning of a profile, without ids: what a round trip must preserve. */
export function meaning(p: Profile): unknown {
  const index = new ProfileIndex(p);
  const big = (_k: string, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v);
  const mapping = (id: number) => {
    if (id === 0) return null;
    const m = mappingRow(p, index.mappings.get(id));
    return { ...m, mappingId: undefined };
  };
  // Each location's frames (function, file, lines, address, mapping, folded; not ids), as one
  // canonical string computed once per location: the stacks are lists of these.
  const locText = new Map<number, string>();
  for (let r = 0; r < p.locations.location_id.length; r++) {
    const frames = locationFrames(p, index, r).map((f) => ({ ...f, locationId: undefined, mappingId: undefined, mapping: mapping(f.mappingId) }));
    locText.set(p.locations.location_id[r]!, JSON.stringify({ frames, folded: p.locations['.is_folded'][r] }, big));
  }
  const samples = [];
  for (let i = 0; i < p.samples.value.length; i++) {
    const row = sampleRow(p, i);
    samples.push({ values: row.values, labels: row.labels, stack: row.locationIds.map((id) => locText.get(id) ?? `missing location ${id}`) });
  }
  const ext: Record<string, unknown> = {};
  for (const [k, e] of Object.entries(p['.extensions'])) {
    ext[k] = {
      facts: e.facts ?? {},
      samples: Object.fromEntries(Object.entries(e.samples ?? {}).map(([c, v]) => [c, { type: v.constructor.name, values: Array.from(v as ArrayLike<unknown>) }])),
      tables: Object.fromEntries(Object.entries(e.tables ?? {}).map(([t, cols]) => [t, Object.fromEntries(Object.entries(cols).map(([c, v]) => [c, { type: v.constructor.name, values: Array.from(v as ArrayLike<unknown>) }]))])),
    };
  }
  return {
    meta: p.meta,
    sampleTypes: p.sample_types,
    facts: p['.profile'],
    samples,
    extensions: ext,
    labelsPresent: p.samples['.label_offsets'] !== undefined,
  };
}

/** Canonical text of a profile's meaning (fast to compare for large profiles). */
export function meaningText(p: Profile): string {
  return JSON.stringify(meaning(p), (_k, v) => (typeof v === 'bigint' ? `${v}n` : v === undefined ? null : v));
}
