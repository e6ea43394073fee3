/**
 * Interop with real Go tools: our client against a Go program serving net/http/pprof
 * (test/go/server/main.go, built here with `go build`), and our server driven by
 * `go tool pprof`. Skipped with a message when `go` (Debian: golang-go) is not installed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileBuilder, ProfileIndex, labelsOf, resolveStack, type Profile, type Registry } from '@profkit/core/node';
import { createProfileServer, fetchProfile, readLegacy, symbolizeRemote, type ProfileServer } from '../src/node.js';
import { fixtureProfile, haveFixtures, haveGo, repoRegistry } from './remote-helpers.js';
import { pprofTestdata } from './helpers.js';
import { readFileSync } from 'node:fs';

const here = dirname(fileURLToPath(import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'profkit-remote-go-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs a command asynchronously (our server runs in this process), bounded in time. */
function run(cmd: string, args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((ok) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(t);
      ok({ code, stdout, stderr });
    });
  });
}

/** A parsed google/pprof `Profile.String()` dump (what `-raw` prints and the `.string` goldens hold). */
interface RawDump {
  types: string;
  samples: { values: bigint[]; ids: number[] }[];
  locations: Map<number, { address: bigint; names: string[] }>;
}

function parseRaw(text: string): RawDump {
  const lines = text.split('\n');
  const out: RawDump = { types: '', samples: [], locations: new Map() };
  let section = '';
  let lastLoc: { address: bigint; names: string[] } | undefined;
  for (const line of lines) {
    if (/^(Samples|Locations|Mappings):?$/.test(line)) {
      section = line.replace(':', '');
      continue;
    }
    if (section === 'Samples') {
      if (out.types === '') {
        out.types = line.trim();
        continue;
      }
      const m = /^\s*([-\d ]+):((?: \d+)*) ?$/.exec(line);
      if (m) out.samples.push({ values: m[1]!.trim().split(/\s+/).map(BigInt), ids: m[2]!.trim() === '' ? [] : m[2]!.trim().split(' ').map(Number) });
    } else if (section === 'Locations') {
      const m = /^\s*(\d+): (0x[0-9a-f]+)(?: M=\d+)? ?(.*)$/.exec(line);
      if (m) {
        lastLoc = { address: BigInt(m[2]!), names: m[3]!.trim() ? [m[3]!.trim().split(' ')[0]!] : [] };
        out.locations.set(Number(m[1]), lastLoc);
      } else if (lastLoc && /^\s{10,}\S/.test(line)) lastLoc.names.push(line.trim().split(' ')[0]!);
    }
  }
  return out;
}

/** Summed values per stack of addresses (pprof's own dumps, so ids are pprof's, compared by address). */
function rawStacks(d: RawDump): Map<string, string> {
  const sums = new Map<string, bigint[]>();
  for (const s of d.samples) {
    const key = s.ids.map((id) => d.locations.get(id)!.address.toString(16)).join(' ');
    const prev = sums.get(key);
    if (prev) s.values.forEach((v, k) => (prev[k]! += v));
    else sums.set(key, s.values.slice());
  }
  return new Map([...sums].map(([k, v]) => [k, v.join(',')]));
}

describe.skipIf(!haveGo)('Go interop', () => {
  describe('our client against a Go program serving net/http/pprof', () => {
    let child: ChildProcess | undefined;
    let base = '';
    let binary = '';
    let registry: Registry | undefined;
    beforeAll(async () => {
      registry = await repoRegistry();
      binary = join(work, 'pprof-test-server');
      const build = spawnSync('go', ['build', '-o', binary, 'main.go'], {
        cwd: join(here, 'go/server'),
        env: { ...process.env, GO111MODULE: 'off', GOFLAGS: '', GOCACHE: process.env.GOCACHE ?? join(tmpdir(), 'profkit-go-cache') },
        encoding: 'utf8',
        timeout: 120_000,
      });
      if (build.status !== 0) throw new Error(`go build failed: ${build.stderr}`);
      child = spawn(binary, ['-exit-after', '40s'], { stdio: ['ignore', 'pipe', 'inherit'] });
      base = await new Promise<string>((ok, fail) => {
        let out = '';
        child!.stdout!.on('data', (d) => {
          out += d;
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m) ok(m[1]!);
        });
        child!.on('exit', (c) => fail(new Error(`test server exited with ${c}`)));
      });
    });
    afterAll(() => {
      if (child && child.exitCode === null) child.kill('SIGTERM');
    });

    it('fetches a 1 s CPU profile (proto) with progress, names the program, finds the spinning function', async (ctx) => {
      if (!registry) ctx.skip();
      const ticks: number[] = [];
      const r = await fetchProfile(`${base}/debug/pprof/profile`, {
        seconds: 1,
        onWait: (e) => ticks.push(e),
        decode: (b, f) => registry!.read(b, { fileName: f }),
      });
      expect(r.plan.url).toBe(`${base}/debug/pprof/profile?seconds=1`);
      expect(r.program).toBe(binary);
      expect(ticks.length).toBeGreaterThanOrEqual(3);
      const p = r.profile!;
      expect(p.sample_types.type).toEqual(['samples', 'cpu']);
      expect(p['.profile'].comments).toContain(`profkit fetch: ${base}/debug/pprof/profile?seconds=1 (program ${binary})`);
      const idx = new ProfileIndex(p);
      let spin = 0n;
      for (let i = 0; i < p.samples.value.length; i++) if (resolveStack(p, i, idx).some((f) => f.name === 'main.profkitTestSpin')) spin += p.samples.value[i]!;
      // The program spins nearly all the time; on a busy machine it may get little CPU, so only
      // ask that the spinning function is among the named samples.
      expect(spin).toBeGreaterThan(0n);
    });

    it('fetches the heap (proto): the retained 64 KiB buffers are there', async (ctx) => {
      if (!registry) ctx.skip();
      const r = await fetchProfile(`${base}/debug/pprof/heap?gc=1`, { decode: (b, f) => registry!.read(b, { fileName: f }) });
      const p = r.profile!;
      const objects = p.sample_types.type.indexOf('inuse_objects');
      const space = p.sample_types.type.indexOf('inuse_space');
      let n = 0n;
      let bytes = 0n;
      for (let i = 0; i < p.samples.value.length; i++) {
        // Go labels each heap sample with its object size; the slice growth of `sink` is there too.
        const big = labelsOf(p, i).some((l) => l.key === 'bytes' && l.num === 65536n);
        if (big && resolveStack(p, i).some((f) => f.name === 'main.profkitTestAllocate')) {
          n += p.samples['.values'][objects]![i]!;
          bytes += p.samples['.values'][space]![i]!;
        }
      }
      // main.go keeps 64 buffers of 64 KiB with MemProfileRate = 1 (every allocation recorded,
      // so no sampling interval drawn at the default rate can skip some): all 64 are there.
      expect(n).toBe(64n);
      expect(bytes).toBe(n * 65536n);
    });

    it('reads the legacy text heap (debug=1) and symbolizes it through /debug/pprof/symbol', async () => {
      const r = await fetchProfile(`${base}/debug/pprof/heap?debug=1&gc=1`, { decode: async (b, f) => readLegacy(b, { fileName: f }) });
      // The names Go itself printed next to each address (`#\t0x6745b0\tmain.f+0x50\t...`).
      const expected = new Map<bigint, string>();
      for (const m of new TextDecoder().decode(r.bytes).matchAll(/^#\t(0x[0-9a-f]+)\t([^+\s]+)\+0x/gm)) expected.set(BigInt(m[1]!), m[2]!);
      expect(expected.size).toBeGreaterThan(3);
      const before = r.profile!;
      expect(resolveStack(before, 0).every((f) => !f.symbolized)).toBe(true);
      const p = await symbolizeRemote(before, r.plan.url);
      let checked = 0;
      const idx = new ProfileIndex(p);
      for (let i = 0; i < p.samples.value.length; i++) {
        for (const f of resolveStack(p, i, idx)) {
          const want = expected.get(f.address);
          if (want === undefined) continue;
          expect(f.name).toBe(want);
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(3);
    });
  });

  describe.skipIf(!haveFixtures)('go tool pprof against our server', () => {
    let server: ProfileServer;
    const seen: { kind: string; seconds: number }[] = [];
    let named: Profile;
    let useNamed = false;
    const pprofEnv = { PPROF_TMPDIR: join(work, 'pprof'), HOME: work, PPROF_BINARY_PATH: join(work, 'no-binaries') };
    beforeAll(async () => {
      const heap = fixtureProfile('cppbench.heap');
      const cpu = fixtureProfile('cppbench.cpu');
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'inuse_objects', unit: 'count' }, { type: 'inuse_space', unit: 'bytes' }] });
      const m = b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0x800000n, filename: '/opt/profkit-test/no-such-app' });
      const fa = b.internFunction({ name: 'widget::Allocate' });
      const fm = b.internFunction({ name: 'main' });
      const la = b.addLocation({ address: 0x401230n, mappingId: m, functionId: fa });
      const lm = b.addLocation({ address: 0x400890n, mappingId: m, functionId: fm });
      b.addSample([la, lm], [3, 3072]);
      b.addSample([lm], [1, 512]);
      named = b.build();
      server = await createProfileServer({
        program: '/home/cppbench_server_main',
        profiles: async (req) => {
          seen.push({ kind: req.kind, seconds: req.seconds });
          if (req.kind === 'heap') return useNamed ? named : heap;
          if (req.kind === 'profile') {
            await new Promise((ok) => setTimeout(ok, req.seconds * 1000));
            return cpu;
          }
          return undefined;
        },
      });
    });
    afterAll(() => server?.close());

    it('go tool pprof -raw /pprof/heap gives the same samples as google/pprof reading the file itself', async () => {
      useNamed = false;
      const r = await run('go', ['tool', 'pprof', '-raw', '-symbolize=none', `${server.url}/pprof/heap`], pprofEnv);
      expect(r.code, r.stderr).toBe(0);
      const got = parseRaw(r.stdout);
      const golden = parseRaw(readFileSync(join(pprofTestdata, 'cppbench.heap.string'), 'utf8'));
      expect(got.types).toBe(golden.types);
      expect(got.samples.length).toBe(golden.samples.length);
      expect(rawStacks(got)).toEqual(rawStacks(golden));
    });

    it('go tool pprof -symbolize=remote gets the function names from /pprof/symbol', async () => {
      useNamed = true;
      try {
        const r = await run('go', ['tool', 'pprof', '-raw', '-symbolize=remote', `${server.url}/pprof/heap`], pprofEnv);
        expect(r.code, r.stderr).toBe(0);
        const d = parseRaw(r.stdout);
        const byAddress = new Map([...d.locations.values()].map((l) => [l.address, l.names]));
        expect(byAddress.get(0x401230n)).toEqual(['widget::Allocate']);
        expect(byAddress.get(0x400890n)).toEqual(['main']);
        expect(rawStacks(d)).toEqual(new Map([['401230 400890', '3,3072'], ['400890', '1,512']]));
      } finally {
        useNamed = false;
      }
    });

    it('go tool pprof -raw /pprof/profile?seconds=1 waits for the profile and gets the same CPU samples', async () => {
      const t0 = Date.now();
      const r = await run('go', ['tool', 'pprof', '-raw', '-symbolize=none', `${server.url}/pprof/profile?seconds=1`], pprofEnv);
      expect(r.code, r.stderr).toBe(0);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
      expect(seen).toContainEqual({ kind: 'profile', seconds: 1 });
      const got = parseRaw(r.stdout);
      const golden = parseRaw(readFileSync(join(pprofTestdata, 'cppbench.cpu.string'), 'utf8'));
      expect(got.types).toBe(golden.types);
      // google/pprof sums CPU records with equal stacks; the file has some that differ only in
      // the signal frame it removes, so compare the sums per stack.
      expect(rawStacks(got)).toEqual(rawStacks(golden));
    });
  });
});
