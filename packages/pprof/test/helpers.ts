/** Test helpers: shared fixtures, a tiny independent protobuf writer, Go tools. */

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ProfileBuilder, ProfileIndex, isProfkitError, resolveStack, labelsOf, type Profile } from '@profkit/core/node';

export const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const repoRoot = resolve(packageDir, '../..');

/** `../shared/fixtures` beside the clone, or `$PROFKIT_SHARED/fixtures`. */
export const fixturesDir = join(process.env.PROFKIT_SHARED ?? resolve(repoRoot, '../shared'), 'fixtures');
export const sharedToolsDir = join(process.env.PROFKIT_SHARED ?? resolve(repoRoot, '../shared'), 'tools');
export const hasFixtures = existsSync(join(fixturesDir, 'pprof'));
if (!hasFixtures) console.warn(`skipping fixture tests: ${fixturesDir}/pprof is absent (set PROFKIT_SHARED or place ../shared/fixtures beside the repository)`);

export function fixture(rel: string): string {
  return join(fixturesDir, rel);
}

/** Every profile.proto fixture (gzip). */
export const PROTO_FIXTURES = [
  'pprof/internal/driver/testdata/cppbench.cpu_no_samples_type',
  'pprof/internal/driver/testdata/go.nomappings.crash',
  'pprof/internal/report/testdata/sample.cpu',
  'pprof/internal/proftest/testdata/large.cpu',
  'r-profile/inst/samples/proto/1.out.prof.pb.gz',
];

/** Legacy (non-proto) profiles: they belong to the gperftools-heap adapter. */
export const LEGACY_FIXTURES = [
  'pprof/profile/testdata/cppbench.contention',
  'pprof/profile/testdata/cppbench.cpu',
  'pprof/profile/testdata/cppbench.growth',
  'pprof/profile/testdata/cppbench.heap',
  'pprof/profile/testdata/cppbench.thread',
  'pprof/profile/testdata/cppbench.thread.all',
  'pprof/profile/testdata/cppbench.thread.none',
  'pprof/profile/testdata/go.crc32.cpu',
  'pprof/profile/testdata/go.godoc.thread',
  'pprof/profile/testdata/gobench.cpu',
  'pprof/profile/testdata/gobench.heap',
  'pprof/profile/testdata/java.contention',
  'pprof/profile/testdata/java.cpu',
  'pprof/profile/testdata/java.heap',
  'pprof/internal/driver/testdata/cppbench.small.contention',
  'pprof/fuzz/testdata/7e3c92482f6f39fc502b822ded792c589849cca8',
  'r-profile/inst/samples/rprof/1.out',
];

export function readFixture(rel: string): Uint8Array {
  return new Uint8Array(readFileSync(fixture(rel)));
}

// ---------------------------------------------------------------------------------------------
// A tiny protobuf writer for hand-made inputs, independent of the code under test.

export type Field = [field: number, value: number | bigint | Uint8Array | Field[] | { packed: (number | bigint)[] } | { fixed64: bigint } | { fixed32: number } | { wire: number }];

export function varint(v: number | bigint): number[] {
  let u = BigInt.asUintN(64, BigInt(v));
  const out: number[] = [];
  while (u >= 0x80n) {
    out.push(Number(u & 0x7fn) | 0x80);
    u >>= 7n;
  }
  out.push(Number(u));
  return out;
}

/** Encodes fields in the given order: numbers/bigints as varints, arrays as sub-messages. */
export function pb(fields: Field[]): Uint8Array {
  const out: number[] = [];
  for (const [f, v] of fields) {
    if (typeof v === 'number' || typeof v === 'bigint') out.push(...varint(f * 8), ...varint(v));
    else if (v instanceof Uint8Array) out.push(...varint(f * 8 + 2), ...varint(v.length), ...v);
    else if (Array.isArray(v)) {
      const inner = pb(v);
      out.push(...varint(f * 8 + 2), ...varint(inner.length), ...inner);
    } else if ('packed' in v) {
      const inner = v.packed.flatMap((x) => varint(x));
      out.push(...varint(f * 8 + 2), ...varint(inner.length), ...inner);
    } else if ('fixed64' in v) {
      const b = new Uint8Array(8);
      new DataView(b.buffer).setBigUint64(0, v.fixed64, true);
      out.push(...varint(f * 8 + 1), ...b);
    } else if ('fixed32' in v) {
      const b = new Uint8Array(4);
      new DataView(b.buffer).setUint32(0, v.fixed32, true);
      out.push(...varint(f * 8 + 5), ...b);
    } else out.push(...varint(f * 8 + v.wire));
  }
  return new Uint8Array(out);
}

export const str = (s: string): Uint8Array => new TextEncoder().encode(s);

/** A small profile with every kind of top-level field, for the decoders' equivalence tests. */
export function everyFieldProfile(): Uint8Array {
  return pb([
    [1, [[1, 1], [2, 2]]],
    [1, [[1, 3], [2, 4]]],
    [2, [[1, { packed: [1, 2, 1] }], [2, { packed: [5, -7] }], [3, [[1, 5], [2, 6]]], [3, [[1, 7], [3, 1234567890123n], [4, 4]]]]],
    [2, [[1, 2], [2, 1], [2, 2]]],
    [3, [[1, 1], [2, 0x400000], [3, 0x500000], [5, 8], [6, 9], [7, 1]]],
    [4, [[1, 1], [2, 1], [3, 0x400123], [4, [[1, 1], [2, 10]]], [4, [[1, 2], [2, 20], [3, 3]]]]],
    [4, [[1, 2], [4, [[1, 2], [2, 21]]]]],
    [5, [[1, 1], [2, 10], [3, 10], [4, 11], [5, 9]]],
    [5, [[1, 2], [2, 12], [4, 11]]],
    ...['', 'samples', 'count', 'cpu', 'nanoseconds', 'thread', 'main', 'bytes', '/bin/app', 'abc123', 'fn_é', 'app.c', 'helper'].map((s) => [6, str(s)] as Field),
    [9, 1700000000000000000n],
    [10, 1000000000],
    [11, [[1, 3], [2, 4]]],
    [12, 10000000],
    [13, 10],
    [14, 3],
  ]);
}

/** What a decode gives: the profile and warnings, or its typed error's code, rule, offset and message. */
export type Outcome = { ok: true; profile: unknown; warnings: unknown } | { ok: false; code: string; rule: unknown; offset: unknown; message: string };

export function outcome(f: () => { profile: unknown; warnings: unknown }): Outcome {
  try {
    const r = f();
    return { ok: true, profile: r.profile, warnings: r.warnings };
  } catch (e) {
    if (!isProfkitError(e)) throw e;
    return { ok: false, code: e.code, rule: e.detail.rule, offset: e.detail.offset, message: e.message };
  }
}

// ---------------------------------------------------------------------------------------------
// Meaning of a profile (ids left out), for round-trip comparisons.

export function meaning(p: Profile): unknown {
  const index = new ProfileIndex(p);
  const n = p.samples.locations.offsets.length - 1;
  const samples: string[] = [];
  for (let i = 0; i < n; i++) {
    const frames = resolveStack(p, i, index).map((f) => `${f.name}|${f.systemName}|${f.filename}|${f.line}|${f.column}|${f.startLine}|${f.address.toString(16)}|${f.inlined}`);
    const values = p.samples['.values'].map((c) => c[i]!.toString());
    const labels = labelsOf(p, i)
      .map((l) => JSON.stringify(l, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)))
      .sort();
    samples.push(JSON.stringify({ frames, values, labels }));
  }
  const m = p['.mappings'];
  const mappings = Array.from(m.mapping_id, (_id, i) =>
    [m.memory_start[i], m.memory_limit[i], m.file_offset[i], m.filename[i], m.build_id[i], m.has_functions[i], m.has_filenames[i], m.has_line_numbers[i], m.has_inline_frames[i]].join('|'),
  );
  const f = p['.profile'];
  return {
    sampleTypes: p.sample_types.type.map((t, i) => `${t}/${p.sample_types.unit[i]}`),
    samples,
    mappings,
    facts: JSON.stringify(f, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
  };
}

// ---------------------------------------------------------------------------------------------
// Go tools (skip with a message when absent).

export function hasCommand(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

const PPROF_SRC = '/usr/share/gocode/src/github.com/google/pprof/profile';
export const goMissing: string | undefined = !hasCommand('go')
  ? 'go is not installed (apt-get install -y golang-go golang-github-google-pprof-dev)'
  : !existsSync(PPROF_SRC)
    ? `${PPROF_SRC} is absent (apt-get install -y golang-github-google-pprof-dev)`
    : !existsSync(join(sharedToolsDir, 'goref', 'build.sh'))
      ? `${sharedToolsDir}/goref/build.sh is absent`
      : undefined;

export const goCacheDir = join(repoRoot, 'node_modules', '.cache', 'profkit-goref');

/** Builds goref (via its build.sh) and our dumpstring helper; returns their paths. */
export function buildGoTools(): { goref: string; dumpstring: string } {
  mkdirSync(goCacheDir, { recursive: true });
  const env = { ...process.env, GOCACHE: join(goCacheDir, 'gocache') };
  const goref = join(goCacheDir, 'goref');
  const dumpstring = join(goCacheDir, 'dumpstring');
  execFileSync(join(sharedToolsDir, 'goref', 'build.sh'), [goref], { env, stdio: 'pipe' });
  execFileSync('go', ['build', '-o', dumpstring, join(packageDir, 'test/go/dumpstring/main.go')], {
    env: { ...env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOFLAGS: '' },
    cwd: join(packageDir, 'test/go/dumpstring'),
    stdio: 'pipe',
  });
  return { goref, dumpstring };
}

/** A profile large enough for many chunks: labels, inline lines, mappings, varied ids. */
export function bigProfile(samples: number, seed = 7): Profile {
  let a = seed;
  const rnd = (k: number) => {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    return a % k;
  };
  const b = new ProfileBuilder({
    sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }, { type: 'alloc', unit: 'bytes' }],
    facts: { period_type: { type: 'cpu', unit: 'nanoseconds' }, period: 10000000n, time_nanos: 1700000000000000000n, comments: ['a', 'b', 'c'] },
  });
  const m = b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0x9000000n, filename: '/usr/bin/app', buildId: 'abc', hasFunctions: true });
  const fns: number[] = [];
  for (let i = 1; i <= 300; i++) fns.push(b.internFunction({ name: `pkg.F${i}ü`, systemName: `_Z${i}`, filename: `src/f${i % 7}.go`, startLine: i }));
  const locs: number[] = [];
  for (let i = 1; i <= 3000; i++) {
    locs.push(b.addLocation({ address: BigInt(0x400000 + i * 16), mappingId: m, functionId: fns[rnd(300)]!, line: 1 + rnd(900), inlinedInto: rnd(3) === 0 ? [{ functionId: fns[rnd(300)]!, line: 3 }] : [] }));
  }
  for (let i = 0; i < samples; i++) {
    const stack = Array.from({ length: 1 + rnd(30) }, () => locs[rnd(3000)]!);
    const labels = rnd(3) === 0 ? [{ key: 'thread', str: `w-${rnd(5)}` }, { key: 'bytes', num: BigInt(rnd(1 << 20)), unit: 'bytes' }] : undefined;
    b.addSample(stack, [BigInt(1 + rnd(5)), BigInt(rnd(1 << 30)) * 1000n, -BigInt(rnd(100))], labels);
  }
  return b.build();
}
