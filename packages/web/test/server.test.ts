/**
 * The loopback server (`startWebServer`, what `profkit web FILE` runs) and the static build,
 * without a browser: where it binds, what it refuses (other addresses, other paths, other
 * methods, foreign Host headers), its typed errors; and `profkit web` itself, spawned.
 */

import { execFileSync, spawn } from 'node:child_process';
import dns from 'node:dns';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { Agent, ServerResponse, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { cliBin, haveCli, rejectionOf, runCliAsync } from '@profkit/test-utils';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { APP_FILES, MAX_CONNECTIONS, isLoopbackHost, startWebServer, writeStaticSite, type WebServer } from '../dist/index.js';
import { DEFAULT_LIMITS, ProfileBuilder, Registry, type ProfkitError } from '@profkit/core';
import { pprofAdapter, serializePprof } from '@profkit/pprof';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-web-server-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A small folded-stacks profile (the server serves bytes; it does not parse them). */
const profilePath = join(tmp, 'cpu.folded');
writeFileSync(profilePath, 'main;work 3\nmain;idle 1\n');
const secretPath = join(tmp, 'secret.txt');
writeFileSync(secretPath, 'not to be served\n');

/** A raw HTTP request (the Host header as given, the path unnormalized), to the server's address. */
function get(server: WebServer, path: string, options: { host?: string; method?: string } = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: server.host, port: server.port, path, method: options.method ?? 'GET', headers: { host: options.host ?? `127.0.0.1:${server.port}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Counts the JSON bodies of source files the server makes (JSON.stringify of `{ lines }`), until restored. */
function countSourceBodies(): { made(): number; restore(): void } {
  const stringify = vi.spyOn(JSON, 'stringify');
  return { made: () => stringify.mock.calls.filter(([v]) => typeof v === 'object' && v !== null && 'lines' in v).length, restore: () => stringify.mockRestore() };
}

/** A GET of `path`'s bytes, and whether the response came whole (false: the server aborted it). */
function getBytes(server: WebServer, path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: server.host, port: server.port, path, headers: { host: `127.0.0.1:${server.port}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', () => undefined);
      res.on('close', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks), complete: res.complete }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * A profile naming /build/app/main.go (found under src once /build is trimmed) and lib/gone.go
 * (named, but nowhere on the source path); src also holds app/other.go, which it does not name.
 */
function sourceTree(): { named: string; src: string } {
  const src = join(tmp, 'src');
  mkdirSync(join(src, 'app'), { recursive: true });
  writeFileSync(join(src, 'app/main.go'), 'package main\r\nfunc main() {}\n');
  writeFileSync(join(src, 'app/other.go'), 'not named by the profile\n');
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
  const loc = (name: string, filename: string) => b.internLocation({ functionId: b.internFunction({ name, filename }), line: 2 });
  b.addSample([loc('main.main', '/build/app/main.go'), loc('lib.f', 'lib/gone.go')], [5]);
  const named = join(tmp, 'named.pb.gz');
  writeFileSync(named, serializePprof(b.build()));
  return { named, src };
}

describe('isLoopbackHost', () => {
  it('accepts 127.0.0.0/8, ::1 and localhost, nothing else', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST', 'app.localhost', '::ffff:127.0.0.1']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com', 'localhost.example.com', '128.0.0.1', '']) expect(isLoopbackHost(h), h).toBe(false);
  });
});

describe('startWebServer', () => {
  it('binds 127.0.0.1 by default and serves the page, its assets and the profile', async () => {
    const s = await startWebServer({ profile: profilePath });
    try {
      expect(s.host).toBe('127.0.0.1');
      expect(s.url).toBe(`http://127.0.0.1:${s.port}/`);
      const page = await get(s, '/');
      expect(page.status).toBe(200);
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
      expect(page.body).toContain('"url":"/profile/cpu.folded"');
      for (const asset of ['/app.js', '/app.css']) expect((await get(s, asset)).status, asset).toBe(200);
      const profile = await get(s, '/profile/cpu.folded');
      expect(profile.status).toBe(200);
      expect(profile.body).toBe(readFileSync(profilePath, 'utf8'));
    } finally {
      await s.close();
    }
  });

  it("announces a gzip profile's inflated size (its trailer's ISIZE) for the worker's buffer, and nothing for other files", async () => {
    const raw = Buffer.from('x'.repeat(100_000) + 'y');
    const gz = join(tmp, 'announced.pb.gz');
    writeFileSync(gz, gzipSync(raw));
    for (const [profile, want] of [[gz, String(raw.length)], [profilePath, undefined]] as const) {
      const s = await startWebServer({ profile });
      try {
        const name = profile === gz ? 'announced.pb.gz' : 'cpu.folded';
        for (const method of ['GET', 'HEAD']) expect((await get(s, `/profile/${name}`, { method })).headers['x-profkit-gzip-isize'], `${name} ${method}`).toBe(want);
      } finally {
        await s.close();
      }
    }
  });

  it('serves a gzip profile inflated by node:zlib when asked (?inflated=1), every member, and other files as they are', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    for (let i = 0; i < 2000; i++) b.addSample([b.internLocation({ functionId: b.internFunction({ name: `f${i % 97}`, filename: 'a.go' }), line: i })], [i]);
    const raw = Buffer.from(serializePprof(b.build(), { compress: false }));
    const single = join(tmp, 'single.pb.gz');
    writeFileSync(single, gzipSync(raw));
    const multi = join(tmp, 'multi.pb.gz');
    writeFileSync(multi, Buffer.concat([gzipSync(raw.subarray(0, 1000)), gzipSync(raw.subarray(1000))]));
    for (const [profile, name] of [[single, 'single.pb.gz'], [multi, 'multi.pb.gz']] as const) {
      const s = await startWebServer({ profile });
      try {
        const r = await getBytes(s, `/profile/${name}?inflated=1`);
        expect(r.status, name).toBe(200);
        expect(r.complete, name).toBe(true);
        expect(r.headers['x-profkit-inflated'], name).toBe('1');
        expect(r.headers['content-length'], name).toBeUndefined();
        expect(r.body.equals(gunzipSync(readFileSync(profile))), name).toBe(true);
        expect(r.body.equals(raw), name).toBe(true);
        // Without the parameter: the file's own bytes, as before.
        const original = await getBytes(s, `/profile/${name}`);
        expect(original.headers['x-profkit-inflated']).toBeUndefined();
        expect(original.body.equals(readFileSync(profile))).toBe(true);
      } finally {
        await s.close();
      }
    }
    // Not gzip: the parameter changes nothing; and it opens no other file.
    const s = await startWebServer({ profile: profilePath });
    try {
      const r = await getBytes(s, '/profile/cpu.folded?inflated=1');
      expect(r.headers['x-profkit-inflated']).toBeUndefined();
      expect(r.body.toString()).toBe(readFileSync(profilePath, 'utf8'));
      for (const path of ['/secret.txt?inflated=1', '/profile/secret.txt?inflated=1', `/profile/${encodeURIComponent(secretPath)}?inflated=1`, '/profile/..%2fsecret.txt?inflated=1']) expect((await get(s, path)).status, path).toBe(404);
    } finally {
      await s.close();
    }
  });

  it('aborts the inflated response of a corrupt or truncated gzip profile (never a short body that looks whole)', async () => {
    const gz = gzipSync(Buffer.from('main;work 3\n'.repeat(50_000)));
    const corrupt = Buffer.from(gz);
    for (let i = 20; i < 60; i++) corrupt[i] ^= 0x5a;
    const truncated = gz.subarray(0, gz.length - 100);
    for (const [name, bytes] of [['corrupt.folded.gz', corrupt], ['truncated.folded.gz', truncated]] as const) {
      const file = join(tmp, name);
      writeFileSync(file, bytes);
      const s = await startWebServer({ profile: file });
      try {
        const r = await getBytes(s, `/profile/${name}?inflated=1`);
        expect(r.headers['x-profkit-inflated'], name).toBe('1');
        expect(r.complete, name).toBe(false);
        // The original bytes are still served whole (the page's fallback).
        const original = await getBytes(s, `/profile/${name}`);
        expect(original.complete && original.body.equals(bytes), name).toBe(true);
      } finally {
        await s.close();
      }
    }
  });

  it('aborts the inflated response past maxDecompressedBytes (a valid gzip: never a body cut at the limit that looks whole)', async () => {
    const raw = Buffer.from('main;work 3\n'.repeat(200_000));
    const file = join(tmp, 'big.folded.gz');
    writeFileSync(file, gzipSync(raw));
    // The server reads core's default at each request; lowered here (this file's module instance) below the 2.4 MB profile.
    const limits = DEFAULT_LIMITS as { maxDecompressedBytes: number };
    const saved = limits.maxDecompressedBytes;
    const s = await startWebServer({ profile: file });
    try {
      limits.maxDecompressedBytes = 1_000_000;
      const r = await getBytes(s, '/profile/big.folded.gz?inflated=1');
      expect(r.headers['x-profkit-inflated']).toBe('1');
      expect(r.complete).toBe(false);
      expect(r.body.length).toBeLessThanOrEqual(1_000_000);
      expect(r.body.equals(raw.subarray(0, r.body.length))).toBe(true);
      limits.maxDecompressedBytes = raw.length;
      const whole = await getBytes(s, '/profile/big.folded.gz?inflated=1');
      expect(whole.complete && whole.body.equals(raw)).toBe(true);
    } finally {
      limits.maxDecompressedBytes = saved;
      await s.close();
    }
  });

  it('closes a connection idle for idleTimeoutMs: a client that stops reading the profile, one that never sends its request', async () => {
    // Sparse, and larger than the sockets' buffers: the server's writes wait on the client.
    const big = join(tmp, 'stalled.pb');
    writeFileSync(big, '');
    truncateSync(big, 64 << 20);
    const s = await startWebServer({ profile: big, idleTimeoutMs: 200 });
    try {
      const stalled = await new Promise<{ received: number; complete: boolean }>((resolve, reject) => {
        const req = request({ host: s.host, port: s.port, path: '/profile/stalled.pb', headers: { host: `127.0.0.1:${s.port}` } }, (res) => {
          let received = 0;
          res.on('data', (c: Buffer) => void (received += c.length));
          res.on('error', () => undefined);
          res.on('close', () => resolve({ received, complete: res.complete }));
          // Read nothing for five idle periods (timers run in order: the server's fires first), then all that comes.
          res.pause();
          setTimeout(() => res.resume(), 1_000);
        });
        req.on('error', reject);
        req.end();
      });
      expect(stalled.complete).toBe(false);
      expect(stalled.received).toBeLessThan(64 << 20);
      const silent = await new Promise<boolean>((resolve, reject) => {
        const socket = connect(s.port, s.host);
        socket.on('error', reject);
        socket.on('close', () => resolve(true));
      });
      expect(silent).toBe(true);
    } finally {
      await s.close();
    }
  });

  it('answers at most MAX_CONNECTIONS connections at once: one more is closed unanswered, and answered once another closed', async () => {
    const s = await startWebServer({ profile: profilePath });
    const agent = new Agent({ keepAlive: true, maxSockets: MAX_CONNECTIONS + 1 });
    /** A GET on a connection of its own (kept open after the answer), or the error of one closed unanswered. */
    const fetchOn = () =>
      new Promise<number | string>((resolve) => {
        const req = request({ host: s.host, port: s.port, path: '/profile/cpu.folded', agent, headers: { host: `127.0.0.1:${s.port}` } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
        req.end();
      });
    try {
      // All at once: each on its own connection, answered and kept open (keep-alive).
      const answered = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, fetchOn));
      expect(answered).toEqual(Array(MAX_CONNECTIONS).fill(200));
      expect(Object.values(agent.freeSockets).flat().length).toBe(MAX_CONNECTIONS);
      // A new connection, while those stay open: closed by the server before any answer.
      const extra = await new Promise<string>((resolve) => {
        const socket = connect(s.port, s.host, () => socket.write(`GET /profile/cpu.folded HTTP/1.1\r\nhost: 127.0.0.1:${s.port}\r\n\r\n`));
        let received = '';
        socket.on('data', (c: Buffer) => void (received += c.toString('latin1')));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(received));
      });
      expect(extra).toBe('');
      agent.destroy();
      await vi.waitFor(async () => expect((await get(s, '/profile/cpu.folded')).status).toBe(200), { timeout: 10_000 });
    } finally {
      agent.destroy();
      await s.close();
    }
  });

  it('serves nothing but the given files: other paths, traversals and encodings are 404', async () => {
    const s = await startWebServer({ profile: profilePath });
    try {
      for (const path of ['/secret.txt', `/profile/secret.txt`, '/profile/../secret.txt', '/profile/..%2fsecret.txt', `/profile/${encodeURIComponent(secretPath)}`, '/base/cpu.folded', '/etc/passwd', '//etc/passwd', '/profile', '/app.js/../secret.txt']) {
        const r = await get(s, path);
        expect(r.status, path).toBe(404);
        expect(r.body).not.toContain('not to be served');
      }
      expect(s.paths).toEqual(['/', '/index.html', '/app.js', '/app.css', '/graph.js', '/profile/cpu.folded']);
    } finally {
      await s.close();
    }
  });

  it('serves the source files the profile names, looked up as profkit list does (--source-path, --trim-path), and no other file', async () => {
    const { named, src } = sourceTree();
    const s = await startWebServer({ profile: named, sourcePath: src, trimPath: '/build' });
    try {
      const ok = await get(s, `/source?file=${encodeURIComponent('app/main.go')}`);
      expect(ok.status).toBe(200);
      expect(JSON.parse(ok.body)).toEqual({ lines: ['package main', 'func main() {}'] });
      // Named by the profile but not found: profkit list's error, not a file from elsewhere.
      const gone = await get(s, `/source?file=${encodeURIComponent('lib/gone.go')}`);
      expect(JSON.parse(gone.body)).toEqual({ error: `could not find file lib/gone.go on path ${src}` });
      for (const file of ['app/other.go', '/build/app/main.go', secretPath, '../secret.txt', 'app/../../secret.txt', 'app/./main.go/../../../secret.txt', '/etc/passwd', '', 'secret.txt']) {
        const r = await get(s, `/source?file=${encodeURIComponent(file)}`);
        expect(r.status, file).toBe(403);
        expect(r.body).not.toMatch(/not to be served|not named by the profile|root:/);
      }
      // The page is told how the listing names the files (the source path and trim path).
      expect((await get(s, '/')).body).toContain(`"source":{"url":"/source","sourcePath":${JSON.stringify(src)},"trimPath":"/build"}`);
    } finally {
      await s.close();
    }
  });

  it('makes the body of a source file once for the requests sending it at once (each held its own while its client read slowly), and drops it after them', async () => {
    const { named, src } = sourceTree();
    // 16 MB: more than the sockets' buffers, so the responses stay in flight while their clients do not read.
    const text = `${'x'.repeat(99)}\n`.repeat(160_000);
    writeFileSync(join(src, 'app/main.go'), text);
    const s = await startWebServer({ profile: named, sourcePath: src, trimPath: '/build' });
    const want = JSON.stringify({ lines: text.split('\n').slice(0, -1) });
    const bodies = countSourceBodies();
    try {
      const open = () =>
        new Promise<{ status: number; read(): Promise<string> }>((resolve, reject) => {
          const req = request({ host: s.host, port: s.port, path: '/source?file=app%2Fmain.go', headers: { host: `127.0.0.1:${s.port}` } }, (res) => {
            res.pause();
            const read = () =>
              new Promise<string>((done) => {
                const chunks: Buffer[] = [];
                res.on('data', (c: Buffer) => chunks.push(c));
                res.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
                res.resume();
              });
            resolve({ status: res.statusCode!, read });
          });
          req.on('error', reject);
          req.end();
        });
      const waiting = await Promise.all([open(), open(), open(), open()]);
      expect(waiting.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(bodies.made()).toBe(1);
      for (const body of await Promise.all(waiting.map((r) => r.read()))) expect(body === want).toBe(true);
      // Not kept once sent (the server's responses closed before their last bytes were read): a request after them makes it again.
      expect((await get(s, '/source?file=app%2Fmain.go')).body === want).toBe(true);
      expect(bodies.made()).toBe(2);
    } finally {
      bodies.restore();
      await s.close();
    }
  });

  it("keeps no body for a source request whose client went away while the profiles were read (its response's close had passed: the body was held for good)", async () => {
    const { named, src } = sourceTree();
    // The profiles' read (at the first source request) held until the client has gone.
    const registry = new Registry([pprofAdapter]);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const read = registry.read.bind(registry);
    vi.spyOn(registry, 'read').mockImplementation(async (...args) => {
      await released;
      return read(...args);
    });
    const s = await startWebServer({ profile: named, sourcePath: src, trimPath: '/build', registry });
    const bodies = countSourceBodies();
    // The server saw the client go once its response emitted 'close': waited for, not given 100 ms
    // (a loaded machine could release the read before, and the case would go untested).
    let responseClosed!: () => void;
    const closed = new Promise<void>((resolve) => (responseClosed = resolve));
    const emit = ServerResponse.prototype.emit;
    const spy = vi.spyOn(ServerResponse.prototype, 'emit').mockImplementation(function (this: ServerResponse, event: string | symbol, ...args: unknown[]) {
      if (event === 'close') responseClosed();
      return emit.call(this, event, ...args);
    });
    try {
      await new Promise<void>((resolve) => {
        const socket = connect(s.port, s.host, () => socket.end(`GET /source?file=app%2Fmain.go HTTP/1.1\r\nhost: 127.0.0.1:${s.port}\r\n\r\n`));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve());
      });
      await closed;
      spy.mockRestore();
      release();
      // One after the other: each response made its own body, none was left shared.
      expect((await get(s, '/source?file=app%2Fmain.go')).status).toBe(200);
      expect((await get(s, '/source?file=app%2Fmain.go')).status).toBe(200);
      expect(bodies.made()).toBe(2);
    } finally {
      spy.mockRestore();
      bodies.restore();
      await s.close();
    }
  });

  it('reads the profile with the registry it is given (the CLI passes the adapters the user installed)', async () => {
    const { named, src } = sourceTree();
    // A registry without the pprof adapter cannot read the profile: no name is served.
    const s = await startWebServer({ profile: named, sourcePath: src, trimPath: '/build', registry: new Registry([]) });
    try {
      const r = await get(s, `/source?file=${encodeURIComponent('app/main.go')}`);
      expect(r.status).not.toBe(200);
      expect(r.body).not.toContain('package main');
    } finally {
      await s.close();
    }
    const t = await startWebServer({ profile: named, sourcePath: src, trimPath: '/build', registry: new Registry([pprofAdapter]) });
    try {
      expect((await get(t, `/source?file=${encodeURIComponent('app/main.go')}`)).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it("puts the page's config in whole, whatever the file names and --source-path hold ($' and $& are not replacement patterns)", async () => {
    const odd = join(tmp, "a$'b$&c$`.folded");
    writeFileSync(odd, 'main 1\n');
    const s = await startWebServer({ profile: odd, sourcePath: "/src/$'", trimPath: '$&' });
    try {
      const page = (await get(s, '/')).body;
      const config = /<script type="application\/json" id="profkit-config">(.*?)<\/script>/.exec(page)![1]!;
      expect(JSON.parse(config)).toEqual({ profile: { name: "a$'b$&c$`.folded", url: `/profile/${encodeURIComponent("a$'b$&c$`.folded")}` }, source: { url: '/source', sourcePath: "/src/$'", trimPath: '$&' } });
      expect(page.match(/<script src="app.js">/g)).toHaveLength(1);
    } finally {
      await s.close();
    }
  });

  it('answers only GET and HEAD, and only requests addressed to a loopback name (DNS rebinding)', async () => {
    const s = await startWebServer({ profile: profilePath });
    try {
      expect((await get(s, '/profile/cpu.folded', { method: 'POST' })).status).toBe(405);
      expect((await get(s, '/profile/cpu.folded', { method: 'HEAD' })).status).toBe(200);
      expect((await get(s, '/profile/cpu.folded', { host: 'attacker.example:80' })).status).toBe(421);
      expect((await get(s, '/', { host: `localhost:${s.port}` })).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('refuses a non-loopback --host unless allowRemote, with a typed usage error naming the option', async () => {
    const e = await rejectionOf<ProfkitError>(startWebServer({ profile: profilePath, host: '0.0.0.0' }));
    expect(e.code).toBe('PROFKIT_E_USAGE');
    expect(e.detail.option).toBe('host');
    expect(e.message).toContain('--allow-remote');
  });

  it('refuses a loopback name that resolves to another address: the address bound is checked, not the name', async () => {
    // net's listen resolves the host through dns.lookup: app.localhost answered with 0.0.0.0 (all interfaces).
    const lookup = vi.spyOn(dns, 'lookup').mockImplementation(((...args: unknown[]) => (args.at(-1) as (e: null, address: string, family: number) => void)(null, '0.0.0.0', 4)) as typeof dns.lookup);
    try {
      const e = await rejectionOf<ProfkitError>(startWebServer({ profile: profilePath, host: 'app.localhost' }));
      expect([e.code, e.detail.option]).toEqual(['PROFKIT_E_USAGE', 'host']);
      expect(e.message).toContain('resolved to 0.0.0.0');
    } finally {
      lookup.mockRestore();
    }
  });

  it('reports a missing profile or base, a directory, a bad port and a busy port as typed errors', async () => {
    const missing = await rejectionOf<ProfkitError>(startWebServer({ profile: join(tmp, 'nope.pb.gz') }));
    expect([missing.code, missing.detail.file, missing.detail.option]).toEqual(['PROFKIT_E_IO', join(tmp, 'nope.pb.gz'), 'profile']);
    const base = await rejectionOf<ProfkitError>(startWebServer({ profile: profilePath, base: tmp }));
    expect([base.code, base.detail.option]).toEqual(['PROFKIT_E_IO', 'base']);
    const port = await rejectionOf<ProfkitError>(startWebServer({ profile: profilePath, port: 70000 }));
    expect([port.code, port.detail.option]).toEqual(['PROFKIT_E_USAGE', 'port']);
    const s = await startWebServer({ profile: profilePath });
    try {
      const busy = await rejectionOf<ProfkitError>(startWebServer({ profile: profilePath, port: s.port }));
      expect([busy.code, busy.detail.option]).toEqual(['PROFKIT_E_IO', 'port']);
    } finally {
      await s.close();
    }
  });

  it('reports an idleTimeoutMs Node cannot apply to a connection as a typed error (a negative one crashed the server at the first request); 0 is none', async () => {
    for (const idleTimeoutMs of [-1, Number.NaN, 1.5, 2 ** 31]) {
      const e = await rejectionOf<ProfkitError>(startWebServer({ profile: profilePath, idleTimeoutMs }));
      expect([e.code, e.detail.option], String(idleTimeoutMs)).toEqual(['PROFKIT_E_USAGE', 'idleTimeoutMs']);
    }
    const s = await startWebServer({ profile: profilePath, idleTimeoutMs: 0 });
    try {
      expect((await get(s, '/profile/cpu.folded')).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('startWebServer, files changed after the start', () => {
  it('a profile replaced by a FIFO is a 500, not a read without end', async () => {
    const path = join(tmp, 'replaced.folded');
    writeFileSync(path, 'main 1\n');
    const s = await startWebServer({ profile: path });
    try {
      rmSync(path);
      execFileSync('mkfifo', [path]);
      const r = await get(s, '/profile/replaced.folded');
      expect(r.status).toBe(500);
      expect(r.body).toContain('no longer a regular file');
    } finally {
      await s.close();
    }
  }, 10_000);
});

describe('startWebServer, source files that cannot be served', () => {
  it('a profile replaced by a FIFO gives the source view a 500, not a read without end', async () => {
    const { named, src } = sourceTree();
    const path = join(tmp, 'source-replaced.pb.gz');
    writeFileSync(path, readFileSync(named));
    const s = await startWebServer({ profile: path, sourcePath: src, trimPath: '/build' });
    try {
      rmSync(path);
      execFileSync('mkfifo', [path]);
      const r = await get(s, `/source?file=${encodeURIComponent('app/main.go')}`);
      expect(r.status).toBe(500);
      expect(r.body).toContain('PROFKIT_E_IO not a regular file');
    } finally {
      await s.close();
    }
  }, 10_000);

  it('a named file whose JSON would pass the longest string is a 500, not a crash', async () => {
    // 90 MB of U+0001 (each \u0001 in JSON): 540M characters, past V8's 2^29 - 24.
    const big = join(tmp, 'control.c');
    writeFileSync(big, ('\x01'.repeat(60_000) + '\n').repeat(1_500));
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    b.addSample([b.internLocation({ functionId: b.internFunction({ name: 'f', filename: big }), line: 1 })], [1]);
    const profile = join(tmp, 'control.pb.gz');
    writeFileSync(profile, serializePprof(b.build()));
    const s = await startWebServer({ profile });
    try {
      const r = await get(s, `/source?file=${encodeURIComponent(big)}`);
      expect(r.status).toBe(500);
      expect(r.body).toContain(`${big} could not be served`);
      // The server still answers.
      expect((await get(s, '/profile/control.pb.gz')).status).toBe(200);
    } finally {
      await s.close();
      rmSync(big);
    }
  }, 60_000);
});

describe('writeStaticSite', () => {
  it('writes the app without a served profile: it opens files in the page', async () => {
    const dir = join(tmp, 'site');
    const written = await writeStaticSite(dir);
    expect(written).toEqual(APP_FILES.map((f) => join(dir, f)));
    const html = readFileSync(join(dir, 'index.html'), 'utf8');
    expect(html).not.toContain('profkit-config"');
    expect(html).toContain('<script src="app.js">');
  });
});

const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe.skipIf(!haveCli('@profkit/web'))('profkit web', () => {
  // Run outside the repository: no profkit.config.json of the workspace applies.
  const cli = (args: string[]) => runCliAsync(args, { cwd: tmp });

  /** Starts `profkit web ARGS`, resolves with the first stdout line and the process (killed by the caller). */
  function startCli(args: string[]): Promise<{ line: string; stop: () => Promise<number | null> }> {
    const child = spawn(process.execPath, [cliBin, 'web', ...args], { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return new Promise((resolve, reject) => {
      let out = '';
      let err = '';
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        // The first line, or with --json the whole document once it is complete.
        const text = out.startsWith('{') ? (isJson(out) ? out : undefined) : out.includes('\n') ? out.split('\n')[0]! : undefined;
        if (text !== undefined) resolve({ line: text, stop: () => (child.kill('SIGTERM'), exited) });
      });
      void exited.then((code) => reject(new Error(`profkit web exited ${code}: ${err}`)));
    });
  }

  it('--source-path and --trim-path reach the server: the source view gets the named file, no other', async () => {
    const { named, src } = sourceTree();
    const { line, stop } = await startCli([named, '--no-open', '--source-path', src, '--trim-path', '/build']);
    try {
      const url = /(http:\/\/\S+)/.exec(line)![1]!;
      const ok = await fetch(new URL(`source?file=${encodeURIComponent('app/main.go')}`, url));
      expect(await ok.json()).toEqual({ lines: ['package main', 'func main() {}'] });
      expect((await fetch(new URL(`source?file=${encodeURIComponent('app/other.go')}`, url))).status).toBe(403);
    } finally {
      await stop();
    }
  });

  it('serves FILE on 127.0.0.1 and stops on SIGTERM', async () => {
    const { line, stop } = await startCli([profilePath, '--no-open']);
    let code: number | null | undefined;
    try {
      const url = /(http:\/\/\S+)/.exec(line)![1]!;
      expect(new URL(url).hostname).toBe('127.0.0.1');
      const res = await fetch(new URL('profile/cpu.folded', url));
      expect(await res.text()).toBe(readFileSync(profilePath, 'utf8'));
      expect((await fetch(new URL('secret.txt', url))).status).toBe(404);
    } finally {
      code = await stop();
    }
    // Interrupted, as every command: exit 130 (docs/cli.md).
    expect(code).toBe(130);
  });

  it('--json says where it listens', async () => {
    const { line, stop } = await startCli([profilePath, '--no-open', '--json', '--port', '0']);
    try {
      const doc = JSON.parse(line) as { host: string; port: number; url: string };
      expect(doc.host).toBe('127.0.0.1');
      expect(doc.url).toBe(`http://127.0.0.1:${doc.port}/`);
    } finally {
      await stop();
    }
  });

  it('refuses --host 0.0.0.0 (exit 2, PROFKIT_E_USAGE), a missing FILE (exit 3) and FILE with --static', async () => {
    const remote = await cli(['web', profilePath, '--host', '0.0.0.0', '--no-open']);
    expect(remote.code).toBe(2);
    expect(remote.stderr).toContain('PROFKIT_E_USAGE');
    const missing = await cli(['web', join(tmp, 'missing.pb.gz'), '--no-open']);
    expect(missing.code).toBe(3);
    // The file named once, by the CLI's error line.
    expect(missing.stderr).toContain(`profkit: ${join(tmp, 'missing.pb.gz')}: no such file [PROFKIT_E_IO]`);
    const both = await cli(['web', profilePath, '--static', join(tmp, 'x')]);
    expect(both.code).toBe(2);
    expect(existsSync(join(tmp, 'x'))).toBe(false);
  });

  it('--static DIR writes the static viewer', async () => {
    const dir = join(tmp, 'cli-site');
    const r = await cli(['web', '--static', dir]);
    expect(r.code, r.stderr).toBe(0);
    for (const f of APP_FILES) expect(existsSync(join(dir, f)), f).toBe(true);
  });
});
