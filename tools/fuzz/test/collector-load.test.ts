import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRegistry, locationRows, sampleRows, type Profile } from '@profkit/core/node';
import pprofAdapter from '@profkit/pprof';
import fuchsiaSampler, { callsToRecording, connectSampler, recordingHeader, replayRecording, startCollector, type SamplerCall } from '@profkit/fuchsia-sampler/node';

// The Fuchsia collector under mixed load on loopback, all at once: concurrent well-behaved
// clients, a client trickling its bytes, clients that disconnect inside a message, a client
// announcing an oversized record, and one connecting and sending nothing. The well-behaved
// clients' profiles must be exactly what replaying their calls gives (nothing lost or
// corrupted), the bad clients must be contained, and memory stays bounded. Events/s, p99 batch
// latency and peak RSS are printed for the record, not asserted (performance lives in
// tools/bench). Each failure scenario alone is tested in packages/fuchsia-sampler/test.

const registry = createRegistry([pprofAdapter, fuchsiaSampler]);
const tmp = mkdtempSync(join(tmpdir(), 'profkit-collector-load-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const st = (...f: number[]) => ({ stackFrames: BigUint64Array.from(f.map(BigInt)) });
function workload(name: string, n: number, seed: number): SamplerCall[] {
  const calls: SamplerCall[] = [
    { method: 'SetProcessInfo', processName: name, moduleMap: [{ buildId: Uint8Array.of(seed, 2, 3), executableSegments: [{ startAddress: 0x1000n, size: 0x100000n, relativeAddress: 0x400n }] }] },
  ];
  for (let i = 0; i < n; i++) {
    calls.push({ method: 'RecordAllocation', address: BigInt(0x10000 + i * 16), stackTrace: st(0x1000 + (i % 97) * 4, 0x2000 + (i % 13) * 8, 0x3000 + seed), size: BigInt(16 + ((i * seed) % 500)) });
    if (i % 3 === 1) calls.push({ method: 'RecordDeallocation', address: BigInt(0x10000 + (i - 1) * 16), stackTrace: st(0x4000 + (i % 5)) });
  }
  return calls;
}

/** Meaning of a profile: sorted `stack addresses = values` rows. */
function meaning(p: Profile): string[] {
  const addr = new Map<number, bigint>();
  for (const l of locationRows(p)) addr.set(l.locationId, l.address);
  return [...sampleRows(p)].map((s) => `${s.locationIds.map((id) => addr.get(id)!.toString(16)).join(',')}=${s.values.join(',')}`).sort();
}

function rawClient(port: number, script: (s: import('node:net').Socket) => Promise<void>): Promise<void> {
  return new Promise((ok) => {
    const s = connect(port, '127.0.0.1');
    s.on('error', () => undefined);
    // Read (and ignore) the collector's reply line: a socket whose data is never read never sees its end.
    s.resume();
    s.on('close', () => ok());
    s.once('connect', () => void script(s).catch(() => s.destroy()));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('fuchsia collector under mixed load (loopback)', () => {
  it('serves 8 concurrent clients exactly while slow, disconnecting, oversized and silent clients are contained', async () => {
    const outDir = join(tmp, 'out');
    const GOOD = 8;
    const EVENTS = 4000;
    const col = await startCollector({
      listen: '127.0.0.1:0',
      outDir,
      writeProfile: (p, path) => registry.write(p, path),
      maxClients: 16,
      maxRecordBytes: 64 * 1024,
      idleTimeoutMs: 3000,
      timeoutMs: 90_000,
      partialThreshold: 0,
    });
    const port = Number(col.address.split(':').pop());
    const rss0 = process.memoryUsage().rss;
    let peakRss = rss0;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
    const latencies: number[] = [];
    const t0 = performance.now();
    const workloads = Array.from({ length: GOOD }, (_, i) => workload(`good_${i}`, EVENTS, i + 1));

    const good = workloads.map(async (calls) => {
      const c = await connectSampler(col.address, { batchBytes: 4096 });
      let k = 0;
      let s = performance.now();
      for (const call of calls) {
        await c.send(call);
        // Latency of a batch of 100 calls until written to the socket (back-pressure included).
        if (++k % 100 === 0) {
          await c.flush();
          latencies.push(performance.now() - s);
          s = performance.now();
        }
      }
      await c.close();
    });

    // A slow client: a whole small recording, a few bytes every 5 ms.
    const slowCalls = workload('slow', 20, 99);
    const slowBytes = callsToRecording(slowCalls);
    const slow = rawClient(port, async (s) => {
      for (let i = 0; i < slowBytes.length; i += 8) {
        s.write(slowBytes.subarray(i, i + 8));
        await sleep(5);
      }
      s.end();
    });
    // Clients cut off inside a record, at several points.
    const cuts = [3, 9, 17, 40].map((at, k) =>
      rawClient(port, async (s) => {
        const bytes = callsToRecording(workload(`cut_${k}`, 5, 50 + k));
        s.write(bytes.subarray(0, 16 + at + (k === 3 ? 200 : 0)));
        await sleep(20);
        s.destroy();
      }),
    );
    // A record announcing 16 MiB, far above maxRecordBytes, followed by junk.
    const oversized = rawClient(port, async (s) => {
      s.write(recordingHeader());
      s.write(Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 1));
      for (let i = 0; i < 64 && !s.destroyed; i++) {
        s.write(new Uint8Array(64 * 1024).fill(0x41));
        await sleep(2);
      }
      s.end();
    });
    // Connects and says nothing until the idle timeout ends it.
    const silent = rawClient(port, async () => undefined);

    await Promise.all([...good, slow, ...cuts, oversized, silent]);
    const seconds = (performance.now() - t0) / 1000;
    const summary = await col.close('test done');
    clearInterval(sampler);

    // Well-behaved clients: exactly what replaying their calls gives.
    const files = readdirSync(outDir);
    for (let i = 0; i < GOOD; i++) {
      const name = `good_${i}_final_0.pb.gz`;
      expect(files).toContain(name);
      const got = (await registry.read(join(outDir, name))).profile;
      const want = replayRecording(callsToRecording(workloads[i]!), { partialThreshold: 0 }).profiles.at(-1)!.profile;
      expect(meaning(got)).toEqual(meaning(want));
    }
    const slowGot = (await registry.read(join(outDir, 'slow_final_0.pb.gz'))).profile;
    expect(meaning(slowGot)).toEqual(meaning(replayRecording(slowBytes, { partialThreshold: 0 }).profiles.at(-1)!.profile));
    // The bad clients are reported, not fatal.
    expect(summary.errors.some((e) => /exceeds the limit of 65536/.test(e))).toBe(true);
    expect(summary.errors.length).toBeGreaterThanOrEqual(1);
    expect(summary.connections).toBeGreaterThanOrEqual(GOOD + 7);

    const events = workloads.reduce((n, w) => n + w.length, 0);
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.floor(latencies.length * 0.99)]!;
    const growthMiB = (peakRss - rss0) / 2 ** 20;
    console.log(
      `collector load: ${events} events from ${GOOD} clients + 7 misbehaving in ${seconds.toFixed(2)} s = ${Math.round(events / seconds)} events/s; ` +
        `p99 latency of a 100-call batch ${p99.toFixed(2)} ms; peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB (+${growthMiB.toFixed(0)} MiB during the run)`,
    );
    // Memory bounded: the oversized client's 4 MiB of junk and 16 MiB announcement never accumulate.
    expect(growthMiB).toBeLessThan(512);
  });
});
