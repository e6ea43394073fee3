/**
 * Redirects seen by `profkit fetch` and by the `/pprof/symbol` requests of remote symbolization
 * (issue 15 item 6), against a loopback server: every bad redirect is a PROFKIT_E_NETWORK error
 * naming the URL and the rule, never a crash, a hang or a stack trace. And a symbol server that
 * answers `num_symbols: 0` (item 14): a warning, and local binaries name what they can.
 */
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { haveCli as haveCliBuilt, haveTool, runCliAsync, startRedirectTestServer, type CliRun, type RedirectTestServer } from '@profkit/test-utils';
import { ProfileIndex, resolveStack, type Profile } from '@profkit/core/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchProfile, readLegacy, symbolizeRemote } from '../src/node.js';

const HEAP = 'heap profile:      1:      100 [     1:      100] @ heapprofile\n     1:      100 [     1:      100] @ 0x1001\n';
const decodeLegacy = async (bytes: Uint8Array) => readLegacy(bytes);

let srv: RedirectTestServer;
let base = '';
let port = 0;
beforeAll(async () => {
  srv = await startRedirectTestServer(HEAP);
  ({ base, port } = srv);
});
afterAll(() => srv.close());

describe('fetchProfile: redirects', () => {
  it('a redirect loop stops after 10 redirects with PROFKIT_E_NETWORK (was: "Cannot read properties of undefined")', async () => {
    srv.reset();
    const url = `${base}/loop/pprof/heap`;
    await expect(fetchProfile(url, { cmdline: false })).rejects.toMatchObject({
      code: 'PROFKIT_E_NETWORK',
      message: expect.stringContaining('stopped after 10 redirects'),
      detail: { url, rule: 'at most 10 redirects are followed' },
    });
    expect(srv.hits.get('/loop/pprof/heap')).toBe(11);
  });

  it('Location: http:// is PROFKIT_E_NETWORK naming the rule (was: "Invalid URL")', async () => {
    await expect(fetchProfile(`${base}/badurl/pprof/heap`, { cmdline: false })).rejects.toMatchObject({
      code: 'PROFKIT_E_NETWORK',
      detail: { url: `${base}/badurl/pprof/heap`, location: 'http://', rule: 'Location must be a valid URL' },
    });
  });

  it('Location: file:///etc/passwd is refused with PROFKIT_E_NETWORK, nothing is read', async () => {
    await expect(fetchProfile(`${base}/file/pprof/heap`, { cmdline: false })).rejects.toMatchObject({
      code: 'PROFKIT_E_NETWORK',
      message: expect.stringContaining('file:///etc/passwd'),
      detail: { rule: 'redirects may only lead to http or https URLs' },
    });
  });

  it('a redirect to another host is refused unless allowed', async () => {
    srv.reset();
    await expect(fetchProfile(`${base}/cross/pprof/heap`, { cmdline: false })).rejects.toMatchObject({
      code: 'PROFKIT_E_NETWORK',
      message: expect.stringContaining(`localhost:${port} is another host than 127.0.0.1:${port}`),
    });
    expect(srv.hits.get('/ok/pprof/heap')).toBeUndefined();
    const r = await fetchProfile(`${base}/cross/pprof/heap`, { cmdline: false, allowRedirectHosts: ['localhost'], decode: decodeLegacy });
    expect(r.profile!.samples.value.length).toBe(1);
    expect(srv.hits.get('/ok/pprof/heap')).toBe(1);
  });
});

describe('symbolizeRemote: the /pprof/symbol POST follows the same rules', () => {
  // The profile comes from /ok/…; the URL given to symbolizeRemote only derives the symbol URL.
  async function fetched(): Promise<Profile> {
    return (await fetchProfile(`${base}/ok/pprof/heap`, { cmdline: false, decode: decodeLegacy })).profile!;
  }
  const names = (p: Profile) => resolveStack(p, 0, new ProfileIndex(p)).map((f) => (f.symbolized ? f.name : `@${f.address.toString(16)}`));

  it('a same-host 307 is followed with the POST body', async () => {
    srv.reset();
    const q = await symbolizeRemote(await fetched(), `${base}/same/pprof/heap`);
    expect(srv.symbolPosts).toEqual([{ path: '/ok/pprof/symbol', method: 'POST', body: '0x1000' }]);
    expect(names(q)).toEqual(['fn_0x1000']);
  });

  it('a cross-host redirect of the symbol URL is refused unless allowed', async () => {
    const p = await fetched();
    srv.reset();
    await expect(symbolizeRemote(p, `${base}/cross/pprof/heap`)).rejects.toMatchObject({ code: 'PROFKIT_E_NETWORK', message: expect.stringContaining('another host') });
    expect(srv.symbolPosts).toEqual([]);
    const q = await symbolizeRemote(p, `${base}/cross/pprof/heap`, { allowRedirectHosts: ['localhost'] });
    expect(names(q)).toEqual(['fn_0x1000']);
  });

  it('a symbol redirect loop is PROFKIT_E_NETWORK', async () => {
    await expect(symbolizeRemote(await fetched(), `${base}/loop/pprof/heap`)).rejects.toMatchObject({
      code: 'PROFKIT_E_NETWORK',
      message: expect.stringContaining('stopped after 10 redirects'),
    });
  });
});

const haveCli = haveCliBuilt('fetch redirect CLI tests');
function runCli(args: string[], timeoutMs = 20_000): Promise<CliRun> {
  return runCliAsync(args, { timeoutMs, cwd: process.cwd() });
}

describe.skipIf(!haveCli)('profkit fetch: redirects through the CLI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'profkit-redirects-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // --timeout 60: before the fix, file:// printed an internal error, then hung until the timeout
  // and died of an uncaught ReferenceError; runCli gives up after 20 s.
  for (const [path, expected] of [
    ['/loop/pprof/heap', 'stopped after 10 redirects'],
    ['/badurl/pprof/heap', 'not a valid URL'],
    ['/file/pprof/heap', 'the scheme file: is not http or https'],
    ['/cross/pprof/heap', 'is another host than'],
  ] as const) {
    it(`${path}: exit 5 with PROFKIT_E_NETWORK (${expected}), no stack trace`, async () => {
      const r = await runCli(['fetch', `${base}${path}`, '-o', join(dir, 'x.heap'), '--timeout', '60']);
      expect(r.code, r.stderr).toBe(5);
      expect(r.stderr).toContain(expected);
      expect(r.stderr).toContain('[PROFKIT_E_NETWORK]');
      expect(r.stderr).not.toMatch(/ReferenceError|TypeError|internal error|\n\s+at /);
    });
  }

  it('--allow-redirect-host lets a redirect to that host through', async () => {
    const r = await runCli(['fetch', `${base}/cross/pprof/heap`, '-o', join(dir, 'ok.heap'), '--allow-redirect-host', 'localhost', '--symbolize', 'none']);
    expect(r.code, r.stderr).toBe(0);
    const bad = await runCli(['fetch', `${base}/cross/pprof/heap`, '--allow-redirect-host', 'http://localhost/']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--allow-redirect-host takes host names');
  });
});

const haveCc = haveTool('cc', 'gcc', 'fetch local-fallback tests') && haveTool('nm', 'binutils', 'fetch local-fallback tests');

describe.skipIf(!haveCli || !haveCc)('profkit fetch: a symbol server with num_symbols: 0 (issue 15 item 14)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'profkit-numsym0-'));
  let nosyms: Server;
  let url = '';
  beforeAll(async () => {
    // A non-PIE program whose file the heap profile's mapping names: local symbolization can use it.
    const src = join(dir, 'prog.c');
    const prog = join(dir, 'prog');
    writeFileSync(src, '__attribute__((noinline)) int leaf_fn(int n) { return n * 3 + 1; }\nint main(int argc, char **argv) { return leaf_fn(argc); }\n');
    const cc = spawnSync('cc', ['-g', '-O0', '-fno-pie', '-no-pie', '-o', prog, src], { encoding: 'utf8' });
    if (cc.status !== 0) throw new Error(`cc failed: ${cc.stderr}`);
    const nm = spawnSync('nm', [prog], { encoding: 'utf8' }).stdout;
    const addr = (name: string) => BigInt('0x' + new RegExp(`^([0-9a-f]+) T ${name}$`, 'm').exec(nm)![1]);
    // Return addresses: the reader subtracts 1, landing at each function's first byte.
    const heap =
      'heap profile:      1:      100 [     1:      100] @ heapprofile\n' +
      `     1:      100 [     1:      100] @ 0x${(addr('leaf_fn') + 1n).toString(16)} 0x${(addr('main') + 1n).toString(16)} 0x7f0000000101\n` +
      `\nMAPPED_LIBRARIES:\n00400000-00600000 r-xp 00000000 00:00 0 ${prog}\n7f0000000000-7f0000001000 r-xp 00000000 00:00 0 /nonexistent/libgone.so\n`;
    nosyms = createServer((req, res) => {
      if (req.url!.endsWith('/pprof/heap')) res.end(heap);
      else if (req.url!.endsWith('/pprof/symbol')) res.end('num_symbols: 0\n');
      else if (req.url!.endsWith('/pprof/cmdline')) res.end(`${prog}\n`);
      else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((ok) => nosyms.listen(0, '127.0.0.1', ok));
    url = `http://127.0.0.1:${(nosyms.address() as AddressInfo).port}/pprof/heap`;
  });
  afterAll(async () => {
    await new Promise<void>((ok) => nosyms.close(() => ok()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('warns, names what local binaries can, and counts what is left', async () => {
    const out = join(dir, 'fetched.pb.gz');
    const r = await runCli(['fetch', url, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('[PROFKIT_W_REMOTE_UNSYMBOLIZED]');
    expect(r.stderr).toMatch(/named 0 of 3 address\(es\) \(it answered num_symbols: 0: it has no symbols\); local binaries named 2; 1 address\(es\) left without a name/);
    // the missing library is summarized, not reported as a separate warning
    expect(r.stderr).not.toContain('PROFKIT_W_SYMBOLIZE_MISSING_BINARY');
    const top = await runCli(['top', out]);
    expect(top.code, top.stderr).toBe(0);
    expect(top.stdout).toContain('leaf_fn');
    expect(top.stdout).toContain('main');
  });

  it('-q keeps the warning off stderr', async () => {
    const r = await runCli(['fetch', url, '-o', join(dir, 'quiet.pb.gz'), '-q']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
  });
});
