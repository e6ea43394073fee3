/**
 * `profkit raw` with pprof's filters against `go tool pprof -raw` with the same filters, byte for
 * byte. pprof's filters work in place: samples are dropped, stacks cut, and the lines of every
 * location rewritten (-hide, -show, -show_from, -prune_from), but no location leaves the table:
 * `-raw` still lists the ones no sample uses, under their ids. The tests check that such
 * locations are indeed printed (the case a filtered, renumbered profile gets wrong).
 *
 * Producers: the Go runtime (google/pprof's sample.cpu, a CPU profile with pprof labels written
 * in the test), gperftools (heap, CPU, contention), Java (heapz, CPU) and R (a profile.proto from
 * R, and an Rprof file read directly). Normalisation as in pprof-text-interop: pprof runs with
 * TZ=UTC and -symbolize=none; nothing else.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { goPprofAsCompared, goProfilesNow } from './producers.js';
import { fixture, goAvailable, hasFixtures, profkit } from './views-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-raw-filters-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** `go tool pprof -raw PPROF_FLAGS THEIRS` and `profkit raw OURS FLAGS`: both succeed with the same output. */
async function expectRawSameAsPprof(ours: string, flags: string[], theirs = ours, pprofFlags = flags): Promise<string> {
  const g = goPprofAsCompared(['-raw', ...pprofFlags, theirs], tmp);
  expect(g.code, `go tool pprof -raw ${pprofFlags.join(' ')}: ${g.stderr}`).toBe(0);
  const r = await profkit(['raw', ours, ...flags, '--quiet']);
  expect(r.code, `profkit raw ${flags.join(' ')}: ${r.stderr}`).toBe(0);
  expect(r.stdout, `profkit raw ${flags.join(' ')}`).toBe(g.stdout);
  return r.stdout;
}

/** Whether `-raw` output lists a location that no sample uses (what only an in-place filter prints). */
function listsUnusedLocation(raw: string): boolean {
  const [samplesPart = '', rest = ''] = raw.split('\nLocations\n');
  const used = new Set<string>();
  for (const line of samplesPart.split('\n')) {
    const m = /^(?: +-?\d+)+: ((?:\d+ )*)$/.exec(line);
    if (m) for (const id of m[1]!.trim().split(' ')) if (id !== '') used.add(id);
  }
  const locationsPart = rest.split('\nMappings\n')[0]!;
  return locationsPart.split('\n').some((line) => {
    const m = /^ *(\d+): 0x/.exec(line);
    return m !== null && !used.has(m[1]!);
  });
}

const T = 'pprof/profile/testdata/';
/** Fixtures of different producers, each with two regular expressions matching some of its frames (names, or mapping files when unsymbolized). */
const FIXTURES: { file: string; re: string; other: string }[] = [
  { file: 'pprof/internal/report/testdata/sample.cpu', re: 'runtime\\.mapassign', other: 'runtime\\.(add|evacuate)' }, // Go runtime CPU
  { file: T + 'cppbench.heap', re: 'libpthread', other: 'libc-' }, // gperftools heap
  { file: T + 'cppbench.cpu', re: 'libpthread', other: 'libc-' }, // gperftools binary CPU
  { file: T + 'cppbench.contention', re: 'libpthread', other: 'cppbench' }, // gperftools contention
  { file: T + 'java.heap', re: 'function0[2-4]', other: 'function09' }, // Java heapz
  { file: T + 'java.cpu', re: 'java', other: 'Thread' }, // Java CPU (no mappings)
  { file: 'r-profile/inst/samples/proto/1.out.prof.pb.gz', re: 'Rf_', other: 'malloc' }, // R
];

/** Every frame filter, alone and combined, in pprof's spellings (profkit accepts them too). */
const FILTER_FLAGS = (re: string, other: string): string[][] => [
  [`-focus=${re}`],
  [`-ignore=${re}`],
  [`-hide=${other}`],
  [`-show=${re}`],
  [`-show=${re}|${other}`],
  [`-show_from=${re}`],
  [`-prune_from=${re}`],
  [`-focus=${other}`, `-hide=${re}`, `-prune_from=${other}`],
  [`-ignore=${other}`, `-show_from=${re}`],
];

describe.skipIf(!hasFixtures || !goAvailable)('raw with filters = go tool pprof -raw with filters', () => {
  it.each(FIXTURES)('$file', async ({ file, re, other }) => {
    let unusedListed = false;
    for (const flags of FILTER_FLAGS(re, other)) {
      if (listsUnusedLocation(await expectRawSameAsPprof(fixture(file), flags))) unusedListed = true;
    }
    // The point of the comparison: some filter left locations no sample uses, and both list them.
    expect(unusedListed).toBe(true);
  });

  it('label filters (and -tagshow/-taghide) on numeric labels (Go legacy heap, gperftools heap, Java heapz)', async () => {
    for (const file of [T + 'gobench.heap', T + 'cppbench.heap', T + 'java.heap']) {
      for (const flags of [['-tagfocus=1kb:'], ['-tagignore=:512'], ['-tagfocus=bytes=2kb:1mb', '-hide=libc-|function09'], ['-taghide=bytes'], ['-tagshow=by']]) {
        await expectRawSameAsPprof(fixture(file), flags);
      }
    }
  });

  it("profkit's own spellings: --focus, --hide, --show-from, --prune-from, --tag-focus", async () => {
    const f = fixture('pprof/internal/report/testdata/sample.cpu');
    await expectRawSameAsPprof(f, ['--focus', 'runtime\\.mapassign', '--hide', 'runtime\\.add'], f, ['-focus=runtime\\.mapassign', '-hide=runtime\\.add']);
    await expectRawSameAsPprof(f, ['--show-from', 'runtime\\.mapassign', '--prune-from', 'runtime\\.evacuate'], f, ['-show_from=runtime\\.mapassign', '-prune_from=runtime\\.evacuate']);
  });

  it('an Rprof profile read directly prints what pprof prints for its profile.proto conversion', async () => {
    const src = fixture('r-profile/inst/samples/rprof/1.out');
    const pb = join(tmp, 'rprof-1.pb.gz');
    const c = await profkit(['convert', src, pb, '--quiet']);
    expect(c.code, c.stderr).toBe(0);
    const raw = await expectRawSameAsPprof(src, ['-focus=dbReadTable', '-hide=^eval$'], pb);
    expect(listsUnusedLocation(raw)).toBe(true);
  });
});

describe.skipIf(!goAvailable)('raw with label filters on a CPU profile the Go runtime writes (pprof labels)', () => {
  const dir = join(tmp, 'go');
  goProfilesNow(dir, tmp);

  it('-tagfocus/-tagignore drop samples, locations stay', async () => {
    const cpu = join(dir, 'cpu.pb.gz');
    let unusedListed = false;
    for (const flags of [['-tagfocus=worker=slow'], ['-tagignore=fast'], ['-tagfocus=worker=fast', '-focus=main']]) {
      if (listsUnusedLocation(await expectRawSameAsPprof(cpu, flags))) unusedListed = true;
    }
    expect(unusedListed).toBe(true);
  });
});
