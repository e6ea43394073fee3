import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileBuilder, resolveStack, type Profile } from '@profkit/core/node';
import { createProfileServer, fetchProfile, planFetch, programFromCmdline, readLegacy, type ProfileKind, type ProfileServer } from '../src/node.js';
import { fixtureProfile, haveFixtures, stacksByMeaning } from './remote-helpers.js';

const decodeLegacy = async (bytes: Uint8Array, fileName: string) => {
  const r = readLegacy(bytes, { fileName });
  return { profile: r.profile, warnings: r.warnings };
};

describe('planFetch: URL, seconds and timeout', () => {
  it('adds http:// and the default service /pprof/profile with seconds=30', () => {
    expect(planFetch('localhost:8080')).toMatchObject({ url: 'http://localhost:8080/pprof/profile?seconds=30', seconds: 30, timeoutSeconds: 45, cpuLike: true, cmdlineUrl: 'http://localhost:8080/pprof/cmdline' });
    expect(planFetch('http://h:1/')).toMatchObject({ url: 'http://h:1/pprof/profile?seconds=30' });
  });
  it('adds seconds only to CPU-like pages; other pages get the 60 s timeout', () => {
    expect(planFetch('http://h:1/pfx/pprof/heap')).toMatchObject({ url: 'http://h:1/pfx/pprof/heap', seconds: 0, timeoutSeconds: 60, cpuLike: false, cmdlineUrl: 'http://h:1/pfx/pprof/cmdline' });
    expect(planFetch('http://h:1/pprof/pmuprofile?event=x')).toMatchObject({ url: 'http://h:1/pprof/pmuprofile?event=x&seconds=30', seconds: 30 });
    expect(planFetch('http://h:1/debug/pprof/profile')).toMatchObject({ url: 'http://h:1/debug/pprof/profile?seconds=30', cmdlineUrl: 'http://h:1/debug/pprof/cmdline' });
  });
  it('--seconds overrides the URL; a URL seconds= is the duration otherwise (pprof rules)', () => {
    expect(planFetch('http://h:1/pprof/profile?seconds=5', { seconds: 2 })).toMatchObject({ url: 'http://h:1/pprof/profile?seconds=2', seconds: 2, timeoutSeconds: 3 });
    expect(planFetch('http://h:1/pprof/profile?seconds=5')).toMatchObject({ url: 'http://h:1/pprof/profile?seconds=5', seconds: 5, timeoutSeconds: 7.5 });
    expect(planFetch('http://h:1/debug/pprof/heap', { seconds: 10 })).toMatchObject({ url: 'http://h:1/debug/pprof/heap?seconds=10', seconds: 10, timeoutSeconds: 15 });
    expect(planFetch('http://h:1/pprof/profile', { timeoutSeconds: 2 })).toMatchObject({ seconds: 30, timeoutSeconds: 2 });
  });
  it('has no cmdline URL for paths outside a pprof directory', () => {
    expect(planFetch('http://h:1/profilez').cmdlineUrl).toBe('');
  });
  it('rejects what is not an http(s) URL', () => {
    expect(() => planFetch('ftp://h/pprof/heap')).toThrow(expect.objectContaining({ code: 'PROFKIT_E_USAGE' }));
    expect(() => planFetch('http://')).toThrow(expect.objectContaining({ code: 'PROFKIT_E_USAGE' }));
    expect(() => planFetch('http://h:1/pprof/profile', { seconds: -1 })).toThrow(expect.objectContaining({ code: 'PROFKIT_E_USAGE', detail: expect.objectContaining({ option: 'seconds' }) }));
    expect(() => planFetch('http://h:1/pprof/profile', { timeoutSeconds: -3 })).toThrow(expect.objectContaining({ code: 'PROFKIT_E_USAGE' }));
  });
  it('takes the program name from a cmdline answer', () => {
    expect(programFromCmdline('/usr/bin/server\n--flag\n')).toBe('/usr/bin/server');
    expect(programFromCmdline('/usr/bin/server\0--flag\0')).toBe('/usr/bin/server');
    expect(programFromCmdline('')).toBe('');
  });
});

describe.skipIf(!haveFixtures)('fetchProfile against our own server (stored gperftools fixtures)', () => {
  let server: ProfileServer;
  const stored: Partial<Record<ProfileKind, Profile>> = {};
  const requests: { kind: ProfileKind; seconds: number }[] = [];
  /**
   * While set, the CPU profile is answered only once this resolves (called with the request's
   * signal). Tests hold the answer until something happened, never for a fixed time.
   */
  let holdCpuProfile: ((signal: AbortSignal) => Promise<void>) | undefined;
  beforeAll(async () => {
    stored.heap = fixtureProfile('cppbench.heap');
    stored.growth = fixtureProfile('cppbench.growth');
    stored.profile = fixtureProfile('cppbench.cpu');
    stored.contention = fixtureProfile('cppbench.contention');
    server = await createProfileServer({
      program: '/usr/local/bin/cppbench_server_main',
      profiles: async (req) => {
        requests.push({ kind: req.kind, seconds: req.seconds });
        if (req.kind === 'profile' && holdCpuProfile) await holdCpuProfile(req.signal);
        return stored[req.kind];
      },
    });
  });
  afterAll(() => server?.close());

  it.each(['heap', 'growth', 'contention'] as const)('round-trips /pprof/%s with the same stacks and values', async (kind) => {
    const r = await fetchProfile(`${server.url}/some/prefix/pprof/${kind}`, { decode: decodeLegacy });
    expect(r.program).toBe('/usr/local/bin/cppbench_server_main');
    expect(stacksByMeaning(r.profile!)).toEqual(stacksByMeaning(stored[kind]!));
    const facts = r.profile!['.extensions']['gperftools-heap']!.facts!;
    expect(facts.remote_url).toBe(`${server.url}/some/prefix/pprof/${kind}`);
    expect(facts.remote_program).toBe('/usr/local/bin/cppbench_server_main');
  });

  it('serves the CPU profile after the requested seconds, reporting progress while waiting', async () => {
    // The server answers once the client reported 3 waits, the latest at or past the requested
    // second (not after a fixed 1.2 s: a starved client ticks less often in that time).
    const ticks: number[] = [];
    let progressSeen!: () => void;
    const seen = new Promise<void>((ok) => (progressSeen = ok));
    holdCpuProfile = () => seen;
    try {
      const onWait = (elapsed: number) => {
        ticks.push(elapsed);
        if (ticks.length >= 3 && elapsed >= 1) progressSeen();
      };
      // The grace only keeps a starved run from missing the deadline; the plan's timeout is pprof's.
      const r = await fetchProfile(`${server.url}/pprof/profile`, { seconds: 1, deadlineGraceSeconds: 30, decode: decodeLegacy, onWait });
      expect(requests.at(-1)).toEqual({ kind: 'profile', seconds: 1 });
      expect(r.plan.timeoutSeconds).toBe(1.5);
      expect(stacksByMeaning(r.profile!)).toEqual(stacksByMeaning(stored.profile!));
    } finally {
      holdCpuProfile = undefined;
    }
    expect(ticks[0]).toBe(0);
    expect(ticks).toEqual([...ticks].sort((a, b) => a - b));
    // Capped at the requested seconds however long the wait.
    expect(ticks.at(-1)).toBe(1);
  });

  it('reports a missing route as PROFKIT_E_NETWORK with the status', async () => {
    delete stored.growth;
    await expect(fetchProfile(`${server.url}/pprof/growth`, { decode: decodeLegacy })).rejects.toMatchObject({ code: 'PROFKIT_E_NETWORK', detail: { status: 404 } });
  });

  it('bounds the response size', async () => {
    await expect(fetchProfile(`${server.url}/pprof/heap`, { maxBytes: 100, cmdline: false })).rejects.toMatchObject({ code: 'PROFKIT_E_LIMIT', detail: { option: 'maxBytes' } });
  });

  /** Holds the CPU profile's answer until the client hangs up: only the client can end the wait. */
  const answerNever = (signal: AbortSignal) => new Promise<void>((ok) => signal.addEventListener('abort', () => ok(), { once: true }));

  it('times out as told (deadline = timeout + grace; here 0.2 s + 0 s on a server that never answers)', async () => {
    holdCpuProfile = answerNever;
    try {
      // The deadline it used, from the error: 0.2 s, not the 1.5 s of the plan for 1 s nor 0.2 + 5 s of grace.
      await expect(fetchProfile(`${server.url}/pprof/profile`, { seconds: 1, timeoutSeconds: 0.2, deadlineGraceSeconds: 0, cmdline: false })).rejects.toMatchObject({
        code: 'PROFKIT_E_TIMEOUT',
        message: expect.stringContaining('no complete answer within 0.2 s'),
        detail: { option: 'timeout' },
      });
    } finally {
      holdCpuProfile = undefined;
    }
  });

  it('stops when its signal is aborted', async () => {
    const ac = new AbortController();
    // Aborted while the server works on the request (not after a fixed 100 ms).
    holdCpuProfile = (signal) => {
      ac.abort();
      return answerNever(signal);
    };
    try {
      await expect(fetchProfile(`${server.url}/pprof/profile`, { seconds: 1, signal: ac.signal, cmdline: false })).rejects.toMatchObject({ code: 'PROFKIT_E_ABORTED', message: expect.stringContaining('interrupted') });
    } finally {
      holdCpuProfile = undefined;
    }
  });
});

describe('fetchProfile against misbehaving servers', () => {
  let raw: Server;
  let base = '';
  beforeAll(async () => {
    raw = createServer((req, res) => {
      if (req.url === '/goerr/pprof/heap') {
        res.writeHead(400, { 'x-go-pprof': '1', 'content-type': 'text/plain; charset=utf-8' });
        res.end('profile duration exceeds server\'s WriteTimeout\n');
      } else if (req.url === '/cut/pprof/heap') {
        res.writeHead(200, { 'content-length': '1000' });
        res.write('heap profile: ');
        setTimeout(() => res.destroy(), 20);
      } else if (req.url === '/empty/pprof/heap') {
        res.writeHead(200, { 'content-length': '0' });
        res.end();
      } else if (req.url === '/redirect/pprof/heap') {
        res.writeHead(302, { location: '/named/pprof/heap' });
        res.end();
      } else if (req.url === '/named/pprof/heap') {
        res.end('heap profile:      1:      100 [     1:      100] @ heapprofile\n     1:      100 [     1:      100] @ 0x1001\n');
      } else if (req.url === '/named/pprof/cmdline') {
        res.end('/bin/named\0--x\0');
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((ok) => raw.listen(0, '127.0.0.1', ok));
    base = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((ok) => raw.close(() => ok())));

  it('includes the body of a Go pprof error (X-Go-Pprof, text/plain)', async () => {
    await expect(fetchProfile(`${base}/goerr/pprof/heap`)).rejects.toMatchObject({ code: 'PROFKIT_E_NETWORK', message: expect.stringContaining("exceeds server's WriteTimeout") });
  });
  it('fails cleanly when the server closes mid-answer', async () => {
    await expect(fetchProfile(`${base}/cut/pprof/heap`, { cmdline: false })).rejects.toMatchObject({ code: 'PROFKIT_E_NETWORK' });
  });
  it('rejects an empty answer', async () => {
    await expect(fetchProfile(`${base}/empty/pprof/heap`, { cmdline: false })).rejects.toMatchObject({ code: 'PROFKIT_E_EMPTY_INPUT' });
  });
  it('follows redirects and cuts the cmdline at the first NUL', async () => {
    const r = await fetchProfile(`${base}/redirect/pprof/heap`, { decode: decodeLegacy });
    expect(r.program).toBe('');
    expect(r.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_REMOTE_NO_CMDLINE']);
    const r2 = await fetchProfile(`${base}/named/pprof/heap`, { decode: decodeLegacy });
    expect(r2.program).toBe('/bin/named');
    expect(resolveStack(r2.profile!, 0).map((f) => f.address)).toEqual([0x1000n]);
  });
  it('takes a --timeout beyond what a timer holds (2^31 ms, ~24.8 days) as a long timeout, not an instant one', async () => {
    const r = await fetchProfile(`${base}/named/pprof/heap`, { timeoutSeconds: 3_000_000, cmdline: false });
    expect(r.bytes.length).toBeGreaterThan(0);
  });
  it('reports a refused connection as PROFKIT_E_NETWORK', async () => {
    const s = createServer();
    await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
    const port = (s.address() as AddressInfo).port;
    await new Promise<void>((ok) => s.close(() => ok()));
    await expect(fetchProfile(`http://127.0.0.1:${port}/pprof/heap`)).rejects.toMatchObject({ code: 'PROFKIT_E_NETWORK', message: expect.stringContaining('ECONNREFUSED') });
  });
});

describe('symbol lookups of our server', () => {
  it('resolves the addresses of served profiles, including synthetic ones of address-less locations', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'inuse_objects', unit: 'count' }, { type: 'inuse_space', unit: 'bytes' }] });
    const f = b.internFunction({ name: 'make_widget' });
    const g = b.internFunction({ name: 'main' });
    const l1 = b.addLocation({ functionId: f, line: 10 });
    const l2 = b.addLocation({ functionId: g, line: 3 });
    b.addSample([l1, l2], [2, 64]);
    const p = b.build();
    const server = await createProfileServer({ profiles: () => p });
    try {
      const r = await fetchProfile(`${server.url}/pprof/heap`, { decode: decodeLegacy });
      const { symbolizeRemote } = await import('../src/node.js');
      const q = await symbolizeRemote(r.profile!, `${server.url}/pprof/heap`);
      expect(resolveStack(q, 0).map((fr) => fr.name)).toEqual(['make_widget', 'main']);
      expect(Array.from(q.samples['.values'], (c) => c[0])).toEqual([2n, 64n]);
    } finally {
      await server.close();
    }
  });
});
