/**
 * Real profile producers for the interop tests: the Go runtime (`fixtures/goprof/main.go`: a CPU
 * profile with pprof labels, a heap profile, legacy mutex and goroutine text) and gperftools (a C
 * workload linked with libtcmalloc_and_profiler: heap dumps and a CPU profile). Each writes its
 * profiles into a folder of the test's temporary directory.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect } from 'vitest';
import { goPprofIn, type GoPprofRun } from './go-pprof-runner.js';
import { repoRoot } from './views-helpers.js';

/**
 * `go tool pprof ARGS` as the interop comparisons run it: `TZ=UTC` (profkit prints times in UTC),
 * `-symbolize=none` (profkit does not symbolize on load), no search for binaries (`tmp` as
 * PPROF_BINARY_PATH and HOME).
 */
export function goPprofAsCompared(args: string[], tmp: string): GoPprofRun {
  return goPprofIn(tmp, process.cwd())(args);
}

/** Runs `fixtures/goprof/main.go`, writing cpu.pb.gz, heap.pb.gz, mutex.contention and goroutine.thread into `dir`. */
export function runGoProducer(dir: string, tmp: string): { status: number | null; stderr: string } {
  mkdirSync(dir, { recursive: true });
  const r = spawnSync('go', ['run', 'main.go', dir], {
    cwd: join(repoRoot, 'packages/cli/test/fixtures/goprof'),
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, GO111MODULE: 'off', GOFLAGS: '', GOCACHE: join(tmp, 'gocache'), HOME: tmp },
  });
  return { status: r.status, stderr: r.stderr ?? '' };
}

/** Inside a `describe` of profiles the Go runtime writes now: runs the Go producer into `dir` before the tests (failing them if it fails). */
export function goProfilesNow(dir: string, tmp: string): void {
  beforeAll(() => {
    const r = runGoProducer(dir, tmp);
    expect(r.status, r.stderr).toBe(0);
  }, 300_000);
}

/** Whether gcc and gperftools (headers and libtcmalloc_and_profiler) are installed. */
export const haveGperftools =
  spawnSync('gcc', ['--version']).status === 0 &&
  existsSync('/usr/include/gperftools/heap-profiler.h') &&
  ['/usr/lib/x86_64-linux-gnu/libtcmalloc_and_profiler.so', '/usr/lib/aarch64-linux-gnu/libtcmalloc_and_profiler.so'].some(existsSync);

/**
 * Builds gperftools-heap's C workload into `dir` and runs it with HEAPPROFILE and CPUPROFILE set;
 * the profiles it wrote (`hp.NNNN.heap` dumps, `cpu.prof`), by file name, and the compiler's or
 * the run's exit status and error text.
 */
export function runGperftoolsProducer(dir: string): { files: string[]; status: number | null; stderr: string } {
  mkdirSync(dir, { recursive: true });
  const binary = join(dir, 'workload');
  const cc = spawnSync('gcc', ['-O0', '-g', '-o', binary, join(repoRoot, 'packages/gperftools-heap/test/c/workload.c'), '-ltcmalloc_and_profiler'], { encoding: 'utf8' });
  if (cc.status !== 0) return { files: [], status: cc.status, stderr: cc.stderr };
  const run = spawnSync(binary, ['30000000'], {
    encoding: 'utf8',
    env: { ...process.env, HEAPPROFILE: join(dir, 'hp'), CPUPROFILE: join(dir, 'cpu.prof'), CPUPROFILE_FREQUENCY: '1000' },
    timeout: 60_000,
  });
  const files = readdirSync(dir).filter((f) => /^hp\.\d{4}\.heap$/.test(f) || f === 'cpu.prof');
  return { files, status: run.status, stderr: run.stderr ?? '' };
}

/**
 * Inside a `describe` of profiles gperftools writes now: runs the gperftools producer into `dir`
 * before the tests (failing them if it fails) and returns a getter for the profile files it wrote.
 */
export function gperftoolsProfilesNow(dir: string): () => string[] {
  let files: string[] = [];
  beforeAll(() => {
    const r = runGperftoolsProducer(dir);
    expect(r.status, r.stderr).toBe(0);
    files = r.files;
  }, 120_000);
  return () => files;
}

/** Says on the console why the real gperftools producer part of `suite` is skipped, when it is. */
export function warnIfNoGperftools(suite: string): void {
  if (!haveGperftools) console.warn(`${suite}: gcc or gperftools missing (apt-get install gcc libgoogle-perftools-dev); the real gperftools producer part is skipped`);
}
