/**
 * Interop with the real tools: gperftools (libtcmalloc_and_profiler) produces heap and CPU
 * profiles from a small C program; `go tool pprof -raw` (Go's pprof reads the legacy formats) and
 * Debian's Perl `google-pprof` read both the originals and what our writers produce. Each part
 * skips with a message naming the missing tool.
 */
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertValid, formatPprofDump, totalValue } from '@profkit/core/node';
import { readLegacy, writeCpuProfile, writeHeapText } from '../src/node.js';
import { haveCommand, haveShared, sharedFixture } from './helpers.js';

const haveGo = haveCommand('go');
const haveGcc = haveCommand('gcc');
const haveGooglePprof = haveCommand('google-pprof') && haveCommand('addr2line') && haveCommand('nm');
const haveLib = ['/usr/lib/x86_64-linux-gnu/libtcmalloc_and_profiler.so', '/usr/lib/aarch64-linux-gnu/libtcmalloc_and_profiler.so', '/usr/lib/libtcmalloc_and_profiler.so'].some(existsSync);
const haveHeader = existsSync('/usr/include/gperftools/heap-profiler.h');
const haveGperftools = haveGcc && haveLib && haveHeader;
if (!haveGo) console.warn('gperftools-heap interop: `go` not installed (apt-get install golang-go); go tool pprof checks skipped');
if (!haveGperftools) console.warn('gperftools-heap interop: gcc or gperftools missing (apt-get install gcc libgoogle-perftools-dev); real-producer tests skipped');
if (!haveGooglePprof) console.warn('gperftools-heap interop: google-pprof/binutils missing (apt-get install google-perftools binutils); google-pprof checks skipped');

let work = '';
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'profkit-gperf-'));
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** `go tool pprof -raw` of a file: google/pprof's Profile.String() dump. */
function goRaw(file: string): string {
  const r = spawnSync('go', ['tool', 'pprof', '-raw', '-symbolize=none', file], {
    encoding: 'utf8',
    env: { ...process.env, HOME: work, GOCACHE: join(work, 'gocache'), PPROF_TMPDIR: work },
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`go tool pprof failed on ${file}: ${r.stderr}`);
  return r.stdout;
}

/**
 * The meaning of a Profile.String() dump, independent of ids: the header lines, then per sample
 * its values, labels and frames as `address@mapping-file`. `go tool pprof` merges samples with
 * equal stacks and renumbers locations and mappings, so dumps are compared through this.
 */
function dumpMeaning(dump: string): string[] {
  const [head, rest] = dump.split('\nSamples:\n') as [string, string];
  const [samplesPart, afterSamples] = rest.split('\nLocations\n') as [string, string];
  const [locPart, mapPart] = afterSamples.split('\nMappings\n') as [string, string];
  const maps = new Map<string, string>();
  for (const l of mapPart.split('\n')) {
    const m = /^(\d+): (\S+) (\S*)/.exec(l);
    if (m) maps.set(m[1]!, `${m[2]} ${m[3]}`);
  }
  const locs = new Map<string, string>();
  for (const l of locPart.split('\n')) {
    const m = /^\s*(\d+): (0x[0-9a-f]+) (?:M=(\d+) )?(.*)$/.exec(l);
    if (m) locs.set(m[1]!, `${m[2]}@${m[3] ? maps.get(m[3]) : '-'} ${m[4]}`.trim());
  }
  const lines = samplesPart.split('\n');
  const out = [head, lines[0]!];
  let skipping = false;
  for (const l of lines.slice(1)) {
    const m = /^((?:\s+-?\d+)+): (.*)$/.exec(l);
    if (m) {
      const ids = m[2]!.trim().split(' ').filter(Boolean);
      // go tool pprof's merge leaves out samples without a stack and samples whose values are
      // all zero; so does this comparison.
      skipping = ids.length === 0 || m[1]!.trim().split(/\s+/).every((v) => v === '0');
      if (!skipping) out.push(`${m[1]!.trim().split(/\s+/).join(' ')} | ${ids.map((id) => locs.get(id)).join(' ; ')}`);
    } else if (l.trim() && !skipping) out[out.length - 1] += ` ${l.trim()}`;
  }
  return out;
}

function googlePprofText(binary: string, file: string, extra: string[] = []): string {
  const r = spawnSync('google-pprof', ['--text', ...extra, binary, file], { encoding: 'utf8', env: { ...process.env, HOME: work }, timeout: 60_000 });
  if (r.status !== 0) throw new Error(`google-pprof failed on ${file}: ${r.stderr}`);
  return (r.stdout + r.stderr)
    .split('\n')
    .filter((l) => !l.startsWith('Using local file'))
    .join('\n');
}

describe.skipIf(!haveGo || !haveShared)('go tool pprof reads what our writers produce', () => {
  const cases: [string, (b: Uint8Array) => Uint8Array][] = [
    ['cppbench.heap', (b) => new TextEncoder().encode(writeHeapText(readLegacy(b).profile).text)],
    ['cppbench.growth', (b) => new TextEncoder().encode(writeHeapText(readLegacy(b).profile).text)],
    ['gobench.heap', (b) => new TextEncoder().encode(writeHeapText(readLegacy(b).profile).text)],
    ['gobench.heap', (b) => new TextEncoder().encode(writeHeapText(readLegacy(b).profile, { kind: 'heapprofile' }).text)],
    ['cppbench.cpu', (b) => writeCpuProfile(readLegacy(b).profile).bytes],
    ['go.crc32.cpu', (b) => writeCpuProfile(readLegacy(b).profile, { wordSize: 8, littleEndian: false }).bytes],
  ];
  cases.forEach(([name, write], k) => {
    it(`${name} (#${k}) rewritten: go tool pprof -raw shows what our reader reads`, () => {
      const out = join(work, `ours-${k}-${name}`);
      writeFileSync(out, write(sharedFixture(`pprof/profile/testdata/${name}`)));
      const ours = readLegacy(new Uint8Array(readFileSync(out)), { sumSameStacks: true }).profile;
      expect(dumpMeaning(goRaw(out))).toEqual(dumpMeaning(formatPprofDump(ours)));
    });
  });
});

describe.skipIf(!haveGperftools)('real gperftools producer', () => {
  let files: string[] = [];
  let binary = '';
  beforeAll(() => {
    binary = join(work, 'workload');
    const src = join(__dirname, 'c', 'workload.c');
    const cc = spawnSync('gcc', ['-O0', '-g', '-o', binary, src, '-ltcmalloc_and_profiler'], { encoding: 'utf8' });
    if (cc.status !== 0) throw new Error(`gcc failed: ${cc.stderr}`);
    const run = spawnSync(binary, ['30000000'], {
      encoding: 'utf8',
      env: { ...process.env, HEAPPROFILE: join(work, 'hp'), CPUPROFILE: join(work, 'cpu.prof'), CPUPROFILE_FREQUENCY: '1000' },
      timeout: 60_000,
    });
    if (run.status !== 0) throw new Error(`workload failed: ${run.stderr}`);
    files = readdirSync(work).filter((f) => /^hp\.\d{4}\.heap$/.test(f) || f === 'cpu.prof').sort();
  });

  it('produced heap dumps and a CPU profile', () => {
    expect(files.filter((f) => f.endsWith('.heap')).length).toBeGreaterThanOrEqual(2);
    expect(files).toContain('cpu.prof');
  });

  it('every dump reads as a valid profile of the right format', () => {
    for (const f of files) {
      const r = readLegacy(new Uint8Array(readFileSync(join(work, f))), { fileName: f });
      assertValid(r.profile, f);
      expect(r.format).toBe(f.endsWith('.heap') ? 'gperftools-heap' : 'gperftools-cpu');
      // The main binary is recognised and comes first.
      expect(r.profile['.mappings'].filename[0]).toBe(binary);
    }
  });

  it.skipIf(!haveGo)('our reading (same stacks summed, as pprof merges them) means what go tool pprof -raw shows for every dump', () => {
    for (const f of files) {
      const file = join(work, f);
      const p = readLegacy(new Uint8Array(readFileSync(file)), { sumSameStacks: true }).profile;
      const dump = goRaw(file);
      expect(dumpMeaning(dump)).toEqual(dumpMeaning(formatPprofDump(p)));
      // And the totals, independently of the layout: sum the value columns of go's dump.
      const sampleLines = dump.split('Locations\n')[0]!.split('\n').filter((l) => /^\s+-?\d+( +-?\d+)*: /.test(l));
      const ntypes = p.sample_types.type.length;
      for (let t = 0; t < ntypes; t++) {
        const goTotal = sampleLines.reduce((s, l) => s + BigInt(l.trim().split(/\s+/)[t]!.replace(':', '')), 0n);
        expect(totalValue(p, t)).toBe(goTotal);
      }
    }
  });

  it('the heap writer reproduces gperftools heap profiles byte for byte (up to the maps section)', () => {
    for (const f of files.filter((x) => x.endsWith('.heap'))) {
      const original = readFileSync(join(work, f), 'utf8');
      const p = readLegacy(new TextEncoder().encode(original)).profile;
      const ours = writeHeapText(p).text;
      const head = (s: string) => s.slice(0, s.indexOf('\nMAPPED_LIBRARIES:\n'));
      expect(head(ours)).toBe(head(original));
      // The maps section holds the executable mappings, in gperftools' line layout.
      expect(ours).toMatch(new RegExp(`\\n[0-9a-f]{8,}-[0-9a-f]{8,} r-xp [0-9a-f]{8} 00:00 0 {11}${binary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`));
    }
  });

  it('the CPU writer reproduces libprofiler\'s CPUPROFILE file byte for byte up to the maps text', () => {
    const original = new Uint8Array(readFileSync(join(work, 'cpu.prof')));
    const a = readLegacy(original, { keepSignalFrames: true }).profile;
    const ours = writeCpuProfile(a).bytes;
    // header, records and trailer: identical bytes
    const na = cpuBinaryLength(original);
    const nb = cpuBinaryLength(ours);
    expect(countCpuRecords(original)).toBeGreaterThan(3);
    expect(nb).toBe(na);
    expect(Buffer.from(ours.subarray(0, nb)).equals(Buffer.from(original.subarray(0, na)))).toBe(true);
    // The maps text (the one difference, docs/formats/gperftools.md): ours keeps the executable
    // mappings only, written with inode 0 and permissions r-xp; otherwise the same lines.
    const execOnly = new TextDecoder()
      .decode(original.subarray(na))
      .split('\n')
      .filter((l) => /^[0-9a-f]+-[0-9a-f]+ ..x. /.test(l))
      .map((l) => l.replace(/^(\S+) \S+ (\S+ \S+ )(\d+)( *)/, (_m, range: string, offDev: string, ino: string, pad: string) => `${range} r-xp ${offDev}0${' '.repeat(Math.max(1, ino.length + pad.length - 1))}`));
    expect(execOnly.length).toBeGreaterThan(3);
    expect(new TextDecoder().decode(ours.subarray(nb)).replace(/\n$/, '').split('\n')).toEqual(execOnly);
    // and the rewrite reads back to the same profile
    const b = readLegacy(ours, { keepSignalFrames: true }).profile;
    expect(formatPprofDump(b)).toBe(formatPprofDump(a));
    expect(totalValue(b, 0)).toBe(totalValue(a, 0));
  });

  it.skipIf(!haveGooglePprof)("Debian's google-pprof reports the same on our rewritten files as on the originals", () => {
    const heap = files.filter((f) => f.endsWith('.heap')).pop()!;
    const ph = readLegacy(new Uint8Array(readFileSync(join(work, heap)))).profile;
    writeFileSync(join(work, 'ours.heap'), writeHeapText(ph).text);
    const want = googlePprofText(binary, join(work, heap));
    expect(want).toMatch(/Total: /);
    expect(googlePprofText(binary, join(work, 'ours.heap'))).toBe(want);
    // CPU: the whole --text report (total, then flat/flat%/sum%/cum/cum% per function), from our
    // default reading (signal frames dropped) and from a reading that keeps them.
    const wantCpu = googlePprofText(binary, join(work, 'cpu.prof'));
    expect(wantCpu).toMatch(/Total: \d+ samples/);
    const rows = wantCpu.split('\n').filter((l) => /^\s*\d+\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+\S/.test(l));
    expect(rows.length).toBeGreaterThan(3);
    for (const keepSignalFrames of [false, true]) {
      const pc = readLegacy(new Uint8Array(readFileSync(join(work, 'cpu.prof'))), { keepSignalFrames }).profile;
      const out = join(work, `ours-cpu-${keepSignalFrames}.prof`);
      writeFileSync(out, writeCpuProfile(pc).bytes);
      expect(googlePprofText(binary, out).split('\n')).toEqual(wantCpu.split('\n'));
    }
  });
});

/** Words of a little-endian 64-bit CPU profile (what libprofiler writes on x86-64/arm64). */
function cpuWords(b: Uint8Array): BigUint64Array {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const n = Math.floor(b.byteLength / 8);
  const w = new BigUint64Array(n);
  for (let i = 0; i < n; i++) w[i] = dv.getBigUint64(i * 8, true);
  return w;
}

/** Records of a CPU profile, parsed independently of the reader: [count, depth, pcs…]. */
function cpuRecords(b: Uint8Array): { records: bigint[][]; end: number } {
  const w = cpuWords(b);
  expect([w[0], w[1], w[2]]).toEqual([0n, 3n, 0n]);
  let i = 2 + Number(w[1]);
  const records: bigint[][] = [];
  for (;;) {
    const count = w[i]!;
    const depth = Number(w[i + 1]!);
    if (i + 2 + depth > w.length) throw new Error(`CPU profile record at word ${i} runs past the end`);
    if (count === 0n && depth === 1 && w[i + 2] === 0n) return { records, end: (i + 3) * 8 };
    records.push([count, BigInt(depth), ...w.subarray(i + 2, i + 2 + depth)]);
    i += 2 + depth;
  }
}
const cpuBinaryLength = (b: Uint8Array) => cpuRecords(b).end;
const countCpuRecords = (b: Uint8Array) => cpuRecords(b).records.length;

const haveGxx = haveCommand('g++') && existsSync('/usr/include/gperftools/malloc_extension.h');
if (!haveGxx) console.warn('gperftools-heap interop: g++ or gperftools headers missing (apt-get install g++ libgoogle-perftools-dev); tcmalloc heap-sample tests skipped');

describe.skipIf(!haveGxx || !haveLib)("tcmalloc's GetHeapSample (heap_v2) and GetHeapGrowthStacks (growth)", () => {
  let dir = '';
  beforeAll(() => {
    dir = join(work, 'tcmalloc');
    spawnSync('mkdir', ['-p', dir]);
    const bin = join(dir, 'sample');
    const cc = spawnSync('g++', ['-O0', '-g', '-o', bin, join(__dirname, 'c', 'sample.cc'), '-ltcmalloc'], { encoding: 'utf8' });
    if (cc.status !== 0) throw new Error(`g++ failed: ${cc.stderr}`);
    for (const [env, prefix] of [[{ TCMALLOC_SAMPLE_PARAMETER: '524288' }, 's'], [{}, 's0']] as const) {
      const r = spawnSync(bin, [join(dir, `${prefix}.heap`), join(dir, `${prefix}.growth`)], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
      if (r.status !== 0) throw new Error(`sample failed: ${r.stderr}`);
    }
  });

  it('heap_v2 and growth dumps read as valid, unsampled/plain heap profiles', () => {
    const h = readLegacy(new Uint8Array(readFileSync(join(dir, 's.heap'))), { fileName: 's.heap' });
    assertValid(h.profile);
    expect(h.profile['.extensions']['gperftools-heap']!.facts).toMatchObject({ heap_kind: 'heap_v2', sampling: 'poisson', sampling_rate: 524288n });
    const raw = h.profile['.extensions']['gperftools-heap']!.samples!.raw_inuse_bytes as BigInt64Array;
    // Unsampling only ever scales up.
    for (let i = 0; i < raw.length; i++) expect(h.profile.samples['.values'][1]![i]!).toBeGreaterThanOrEqual(raw[i]!);
    const g = readLegacy(new Uint8Array(readFileSync(join(dir, 's.growth'))), { fileName: 's.growth' });
    assertValid(g.profile);
    expect(g.profile['.extensions']['gperftools-heap']!.facts!.heap_kind).toBe('growth');
    expect(g.profile['.profile'].period).toBe(1n);
  });

  it('our writers reproduce both byte for byte up to the maps section', () => {
    for (const f of ['s.heap', 's.growth']) {
      const original = readFileSync(join(dir, f), 'utf8');
      const ours = writeHeapText(readLegacy(new TextEncoder().encode(original)).profile).text;
      const head = (s: string) => s.slice(0, s.indexOf('\nMAPPED_LIBRARIES:\n'));
      expect(head(ours)).toBe(head(original));
    }
  });

  it.skipIf(!haveGo)('go tool pprof -raw shows what we read', () => {
    for (const f of ['s.heap', 's.growth']) {
      const file = join(dir, f);
      const p = readLegacy(new Uint8Array(readFileSync(file)), { sumSameStacks: true }).profile;
      expect(dumpMeaning(goRaw(file))).toEqual(dumpMeaning(formatPprofDump(p)));
    }
  });

  it('with sampling off, the %warn preamble is kept as warnings (google/pprof refuses the file)', () => {
    const r = readLegacy(new Uint8Array(readFileSync(join(dir, 's0.heap'))), { fileName: 's0.heap' });
    expect(r.warnings.length).toBeGreaterThanOrEqual(3);
    expect(r.warnings.every((w) => w.code === 'PROFKIT_W_GPERFTOOLS_WARN_LINE')).toBe(true);
    expect(r.warnings.map((w) => w.message).join('\n')).toContain('TCMALLOC_SAMPLE_PARAMETER');
    expect(r.profile.samples.value.length).toBe(0);
    expect(r.profile['.extensions']['gperftools-heap']!.facts!.heap_kind).toBe('heap_v2');
    if (haveGo) {
      const go = spawnSync('go', ['tool', 'pprof', '-raw', '-symbolize=none', join(dir, 's0.heap')], { encoding: 'utf8', env: { ...process.env, HOME: work } });
      expect(go.status).not.toBe(0);
      expect(go.stderr).toContain('unrecognized profile format');
    }
  });
});

describe.skipIf(!haveGo)("Go runtime legacy text profiles (pprof.Lookup(name).WriteTo(w, 1))", () => {
  let dir = '';
  beforeAll(() => {
    dir = join(work, 'golegacy');
    spawnSync('mkdir', ['-p', dir]);
    const r = spawnSync('go', ['run', join(__dirname, 'c', 'golegacy.go'), dir], {
      encoding: 'utf8',
      env: { ...process.env, HOME: work, GO111MODULE: 'off', GOCACHE: join(tmpdir(), 'profkit-gperftools-gocache') },
      timeout: 120_000,
    });
    if (r.status !== 0) throw new Error(`go run failed: ${r.stderr}`);
  });

  for (const [name, format] of [
    ['heap', 'gperftools-heap'],
    ['goroutine', 'gperftools-thread'],
    ['mutex', 'gperftools-contention'],
  ] as const) {
    it(`${name}: read as ${format}, meaning what go tool pprof -raw shows`, () => {
      const file = join(dir, `${name}.txt`);
      const r = readLegacy(new Uint8Array(readFileSync(file)), { fileName: file, sumSameStacks: true });
      assertValid(r.profile);
      expect(r.format).toBe(format);
      expect(r.profile.samples.value.length).toBeGreaterThan(0);
      expect(dumpMeaning(goRaw(file))).toEqual(dumpMeaning(formatPprofDump(r.profile)));
    });
  }

  it('threadcreate with stackless rows ("4 @"): google/pprof refuses it, we read empty stacks', () => {
    const file = join(dir, 'threadcreate.txt');
    const text = readFileSync(file, 'utf8');
    const total = Number(/^threadcreate profile: total (\d+)$/m.exec(text)![1]);
    const p = readLegacy(new Uint8Array(readFileSync(file))).profile;
    expect(totalValue(p, 0)).toBe(BigInt(total));
    if (/^\d+ @$/m.test(text)) {
      const go = spawnSync('go', ['tool', 'pprof', '-raw', '-symbolize=none', file], { encoding: 'utf8', env: { ...process.env, HOME: work } });
      expect(go.stderr).toContain('malformed profile format');
    }
  });
});
