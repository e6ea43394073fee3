/**
 * `profkit disasm` against `go tool pprof -disasm` on profiles with addresses and a local binary:
 * Go (google/pprof's sample.cpu with its sample.bin from Debian's golang-github-google-pprof-dev,
 * and CPU and heap profiles of a Go program built and run here) and gperftools (CPU and heap
 * profiles of a C program built here with -no-pie, symbolized by `profkit convert --symbolize`).
 *
 * Documented normalisation: `go tool pprof` disassembles with Go's own decoder (Go assembler
 * syntax), profkit with binutils' objdump (AT&T syntax), so the instruction text and the source
 * positions beside it are not compared. Compared: the `Total:`, `ROUTINE` and `(flat, cum)` lines
 * byte for byte, the address, flat and cum of every instruction with samples, and that every
 * instruction address pprof decodes is one profkit lists too (pprof stops one byte before a
 * symbol's end, so its last instruction may be missing or decoded cut short; profkit lists the
 * whole symbol). Regexps are unanchored: pprof matches them against `0000000000401331 spin_a …`,
 * so `^spin_a` finds nothing in pprof (profkit also matches the function name). pprof runs with `TZ=UTC` and `-symbolize=none`.
 */

import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectFile } from '@profkit/core/node';
import { binutilsTool } from '../src/commands/binutils.js';
import { goPprofIn } from './go-pprof-runner.js';
import { haveGperftools, warnIfNoGperftools } from './producers.js';
import { bin, goAvailable, profkit, repoRoot } from './views-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-pprof-disasm-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const goPprof = goPprofIn(tmp);

interface Listing {
  /** Total, ROUTINE and (flat, cum) lines. */
  headers: string[];
  /** Per routine: "address flat cum" of the instructions with samples. */
  sampled: string[][];
  /** Per routine: the addresses of the decoded instructions. */
  addresses: Set<string>[];
}

const INSTRUCTION = /^ *(\S+) +(\S+) +([0-9a-f]+): (.*)$/;

function listing(text: string): Listing {
  const out: Listing = { headers: [], sampled: [], addresses: [] };
  for (const l of text.split('\n')) {
    if (l.startsWith('Total: ') || l.startsWith('ROUTINE ') || l.includes(' (flat, cum) ')) {
      out.headers.push(l);
      if (l.startsWith('ROUTINE ')) {
        out.sampled.push([]);
        out.addresses.push(new Set());
      }
      continue;
    }
    const m = INSTRUCTION.exec(l);
    if (!m) continue;
    // pprof's undecodable bytes at a cut-off symbol end are not instructions.
    if (!m[4]!.startsWith('?')) out.addresses[out.addresses.length - 1]!.add(m[3]!);
    if (m[1] !== '.' || m[2] !== '.') out.sampled[out.sampled.length - 1]!.push(`${m[3]} ${m[1]} ${m[2]}`);
  }
  return out;
}

/** `profkit disasm` and `go tool pprof -disasm` agree (see the normalisation above); returns profkit's text. */
async function expectSameDisasm(profile: string, regex: string, binary?: string): Promise<string> {
  const g = goPprof([`-disasm=${regex}`, ...(binary ? [binary] : []), profile]);
  expect(g.code, g.stderr).toBe(0);
  const r = await profkit(['disasm', profile, regex, ...(binary ? ['--binary', binary] : []), '--quiet']);
  expect(r.code, r.stderr).toBe(0);
  const theirs = listing(g.stdout);
  const ours = listing(r.stdout);
  expect(ours.headers).toEqual(theirs.headers);
  expect(theirs.headers.length).toBeGreaterThan(2);
  expect(ours.sampled).toEqual(theirs.sampled);
  expect(theirs.sampled.flat().length).toBeGreaterThan(0);
  theirs.addresses.forEach((addrs, k) => {
    // Past profkit's last instruction, pprof decodes that instruction cut short: not compared.
    const last = [...ours.addresses[k]!].reduce((m, a) => (BigInt('0x' + a) > m ? BigInt('0x' + a) : m), 0n);
    const missing = [...addrs].filter((a) => BigInt('0x' + a) <= last && !ours.addresses[k]!.has(a));
    expect(missing, `routine ${k}: addresses pprof decodes that profkit does not`).toEqual([]);
  });
  return r.stdout;
}

const PPROF_REPORT_TESTDATA = '/usr/share/gocode/src/github.com/google/pprof/internal/report/testdata';
const haveSampleBin = existsSync(join(PPROF_REPORT_TESTDATA, 'sample.bin'));
const haveBinutils = spawnSync('objdump', ['--version']).status === 0 && spawnSync('nm', ['--version']).status === 0;
if (!haveBinutils) console.warn('pprof-disasm interop: objdump/nm missing (apt-get install binutils); skipped');
if (!haveSampleBin) console.warn(`pprof-disasm interop: ${PPROF_REPORT_TESTDATA}/sample.bin missing (apt-get install golang-github-google-pprof-dev); that part is skipped`);

describe.skipIf(!goAvailable || !haveBinutils || !haveSampleBin)('disasm: google/pprof sample.cpu with sample.bin (Go)', () => {
  it('every function with samples, and one by name', async () => {
    const f = join(PPROF_REPORT_TESTDATA, 'sample.cpu');
    const bin = join(PPROF_REPORT_TESTDATA, 'sample.bin');
    const text = await expectSameDisasm(f, '.', bin);
    expect(text).toContain('ROUTINE ======================== main.busyLoop\n');
    await expectSameDisasm(f, 'busyLoop', bin);
  });

  it('an anchored regexp finds the function (pprof matches "<address> <name>" and finds nothing)', async () => {
    const f = join(PPROF_REPORT_TESTDATA, 'sample.cpu');
    const bin = join(PPROF_REPORT_TESTDATA, 'sample.bin');
    expect(goPprof(['-disasm=^main\\.busyLoop$', bin, f]).stderr).toContain('no matches found');
    const anchored = await profkit(['disasm', f, '^main\\.busyLoop$', '--binary', bin, '--quiet']);
    expect(anchored.code, anchored.stderr).toBe(0);
    expect(anchored.stdout).toBe((await profkit(['disasm', f, 'main\\.busyLoop$', '--binary', bin, '--quiet'])).stdout);
  });

  it('without binutils on PATH: a PROFKIT_E_UNSUPPORTED error naming the package', () => {
    const emptyPath = join(tmp, 'empty-path');
    mkdirSync(emptyPath, { recursive: true });
    const f = join(PPROF_REPORT_TESTDATA, 'sample.cpu');
    const r = spawnSync(process.execPath, [bin, 'disasm', f, 'busyLoop', '--binary', join(PPROF_REPORT_TESTDATA, 'sample.bin')], { encoding: 'utf8', env: { ...process.env, PATH: emptyPath } });
    expect(r.stderr).toContain('disasm needs GNU binutils: nm is not installed (apt-get install binutils) [PROFKIT_E_UNSUPPORTED]');
    expect(r.status).not.toBe(0);
  });

  it('a binary named like an option (-x) reaches nm and objdump as a file', async () => {
    const f = join(PPROF_REPORT_TESTDATA, 'sample.cpu');
    const dashed = join(tmp, 'dashed');
    mkdirSync(dashed, { recursive: true });
    copyFileSync(join(PPROF_REPORT_TESTDATA, 'sample.bin'), join(dashed, '-sample.bin'));
    const r = spawnSync(process.execPath, [bin, 'disasm', f, 'busyLoop', '--binary=-sample.bin', '--quiet'], { encoding: 'utf8', cwd: dashed });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('ROUTINE ======================== main.busyLoop\n');
    expect(r.stdout).toBe((await profkit(['disasm', f, 'busyLoop', '--binary', join(PPROF_REPORT_TESTDATA, 'sample.bin'), '--quiet'])).stdout);
  });

  it('a mapping named like an option (-x) reaches nm as a file (binutilsTool)', () => {
    const dashed = join(tmp, 'dashed-unit');
    mkdirSync(dashed, { recursive: true });
    copyFileSync(join(PPROF_REPORT_TESTDATA, 'sample.bin'), join(dashed, '-sample.bin'));
    const before = process.cwd();
    process.chdir(dashed);
    try {
      const file = binutilsTool().open({ file: '-sample.bin', start: 0n, limit: 0n, offset: 0n });
      expect('error' in file ? file.error : '').toBe('');
      expect((file as ObjectFile).symbols((name) => name === 'main.busyLoop', undefined).map((s) => s.name)).toEqual(['main.busyLoop']);
    } finally {
      process.chdir(before);
    }
  });

  it('a relative --binary is found from the command\'s working directory (here the repository), not the process\'s', async () => {
    const f = join(PPROF_REPORT_TESTDATA, 'sample.cpu');
    const binary = join(PPROF_REPORT_TESTDATA, 'sample.bin');
    expect(process.cwd()).not.toBe(repoRoot);
    const r = await profkit(['disasm', f, 'busyLoop', '--binary', relative(repoRoot, binary), '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe((await profkit(['disasm', f, 'busyLoop', '--binary', binary, '--quiet'])).stdout);
  });

  it('a FIFO as binary is reported, not opened (the open would block)', () => {
    const fifo = join(tmp, 'binary.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const f = join(PPROF_REPORT_TESTDATA, 'sample.cpu');
    const r = spawnSync(process.execPath, [bin, 'disasm', f, 'busyLoop', '--binary', fifo], { encoding: 'utf8', timeout: 20_000 });
    expect(r.error).toBeUndefined();
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${fifo}: not a regular file`);
  });

  it('a regexp matching nothing, or no readable binary, is an error as in pprof', async () => {
    const f = join(PPROF_REPORT_TESTDATA, 'sample.cpu');
    const r = await profkit(['disasm', f, 'busyLoop', '--binary', join(tmp, 'absent.bin'), '--quiet']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no matches found for regexp: busyLoop');
    expect(r.stderr).toContain('absent.bin');
  });
});

describe.skipIf(!goAvailable || !haveBinutils)('disasm on profiles of a Go program built and run now', () => {
  const dir = join(tmp, 'go');
  beforeAll(() => {
    mkdirSync(dir, { recursive: true });
    const env = { ...process.env, GO111MODULE: 'off', GOFLAGS: '', GOCACHE: join(tmp, 'gocache'), HOME: tmp };
    const b = spawnSync('go', ['build', '-o', join(dir, 'goprof'), 'main.go'], { cwd: join(repoRoot, 'packages/cli/test/fixtures/goprof'), encoding: 'utf8', timeout: 300_000, env });
    expect(b.status, b.stderr).toBe(0);
    const r = spawnSync(join(dir, 'goprof'), [dir], { encoding: 'utf8', timeout: 120_000, env });
    expect(r.status, r.stderr).toBe(0);
  }, 300_000);

  it('CPU profile: main.spin', async () => {
    const text = await expectSameDisasm(join(dir, 'cpu.pb.gz'), 'main\\.spin\\b');
    expect(text).toMatch(/^ROUTINE =+ main\.spin$/m);
  });

  it('heap profile: the allocation sites', async () => {
    await expectSameDisasm(join(dir, 'heap.pb.gz'), 'main\\.');
  });
});

warnIfNoGperftools('pprof-disasm interop');

describe.skipIf(!goAvailable || !haveBinutils || !haveGperftools)('disasm on gperftools profiles of a C program built and run now', () => {
  const dir = join(tmp, 'gperftools');
  const source = join(repoRoot, 'packages/gperftools-heap/test/c/workload.c');
  /** Builds and runs the workload (PIE or not) in `out`; returns the symbolized CPU and heap profiles. */
  async function profiles(out: string, pie: boolean): Promise<{ cpu: string; heap: string }> {
    mkdirSync(out, { recursive: true });
    const binary = join(out, 'workload');
    const cc = spawnSync('gcc', ['-O0', '-g', pie ? '-pie' : '-no-pie', '-o', binary, source, '-ltcmalloc_and_profiler'], { encoding: 'utf8' });
    expect(cc.status, cc.stderr).toBe(0);
    const run = spawnSync(binary, ['30000000'], {
      encoding: 'utf8',
      env: { ...process.env, HEAPPROFILE: join(out, 'hp'), CPUPROFILE: join(out, 'cpu.prof'), CPUPROFILE_FREQUENCY: '1000' },
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const heapDump = readdirSync(out).filter((f) => /^hp\.\d{4}\.heap$/.test(f)).sort().pop()!;
    const result = { cpu: join(out, 'cpu.sym.pb.gz'), heap: join(out, 'heap.sym.pb.gz') };
    for (const [from, to] of [[join(out, 'cpu.prof'), result.cpu], [join(out, heapDump), result.heap]] as const) {
      const c = await profkit(['convert', from, to, '--symbolize', '--quiet']);
      expect(c.code, c.stderr).toBe(0);
    }
    return result;
  }
  let nonPie: { cpu: string; heap: string };
  let pie: { cpu: string; heap: string };
  beforeAll(async () => {
    nonPie = await profiles(join(dir, 'no-pie'), false);
    pie = await profiles(join(dir, 'pie'), true);
  }, 180_000);

  it('CPU profile (-no-pie): spin_a and spin_b, instruction by instruction', async () => {
    const text = await expectSameDisasm(nonPie.cpu, 'spin_');
    expect(text).toMatch(/^ROUTINE =+ spin_a$/m);
    // profkit lists the symbol to its end: the final one-byte ret pprof leaves out.
    expect(text).toMatch(/^ +\. +\. +[0-9a-f]+: ret\b/m);
    const j = JSON.parse((await profkit(['disasm', nonPie.cpu, 'spin_a', '--json'])).stdout);
    expect(j.schema).toBe('profkit.disasm/1');
    const [routine] = j.routines;
    expect(routine.name).toBe('spin_a');
    expect(routine.instructions.reduce((a: bigint, i: { flat: string }) => a + BigInt(i.flat), 0n)).toBe(BigInt(routine.flat));
    // --intel-syntax (pprof -intel_syntax, which Go 1.19's go tool pprof refuses): same addresses and values.
    const intel = await profkit(['disasm', nonPie.cpu, 'spin_', '-intel_syntax', '--quiet']);
    expect(intel.code, intel.stderr).toBe(0);
    expect(intel.stdout).toMatch(/: push +rbp\b/);
    expect(text).toMatch(/: push +%rbp\b/);
    expect(listing(intel.stdout)).toEqual(listing(text));
    expect(goPprof(['-disasm=spin_', '-intel_syntax', nonPie.cpu]).stderr).toContain('Intel syntax is not supported');
  });

  it('heap profile (-no-pie): the allocation sites', async () => {
    await expectSameDisasm(nonPie.heap, 'alloc_|path_');
  });

  it('a position-independent binary: profkit maps addresses to the object (go tool pprof finds nothing)', async () => {
    expect(goPprof(['-disasm=spin_a$', pie.cpu]).stderr).toContain('no matches found');
    const r = await profkit(['disasm', pie.cpu, '^spin_a$', '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const routine = /^ROUTINE =+ spin_a\n +(\S+) +(\S+) \(flat, cum\)/m.exec(r.stdout);
    expect(routine).not.toBeNull();
    const top = await profkit(['top', pie.cpu, '--json', '--quiet']);
    const spinA = JSON.parse(top.stdout).entries.find((e: { name: string }) => e.name === 'spin_a');
    const sampled = [...r.stdout.matchAll(/^ +(\d+)ms +\S+ +[0-9a-f]+: /gm)].reduce((s, m) => s + Number(m[1]), 0);
    expect(sampled * 1e6).toBe(Number(spinA.flat));
  });
});
