/**
 * A loopback load test of the live collector: several clients each send a stream of
 * allocations and deallocations (a bounded live set, a pool of stacks) to a collector on
 * 127.0.0.1 (or a unix socket), which writes partial and final profiles. Used by the bounded
 * unit test (small) and by `npm run bench -- fuchsia` (tools/bench/scripts/fuchsia-loadtest.mjs, 1M events).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Profile } from '@profkit/core';
import { connectSampler } from './client.js';
import { startCollector, type CollectorSummary } from './server.js';
import type { SamplerCall } from './fidl/protocol.js';

export interface LoadTestOptions {
  clients?: number;
  /** Total events over all clients (SetProcessInfo excluded). */
  events?: number;
  /** Live allocations kept per client before frees start. */
  liveSet?: number;
  /** Distinct stacks per client. */
  stacks?: number;
  /** Frames per stack. */
  depth?: number;
  /** Protocol generation, or 'socket' for gen-3 datagrams. */
  transport?: 1 | 2 | 'socket';
  /** Use a unix socket instead of TCP. */
  unix?: boolean;
  /** Writes each profile (default: only counts samples). */
  writeProfile?: (p: Profile, path: string) => Promise<unknown>;
  partialThreshold?: number;
  timeoutMs?: number;
}

export interface LoadTestResult {
  clients: number;
  events: number;
  seconds: number;
  eventsPerSecond: number;
  /** CPU time of this process (clients and collector share it), seconds. */
  cpuSeconds: number;
  eventsPerCpuSecond: number;
  /** Peak resident set size of this process (collector and clients), MiB. */
  peakRssMiB: number;
  profiles: number;
  summary: CollectorSummary;
}

export async function runLoadTest(options: LoadTestOptions = {}): Promise<LoadTestResult> {
  const clients = options.clients ?? 4;
  const total = options.events ?? 1_000_000;
  const perClient = Math.floor(total / clients);
  const liveSet = options.liveSet ?? 2000;
  const stacks = options.stacks ?? 500;
  const depth = options.depth ?? 16;
  const dir = mkdtempSync(join(tmpdir(), 'fuchsia-sampler-load-'));
  // Default: build every profile but do not encode it (measures the collector, not an encoder).
  const write = options.writeProfile ?? (async () => undefined);
  try {
    const col = await startCollector({
      listen: options.unix ? `unix:${join(dir, 'collector.sock')}` : '127.0.0.1:0',
      outDir: join(dir, 'out'),
      writeProfile: write,
      maxConnections: clients,
      maxClients: clients,
      partialThreshold: options.partialThreshold,
      timeoutMs: options.timeoutMs ?? 120_000,
    });
    const t0 = process.hrtime.bigint();
    const cpu0 = process.cpuUsage();
    await Promise.all(
      Array.from({ length: clients }, async (_, ci) => {
        const via = options.transport === 'socket' ? 'socket' : 'channel';
        const c = await connectSampler(col.address, { generation: options.transport === 1 ? 1 : 2 });
        await c.send({
          method: 'SetProcessInfo',
          processName: `load_${ci}`,
          moduleMap: [{ buildId: Uint8Array.from({ length: 20 }, (_, i) => (i * 7 + ci) & 0xff), executableSegments: [{ startAddress: 0x10_0000n, size: 0x10_0000n, relativeAddress: 0x1000n }] }],
        });
        const pool: BigUint64Array[] = [];
        for (let s = 0; s < stacks; s++) pool.push(BigUint64Array.from({ length: depth }, (_, d) => 0x10_0000n + BigInt((s * 131 + d * 17) % 0x10_0000)));
        let sent = 0;
        let next = 0;
        let oldest = 0;
        while (sent < perClient) {
          let call: SamplerCall;
          if (next - oldest >= liveSet || (next > oldest && (sent & 3) === 3)) {
            call = { method: 'RecordDeallocation', address: BigInt(0x1000_0000 + oldest * 16), stackTrace: { stackFrames: pool[(oldest * 7) % stacks]! } };
            oldest++;
          } else {
            call = { method: 'RecordAllocation', address: BigInt(0x1000_0000 + next * 16), stackTrace: { stackFrames: pool[next % stacks]! }, size: BigInt(16 + ((next * 37) % 4096)) };
            next++;
          }
          await c.send(call, via);
          sent++;
        }
        await c.close();
      }),
    );
    const summary = await col.done;
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const events = summary.events - clients * (options.transport === 'socket' ? 2 : 1); // minus SetProcessInfo (and SetSharedSocket)
    return {
      clients,
      events,
      seconds,
      eventsPerSecond: events / seconds,
      cpuSeconds,
      eventsPerCpuSecond: events / cpuSeconds,
      peakRssMiB: process.resourceUsage().maxRSS / 1024,
      profiles: summary.files.length,
      summary,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
