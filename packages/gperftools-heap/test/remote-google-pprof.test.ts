/**
 * `profkit serve` against Debian's Perl `google-pprof` (package google-perftools), the client
 * gperftools users actually run: `google-pprof --text BINARY http://127.0.0.1:P/pprof/heap` must
 * print the same report as `google-pprof --text BINARY FILE` on the file being served. The
 * profiles come from the real producer (a C workload linked with libtcmalloc_and_profiler, run
 * with HEAPPROFILE and CPUPROFILE). Then SIGTERM: the server exits cleanly (exit code 130 =
 * interrupted, "server stopped", not killed by the signal) even with a keep-alive connection
 * open, and its port can be bound again.
 *
 * Skips with a message naming what is missing: the built CLI, gcc, gperftools
 * (libgoogle-perftools-dev), google-pprof (google-perftools), curl (google-pprof fetches with it).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { Agent, get as httpGet } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliBin, haveCli as haveCliBuilt } from '@profkit/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveCommand, pprofTestdata } from './helpers.js';
import { haveFixtures } from './remote-helpers.js';

const haveCli = haveCliBuilt('remote google-pprof tests');
const haveLib = ['/usr/lib/x86_64-linux-gnu/libtcmalloc_and_profiler.so', '/usr/lib/aarch64-linux-gnu/libtcmalloc_and_profiler.so', '/usr/lib/libtcmalloc_and_profiler.so'].some(existsSync);
const haveProducer = haveCommand('gcc') && haveLib;
const haveGooglePprof = haveCommand('google-pprof') && haveCommand('curl') && haveCommand('addr2line') && haveCommand('nm');
if (!haveProducer) console.warn('remote google-pprof tests: gcc or gperftools missing (apt-get install gcc libgoogle-perftools-dev); skipped');
if (!haveGooglePprof) console.warn('remote google-pprof tests: google-pprof, curl or binutils missing (apt-get install google-perftools curl binutils); skipped');

interface Served {
  proc: ChildProcess;
  base: string;
  port: number;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `profkit serve FILES…` and waits for its "serving on" line. */
async function serve(files: string[], program: string): Promise<Served> {
  const proc = spawn(process.execPath, [cliBin, 'serve', ...files, '--program', program], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) => proc.on('exit', (code, signal) => ok({ code, signal })));
  const base = await new Promise<string>((ok, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`profkit serve did not start within 20 s: ${err}`)), 20_000);
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /serving on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(m[1]!);
      }
    });
    proc.on('exit', (c) => {
      clearTimeout(timer);
      fail(new Error(`profkit serve exited with ${c}: ${err}`));
    });
  });
  return { proc, base, port: Number(new URL(base).port), stderr: () => err, exited };
}

/** GET `url` through `agent`; whether the request went out on a connection kept alive from an earlier one. */
function getText(agent: Agent, url: string): Promise<{ status: number; body: string; reusedSocket: boolean }> {
  return new Promise((ok, fail) => {
    const req = httpGet(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => ok({ status: res.statusCode!, body, reusedSocket: req.reusedSocket }));
      res.on('error', fail);
    });
    req.on('error', fail);
  });
}

function stop(s: Served | undefined): void {
  if (s && s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
}

/**
 * google-pprof's report (stdout, from "Total:" on); its stderr names the local files used or the
 * fetch, and must show that a URL was really fetched.
 */
function googlePprofReport(home: string, binary: string, source: string): string[] {
  const r = spawnSync('google-pprof', ['--text', binary, source], { encoding: 'utf8', env: { ...process.env, HOME: home, PPROF_TMPDIR: join(home, 'pprof') }, timeout: 90_000 });
  if (r.status !== 0) throw new Error(`google-pprof --text ${binary} ${source} failed (${r.status}): ${r.stderr}`);
  if (source.startsWith('http://')) expect(r.stderr).toContain(`from ${source}`);
  else expect(r.stderr).toContain(`Using local file ${source}`);
  const lines = r.stdout.split('\n');
  const at = lines.findIndex((l) => l.startsWith('Total: '));
  if (at < 0) throw new Error(`google-pprof printed no report for ${source}:\n${r.stdout}${r.stderr}`);
  return lines.slice(at).filter((l) => l !== '');
}

describe.skipIf(!haveCli || !haveProducer || !haveGooglePprof)('google-pprof --text against profkit serve', () => {
  const work = mkdtempSync(join(tmpdir(), 'profkit-remote-gpprof-'));
  const binary = join(work, 'workload');
  let heap = '';
  let cpu = '';
  let served: Served | undefined;
  beforeAll(async () => {
    const cc = spawnSync('gcc', ['-O0', '-g', '-o', binary, join(__dirname, 'c', 'workload.c'), '-ltcmalloc_and_profiler'], { encoding: 'utf8' });
    if (cc.status !== 0) throw new Error(`gcc failed: ${cc.stderr}`);
    const run = spawnSync(binary, ['30000000'], { encoding: 'utf8', env: { ...process.env, HEAPPROFILE: join(work, 'hp'), CPUPROFILE: join(work, 'cpu.prof'), CPUPROFILE_FREQUENCY: '1000' }, timeout: 60_000 });
    if (run.status !== 0) throw new Error(`workload failed: ${run.stderr}`);
    heap = join(work, readdirSync(work).filter((f) => /^hp\.\d{4}\.heap$/.test(f)).sort().pop()!);
    cpu = join(work, 'cpu.prof');
    mkdirSync(join(work, 'home', 'pprof'), { recursive: true });
    served = await serve([heap, cpu], binary);
  }, 120_000);
  afterAll(() => {
    stop(served);
    rmSync(work, { recursive: true, force: true });
  });

  it('the heap report fetched from /pprof/heap is the report of the served file', () => {
    const home = join(work, 'home');
    const want = googlePprofReport(home, binary, heap);
    const rows = want.filter((l) => /^\s*[\d.]+\s+[\d.]+%\s+[\d.]+%\s+[\d.]+\s+[\d.]+%\s+\S/.test(l));
    expect(rows.length).toBeGreaterThan(2);
    // symbolized with the local binary: the workload's allocation functions are named
    expect(rows.some((l) => /\balloc_big$/.test(l))).toBe(true);
    expect(googlePprofReport(home, binary, `${served!.base}/pprof/heap`)).toEqual(want);
  });

  it('the CPU report fetched from /pprof/profile is the report of the served file', () => {
    const home = join(work, 'home');
    const want = googlePprofReport(home, binary, cpu);
    expect(want[0]).toMatch(/^Total: \d+ samples$/);
    expect(want.length).toBeGreaterThan(3);
    expect(googlePprofReport(home, binary, `${served!.base}/pprof/profile`)).toEqual(want);
  });
});

/** Whether `port` on 127.0.0.1 can be listened on now. */
function canBind(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const s = createServer();
    s.once('error', () => ok(false));
    s.listen(port, '127.0.0.1', () => {
      expect((s.address() as AddressInfo).port).toBe(port);
      s.close(() => ok(true));
    });
  });
}

describe.skipIf(!haveCli || !haveFixtures)('profkit serve on SIGTERM', () => {
  let served: Served | undefined;
  afterAll(() => stop(served));

  it('exits cleanly with a keep-alive connection open, and releases its port', async () => {
    served = await serve([join(pprofTestdata, 'cppbench.heap')], '/bin/cppbench');
    // the port is taken while it serves
    expect(await canBind(served.port)).toBe(false);
    // A keep-alive connection in use must not keep the server alive. The client asks again on the
    // same connection 200 ms after each answer until the server ends it, so the connection never
    // sits idle long enough for the server's keep-alive timeout (5 s) to close it: only the
    // shutdown can, and a server that left it open would never exit (the test's timeout fails
    // it). Before, an idle connection and a 5 s cap on the exit told those apart by timing.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const first = await getText(agent, `${served.base}/pprof/heap`);
    expect(first.status).toBe(200);
    expect(first.body).toMatch(/^heap profile: /);
    let reused = 0;
    let asking = true;
    const keepAsking = (async () => {
      for (;;) {
        await new Promise((ok) => setTimeout(ok, 200));
        const r = await getText(agent, `${served.base}/pprof/cmdline`).catch(() => undefined);
        if (r?.status !== 200) return;
        if (r.reusedSocket) reused++;
      }
    })().finally(() => (asking = false));
    // SIGTERM once the connection was used again: it is a kept-alive connection in use.
    while (reused === 0 && asking) await new Promise((ok) => setTimeout(ok, 20));
    expect(reused, 'the answers came on one kept-alive connection').toBeGreaterThan(0);
    served.proc.kill('SIGTERM');
    const { code, signal } = await served.exited;
    await keepAsking;
    agent.destroy();
    // handled, not killed by the signal: the CLI's "interrupted" exit code
    expect(signal).toBeNull();
    expect(code).toBe(130);
    expect(served.stderr()).toContain('interrupted by SIGTERM');
    expect(served.stderr()).toContain('server stopped');
    expect(served.stderr()).not.toMatch(/PROFKIT_E_INTERNAL|Error:/);
    // nothing listens any more, and the port can be bound again
    await expect(fetch(`${served.base}/pprof/heap`)).rejects.toThrow();
    expect(await canBind(served.port)).toBe(true);
  }, 60_000);
});
