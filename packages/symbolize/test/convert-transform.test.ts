/**
 * The `symbolize` transform through the CLI (spawned): `profkit convert IN OUT --symbolize` and
 * `profkit fetch URL --symbolize local` on a real gperftools CPU profile of the test program
 * (prog.c, built non-PIE so link-time and run-time addresses agree), checked against `nm`; and
 * the one-line install hint when no adapter provides the transform.
 */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileBuilder, createRegistry, stackOf } from '@profkit/core/node';
import { readLegacy, writeCpuProfile } from '@profkit/gperftools-heap';
import symbolizeAdapter, { symbolizeTransform } from '../src/index.js';
import { C_DIR, compile, haveTool, nmSymbols, tmp } from './helpers.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const BIN = join(ROOT, 'packages/cli/dist/bin.js');
const haveCli = existsSync(BIN);
if (!haveCli) console.warn(`skipping convert --symbolize tests: ${BIN} not built (npx tsc -b packages/cli)`);
const LIBPROFILER = ['/usr/lib/x86_64-linux-gnu/libprofiler.so', '/usr/lib/aarch64-linux-gnu/libprofiler.so', '/usr/lib/libprofiler.so', '/usr/local/lib/libprofiler.so'].find((p) => existsSync(p));
if (!LIBPROFILER) console.warn('skipping convert --symbolize tests on a real CPU profile: libprofiler not installed (apt-get install -y libgoogle-perftools-dev)');
const haveGcc = haveTool('gcc', 'gcc') && haveTool('nm', 'binutils') && haveTool('addr2line', 'binutils');
const enabled = haveCli && haveGcc && !!LIBPROFILER;

let work = '';
let prog = '';
let cpu = '';
beforeAll(() => {
  if (!enabled) return;
  work = tmp('profkit-convert-symbolize-');
  prog = join(work, 'prog');
  cpu = join(work, 'prog.cpu');
  compile('gcc', ['-g', '-O2', '-fno-pie', '-no-pie', '-o', prog, join(C_DIR, 'prog.c'), '-Wl,--no-as-needed', '-lprofiler']);
  const r = spawnSync(prog, ['100000000'], { env: { ...process.env, CPUPROFILE: cpu, CPUPROFILE_FREQUENCY: '1000' }, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`profiled run of ${prog} failed: ${r.stderr}`);
}, 120_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

function cli(args: string[], cwd = ROOT) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
}

/** `profkit …` run asynchronously (so a server spawned by the same test keeps answering). */
function run(args: string[], cwd: string): Promise<{ status: number | null; stderr: string }> {
  return new Promise((ok) => {
    const c = spawn(process.execPath, [BIN, ...args], { cwd });
    let stderr = '';
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('exit', (status) => ok({ status, stderr }));
  });
}

/** Starts `profkit serve …` and resolves with its URL once it prints it. */
async function startServer(args: string[], cwd: string): Promise<{ server: ChildProcess; base: string }> {
  const server: ChildProcess = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const base = await new Promise<string>((ok, fail) => {
      let text = '';
      const timer = setTimeout(() => fail(new Error(`profkit serve did not start: ${text}`)), 30_000);
      server.stdout!.on('data', (c: Buffer) => {
        text += c.toString();
        const m = /serving on (http:\/\/\S+)/.exec(text);
        if (m) {
          clearTimeout(timer);
          ok(m[1]!);
        }
      });
      server.stderr!.on('data', (c: Buffer) => (text += c.toString()));
      server.on('exit', (code) => fail(new Error(`profkit serve exited with ${code}: ${text}`)));
    });
    return { server, base };
  } catch (e) {
    server.kill('SIGTERM');
    throw e;
  }
}

/** Folded stacks of a profile file, via `profkit convert FILE x.folded` (root first). */
function folded(file: string): Map<string, number> {
  const out = join(work, `${Math.random().toString(36).slice(2)}.folded`);
  const r = cli(['convert', file, out, '--quiet']);
  if (r.status !== 0) throw new Error(`convert ${file} -> folded failed: ${r.stderr}`);
  const m = new Map<string, number>();
  for (const l of readFileSync(out, 'utf8').split('\n')) {
    const x = /^(.*) (\d+)$/.exec(l);
    if (x) m.set(x[1]!, (m.get(x[1]!) ?? 0) + Number(x[2]));
  }
  return m;
}

/**
 * The oracle, independent of the symbolizer: the samples of the original profile, with every
 * address of the program named by `nm -S` (the function whose [start, start+size) holds it).
 * Returns the sample count whose leaf is in each function, and the count whose stack holds it.
 */
function nmOracle(): { self: Map<string, number>; total: Map<string, number> } {
  const syms = [...nmSymbols(prog)].filter(([name]) => ['main', 'mid_fn', 'leaf_fn'].includes(name));
  const nameOf = (a: bigint) => syms.find(([, s]) => a >= s.addr && a < s.addr + s.size)?.[0];
  const { profile: p } = readLegacy(new Uint8Array(readFileSync(cpu)), { fileName: cpu });
  const counts = p.samples['.values'][p.sample_types.type.indexOf('samples')]!;
  const rowOf = new Map<number, number>();
  p.locations.location_id.forEach((id, r) => rowOf.set(id, r));
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  for (let i = 0; i < p.samples.value.length; i++) {
    const names = Array.from(stackOf(p, i), (id) => nameOf(p.locations['.address'][rowOf.get(id)!]!));
    const n = Number(counts[i]!);
    if (names[0]) self.set(names[0], (self.get(names[0]) ?? 0) + n);
    for (const f of new Set(names)) if (f) total.set(f, (total.get(f) ?? 0) + n);
  }
  return { self, total };
}

/** The same per-function counts from folded stacks; inl_helper is always_inline into mid_fn (prog.c). */
function foldedCounts(stacks: Map<string, number>): { self: Map<string, number>; total: Map<string, number> } {
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  for (const [stack, n] of stacks) {
    const frames = stack.split(';').map((f) => (f === 'inl_helper' ? 'mid_fn' : f));
    const leaf = frames[frames.length - 1]!;
    if (['main', 'mid_fn', 'leaf_fn'].includes(leaf)) self.set(leaf, (self.get(leaf) ?? 0) + n);
    for (const f of new Set(frames)) if (['main', 'mid_fn', 'leaf_fn'].includes(f)) total.set(f, (total.get(f) ?? 0) + n);
  }
  return { self, total };
}

describe('the symbolize transform object', () => {
  it('is contributed by the adapter with the symbolize options, and registers', () => {
    expect(symbolizeAdapter.transforms).toEqual([symbolizeTransform]);
    expect(Object.keys(symbolizeTransform.options ?? {}).sort()).toEqual(['allow-redirect-host', 'binary', 'mode', 'remote', 'search-path']);
    const reg = createRegistry([symbolizeAdapter]);
    expect(reg.transforms().map((t) => [t.adapter, t.transform.name])).toEqual([['symbolize', 'symbolize']]);
  });
});

describe.skipIf(!enabled)('profkit convert --symbolize on a real gperftools CPU profile', () => {
  it('writes a profile whose functions are what nm says the sampled addresses are', () => {
    const out = join(work, 'out.pb.gz');
    const r = cli(['convert', cpu, out, '--symbolize', '--binary', prog]);
    expect(r.stderr).toContain(`symbolize: mapping 1 ${prog}: symbolized`);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`-> ${out} (pprof) symbolized`);
    const want = nmOracle();
    // the run really sampled the program's functions
    expect(want.total.get('main')).toBeGreaterThan(5);
    expect(want.self.get('leaf_fn') ?? 0).toBeGreaterThan(0);
    const got = foldedCounts(folded(out));
    expect(got.self).toEqual(want.self);
    expect(got.total).toEqual(want.total);
  });

  it('without --symbolize the same conversion keeps bare addresses (the control)', () => {
    const out = join(work, 'plain.pb.gz');
    const r = cli(['convert', cpu, out]);
    expect(r.status).toBe(0);
    const got = foldedCounts(folded(out));
    expect(got.total.size).toBe(0);
  });

  it('--json: no notes on stderr, the document names the transform', () => {
    const out = join(work, 'json.pb.gz');
    const r = cli(['convert', cpu, out, '--symbolize', '--binary', prog, '--json']);
    expect(r.status).toBe(0);
    expect(r.stderr).not.toContain('symbolize: mapping');
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ schema: 'profkit.convert/1', input: cpu, output: out, from: 'gperftools-cpu', to: 'pprof', transforms: ['symbolize'] });
  });

  it('a binary that does not exist is a warning naming the mapping, and the addresses stay', () => {
    const out = join(work, 'missing.pb.gz');
    const r = cli(['convert', cpu, out, '--symbolize', '--search-path', work, '--binary', join(work, 'no-such-prog')]);
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/PROFKIT_W_SYMBOLIZE_(MISSING_BINARY|BAD_BINARY)/);
    expect(foldedCounts(folded(out)).total.size).toBe(0);
  });

  it('--symbol-server names what local symbolization left, through the /pprof/symbol protocol', async () => {
    // The server answers with the names of an already symbolized copy of the same profile.
    const named = join(work, 'named.pb.gz');
    expect(cli(['convert', cpu, named, '--symbolize', '--binary', prog, '--quiet']).status).toBe(0);
    const { server, base } = await startServer(['serve', named, '--port', '0'], ROOT);
    try {
      const out = join(work, 'remote.pb.gz');
      const r = await run(['convert', cpu, out, '--symbolize', '--binary', join(work, 'no-such-prog'), '--symbol-server', `${base}/pprof/profile`], ROOT);
      expect(r.stderr).toMatch(/PROFKIT_W_SYMBOLIZE_(MISSING|BAD)_BINARY/);
      expect(r.stderr).toContain(`named by ${base}/pprof/symbol`);
      expect(r.status).toBe(0);
      // Names only (no inline callers): an inl_helper location reads as inl_helper alone, which
      // foldedCounts counts for mid_fn, so the per-function counts are nm's again.
      const want = nmOracle();
      const got = foldedCounts(folded(out));
      expect(got.self).toEqual(want.self);
      expect(got.total).toEqual(want.total);
    } finally {
      server.kill('SIGTERM');
    }
  });

  it('transform options need --symbolize; an unknown --symbolize-mode is a usage error', () => {
    const a = cli(['convert', cpu, join(work, 'x.pb.gz'), '--binary', prog]);
    expect(a.status).toBe(2);
    expect(a.stderr).toContain('--binary needs --symbolize');
    const b = cli(['convert', cpu, join(work, 'y.pb.gz'), '--symbolize', '--symbolize-mode', 'fast']);
    expect(b.status).toBe(2);
    expect(b.stderr).toContain('PROFKIT_E_USAGE');
    expect(existsSync(join(work, 'y.pb.gz'))).toBe(false);
  });

  it('profkit fetch --symbolize local applies the same transform to what a server sends', async () => {
    const { server, base } = await startServer(['serve', cpu, '--port', '0'], ROOT);
    try {
      const out = join(work, 'fetched.pb.gz');
      const r = await run(['fetch', `${base}/pprof/profile`, '--seconds', '1', '--symbolize', 'local', '--binary', prog, '-o', out], ROOT);
      expect(r.stderr).toContain(`symbolize: mapping 1 ${prog}: symbolized`);
      expect(r.status).toBe(0);
      const want = nmOracle();
      const got = foldedCounts(folded(out));
      expect(got.self).toEqual(want.self);
      expect(got.total).toEqual(want.total);
    } finally {
      server.kill('SIGTERM');
    }
  });
});

describe.skipIf(!haveCli)('when no adapter provides the symbolize transform', () => {
  it('convert --symbolize fails with exit code 4 and a one-line error naming the package not loaded, before reading', () => {
    const dir = tmp('profkit-no-symbolize-');
    try {
      // A project whose config loads the format adapters but not @profkit/symbolize (installed in
      // the repository's node_modules, so the error says it is installed but not loaded).
      const config = join(dir, 'profkit.config.json');
      writeFileSync(config, JSON.stringify({ adapters: ['gperftools-heap', 'pprof'].map((p) => join(ROOT, 'packages', p)), autoDiscover: false }));
      const input = join(dir, 'in.cpu');
      writeFileSync(input, 'not even a profile');
      const r = cli(['convert', input, join(dir, 'out.pb.gz'), '--symbolize', '--config', config], dir);
      expect(r.status).toBe(4);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`@profkit/symbolize, which is installed in ${join(ROOT, 'node_modules', '@profkit', 'symbolize')} but not loaded: "autoDiscover": false in ${config}`);
      expect(lines[0]).toContain('PROFKIT_E_NO_ADAPTER');
      expect(existsSync(join(dir, 'out.pb.gz'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fetch --symbolize local keeps what it fetched (unsymbolized), then fails with exit code 4 naming the package not loaded', async () => {
    const dir = tmp('profkit-no-symbolize-fetch-');
    try {
      const config = join(dir, 'profkit.config.json');
      writeFileSync(config, JSON.stringify({ adapters: ['gperftools-heap', 'pprof'].map((p) => join(ROOT, 'packages', p)), autoDiscover: false }));
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }], facts: { period_type: { type: 'cpu', unit: 'nanoseconds' }, period: 10_000_000n } });
      const m = b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0x401000n, filename: '/opt/prog' });
      b.addSample([b.internLocation({ address: 0x400100n, mappingId: m }), b.internLocation({ address: 0x400200n, mappingId: m })], [2, 20_000_000]);
      const input = join(dir, 'in.cpu');
      writeFileSync(input, writeCpuProfile(b.build()).bytes);
      const { server, base } = await startServer(['serve', input, '--port', '0', '--config', config], dir);
      try {
        const out = join(dir, 'fetched.pb.gz');
        const r = await run(['fetch', `${base}/pprof/profile`, '--seconds', '1', '--symbolize', 'local', '-o', out, '--config', config], dir);
        expect(r.status).toBe(4);
        expect(r.stderr).toContain(`@profkit/symbolize, which is installed in ${join(ROOT, 'node_modules', '@profkit', 'symbolize')} but not loaded`);
        expect(r.stderr).toContain(`wrote ${out} without local symbols`);
        // what was fetched is kept: the same stacks of addresses
        expect(existsSync(out)).toBe(true);
        const back = cli(['convert', out, join(dir, 'back.folded'), '--quiet', '--config', config], dir);
        expect(back.status, back.stderr).toBe(4); // folded needs @profkit/rprof, not in this config
        const asCpu = cli(['convert', out, join(dir, 'back.cpu'), '--quiet', '--config', config], dir);
        expect(asCpu.status, asCpu.stderr).toBe(0);
        const stacks = (file: string) => {
          const { profile: p } = readLegacy(new Uint8Array(readFileSync(file)));
          const rowOf = new Map<number, number>();
          p.locations.location_id.forEach((id, r) => rowOf.set(id, r));
          return Array.from(p.samples.value, (v, i) => [v, Array.from(stackOf(p, i), (id) => p.locations['.address'][rowOf.get(id)!])]);
        };
        const want = stacks(input);
        expect(want.length).toBe(1);
        expect(stacks(join(dir, 'back.cpu'))).toEqual(want);
      } finally {
        server.kill('SIGTERM');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
