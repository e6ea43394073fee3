/**
 * pprof codec benchmark (issue 4): profkit vs pprof-format, protobufjs reflection, Go's
 * google/pprof (`goref time`), and the gunzip floor (node:zlib, pako).
 *
 *   npm run bench -- pprof [--sizes 10000,200000] [--reps 5] [--warmup 1] [--json FILE] [--no-go]
 *
 * Profiles come from `goref gen OUT N SEED` (Go's own encoder); without Go a similar profile is
 * synthesized in JS and the Go contender is skipped with a message. Every contender runs in its
 * own child process (`pprof-worker.js`) so that its peak RSS is measured alone; times are medians
 * of `--reps` repetitions inside that process after `--warmup` untimed ones (JIT warm-up; the
 * first repetition is also reported alone, as the cold time). Ratios are computed from one run.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { ProfileBuilder } from '@profkit/core/node';
import { serializePprof } from '@profkit/pprof';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../../..');
const cacheDir = join(repoRoot, 'node_modules', '.cache', 'profkit-bench');
const gorefDir = join(repoRoot, 'node_modules', '.cache', 'profkit-goref');
const sharedTools = join(process.env.PROFKIT_SHARED ?? resolve(repoRoot, '../shared'), 'tools');

interface WorkerResult {
  contender: string;
  phases: Record<string, number>;
  maxRSS: number;
}

export function machine(): Record<string, string | number> {
  let cpu = cpus()[0]?.model ?? 'unknown';
  try {
    const m = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) cpu = m[1]!.trim();
  } catch {
    // not Linux
  }
  let nproc = cpus().length;
  try {
    nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
  } catch {
    // keep os.cpus()
  }
  return { nproc, cpu, memoryBytes: totalmem(), node: process.version, platform: `${process.platform} ${process.arch}` };
}

export function buildGoref(): string | undefined {
  const haveGo = spawnSync('sh', ['-c', 'command -v go'], { stdio: 'ignore' }).status === 0;
  const script = join(sharedTools, 'goref', 'build.sh');
  if (!haveGo || !existsSync(script)) {
    process.stderr.write(`Go contender skipped: ${haveGo ? `${script} is absent` : 'go is not installed (apt-get install -y golang-go golang-github-google-pprof-dev)'}\n`);
    return undefined;
  }
  mkdirSync(gorefDir, { recursive: true });
  const bin = join(gorefDir, 'goref');
  const r = spawnSync(script, [bin], { env: { ...process.env, GOCACHE: join(gorefDir, 'gocache') }, encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(`Go contender skipped: building goref failed: ${r.stderr}\n`);
    return undefined;
  }
  return bin;
}

/** Without Go: a profile shaped like `goref gen` output (same counts, inline frames, labels). */
function synthesize(n: number, seed: number): Uint8Array {
  let a = seed >>> 0;
  const r = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (k: number) => Math.floor(r() * k);
  const b = new ProfileBuilder({
    sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }],
    facts: { period_type: { type: 'cpu', unit: 'nanoseconds' }, period: 10000000n, time_nanos: 1700000000000000000n, duration_nanos: 60000000000n, comments: ['synthetic'] },
  });
  const m = b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0x9000000n, filename: '/usr/bin/app', buildId: 'abcdef0123456789', hasFunctions: true });
  const nf = Math.floor(n / 10) + 100;
  const fns: number[] = [];
  for (let i = 1; i <= nf; i++) {
    fns.push(b.internFunction({ name: `pkg${i % 97}.(*Type${i % 31}).Method${i}`, systemName: `_ZN3pkg${i % 97}4Type${i % 31}7Method${i}Ev`, filename: `src/pkg${i % 97}/file${i % 13}.go`, startLine: i % 500 }));
  }
  const nl = Math.floor(n / 4) + 200;
  const locs: number[] = [];
  for (let i = 1; i <= nl; i++) {
    const k = 1 + int(3);
    const lines = Array.from({ length: k }, () => ({ functionId: fns[int(nf)]!, line: 1 + int(550) }));
    locs.push(b.addLocation({ address: BigInt(0x400000 + i * 16), mappingId: m, functionId: lines[0]!.functionId, line: lines[0]!.line, inlinedInto: lines.slice(1) }));
  }
  for (let i = 0; i < n; i++) {
    const d = 5 + int(40);
    const stack = Array.from({ length: d }, () => locs[int(nl)]!);
    const labels = int(4) === 0 ? [{ key: 'thread', str: `worker-${int(8)}` }, { key: 'bytes', num: BigInt(int(1 << 20)), unit: 'bytes' }] : undefined;
    b.addSample(stack, [BigInt(1 + int(5)), BigInt((1 + int(5)) * 10000000)], labels);
  }
  return serializePprof(b.build());
}

function profileFile(n: number, seed: number, goref: string | undefined): string {
  mkdirSync(cacheDir, { recursive: true });
  const file = join(cacheDir, `${goref ? 'goref' : 'js'}-gen-${n}-${seed}.pb.gz`);
  if (!existsSync(file)) {
    if (goref) execFileSync(goref, ['gen', file, String(n), String(seed)], { stdio: 'inherit' });
    else writeFileSync(file, synthesize(n, seed));
  }
  return file;
}

function runWorker(contender: string, file: string, reps: number | 'rss', warmup = 1): WorkerResult | undefined {
  const r = spawnSync(process.execPath, ['--max-old-space-size=8192', join(here, 'pprof-worker.js'), contender, file, String(reps), String(warmup)], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (r.status !== 0) {
    process.stderr.write(`${contender} failed on ${file}: ${r.stderr.split('\n').slice(0, 5).join('\n')}\n`);
    return undefined;
  }
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as WorkerResult;
}

function runGo(goref: string, file: string, reps: number): WorkerResult | undefined {
  const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
  const r = timeBin
    ? spawnSync(timeBin, ['-v', goref, 'time', file, String(reps)], { encoding: 'utf8' })
    : spawnSync(goref, ['time', file, String(reps)], { encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(`goref time failed: ${r.stderr}\n`);
    return undefined;
  }
  const ms = Number(r.stdout.trim());
  const rss = timeBin ? Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1] ?? 'NaN') * 1024 : NaN;
  // CPU time per repetition (user + system of the whole process / reps; includes reading the file once).
  const user = Number(/User time \(seconds\): ([\d.]+)/.exec(r.stderr)?.[1] ?? 'NaN');
  const sys = Number(/System time \(seconds\): ([\d.]+)/.exec(r.stderr)?.[1] ?? 'NaN');
  const cpu = Math.round(((user + sys) * 1000) / reps);
  return { contender: 'go', phases: { roundtrip_gz: ms, ...(Number.isNaN(cpu) ? {} : { cpu_roundtrip_gz: cpu }) }, maxRSS: rss };
}

const fmtMs = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '—' : `${x.toFixed(0)} ms`);
const fmtMB = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '—' : `${(x / 1e6).toFixed(0)} MB`);
const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || !a || !b ? undefined : Math.round((a / b) * 100) / 100);

export async function runPprofBench(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      sizes: { type: 'string', default: '10000,200000' },
      reps: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
      json: { type: 'string' },
      'no-go': { type: 'boolean', default: false },
      seed: { type: 'string', default: '42' },
    },
  });
  const sizes = values.sizes!.split(',').map((s) => Number(s.trim()));
  if (sizes.some((s) => !Number.isInteger(s) || s < 1 || s > 10_000_000)) {
    process.stderr.write(`--sizes: comma-separated sample counts in 1..10000000, got ${values.sizes}\n`);
    return 2;
  }
  const reps = Number(values.reps);
  const warmup = Number(values.warmup);
  const seed = Number(values.seed);
  const goref = values['no-go'] ? undefined : buildGoref();
  const m = machine();
  process.stdout.write(`machine: ${m.nproc} cpus, ${m.cpu}, ${(Number(m.memoryBytes) / 2 ** 30).toFixed(1)} GiB, node ${m.node}\n`);
  const report: Record<string, unknown>[] = [];
  for (const n of sizes) {
    const file = profileFile(n, seed, goref);
    const gzBytes = statSync(file).size;
    const rawBytes = gunzipSync(readFileSync(file)).length;
    const results: Record<string, WorkerResult | undefined> = {};
    for (const c of ['baseline', 'zlib', 'pako', 'profkit', 'profkit-registry', 'profkit-registry-whole', 'pprof-format', 'protobufjs']) {
      if (c === 'protobufjs' && n > 300000) {
        // protobufjs reflection needs ~18 GB of heap per million samples (3.6 GB RSS at 200k).
        process.stderr.write(`protobufjs skipped at ${n} samples: it needs about ${Math.round((n / 200000) * 3.6)} GB of memory\n`);
        continue;
      }
      results[c] = runWorker(c, file, reps, warmup);
    }
    if (goref) results.go = runGo(goref, file, reps);
    // Peak RSS of a single gunzip + decode + encode per contender, in fresh processes: the median
    // of 3 processes (one process's peak varies by ±5 % with GC timing; protobufjs, at GBs, once).
    const rss: Record<string, number | undefined> = {};
    const medianOf = (runs: (number | undefined)[]) => {
      const ok = runs.filter((x): x is number => x !== undefined && !Number.isNaN(x)).sort((a, b) => a - b);
      return ok.length === 0 ? undefined : ok[Math.floor(ok.length / 2)];
    };
    for (const c of ['baseline', 'zlib', 'profkit', 'profkit-registry', 'profkit-registry-whole', 'pprof-format', 'protobufjs']) {
      if (c in results) rss[c] = medianOf(Array.from({ length: c === 'protobufjs' ? 1 : 3 }, () => runWorker(c, file, 'rss')?.maxRSS));
    }
    if (goref) rss.go = medianOf(Array.from({ length: 3 }, () => runGo(goref, file, 1)?.maxRSS));
    const pk = results.profkit?.phases;
    const base = results.baseline?.maxRSS;
    const ratios = {
      cpu_vs_pprof_format: ratio(results['pprof-format']?.phases.cpu_roundtrip, pk?.cpu_roundtrip),
      cpu_vs_go_gzip6: ratio(results.go?.phases.cpu_roundtrip_gz, pk?.cpu_roundtrip_gz6),
      cpu_vs_go_gzip1: ratio(results.go?.phases.cpu_roundtrip_gz, pk?.cpu_roundtrip_gz1),
      cpu_over_zlib_gunzip_floor: ratio(pk?.cpu_roundtrip, results.zlib?.phases.cpu_gunzip),
      cpu_over_zlib_gunzip_exact_floor: ratio(pk?.cpu_roundtrip, results.zlib?.phases.cpu_gunzip_exact),
      cpu_registry_vs_go: ratio(results.go?.phases.cpu_roundtrip_gz, results['profkit-registry']?.phases.cpu_roundtrip_gz6),
      vs_go_gzip1: ratio(results.go?.phases.roundtrip_gz, pk?.roundtrip_gz1),
      vs_pprof_format: ratio(results['pprof-format']?.phases.roundtrip, pk?.roundtrip),
      vs_protobufjs: ratio(results.protobufjs?.phases.roundtrip, pk?.roundtrip),
      vs_go: ratio(results.go?.phases.roundtrip_gz, pk?.roundtrip_gz6),
      over_zlib_gunzip_floor: ratio(pk?.roundtrip, results.zlib?.phases.gunzip),
      decode_encode_over_zlib_gunzip_floor: ratio((pk?.decode ?? 0) + (pk?.encode ?? 0), results.zlib?.phases.gunzip),
      peak_rss_over_raw: ratio(rss.profkit, rawBytes),
      peak_rss_minus_node_baseline_over_raw: rss.profkit && rss.baseline ? ratio(rss.profkit - rss.baseline, rawBytes) : undefined,
      registry_peak_rss_over_raw: ratio(rss['profkit-registry'], rawBytes),
      registry_peak_rss_minus_node_baseline_over_raw: rss['profkit-registry'] && rss.baseline ? ratio(rss['profkit-registry'] - rss.baseline, rawBytes) : undefined,
      cold_cpu_over_zlib_gunzip_floor: ratio(pk?.cold_cpu_roundtrip, results.zlib?.phases.cpu_gunzip),
      cold_cpu_vs_pprof_format: ratio(results['pprof-format']?.phases.cold_cpu_roundtrip, pk?.cold_cpu_roundtrip),
      cpu_registry_whole_vs_go: ratio(results.go?.phases.cpu_roundtrip_gz, results['profkit-registry-whole']?.phases.cpu_roundtrip_gz6),
      registry_whole_peak_rss_minus_node_baseline_over_raw: rss['profkit-registry-whole'] && rss.baseline ? ratio(rss['profkit-registry-whole'] - rss.baseline, rawBytes) : undefined,
    };
    void base;
    const load = loadavg().map((x) => Math.round(x * 100) / 100);
    report.push({ samples: n, seed, loadAverageAfter: load, source: goref ? 'goref gen' : 'js synthesize', gzBytes, rawBytes, results, peakRssSingleRun: rss, ratios });
    process.stdout.write(`\nload average after the runs: ${load.join(' ')} (other processes share the ${m.nproc} cpus; wall times inflate with load, CPU times less)\n`);
    process.stdout.write(`${n} samples (${(rawBytes / 1e6).toFixed(1)} MB raw, ${(gzBytes / 1e6).toFixed(1)} MB gzipped), median of ${reps} after ${warmup} warm-up repetition(s):\n`);
    const rows: string[][] = [['contender', 'gunzip', 'decode', 'encode', 'dec+enc (incl. gunzip)', '+gzip6', 'cpu dec+enc', 'cpu +gzip6', 'peak RSS (reps)', 'peak RSS (one dec+enc, median of 3)']];
    for (const [c, r] of Object.entries(results)) {
      if (!r) {
        rows.push([c, 'failed', '', '', '', '', '', '', '', '']);
        continue;
      }
      const p = r.phases;
      if (c.startsWith('profkit-registry')) {
        rows.push([c, '', `read ${fmtMs(p.read)}`, `write ${fmtMs(p.write)}`, '', fmtMs(p.roundtrip_gz6), '', fmtMs(p.cpu_roundtrip_gz6), fmtMB(r.maxRSS), fmtMB(rss[c])]);
        continue;
      }
      if (c === 'zlib') {
        rows.push([c, `${fmtMs(p.gunzip)} (one chunk: ${fmtMs(p.gunzip_exact)})`, '', `gzip6 ${fmtMs(p.gzip6)}, gzip1 ${fmtMs(p.gzip1)}`, '', '', `${fmtMs(p.cpu_gunzip)} (${fmtMs(p.cpu_gunzip_exact)})`, '', fmtMB(r.maxRSS), fmtMB(rss[c])]);
        continue;
      }
      rows.push([c, fmtMs(p.gunzip), fmtMs(p.decode), fmtMs(p.encode ?? p.gzip6), fmtMs(p.roundtrip), fmtMs(p.roundtrip_gz6 ?? p.roundtrip_gz), fmtMs(p.cpu_roundtrip), fmtMs(p.cpu_roundtrip_gz6 ?? p.cpu_roundtrip_gz), fmtMB(r.maxRSS), fmtMB(rss[c])]);
    }
    const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const r of rows) process.stdout.write(`  ${r.map((x, i) => x.padEnd(w[i]!)).join('  ')}\n`);
    process.stdout.write(
      `  CPU time: profkit dec+enc ${ratios.cpu_vs_pprof_format ?? '—'}× less than pprof-format; with gzip level 6 ${ratios.cpu_vs_go_gzip6 ?? '—'}× ` +
        `(level 1: ${ratios.cpu_vs_go_gzip1 ?? '—'}×) less than Go; gunzip+dec+enc = ${ratios.cpu_over_zlib_gunzip_floor ?? '—'}× the zlib gunzip floor ` +
        `(${ratios.cpu_over_zlib_gunzip_exact_floor ?? '—'}× a one-chunk gunzip); CLI path (registry read+write, validation, gzip -6, file) ${ratios.cpu_registry_vs_go ?? '—'}× less than Go\n`,
    );
    process.stdout.write(
      `  cold (first repetition of a fresh process, before the JIT settles; medians above are after ${warmup} warm-up repetition(s)): ` +
        `profkit gunzip+dec+enc ${fmtMs(pk?.cold_cpu_roundtrip)} CPU = ${ratios.cold_cpu_over_zlib_gunzip_floor ?? '—'}× the gunzip floor, ` +
        `${ratios.cold_cpu_vs_pprof_format ?? '—'}× less than pprof-format's cold round trip\n`,
    );
    process.stdout.write(
      `  wall time: profkit dec+enc is ${ratios.vs_pprof_format ?? '—'}× faster than pprof-format, ${ratios.vs_protobufjs ?? '—'}× than protobufjs; ` +
        `with gzip ${ratios.vs_go ?? '—'}× faster than Go; dec+enc (incl. gunzip) = ${ratios.over_zlib_gunzip_floor ?? '—'}× the zlib gunzip floor ` +
        `(decode+encode alone ${ratios.decode_encode_over_zlib_gunzip_floor ?? '—'}×); peak RSS ${ratios.peak_rss_over_raw ?? '—'}× raw ` +
        `(${ratios.peak_rss_minus_node_baseline_over_raw ?? '—'}× above an idle node); CLI path peak RSS ${ratios.registry_peak_rss_over_raw ?? '—'}× raw ` +
        `(${ratios.registry_peak_rss_minus_node_baseline_over_raw ?? '—'}× above an idle node; read into one buffer: ` +
        `${ratios.registry_whole_peak_rss_minus_node_baseline_over_raw ?? '—'}× above, ${ratios.cpu_registry_whole_vs_go ?? '—'}× less CPU than Go)\n`,
    );
  }
  const out = { date: new Date().toISOString(), machine: m, reps, warmup, runs: report };
  if (values.json) {
    writeFileSync(values.json, `${JSON.stringify(out, null, 2)}\n`);
    process.stdout.write(`\nJSON written to ${values.json}\n`);
  }
  return 0;
}
