/**
 * pprof's text options and filters on every report command, against `go tool pprof`, byte for
 * byte: `-unit`, `-relative_percentages`, `-noinlines`, the granularities (`-addresses`,
 * `-filefunctions`, `-files`, `-lines`, `-granularity=`), `-mean`, `-divide_by`, `-drop_negative`,
 * `-show_from`, `-tagshow`/`-taghide`/`-tagroot`/`-tagleaf`, `-base`/`-diff_base`, and
 * `-hide`/`-show`/`-tagfocus`/`-tagignore`/`-prune_from`/`-focus`/`-ignore` on `top`, `tree`,
 * `peek`, `traces` and `tags`. profkit is given the very flags pprof is given (its Go-style
 * spellings), so the spellings are checked too.
 *
 * Producers: the Go runtime (google/pprof's sample.cpu and legacy heap, and profiles the Go runtime
 * writes in the test: CPU with pprof labels, heap), gperftools (heap, CPU, contention fixtures),
 * Java (heapz, CPU) and R (a profile.proto from R). Normalisation as in pprof-text-interop: pprof
 * runs with TZ=UTC and -symbolize=none; nothing else.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { goPprofAsCompared, goProfilesNow } from './producers.js';
import { bin, fixture, goAvailable, hasFixtures, profkit, repoRoot } from './views-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-pprof-options-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Mode = 'top' | 'tree' | 'traces' | 'tags' | 'raw' | { peek: string };

/** Runs `go tool pprof -MODE FLAGS FILE` and `profkit MODE FILE FLAGS`; both must succeed with the same output. */
async function expectSameAsPprof(mode: Mode, file: string, flags: string[]): Promise<string> {
  const pprofMode = typeof mode === 'string' ? `-${mode}` : `-peek=${mode.peek}`;
  const g = goPprofAsCompared([pprofMode, ...flags, file], tmp);
  expect(g.code, `go tool pprof ${pprofMode} ${flags.join(' ')}: ${g.stderr}`).toBe(0);
  const args = typeof mode === 'string' ? [mode, file] : ['peek', file, mode.peek];
  const r = await profkit([...args, ...flags, '--quiet']);
  expect(r.code, `profkit ${args.join(' ')} ${flags.join(' ')}: ${r.stderr}`).toBe(0);
  expect(r.stdout, `profkit ${args.join(' ')} ${flags.join(' ')}`).toBe(g.stdout);
  return r.stdout;
}

const T = 'pprof/profile/testdata/';
/**
 * Fixtures of different producers, each with two regular expressions matching some of its frames
 * (function names, or mapping files of the unsymbolized gperftools profiles), the first also an
 * entry of the report (for -peek).
 */
const FIXTURES: { file: string; re: string; other: string }[] = [
  { file: 'pprof/internal/report/testdata/sample.cpu', re: 'runtime\\.mapassign', other: 'runtime\\.(add|evacuate)' }, // Go runtime CPU (profile.proto)
  { file: T + 'cppbench.heap', re: 'libpthread', other: 'libc-' }, // gperftools heap
  { file: T + 'cppbench.contention', re: 'libpthread', other: 'cppbench' }, // gperftools contention (for -mean: delay over contentions)
  { file: T + 'java.heap', re: 'function0[2-4]', other: 'function09' }, // Java heapz
  { file: 'r-profile/inst/samples/proto/1.out.prof.pb.gz', re: 'Rf_', other: 'malloc' }, // R
  { file: T + 'cppbench.cpu', re: 'libpthread', other: 'libc-' }, // gperftools binary CPU
  { file: T + 'gobench.heap', re: 'unknown', other: 'none' }, // Go legacy heap text (no symbols; numeric bytes labels)
];

/** Options whose output does not depend on the profile's labels. */
const TEXT_FLAGS = (re: string, other: string): string[][] => [
  ['-unit=ms'],
  ['-unit=kb'],
  ['-unit=s', '-divide_by=0.5'],
  [`-focus=${re}`, '-relative_percentages'],
  ['-noinlines'],
  ['-addresses'],
  ['-addresses', '-noinlines'],
  ['-filefunctions'],
  ['-files'],
  ['-lines'],
  ['-mean'],
  ['-divide_by=3'],
  ['-drop_negative'],
  [`-show_from=${re}`],
  [`-hide=${other}`],
  [`-show=${re}`],
  [`-show=${re}|${other}`, '-lines'],
  [`-prune_from=${re}`],
  [`-ignore=${re}`, '-cum'],
];

describe.skipIf(!hasFixtures || !goAvailable)('text options = go tool pprof', () => {
  it.each(FIXTURES)('top on $file', async ({ file, re, other }) => {
    for (const flags of TEXT_FLAGS(re, other)) await expectSameAsPprof('top', fixture(file), flags);
  });

  // pprof turns trimming off for -peek (driver.applyCommandOverrides): -nodecount and the fractions change nothing there.
  it.each(FIXTURES)('peek ignores -nodecount, -nodefraction and -edgefraction on $file', async ({ file, re }) => {
    await expectSameAsPprof({ peek: re }, fixture(file), ['-nodecount=2', '-nodefraction=0.5', '-edgefraction=0.5']);
  });

  it.each(FIXTURES.slice(0, 5))('tree, peek and traces on $file', async ({ file, re, other }) => {
    for (const flags of [['-unit=ms'], ['-divide_by=3'], ['-mean'], ['-addresses'], ['-filefunctions', '-noinlines'], [`-hide=${other}`], [`-show_from=${re}`], [`-focus=${re}`, '-relative_percentages']]) {
      await expectSameAsPprof('tree', fixture(file), flags);
      await expectSameAsPprof({ peek: re }, fixture(file), flags);
      await expectSameAsPprof('traces', fixture(file), flags);
    }
  });

  // -compact_labels drops the profile labels (File:, Type:, Time:, Duration:) of -top and -tree/-peek (pprof's reportLabels).
  it.each(FIXTURES)('-compact_labels on top, tree and peek of $file', async ({ file, re, other }) => {
    for (const flags of [['-compact_labels'], ['-compact_labels', `-hide=${other}`]]) {
      // The header starts with the active filters or "Showing nodes", no profile label before them.
      expect(await expectSameAsPprof('top', fixture(file), [...flags, '-nodecount=5'])).toMatch(/^(Active filters:|Showing nodes accounting for )/);
      expect(await expectSameAsPprof('tree', fixture(file), [...flags, '-nodecount=5'])).toMatch(/^(Active filters:|Showing nodes accounting for )/);
      await expectSameAsPprof({ peek: re }, fixture(file), flags);
    }
  });
});

/** Fixtures with labels: numeric `bytes` labels of heap profiles. */
const LABELLED = [T + 'gobench.heap', T + 'cppbench.heap', T + 'java.heap'];
const TAG_FLAGS: string[][] = [
  ['-tagroot=bytes'],
  ['-tagleaf=bytes'],
  ['-tagroot=bytes', '-unit=kb'],
  ['-tagfocus=1kb:'],
  ['-tagignore=:512'],
  ['-tagfocus=bytes=2kb:1mb'],
  ['-taghide=bytes'],
  ['-tagshow=by'],
  ['-tagleaf=bytes', '-tagfocus=4kb:', '-lines'],
];

describe.skipIf(!hasFixtures || !goAvailable)('label options = go tool pprof', () => {
  it.each(LABELLED)('top, tree, traces and tags on %s', async (file) => {
    for (const flags of TAG_FLAGS) {
      await expectSameAsPprof('top', fixture(file), flags);
      await expectSameAsPprof('tree', fixture(file), flags);
      await expectSameAsPprof('traces', fixture(file), flags);
      if (!flags.includes('-lines')) await expectSameAsPprof('tags', fixture(file), flags);
    }
  });
});

const D = 'pprof/internal/driver/testdata/';
/** Profiles and a base of the same producer and sample types. */
const PAIRS: [string, string][] = [
  [T + 'gobench.cpu', T + 'go.crc32.cpu'], // Go CPU
  [T + 'cppbench.contention', D + 'cppbench.small.contention'], // gperftools contention
  [T + 'cppbench.heap', T + 'cppbench.growth'], // gperftools heap / growth
  [T + 'cppbench.thread', T + 'cppbench.thread.all'], // threadz
];

describe.skipIf(!hasFixtures || !goAvailable)('-base and -diff_base = go tool pprof', () => {
  it.each(PAIRS)('%s minus %s', async (file, base) => {
    for (const which of ['-base', '-diff_base']) {
      const flags = [`${which}=${fixture(base)}`];
      for (const mode of ['top', 'tree', 'traces', 'tags', 'raw'] as const) await expectSameAsPprof(mode, fixture(file), flags);
      const top = await expectSameAsPprof('top', fixture(file), [...flags, '-drop_negative']);
      expect(top).not.toMatch(/^ *-/m);
    }
  });

  // -diff_base reports come from the two profiles' stack tables (no merged profile): the options
  // that path applies per stack, on both sides.
  it.each(PAIRS)('%s minus %s: peek and the per-stack options with -diff_base', async (file, base) => {
    const flags = [`-diff_base=${fixture(base)}`];
    // Every entry, untrimmed (when some entry is left: cppbench.thread.all holds all of cppbench.thread's samples and more).
    const top = await expectSameAsPprof('top', fixture(file), [...flags, '-nodefraction=0']);
    if (!/^Showing nodes accounting for 0, 0% /m.test(top)) await expectSameAsPprof({ peek: '.' }, fixture(file), flags);
    for (const more of [['-cum', '-nodecount=8'], ['-lines'], ['-files'], ['-noinlines'], ['-mean'], ['-hide=^lib'], ['-focus=.', '-nodefraction=0.01'], ['-prune_from=^std']]) {
      await expectSameAsPprof('top', fixture(file), [...flags, ...more]);
      await expectSameAsPprof('tree', fixture(file), [...flags, ...more]);
    }
  });

  // pprof's driver merges each source's samples on load, then -normalize rounds each merged sample
  // once (gobench.cpu repeats stacks: rounding the repeats one by one was 10ns off); -o writes the same.
  it.each(PAIRS)('%s minus %s: diff --normalize, its table and what -o writes', async (file, base) => {
    const written = join(tmp, 'normalized.pb.gz');
    for (const more of [[], ['-cum', '-lines']]) {
      const g = goPprofAsCompared(['-top', '-normalize', `-diff_base=${fixture(base)}`, ...more, fixture(file)], tmp);
      expect(g.code, g.stderr).toBe(0);
      const r = await profkit(['diff', fixture(base), fixture(file), '--normalize', ...more, '--quiet']);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe(g.stdout);
    }
    expect((await profkit(['diff', fixture(base), fixture(file), '--normalize', '-o', written, '--quiet'])).code).toBe(0);
    const reported = goPprofAsCompared(['-top', written], tmp);
    const reference = goPprofAsCompared(['-top', '-normalize', `-diff_base=${fixture(base)}`, fixture(file)], tmp);
    expect(reported.stdout.split('\n').slice(1)).toEqual(reference.stdout.split('\n').slice(1));
  });

  // A base holding negative values (itself a difference): the side-by-side report gives up after
  // reading it and merges, NEW read again; from standard input NEW cannot be read twice.
  it('-diff_base with a base of negative values, NEW from a file and from standard input', async () => {
    const [file, base] = PAIRS[2]!;
    const negativeBase = join(tmp, 'negative-base.pb.gz');
    expect((await profkit(['diff', fixture(base), fixture(file), '-o', negativeBase, '--quiet'])).code).toBe(0);
    for (const mode of ['top', 'tree'] as const) {
      const expected = await expectSameAsPprof(mode, fixture(file), [`-diff_base=${negativeBase}`]);
      const r = spawnSync(process.execPath, [bin, mode, '-', `-diff_base=${negativeBase}`, '--quiet'], { input: readFileSync(fixture(file)), encoding: 'utf8', cwd: repoRoot });
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe(expected);
    }
  });

  it('-base makes the samples that cancel out disappear, -diff_base keeps the base total', async () => {
    const f = fixture(T + 'gobench.cpu');
    const self = await expectSameAsPprof('top', f, [`-base=${f}`]);
    expect(self).toMatch(/Showing nodes accounting for 0, 0% of 0 total/);
    const diffSelf = await expectSameAsPprof('top', f, [`-diff_base=${f}`]);
    expect(diffSelf).not.toMatch(/of 0 total/);
  });
});

describe.skipIf(!goAvailable)('label options on a CPU profile the Go runtime writes (pprof labels)', () => {
  const dir = join(tmp, 'go');
  goProfilesNow(dir, tmp);

  it('-tagroot/-tagleaf split costs by label; -tagfocus/-tagignore/-tagshow/-taghide filter', async () => {
    const cpu = join(dir, 'cpu.pb.gz');
    const byWorker = await expectSameAsPprof('top', cpu, ['-tagroot=worker', '-nodefraction=0']);
    expect(byWorker).toMatch(/ slow$/m);
    for (const flags of [['-tagleaf=phase,worker'], ['-tagroot=worker,phase', '-files'], ['-tagfocus=worker=slow'], ['-tagignore=fast'], ['-tagfocus=worker=slow', '-relative_percentages']]) {
      await expectSameAsPprof('top', cpu, flags);
      await expectSameAsPprof('tree', cpu, flags);
      await expectSameAsPprof('traces', cpu, flags);
    }
    for (const flags of [['-tagshow=work'], ['-taghide=phase'], ['-tagfocus=worker=fast']]) {
      await expectSameAsPprof('tags', cpu, flags);
      await expectSameAsPprof('traces', cpu, flags);
    }
  });

  it('heap: -mean, -unit and the granularities', async () => {
    const heap = join(dir, 'heap.pb.gz');
    for (const flags of [['-mean', '-sample_index=alloc_space'], ['-unit=mb'], ['-filefunctions'], ['-addresses'], ['-lines', '-noinlines']]) {
      await expectSameAsPprof('top', heap, flags);
      await expectSameAsPprof('traces', heap, flags);
    }
  });
});
