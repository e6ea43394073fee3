/**
 * `profkit list`, `callgrind` and `topproto` against `go tool pprof -list`, `-callgrind` and
 * `-topproto` on profiles of different producers: the Go runtime (made here by
 * `fixtures/goprof/main.go`, and google/pprof's `sample.cpu` with its source from Debian's
 * golang-github-google-pprof-dev), gperftools (a C program built and profiled here, symbolized
 * by `profkit convert --symbolize`; the CPU and heap fixtures unsymbolized), Java (fixtures), R
 * (Rprof with line profiling run here; profkit reads the Rprof file, pprof its conversion).
 *
 * Documented normalisation: pprof runs with `TZ=UTC` and `-symbolize=none` (as in
 * pprof-text-interop); `list` gets an explicit `-source_path` on both sides (the default is the
 * working directory, which differs between the two processes); `topproto` outputs are compared
 * as `go tool pprof -raw` prints them, with pprof's empty function system names (`s=0()`) read
 * as the name (profkit's model requires a system name; the writer writes it as the name).
 * `callgrind` and `list` are compared byte for byte.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goPprofIn } from './go-pprof-runner.js';
import { goProfilesNow, haveGperftools, warnIfNoGperftools } from './producers.js';
import { fixture, goAvailable, hasFixtures, profkit, repoRoot } from './views-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-pprof-source-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const goPprof = goPprofIn(tmp);

/** pprof's spelling of a profkit option (`--sample-type=x` → `-sample_index=x`, `--tag-focus` → `-tagfocus`). */
function goSpelling(option: string): string {
  const renamed: Record<string, string> = { 'sample-type': 'sample_index', 'node-fraction': 'nodefraction', 'tag-focus': 'tagfocus', 'tag-ignore': 'tagignore' };
  return option.replace(/^--([a-z-]+)/, (_, name: string) => '-' + (renamed[name] ?? name.replace(/-/g, '_')));
}

/** `profkit list OURS RE` equals `go tool pprof -list RE THEIRS` (same source path); returns the text. */
async function expectSameList(ours: string, regex: string, sourcePath: string, theirs = ours, extra: string[] = []): Promise<string> {
  const g = goPprof([`-list=${regex}`, `-source_path=${sourcePath}`, ...extra.map(goSpelling), theirs]);
  expect(g.code, g.stderr).toBe(0);
  const r = await profkit(['list', ours, regex, `--source-path=${sourcePath}`, ...extra, '--quiet']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe(g.stdout);
  return r.stdout;
}

async function expectSameCallgrind(ours: string, theirs = ours, extra: string[] = []): Promise<string> {
  const g = goPprof(['-callgrind', ...extra.map(goSpelling), theirs]);
  expect(g.code, g.stderr).toBe(0);
  const r = await profkit(['callgrind', ours, ...extra, '--quiet']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe(g.stdout);
  return r.stdout;
}

let topprotoCount = 0;
/** The topproto profiles of both, as `go tool pprof -raw` prints them (see the normalisation above). */
async function expectSameTopProto(ours: string, theirs = ours, extra: string[] = []): Promise<string> {
  const n = ++topprotoCount;
  const theirsOut = join(tmp, `go-top-${n}.pb.gz`);
  const g = goPprof([`-output=${theirsOut}`, '-topproto', ...extra.map(goSpelling), theirs]);
  expect(g.code, g.stderr).toBe(0);
  const oursOut = join(tmp, `profkit-top-${n}.pb.gz`);
  const r = await profkit(['topproto', ours, '-o', oursOut, ...extra, '--quiet']);
  expect(r.code, r.stderr).toBe(0);
  const raw = (f: string) => goPprof(['-raw', f]).stdout.replace(/ s=(\d+)\(\)$/gm, ' s=$1');
  const theirsRaw = raw(theirsOut);
  expect(theirsRaw).toMatch(/^Samples:\ncum\/\S+ flat\/\S+\n/m);
  expect(raw(oursOut)).toBe(theirsRaw);
  return theirsRaw;
}

const T = 'pprof/profile/testdata/';
/** google/pprof's report test data as Debian installs it: sample.cpu with its source and binary. */
const PPROF_REPORT_TESTDATA = '/usr/share/gocode/src/github.com/google/pprof/internal/report/testdata';
const havePprofTestdata = existsSync(join(PPROF_REPORT_TESTDATA, 'sample/sample.go'));
if (!havePprofTestdata) console.warn(`pprof-source interop: ${PPROF_REPORT_TESTDATA} missing (apt-get install golang-github-google-pprof-dev); sample.cpu listing with source skipped`);

describe.skipIf(!hasFixtures || !goAvailable)('list / callgrind / topproto = go tool pprof on the fixtures', () => {
  it.each([
    'pprof/internal/report/testdata/sample.cpu', // Go runtime CPU
    T + 'java.cpu', // Java CPU (a function without source: "No source information")
    T + 'java.heap', // Java heap (files not found: pprof's error in the listing)
    T + 'java.contention',
  ])('%s', async (rel) => {
    const f = fixture(rel);
    const text = await expectSameList(f, '.', tmp);
    expect(text).toMatch(/^ROUTINE =+ /m);
    await expectSameCallgrind(f);
    await expectSameTopProto(f);
  });

  it('callgrind and topproto of unsymbolized gperftools and Go legacy profiles (nodes named by binary)', async () => {
    for (const rel of [T + 'cppbench.cpu', T + 'cppbench.heap', T + 'cppbench.contention', T + 'gobench.heap', T + 'go.crc32.cpu']) {
      const cg = await expectSameCallgrind(fixture(rel));
      expect(cg).toMatch(/^events: /m);
      await expectSameTopProto(fixture(rel));
    }
    // Same-named nodes of different binaries are told apart as pprof does ("[2/3]").
    expect(await expectSameCallgrind(fixture(T + 'cppbench.cpu'))).toMatch(/^cfn=\(\d+\) +\[\d\/3\]$/m);
  });

  it('other sample types, -cum, and the R profile fixture', async () => {
    await expectSameCallgrind(fixture(T + 'gobench.heap'), undefined, ['--sample-type=alloc_space']);
    await expectSameCallgrind(fixture(T + 'java.cpu'), undefined, ['--cum']);
    await expectSameTopProto(fixture(T + 'gobench.heap'), undefined, ['--sample-type=inuse_objects']);
    await expectSameTopProto(fixture(T + 'java.cpu'), undefined, ['--node-fraction=0', '--cum']);
    const r = fixture('r-profile/inst/samples/proto/1.out.prof.pb.gz');
    await expectSameCallgrind(r);
    await expectSameTopProto(r);
  });

  it("pprof's mode flags: -list=RE, -callgrind, -topproto (and -disasm=RE) name the commands", async () => {
    const f = fixture(T + 'java.cpu');
    const list = await profkit(['-list=function0', `-source_path=${tmp}`, f, '--quiet']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toBe(goPprof(['-list=function0', `-source_path=${tmp}`, f]).stdout);
    const cg = await profkit(['-callgrind', f, '--quiet']);
    expect(cg.stdout).toBe(goPprof(['-callgrind', f]).stdout);
    const out = join(tmp, 'flag-topproto.pb.gz');
    expect((await profkit(['-topproto', f, `-output=${out}`, '--quiet'])).code).toBe(0);
    expect(existsSync(out)).toBe(true);
    const disasm = await profkit(['-disasm=function0', f, '--quiet']);
    expect(disasm.stderr).toContain('no matches found for regexp: function0');
  });

  it("pprof's filters before the report, percentages of the whole profile: --focus, --ignore, --hide, --show-from, --tag-focus", async () => {
    const cpu = fixture('pprof/internal/report/testdata/sample.cpu');
    for (const filter of [['--focus=mapassign'], ['--ignore=evacuate', '--hide=runtime\\.add'], ['--show-from=busyLoop']]) {
      const text = await expectSameList(cpu, '.', tmp, undefined, filter);
      expect(text.split('\n')[0]).toBe('Total: 1.76s');
      await expectSameCallgrind(cpu, undefined, filter);
      await expectSameTopProto(cpu, undefined, filter);
    }
    const heap = fixture(T + 'gobench.heap');
    await expectSameCallgrind(heap, undefined, ['--tag-focus=bytes=1kb:']);
    await expectSameTopProto(heap, undefined, ['--tag-focus=bytes=:64kb']);
  });

  it('large.cpu (23k functions): callgrind byte for byte', async () => {
    expect((await expectSameCallgrind(fixture('pprof/internal/proftest/testdata/large.cpu'))).length).toBeGreaterThan(4_000_000);
  });
});

describe.skipIf(!goAvailable || !havePprofTestdata)('list with sources: google/pprof sample.cpu and sample.go', () => {
  const f = join(PPROF_REPORT_TESTDATA, 'sample.cpu');
  const recorded = '/usr/local/google/home/sanjay/go/src/github.com/google/pprof/internal/report/testdata';
  it('--trim-path maps the recorded path onto --source-path', async () => {
    const text = await expectSameList(f, 'busyLoop', PPROF_REPORT_TESTDATA, undefined, [`--trim-path=${recorded}`]);
    // The source shown is Debian's sample.go (its lines differ from the recorded binary's), as pprof shows it.
    expect(text).toMatch(/^ +\S+ +\S+ +36:\tif err := pprof\.StartCPUProfile\(f\); err != nil \{$/m);
    expect(text).not.toContain('Error:');
  });
  it('without --trim-path, the name of the source-path directory is found in the recorded path', async () => {
    const text = await expectSameList(f, '^main\\.', PPROF_REPORT_TESTDATA);
    expect(text).toContain('ROUTINE ======================== main.main in sample/sample.go');
    expect(text).toMatch(/^ +\S+ +\S+ +30:func main\(\) \{$/m);
    expect(text).not.toContain('Error:');
  });
  it('missing sources are reported in the listing, not fatal', async () => {
    const text = await expectSameList(f, '.', tmp);
    expect(text).toMatch(/^ Error: open \/usr\/lib\/google-golang\/src\/runtime\/proc\.go: no such file or directory$/m);
  });
  it('--noinlines', async () => {
    await expectSameList(f, '.', PPROF_REPORT_TESTDATA, undefined, ['--noinlines']);
  });
  it('a regexp matching nothing is an error, as in pprof', async () => {
    const r = await profkit(['list', f, '^nothing-matches$', '--quiet']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no matches found for regexp: ^nothing-matches$');
    expect(goPprof(['-list=^nothing-matches$', f]).stderr).toContain('no matches found for regexp: ^nothing-matches$');
  });
});

describe.skipIf(!goAvailable)('list / callgrind / topproto on profiles the Go runtime writes now', () => {
  const dir = join(tmp, 'go');
  const main = join(repoRoot, 'packages/cli/test/fixtures/goprof/main.go');
  goProfilesNow(dir, tmp);

  it('CPU profile: main.spin listed from main.go, runtime functions from GOROOT', async () => {
    const cpu = join(dir, 'cpu.pb.gz');
    const text = await expectSameList(cpu, '^main\\.', tmp);
    expect(text).toContain(`ROUTINE ======================== main.spin in ${main}`);
    expect(text).toMatch(/^ +\S+ +\S+ +\d+:\s+n \+= i \* i$/m);
    await expectSameList(cpu, 'runtime\\.', tmp);
    await expectSameCallgrind(cpu);
    await expectSameTopProto(cpu);
  });

  it('heap profile, every sample type', async () => {
    const heap = join(dir, 'heap.pb.gz');
    for (const t of ['alloc_space', 'inuse_objects']) {
      await expectSameList(heap, 'main\\.allocate', tmp, undefined, [`--sample-type=${t}`]);
      await expectSameCallgrind(heap, undefined, [`--sample-type=${t}`]);
      await expectSameTopProto(heap, undefined, [`--sample-type=${t}`]);
    }
  });
});

const haveR = spawnSync('Rscript', ['--version']).status === 0;
if (!haveR) console.warn('pprof-source interop: Rscript missing (apt-get install r-base-core); the Rprof line-profiling part is skipped');

describe.skipIf(!goAvailable || !haveR)('list on an Rprof line profile (srcrefs): R users see line costs next to their code', () => {
  const dir = join(tmp, 'r');
  const script = join(dir, 'work.R');
  const rprof = join(dir, 'Rprof.out');
  const pb = join(dir, 'Rprof.pb.gz');
  beforeAll(async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      script,
      [
        'fib <- function(n) {',
        '  if (n < 2) return(n)',
        '  fib(n - 1) + fib(n - 2)',
        '}',
        'grow <- function(k) {',
        '  x <- c()',
        '  for (i in 1:k) x <- c(x, i)',
        '  sum(x)',
        '}',
        `Rprof(${JSON.stringify(rprof)}, interval = 0.002, line.profiling = TRUE, memory.profiling = TRUE)`,
        'for (j in 1:3) { fib(18); grow(20000) }',
        'Rprof(NULL)',
        '',
      ].join('\n'),
    );
    const r = spawnSync('Rscript', ['-e', `source(${JSON.stringify(script)}, keep.source = TRUE)`], { encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(rprof, 'utf8')).toMatch(/^#File 1: /m);
    const c = await profkit(['convert', rprof, pb, '--quiet']);
    expect(c.code, c.stderr).toBe(0);
  }, 180_000);

  it('the Rprof file read directly lists what pprof lists for its conversion', async () => {
    const text = await expectSameList(rprof, '^grow$', dir, pb);
    expect(text).toContain('ROUTINE ======================== grow in work.R');
    expect(text).toMatch(/^ +\S+ +\S+ +7:  for \(i in 1:k\) x <- c\(x, i\)$/m);
    await expectSameList(rprof, '.', dir, pb, ['--sample-type=memory']);
    const j = JSON.parse((await profkit(['list', rprof, '^grow$', `--source-path=${dir}`, '--json'])).stdout);
    expect(j.schema).toBe('profkit.list/1');
    const grow = j.routines.find((r: { name: string }) => r.name === 'grow');
    const sum = (k: 'flat' | 'cum') => grow.lines.reduce((a: bigint, l: Record<string, string>) => a + BigInt(l[k]!), 0n);
    expect(sum('flat')).toBe(BigInt(grow.flat));
    expect(sum('cum')).toBe(BigInt(grow.cum));
    expect(grow.lines.find((l: { line: number }) => l.line === 7).text).toBe('  for (i in 1:k) x <- c(x, i)');
    await expectSameCallgrind(rprof, pb);
    await expectSameTopProto(rprof, pb);
    // How many entries the default cut (0.005) leaves out depends on the sampling; a cut at 1 keeps
    // only the frames on every stack, so fib and grow (each on a part of them) come back only with 0.
    const onEveryStack = await expectSameTopProto(rprof, pb, ['--node-fraction=1']);
    // Every entry (no node-fraction cut), ordered by cum.
    const all = await expectSameTopProto(rprof, pb, ['--node-fraction=0', '--cum']);
    expect(all.split('\n').length).toBeGreaterThan(onEveryStack.split('\n').length);
  });
});

// callgrind_annotate --version exits 255: only a failure to start means it is missing.
const haveCallgrindAnnotate = spawnSync('callgrind_annotate', ['--version']).error === undefined;
if (!haveCallgrindAnnotate) console.warn('pprof-source interop: callgrind_annotate missing (apt-get install valgrind); its reading of the callgrind output is skipped');
warnIfNoGperftools('pprof-source interop');

describe.skipIf(!goAvailable || !haveGperftools)('list / callgrind / topproto on a gperftools CPU profile made now, symbolized by profkit', () => {
  const dir = join(tmp, 'gperftools');
  const source = join(repoRoot, 'packages/gperftools-heap/test/c/workload.c');
  const sym = join(dir, 'cpu.sym.pb.gz');
  beforeAll(async () => {
    mkdirSync(dir, { recursive: true });
    const binary = join(dir, 'workload');
    const cc = spawnSync('gcc', ['-O0', '-g', '-o', binary, source, '-ltcmalloc_and_profiler'], { encoding: 'utf8' });
    expect(cc.status, cc.stderr).toBe(0);
    const run = spawnSync(binary, ['30000000'], { encoding: 'utf8', env: { ...process.env, CPUPROFILE: join(dir, 'cpu.prof'), CPUPROFILE_FREQUENCY: '1000' }, timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    const c = await profkit(['convert', join(dir, 'cpu.prof'), sym, '--symbolize', '--quiet']);
    expect(c.code, c.stderr).toBe(0);
  }, 120_000);

  it('the C functions listed from workload.c; libc sources missing', async () => {
    const text = await expectSameList(sym, '.', dir);
    expect(text).toContain(`in ${source}`);
    await expectSameCallgrind(sym);
    await expectSameTopProto(sym);
    await expectSameCallgrind(join(dir, 'cpu.prof'));
  });

  it('without --source-path both look in their working directory (here the repository: workload.c is found under it)', async () => {
    const inRepo = goPprofIn(tmp, repoRoot)(['-list=spin_a', sym]);
    expect(inRepo.code, inRepo.stderr).toBe(0);
    const r = await profkit(['list', sym, 'spin_a', '--quiet']); // runs with cwd = the repository
    expect(r.stdout).toBe(inRepo.stdout);
    expect(r.stdout).toContain(`ROUTINE ======================== spin_a in ${source}`);
    expect(r.stdout).not.toContain('Error:');
  });

  it.skipIf(!haveCallgrindAnnotate)("callgrind_annotate reads profkit's callgrind output", async () => {
    const out = join(dir, 'callgrind.out');
    const r = await profkit(['callgrind', sym, '-o', out, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const a = spawnSync('callgrind_annotate', ['--inclusive=yes', out], { encoding: 'utf8', timeout: 60_000 });
    expect(a.status, a.stderr).toBe(0);
    expect(a.stdout).toMatch(/^Events recorded: +cpu\(ms\)$/m);
    // Inclusive cost of spin_a as callgrind_annotate sums it: spin_a's own cost lines (no callees).
    const flat = /^ *(\d+) \([ \d.]+%\) +\S*workload\.c:spin_a /m.exec(a.stdout);
    expect(flat, a.stdout).not.toBeNull();
    const top = await profkit(['top', sym, '--json', '--quiet']);
    const spinA = JSON.parse(top.stdout).entries.find((e: { name: string }) => e.name === 'spin_a');
    expect(BigInt(flat![1]!) * 1_000_000n).toBe(BigInt(spinA.flat));
  });
});
