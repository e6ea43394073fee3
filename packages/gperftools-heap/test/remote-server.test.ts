import { request } from 'node:http';
import { connect } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ProfileBuilder, type Profile, type Registry } from '@profkit/core/node';
import { createProfileServer, isLoopbackHost, parseSymbolReply, profileKindOf, readLegacy, writeContentionText } from '../src/node.js';
import { fixtureProfile, haveFixtures, repoRegistry, stacksByMeaning } from './remote-helpers.js';

function heapProfile(): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'inuse_objects', unit: 'count' }, { type: 'inuse_space', unit: 'bytes' }] });
  const f = b.internFunction({ name: 'grow_buffer' });
  b.addSample([b.addLocation({ address: 0x4010n, functionId: f })], [1, 4096]);
  return b.build();
}

/** One raw HTTP exchange (status, headers, body) with node's http, no keep-alive. */
function http(url: string, o: { method?: string; body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((ok, fail) => {
    const req = request(url, { method: o.method ?? 'GET', headers: o.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end(o.body);
  });
}

describe('createProfileServer', () => {
  it('refuses a non-loopback address unless allowed', async () => {
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('127.1.2.3')).toBe(true);
    expect(isLoopbackHost('::1')).toBe(true);
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('0.0.0.0')).toBe(false);
    expect(isLoopbackHost('10.0.0.1')).toBe(false);
    await expect(createProfileServer({ host: '0.0.0.0', profiles: () => undefined })).rejects.toMatchObject({ code: 'PROFKIT_E_USAGE', detail: { option: 'host' } });
    const s = await createProfileServer({ host: '0.0.0.0', allowNonLoopback: true, profiles: () => heapProfile() });
    try {
      expect((await http(`http://127.0.0.1:${s.address().port}/pprof/heap`)).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('reports a port in use as PROFKIT_E_IO', async () => {
    const a = await createProfileServer({ profiles: () => undefined });
    try {
      await expect(createProfileServer({ port: a.address().port, profiles: () => undefined })).rejects.toMatchObject({ code: 'PROFKIT_E_IO', detail: { option: 'port' } });
    } finally {
      await a.close();
    }
  });

  it('answers the protocol routes under any prefix, with the right statuses', async () => {
    const p = heapProfile();
    const s = await createProfileServer({ profiles: (r) => (r.kind === 'heap' ? p : undefined), program: '/opt/bin/app' });
    try {
      const heap = await http(`${s.url}/svc/x/pprof/heap`);
      expect(heap.status).toBe(200);
      expect(String(heap.headers['content-type'])).toMatch(/^text\/plain/);
      const back = readLegacy(heap.body).profile;
      expect(stacksByMeaning(back)).toEqual(new Map([['@4010', '1,4096']]));
      expect((await http(`${s.url}/pprof/cmdline`)).body.toString()).toBe('/opt/bin/app\n');
      // GET symbol: num_symbols without newline, nonzero once a profile with names was served.
      expect((await http(`${s.url}/pprof/symbol`)).body.toString()).toBe('num_symbols: 1');
      const sym = await http(`${s.url}/pprof/symbol`, { method: 'POST', body: '0x4010+0x9999+bad' });
      expect(parseSymbolReply(sym.body.toString())).toEqual([{ address: 0x4010n, name: 'grow_buffer', line: 1 }]);
      expect((await http(`${s.url}/pprof/growth`)).status).toBe(404);
      expect((await http(`${s.url}/pprof/nothing`)).status).toBe(404);
      expect((await http(`${s.url}/elsewhere`)).status).toBe(404);
      expect((await http(`${s.url}/pprof/heap`, { method: 'PUT', body: 'x' })).status).toBe(405);
      expect((await http(`${s.url}/pprof/profile?seconds=abc`)).status).toBe(400);
      expect((await http(`${s.url}/pprof/profile?seconds=999999`)).status).toBe(400);
      const head = await http(`${s.url}/pprof/heap`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      expect(Number(head.headers['content-length'])).toBe(heap.body.length);
      const go = await http(`${s.url}/debug/pprof/heap`);
      expect(go.status).toBe(404);
      expect(go.body.toString()).toContain('@profkit/pprof');
    } finally {
      await s.close();
    }
  });

  it('answers 422 with the error code when a profile cannot be written in the route\'s format', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'wall', unit: 'seconds' }] });
    b.addSample([b.addLocation({ address: 1n })], [1]);
    const p = b.build();
    const s = await createProfileServer({ profiles: () => p });
    try {
      const r = await http(`${s.url}/pprof/heap`);
      expect(r.status).toBe(422);
      expect(r.body.toString()).toMatch(/^PROFKIT_E_UNSUPPORTED: /);
    } finally {
      await s.close();
    }
  });

  it('refuses oversized request bodies with 413, declared or streamed', async () => {
    const s = await createProfileServer({ profiles: () => heapProfile(), maxBodyBytes: 1000 });
    try {
      expect((await http(`${s.url}/pprof/symbol`, { method: 'POST', body: '0x1+'.repeat(500) })).status).toBe(413);
      // chunked, no content-length
      const r = await new Promise<number>((ok, fail) => {
        const req = request(`${s.url}/pprof/symbol`, { method: 'POST', agent: false, headers: { 'transfer-encoding': 'chunked' } }, (res) => {
          res.resume();
          ok(res.statusCode!);
        });
        req.on('error', fail);
        for (let i = 0; i < 10; i++) req.write('0x12345678+'.repeat(20));
        req.end();
      });
      expect(r).toBe(413);
      // The server still works afterwards.
      expect((await http(`${s.url}/pprof/symbol`, { method: 'POST', body: '0x4010' })).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('answers 503 past the concurrency limit and serves again once requests finish', async () => {
    let release!: () => void;
    const gate = new Promise<void>((ok) => (release = ok));
    let entered = 0;
    const s = await createProfileServer({
      maxConcurrent: 2,
      profiles: async () => {
        entered++;
        await gate;
        return heapProfile();
      },
    });
    try {
      const first = [http(`${s.url}/pprof/heap`), http(`${s.url}/pprof/heap`)];
      while (entered < 2) await new Promise((ok) => setTimeout(ok, 10));
      const third = await http(`${s.url}/pprof/heap`);
      expect(third.status).toBe(503);
      expect(third.headers['retry-after']).toBe('1');
      release();
      expect((await Promise.all(first)).map((r) => r.status)).toEqual([200, 200]);
      expect((await http(`${s.url}/pprof/heap`)).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('answers garbage with 400 and keeps serving', async () => {
    const s = await createProfileServer({ profiles: () => heapProfile() });
    try {
      for (const junk of ['\x00\x01\x02 garbage\r\n\r\n', 'GET http://[bad HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /pprof/heap HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n']) {
        const answer = await new Promise<string>((ok) => {
          const sock = connect(s.address().port, '127.0.0.1', () => sock.write(junk));
          let got = '';
          sock.on('data', (d) => (got += d.toString()));
          sock.on('close', () => ok(got));
          sock.on('error', () => ok(got));
        });
        expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      }
      expect((await http(`${s.url}/pprof/heap`)).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('drops a client that does not finish its headers (header timeout)', async () => {
    const s = await createProfileServer({ profiles: () => heapProfile(), headersTimeoutMs: 300, requestTimeoutMs: 300 });
    try {
      // The timeouts that drop it are the ones asked for (not the 10 s / 30 s defaults): read from
      // the server rather than timed, so a loaded machine cannot make the test fail.
      expect({ headersTimeout: s.server.headersTimeout, requestTimeout: s.server.requestTimeout }).toEqual({ headersTimeout: 300, requestTimeout: 300 });
      const answer = await new Promise<string>((ok) => {
        const sock = connect(s.address().port, '127.0.0.1', () => sock.write('GET /pprof/heap HTTP/1.1\r\nHost: x\r\n'));
        let got = '';
        sock.on('data', (d) => (got += d.toString()));
        sock.on('close', () => ok(got));
        sock.on('error', () => ok(got));
      });
      expect(answer === '' || /^HTTP\/1\.1 408 /.test(answer)).toBe(true);
    } finally {
      await s.close();
    }
  });

  it('aborts the signal of in-flight requests on close and on client disconnect', async () => {
    const signals: AbortSignal[] = [];
    const s = await createProfileServer({
      profiles: (r) =>
        new Promise<Profile | undefined>((ok) => {
          signals.push(r.signal);
          r.signal.addEventListener('abort', () => ok(undefined));
        }),
    });
    // client disconnect
    const req = request(`${s.url}/pprof/profile?seconds=5`, { agent: false });
    req.on('error', () => undefined);
    req.end();
    while (signals.length < 1) await new Promise((ok) => setTimeout(ok, 10));
    // Waits for the abort (the test's timeout is the only bound), not 100 ms that a loaded server may need.
    const aborted = new Promise((ok) => signals[0]!.addEventListener('abort', ok, { once: true }));
    req.destroy();
    await aborted;
    expect(signals[0]!.aborted).toBe(true);
    // server close
    const pending = http(`${s.url}/pprof/profile?seconds=5`).catch((e: Error) => e);
    while (signals.length < 2) await new Promise((ok) => setTimeout(ok, 10));
    const closed = s.close();
    // close() aborts the signal at once, before any connection ends.
    expect(signals[1]!.aborted).toBe(true);
    await closed;
    await pending;
  });
});

describe.skipIf(!haveFixtures)('formats of the legacy routes', () => {
  it('classifies stored profiles by route', () => {
    expect(profileKindOf(fixtureProfile('cppbench.heap'))).toBe('heap');
    expect(profileKindOf(fixtureProfile('cppbench.growth'))).toBe('growth');
    expect(profileKindOf(fixtureProfile('cppbench.cpu'))).toBe('profile');
    expect(profileKindOf(fixtureProfile('cppbench.contention'))).toBe('contention');
    expect(profileKindOf(fixtureProfile('cppbench.thread'))).toBeUndefined();
  });
  it('writes contention text that reads back to the same contentions and delays', () => {
    const p = fixtureProfile('cppbench.contention');
    const text = writeContentionText(p).text;
    // Unchanged since read: its own header, cycles/second and period (a changed profile gets the
    // 1 GHz, period-1 form: write-contention-thread.test.ts).
    expect(text.startsWith('--- contentionz 1 ---\ncycles/second = 3201000000\nsampling period = 100\n')).toBe(true);
    expect(text).toContain('--- Memory map: ---\n');
    expect(stacksByMeaning(readLegacy(new TextEncoder().encode(text)).profile)).toEqual(stacksByMeaning(p));
  });
});

describe('the /debug/pprof routes (gzipped profile.proto through the pprof adapter)', async () => {
  const registry: Registry | undefined = await repoRegistry();
  it.skipIf(!registry)('serves profile.proto that reads back to the same samples', async () => {
    const p = heapProfile();
    const s = await createProfileServer({
      profiles: () => p,
      encodePprof: async (q) => {
        const r = await registry!.serialize(q, { format: 'pprof', fileName: 'x.pb.gz' });
        if (!(r.data instanceof Uint8Array)) throw new Error('expected bytes');
        return r.data;
      },
    });
    try {
      const r = await http(`${s.url}/debug/pprof/heap`);
      expect(r.status).toBe(200);
      expect(r.body[0]).toBe(0x1f);
      expect(r.body[1]).toBe(0x8b);
      expect(gunzipSync(r.body).length).toBeGreaterThan(0);
      const back = await registry!.read(new Uint8Array(r.body), { fileName: 'heap' });
      expect(back.format).toBe('pprof');
      expect(stacksByMeaning(back.profile)).toEqual(new Map([['grow_buffer@4010', '1,4096']]));
    } finally {
      await s.close();
    }
  });
});
