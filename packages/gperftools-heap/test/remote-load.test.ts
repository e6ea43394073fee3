/**
 * A bounded load test of the server on loopback: concurrent clients, a slow client, a client
 * that disconnects mid-request and an oversized body, all at once. It asserts behaviour
 * (answers, limits, recovery), never timing; it prints requests/s, p99 latency and peak RSS for
 * the record (performance is measured in tools/bench).
 */
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseSymbolReply } from '../src/node.js';

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const haveDist = existsSync(join(pkgDir, 'dist/node.js'));
if (!haveDist) console.warn('remote load test: packages/gperftools-heap/dist is not built (npx tsc -b packages/gperftools-heap); skipped');

/**
 * The server runs in its own node process (so its peak RSS is its own), built from this
 * package's `dist/` (the build runs before the tests). It prints its URL, and on SIGTERM its
 * peak RSS and how many in-flight requests saw their signal abort, then exits.
 */
const SERVER_SCRIPT = `
import { createProfileServer } from ${JSON.stringify(pathToFileURL(join(pkgDir, 'dist/node.js')).href)};
import { ProfileBuilder } from '@profkit/core/node';
const b = new ProfileBuilder({ sampleTypes: [{ type: 'inuse_objects', unit: 'count' }, { type: 'inuse_space', unit: 'bytes' }] });
const fns = Array.from({ length: 200 }, (_, i) => b.internFunction({ name: 'fn_' + i }));
const locs = fns.map((f, i) => b.addLocation({ address: 0x400000n + BigInt(i) * 0x40n, functionId: f }));
for (let s = 0; s < 500; s++) {
  const stack = Array.from({ length: 12 }, (_, k) => locs[(s * 7 + k * 13) % locs.length]);
  b.addSample(stack, [1 + (s % 5), 64 * (1 + (s % 5))]);
}
const heap = b.build();
let aborted = 0;
const server = await createProfileServer({
  maxConcurrent: 32, maxBodyBytes: 64 * 1024, headersTimeoutMs: 500, requestTimeoutMs: 1000, program: 'loadtest',
  profiles: (req) => {
    if (req.kind === 'heap') return heap;
    if (req.kind === 'profile') return new Promise((ok) => {
      const t = setTimeout(() => ok(heap), req.seconds * 1000);
      req.signal.addEventListener('abort', () => { clearTimeout(t); aborted++; ok(undefined); process.stdout.write('profile aborted\\n'); });
      // The test disconnects its client once the request is being worked on, not after a delay.
      process.stdout.write('profile started\\n');
    });
    return undefined;
  },
});
process.on('SIGTERM', async () => {
  // Aborts by clients only: close() aborts the requests still in flight too.
  const abortedByClients = aborted;
  await server.close();
  process.stdout.write('report ' + JSON.stringify({ maxRssKiB: process.resourceUsage().maxRSS, aborted: abortedByClients }) + '\\n');
  process.exit(0);
});
process.stdout.write('listening ' + server.url + '\\n');
// Never outlive the test.
setTimeout(() => process.exit(3), 120000).unref();
`;

interface Reply {
  status: number;
  body: string;
  ms: number;
}

function call(agent: Agent, url: string, method = 'GET', body?: string): Promise<Reply> {
  const t0 = performance.now();
  return new Promise((ok, fail) => {
    const req = request(url, { method, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode!, body: Buffer.concat(chunks).toString(), ms: performance.now() - t0 }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end(body);
  });
}

describe.skipIf(!haveDist)('server under bounded load on loopback', () => {
  it('serves concurrent clients correctly while a slow client, a disconnecting client and an oversized body are handled', async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', SERVER_SCRIPT], { cwd: pkgDir, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const said = (line: string) => new Promise<void>((ok) => child.stdout.on('data', () => out.includes(`${line}\n`) && ok()));
    const profileStarted = said('profile started');
    const profileAborted = said('profile aborted');
    const url = await new Promise<string>((ok, fail) => {
      child.stdout.on('data', () => {
        const m = /listening (\S+)\n/.exec(out);
        if (m) ok(m[1]!);
      });
      child.on('exit', (c) => fail(new Error(`load server exited with ${c}`)));
    });
    const port = Number(new URL(url).port);
    const server = { url, address: () => ({ port }) };
    const stop = async (): Promise<{ maxRssKiB: number; aborted: number }> => {
      const exited = new Promise((ok) => child.on('exit', ok));
      child.kill('SIGTERM');
      await exited;
      const m = /report (\{.*\})/.exec(out);
      if (!m) throw new Error(`no report from the load server: ${out}`);
      return JSON.parse(m[1]!);
    };
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    try {
      const reference = await call(agent, `${server.url}/pprof/heap`);
      expect(reference.status).toBe(200);
      const symbolQuery = Array.from({ length: 50 }, (_, i) => '0x' + (0x400000 + i * 0x40).toString(16)).join('+');

      // The troublemakers, started together with the load.
      const slow = new Promise<{ answer: string; ms: number }>((ok) => {
        const t0 = performance.now();
        const sock = connect(server.address().port, '127.0.0.1');
        const text = 'GET /pprof/heap HTTP/1.1\r\nHost: x\r\n';
        let i = 0;
        const drip = setInterval(() => {
          if (i < text.length && !sock.destroyed) sock.write(text[i++]!);
        }, 100);
        let answer = '';
        sock.on('data', (d) => (answer += d.toString()));
        const end = () => {
          clearInterval(drip);
          ok({ answer, ms: performance.now() - t0 });
        };
        sock.on('close', end);
        sock.on('error', () => undefined);
      });
      // Disconnects while the server works on its request, once the server said so: after a fixed
      // delay (150 ms) a starved client or server could cut it before the server had read it.
      const disconnect = new Promise<void>((ok) => {
        const req = request(`${server.url}/pprof/profile?seconds=100`, { agent: false });
        req.on('error', () => ok());
        req.on('close', () => ok());
        req.end();
        void profileStarted.then(() => req.destroy());
      });
      const oversized = call(new Agent(), `${server.url}/pprof/symbol`, 'POST', '0x1234+'.repeat(20_000));

      const clients = 16;
      const perClient = 150;
      const latencies: number[] = [];
      const statuses = new Map<number, number>();
      let wrong = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: clients }, async (_, c) => {
          for (let k = 0; k < perClient; k++) {
            const which = (c + k) % 3;
            const r =
              which === 0
                ? await call(agent, `${server.url}/pprof/heap`)
                : which === 1
                  ? await call(agent, `${server.url}/pprof/symbol`, 'POST', symbolQuery)
                  : await call(agent, `${server.url}/pprof/cmdline`);
            latencies.push(r.ms);
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
            if (r.status === 200) {
              if (which === 0 && r.body !== reference.body) wrong++;
              if (which === 1 && parseSymbolReply(r.body).length !== 50) wrong++;
              if (which === 2 && r.body !== 'loadtest\n') wrong++;
            }
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      const total = clients * perClient;
      latencies.sort((a, b) => a - b);
      const p99 = latencies[Math.floor(latencies.length * 0.99)]!;
      const slowResult = await slow;
      await disconnect;
      // The server saw the disconnection (the report counts the aborts from before its shutdown).
      await profileAborted;
      const big = await oversized;
      // Still healthy afterwards.
      expect((await call(agent, `${server.url}/pprof/heap`)).body).toBe(reference.body);
      const report = await stop();
      console.log(
        `remote load: ${total} requests from ${clients} clients in ${seconds.toFixed(2)} s = ${(total / seconds).toFixed(0)} req/s, ` +
          `p50 ${latencies[Math.floor(latencies.length / 2)]!.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, server peak RSS ${(report.maxRssKiB / 1024).toFixed(0)} MiB`,
      );

      expect(statuses.get(200)).toBe(total);
      expect(wrong).toBe(0);
      expect(big.status).toBe(413);
      // The slow client never finished its headers: dropped (408 or closed) well before it could.
      expect(slowResult.answer === '' || /^HTTP\/1\.1 408/.test(slowResult.answer)).toBe(true);
      expect(report.aborted).toBe(1);
    } finally {
      agent.destroy();
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
