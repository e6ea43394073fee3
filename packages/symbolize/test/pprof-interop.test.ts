/**
 * Interop with google/pprof on a real gperftools CPU profile: a program built with gcc -g -O2
 * (PIE, with an always_inline helper) runs under libprofiler (CPUPROFILE); we read the legacy
 * profile with @profkit/gperftools-heap, symbolize it, and compare every location's frames
 * (function, file, line, inline frames) with what google/pprof's `-raw` reports for the same
 * profile and binary.
 *
 * The oracle is google/pprof built from Debian's golang-github-google-pprof-dev sources: the
 * `go tool pprof` bundled with Go (cmd/pprof) symbolizes C binaries with Go's own object reader,
 * which reports no inline frames, so it cannot be the reference for them.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileIndex, assertValid, locationFrames, type Profile } from '@profkit/core/node';
import { readLegacy } from '@profkit/gperftools-heap';
import { symbolize, type SymbolizeOptions } from '../src/index.js';
import { C_DIR, compile, haveTool, tmp, which } from './helpers.js';

const PPROF_SRC = '/usr/share/gocode/src/github.com/google/pprof';
const LIBPROFILER = ['/usr/lib/x86_64-linux-gnu/libprofiler.so', '/usr/lib/libprofiler.so', '/usr/local/lib/libprofiler.so'].find((p) => existsSync(p));
const haveGcc = haveTool('gcc', 'gcc') && haveTool('addr2line', 'binutils');
const haveGo = haveTool('go', 'golang-go');
if (!LIBPROFILER) console.warn('skipping google/pprof interop: libprofiler not installed (apt-get install -y libgoogle-perftools-dev)');
if (!existsSync(PPROF_SRC)) console.warn(`skipping google/pprof interop: ${PPROF_SRC} missing (apt-get install -y golang-github-google-pprof-dev)`);
const enabled = haveGcc && haveGo && !!LIBPROFILER && existsSync(PPROF_SRC);

let work = '';
let pprofBin = '';
/** kind → [binary, profile] */
const runs = new Map<string, [string, string]>();
const KINDS: [string, string[]][] = [
  ['PIE', ['-fPIE', '-pie']],
  ['non-PIE', ['-fno-pie', '-no-pie']],
];

beforeAll(() => {
  if (!enabled) return;
  work = tmp();
  for (const [kind, flags] of KINDS) {
    const bin = join(work, `busy-${kind}`);
    const prof = join(work, `busy-${kind}.prof`);
    compile('gcc', ['-g', '-O2', ...flags, '-o', bin, join(C_DIR, 'prog.c'), '-Wl,--no-as-needed', '-lprofiler']);
    const r = spawnSync(bin, ['40000000'], { env: { ...process.env, CPUPROFILE: prof, CPUPROFILE_FREQUENCY: '2000' }, encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`profiled run failed: ${r.stderr}`);
    runs.set(kind, [bin, prof]);
  }
  pprofBin = join(work, 'pprof');
  const b = spawnSync('go', ['build', '-o', pprofBin, 'github.com/google/pprof'], {
    env: { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOCACHE: process.env.GOCACHE ?? '/tmp/goref-cache', GOFLAGS: '' },
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (b.status !== 0) throw new Error(`building google/pprof failed: ${b.stderr}`);
}, 360_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

type Lines = [string, string, number][];

/** address → lines, from pprof -raw's Locations section. */
function pprofRaw(bin: string, prof: string, path: string[] | undefined): Map<bigint, Lines> {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: work, PPROF_TMPDIR: work };
  if (path) env.PATH = path.join(':');
  const r = spawnSync(pprofBin, ['-raw', bin, prof], { encoding: 'utf8', env, timeout: 120_000 });
  if (r.status !== 0) throw new Error(`pprof -raw failed: ${r.stderr}`);
  const out = new Map<bigint, Lines>();
  const lines = r.stdout.split('\n');
  let i = lines.indexOf('Locations') + 1;
  let cur: Lines | undefined;
  const parseLine = (s: string): [string, string, number] | undefined => {
    // "<name> <file>:<line> s=<start>"
    const m = /^(.*) (\S*):(\d+) s=\d+$/.exec(s.trim());
    return m ? [m[1]!, m[2]!, Number(m[3])] : undefined;
  };
  for (; i < lines.length && lines[i] !== 'Mappings'; i++) {
    const m = /^\s*\d+: 0x([0-9a-f]+) (?:M=\d+ )?(.*)$/.exec(lines[i]!);
    if (m) {
      cur = [];
      out.set(BigInt('0x' + m[1]), cur);
      const l = parseLine(m[2]!);
      if (l) cur.push(l);
    } else if (cur) {
      const l = parseLine(lines[i]!);
      if (l) cur.push(l);
    }
  }
  return out;
}

function ours(p: Profile): Map<bigint, Lines> {
  const idx = new ProfileIndex(p);
  const out = new Map<bigint, Lines>();
  for (let r = 0; r < p.locations.location_id.length; r++) {
    const fr = locationFrames(p, idx, r).filter((f) => f.symbolized);
    out.set(p.locations['.address'][r]!, fr.map((f) => [f.name, f.filename, f.line]));
  }
  return out;
}

async function symbolized(bin: string, prof: string, opts: SymbolizeOptions): Promise<Profile> {
  const { profile } = readLegacy(new Uint8Array(readFileSync(prof)), { fileName: prof });
  const { profile: out, reports } = await symbolize(profile, { searchPath: [], ...opts });
  assertValid(out);
  expect(reports.find((r) => r.filename === bin)!.status).toBe('symbolized');
  return out;
}

describe.skipIf(!enabled)('google/pprof agrees on a real gperftools CPU profile', () => {
  for (const [kind] of KINDS) {
    it.skipIf(!which('llvm-symbolizer'))(`${kind}, llvm-symbolizer: every location has the frames pprof -raw shows`, async () => {
      const [bin, prof] = runs.get(kind)!;
      const want = pprofRaw(bin, prof, undefined);
      const got = ours(await symbolized(bin, prof, { tool: 'llvm-symbolizer' }));
      expect(got.size).toBe(want.size);
      expect(got).toEqual(want);
      // the profile really exercises what we claim: inline frames and the main binary's functions
      const all = [...got.values()];
      expect(all.some((l) => l.length === 2 && l[0]![0] === 'inl_helper' && l[1]![0] === 'mid_fn')).toBe(true);
      expect(all.some((l) => l.some((x) => x[0] === 'leaf_fn'))).toBe(true);
      expect(all.some((l) => l.some((x) => x[0] === 'main'))).toBe(true);
    });

    it(`${kind}, addr2line: the same as pprof using addr2line`, async () => {
      const [bin, prof] = runs.get(kind)!;
      // pprof without llvm-symbolizer on its PATH falls back to addr2line, as we do with --tool addr2line.
      const dir = join(work, 'a2l-bin');
      mkdirSync(dir, { recursive: true });
      for (const t of ['addr2line', 'nm', 'objdump', 'c++filt']) {
        const p = which(t);
        if (p && !existsSync(join(dir, t))) symlinkSync(p, join(dir, t));
      }
      const want = pprofRaw(bin, prof, [dir]);
      // Deliberate difference: addr2line prints `??:?` for an unknown line; pprof keeps `??:?` as
      // the file name (its `??:0` check misses it), we treat it as unknown (file '').
      for (const lines of want.values()) for (const l of lines) if (l[1] === '??:?') l[1] = '';
      const got = ours(await symbolized(bin, prof, { tool: 'addr2line' }));
      expect(got).toEqual(want);
    });
  }
});
