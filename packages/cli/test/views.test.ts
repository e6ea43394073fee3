/**
 * `profkit top/tree/peek/diff/merge/filter` against `go tool pprof` on the shared fixtures
 * (profile.proto files, legacy gperftools/Java profiles, and Rprof / gperftools profiles
 * converted to profile.proto by our CLI). pprof's output is parsed and compared row by row
 * (names, flat, cum, percentages) and by its report lines; nothing is hard-coded.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixture, fromShowing, goAvailable, hasFixtures, parseTop, parseValue, pprof, profkit, type TopRow } from './views-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-views-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const T = 'pprof/profile/testdata/';
/** profile.proto and legacy profiles that `go tool pprof` and our adapters both read. */
const TOP_FIXTURES = [
  'pprof/internal/report/testdata/sample.cpu',
  'pprof/internal/driver/testdata/cppbench.small.contention',
  'pprof/internal/driver/testdata/go.nomappings.crash',
  T + 'cppbench.cpu',
  T + 'cppbench.heap',
  T + 'cppbench.growth',
  T + 'cppbench.contention',
  T + 'cppbench.thread',
  T + 'gobench.cpu',
  T + 'gobench.heap',
  T + 'go.crc32.cpu',
  T + 'go.godoc.thread',
  T + 'java.cpu',
  T + 'java.heap',
  T + 'java.contention',
  'r-profile/inst/samples/proto/1.out.prof.pb.gz',
];

/** pprof flag spelling -> ours. */
const VARIANTS: [string[], string[]][] = [
  [[], []],
  [['-nodecount=7'], ['-n', '7']],
  [['-cum', '-lines', '-nodecount=12'], ['--cum', '--by', 'line', '-n', '12']],
  [['-files', '-nodefraction=0', '-edgefraction=0'], ['--by', 'file', '--node-fraction', '0', '--edge-fraction', '0']],
];

async function compareTop(file: string, theirs: string[], ours: string[], oursFile = file): Promise<{ rows: TopRow[] }> {
  const g = pprof(['-top', ...theirs, file], tmp);
  expect(g.code, g.stderr).toBe(0);
  const r = await profkit(['top', oursFile, ...ours, '--quiet']);
  expect(r.code, r.stderr).toBe(0);
  const a = parseTop(r.stdout);
  const b = parseTop(g.stdout);
  expect(a.rows.length).toBeGreaterThan(0);
  expect(a.rows).toEqual(b.rows);
  expect(a.labels).toEqual(b.labels);
  return a;
}

describe.skipIf(!hasFixtures || !goAvailable)('profkit top = go tool pprof -top', () => {
  it.each(TOP_FIXTURES)('%s: every variant gives the same rows and report lines', async (rel) => {
    for (const [theirs, ours] of VARIANTS) await compareTop(fixture(rel), theirs, ours);
  });

  it('large.cpu (23k functions, pprof drops nodes): same rows, Dropped and Showing top lines', async () => {
    const f = fixture('pprof/internal/proftest/testdata/large.cpu');
    const a = await compareTop(f, ['-nodecount=25'], ['-n', '25']);
    expect(a.labels.some((l) => /^Dropped \d+ nodes \(cum <= /.test(l))).toBe(true);
    await compareTop(f, ['-cum', '-nodefraction=0.0001', '-nodecount=10'], ['--cum', '--node-fraction', '0.0001', '-n', '10']);
  });

  it('--focus/--ignore keep percentages of the whole profile, like pprof', async () => {
    const f = fixture('pprof/internal/report/testdata/sample.cpu');
    const a = await compareTop(f, ['-focus=mapassign|evacuate'], ['--focus', 'mapassign|evacuate']);
    expect(a.rows.some((r) => r.name === 'runtime.mapiternext')).toBe(false);
    await compareTop(f, ['-ignore=mapiternext'], ['--ignore', 'mapiternext']);
    await compareTop(fixture(T + 'java.cpu'), ['-focus=java', '-ignore=Thread'], ['--focus', 'java', '--ignore', 'Thread']);
  });

  it('--sample-type picks the same values as -sample_index', async () => {
    const f = fixture(T + 'gobench.heap');
    for (const t of ['alloc_objects', 'alloc_space', 'inuse_objects']) await compareTop(f, [`-sample_index=${t}`, '-nodecount=15'], ['--sample-type', t, '-n', '15']);
  });

  // pprof demangles names by default, and its C++ heuristics would turn R's `<Anonymous>` (1.out has
  // them) into an empty name: the Rprof reader gives such names an empty system name, so pprof's
  // default symbolization shows them as profkit does (issue 15).
  it('an Rprof profile converted by profkit convert reads the same in pprof as the original in profkit', async () => {
    const src = fixture('r-profile/inst/samples/rprof/1.out');
    const pb = join(tmp, 'rprof-1.pb.gz');
    const c = await profkit(['convert', src, pb, '--quiet']);
    expect(c.code, c.stderr).toBe(0);
    for (const [t, theirs] of [
      ['time', ['-sample_index=time']],
      ['samples', ['-sample_index=samples', '-cum']],
    ] as const) {
      const ours = ['--sample-type', t, ...(theirs.includes('-cum') ? ['--cum'] : [])];
      const g = parseTop(pprof(['-top', ...theirs, pb], tmp).stdout);
      for (const file of [src, pb]) {
        const r = await profkit(['top', file, ...ours, '--quiet']);
        expect(r.code, r.stderr).toBe(0);
        const a = parseTop(r.stdout);
        expect(a.rows.length).toBeGreaterThan(3);
        expect(a.rows).toEqual(g.rows);
        expect(a.labels.filter((l) => l.startsWith('Showing'))).toEqual(g.labels.filter((l) => l.startsWith('Showing')));
      }
    }
  });

  it('gperftools heap and CPU profiles converted to profile.proto give the rows of the originals', async () => {
    for (const rel of [T + 'cppbench.heap', T + 'cppbench.cpu', T + 'cppbench.contention']) {
      const pb = join(tmp, rel.split('/').pop()! + '.pb.gz');
      const c = await profkit(['convert', fixture(rel), pb, '--quiet']);
      expect(c.code, c.stderr).toBe(0);
      const original = parseTop(pprof(['-top', '-nodecount=20', fixture(rel)], tmp).stdout);
      const converted = await profkit(['top', pb, '-n', '20', '--quiet']);
      expect(parseTop(converted.stdout).rows).toEqual(original.rows);
    }
  });
});

describe.skipIf(!hasFixtures || !goAvailable)('profkit tree / peek = go tool pprof -tree / -peek', () => {
  const files = ['pprof/internal/report/testdata/sample.cpu', T + 'java.cpu', T + 'java.heap', T + 'cppbench.heap', 'r-profile/inst/samples/proto/1.out.prof.pb.gz'];
  it.each(files)('%s', async (rel) => {
    const f = fixture(rel);
    for (const [theirs, ours] of [
      [['-tree'], ['tree']],
      [['-tree', '-nodecount=10'], ['tree', '-n', '10']],
      [['-tree', '-cum', '-lines', '-nodecount=15'], ['tree', '--cum', '--by', 'line', '-n', '15']],
    ] as const) {
      const g = pprof([...theirs, f], tmp);
      const r = await profkit([ours[0], f, ...ours.slice(1), '--quiet']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.split('\n').length).toBeGreaterThan(8);
      expect(fromShowing(r.stdout)).toBe(fromShowing(g.stdout));
    }
  });

  it('peek shows callers and callees of the matching functions only; no match exits 2', async () => {
    const cases: [string, string][] = [
      ['pprof/internal/report/testdata/sample.cpu', 'runtime\\.(mapassign|evacuate)'],
      [T + 'java.cpu', 'function2|function0[78]'],
      [T + 'cppbench.heap', 'libc|libpthread'],
      ['r-profile/inst/samples/proto/1.out.prof.pb.gz', 'Rf_'],
    ];
    for (const [rel, re] of cases) {
      const g = pprof([`-peek=${re}`, fixture(rel)], tmp);
      const r = await profkit(['peek', fixture(rel), re, '--quiet']);
      expect(r.code, r.stderr).toBe(0);
      expect(fromShowing(r.stdout)).toBe(fromShowing(g.stdout));
    }
    const none = await profkit(['peek', fixture(files[0]!), 'no_such_function_xyz']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^profkit: no matches found for regexp: no_such_function_xyz \[PROFKIT_E_USAGE\]\n$/);
  });
});

describe.skipIf(!hasFixtures || !goAvailable)('diff, merge and filter write what pprof computes', () => {
  const base = fixture('pprof/internal/report/testdata/sample.cpu');
  const smaller = join(tmp, 'smaller.pb.gz');

  it('filter --ignore writes a profile whose values are pprof -ignore values', async () => {
    const w = await profkit(['filter', base, '-o', smaller, '--ignore', 'mapiternext', '--quiet']);
    expect(w.code, w.stderr).toBe(0);
    const filtered = parseTop(pprof(['-top', '-nodefraction=0', smaller], tmp).stdout).rows;
    const reference = parseTop(pprof(['-top', '-nodefraction=0', '-ignore=mapiternext', base], tmp).stdout).rows;
    const meaning = (rows: TopRow[]) => rows.map((r) => [r.name, parseValue(r.flat), parseValue(r.cum)]);
    expect(filtered.length).toBeGreaterThan(3);
    expect(meaning(filtered)).toEqual(meaning(reference));
  });

  it('filter --focus --prune-from --sample-type: the same values as pprof -focus -prune_from', async () => {
    const out = join(tmp, 'pruned.pb.gz');
    const f = fixture(T + 'gobench.heap');
    const w = await profkit(['filter', f, '-o', out, '--focus', 'runtime', '--prune-from', 'runtime\\.malg', '--sample-type', 'alloc_space', '--quiet']);
    expect(w.code, w.stderr).toBe(0);
    const info = JSON.parse((await profkit(['info', out, '--json'])).stdout);
    expect(info.sampleTypes.map((t: { type: string }) => t.type)).toEqual(['alloc_space']);
    const ours = parseTop(pprof(['-top', '-nodefraction=0', out], tmp).stdout).rows;
    const reference = parseTop(pprof(['-top', '-nodefraction=0', '-sample_index=alloc_space', '-focus=runtime', '-prune_from=runtime\\.malg', f], tmp).stdout).rows;
    const meaning = (rows: TopRow[]) => rows.map((r) => [r.name, parseValue(r.flat), parseValue(r.cum)]);
    expect(meaning(ours)).toEqual(meaning(reference));
  });

  it('filter --hide / --show remove or keep frames like pprof -hide / -show', async () => {
    const meaning = (rows: TopRow[]) => rows.map((r) => [r.name, parseValue(r.flat), parseValue(r.cum)]);
    for (const [flag, re] of [
      ['hide', 'runtime\\.(add|evacuate)'],
      ['show', 'main|mapiter'],
    ]) {
      const out = join(tmp, `${flag}.pb.gz`);
      const w = await profkit(['filter', base, '-o', out, `--${flag}`, re, '--quiet']);
      expect(w.code, w.stderr).toBe(0);
      const ours = parseTop(pprof(['-top', '-nodefraction=0', out], tmp).stdout).rows;
      const reference = parseTop(pprof(['-top', '-nodefraction=0', `-${flag}=${re}`, base], tmp).stdout).rows;
      expect(ours.length).toBeGreaterThan(2);
      expect(meaning(ours)).toEqual(meaning(reference));
    }
  });

  it('diff BASE NEW prints the table of go tool pprof -top -diff_base', async () => {
    expect((await profkit(['filter', base, '-o', smaller, '--ignore', 'mapiternext', '--quiet'])).code).toBe(0);
    for (const [theirs, ours] of VARIANTS.slice(0, 3)) {
      const g = pprof(['-top', `-diff_base=${base}`, ...theirs, smaller], tmp);
      expect(g.code, g.stderr).toBe(0);
      const r = await profkit(['diff', base, smaller, ...ours, '--quiet']);
      expect(r.code, r.stderr).toBe(0);
      const a = parseTop(r.stdout);
      expect(a.rows.some((x) => x.flat.startsWith('-'))).toBe(true);
      expect(a.rows).toEqual(parseTop(g.stdout).rows);
      expect(a.labels).toEqual(parseTop(g.stdout).labels);
    }
  });

  it('diff -o writes a profile that pprof reports like -diff_base', async () => {
    const out = join(tmp, 'delta.pb.gz');
    const r = await profkit(['diff', base, smaller, '-o', out, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const written = parseTop(pprof(['-top', out], tmp).stdout);
    const reference = parseTop(pprof(['-top', `-diff_base=${base}`, smaller], tmp).stdout);
    expect(written.rows).toEqual(reference.rows);
  });

  it('merge A B -o OUT equals pprof merging A and B', async () => {
    const out = join(tmp, 'merged.pb.gz');
    const r = await profkit(['merge', base, smaller, '-o', out, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const ours = parseTop(pprof(['-top', out], tmp).stdout);
    const theirs = parseTop(pprof(['-top', base, smaller], tmp).stdout);
    expect(ours.rows.length).toBeGreaterThan(5);
    expect(ours.rows).toEqual(theirs.rows);
    expect(ours.labels).toEqual(theirs.labels);
    // and profkit's own top of the merged profile agrees too
    expect(parseTop((await profkit(['top', out, '--quiet'])).stdout).rows).toEqual(theirs.rows);
  });
});
