import { describe, expect, it } from 'vitest';
import { isProfkitError } from '@profkit/core/node';
import { seededRandom } from '@profkit/test-utils';
import { callsToRecording, decodeChannelMessage, decodeDatagram, encodeChannelMessage, encodeDatagram, fastPathStats, replayRecording, type SamplerCall } from '../src/node.js';

const rng = seededRandom;

const calls: SamplerCall[] = [
  { method: 'SetProcessInfo', processName: 'fuzz', moduleMap: [{ buildId: Uint8Array.of(1, 2, 3), executableSegments: [{ startAddress: 0x1000n, size: 0x100n, relativeAddress: 0n }, { startAddress: 0x3000n, size: 0x100n, relativeAddress: 0x2000n }] }] },
  { method: 'RecordAllocation', address: 0x10n, stackTrace: { stackFrames: BigUint64Array.of(0x1010n, 0x1020n, 0x3030n) }, size: 64n },
  { method: 'RecordAllocation', address: 0x20n, stackTrace: { stackFrames: BigUint64Array.of(0x1010n) }, size: 1n << 40n },
  { method: 'RecordDeallocation', address: 0x10n, stackTrace: { stackFrames: BigUint64Array.of(0x3040n) } },
  { method: 'SetSharedSocket' },
];

function mutate(b: Uint8Array, r: () => number): Uint8Array {
  const c = b.slice();
  const n = 1 + Math.floor(r() * 4);
  for (let k = 0; k < n; k++) {
    const at = Math.floor(r() * c.length);
    const kind = r();
    if (kind < 0.5) c[at] = Math.floor(r() * 256);
    else if (kind < 0.7) c[at] = c[at]! ^ (1 << Math.floor(r() * 8));
    else if (kind < 0.85) c[at] = [0, 0xff, 1, 8, 0x80][Math.floor(r() * 5)]!;
    else return c.subarray(0, at); // truncate
  }
  return c;
}

describe('mutated input never crashes: typed errors or a valid result', () => {
  it('channel messages and datagrams (4000 mutations)', () => {
    const r = rng(42);
    const msgs = [
      ...calls.map((c) => encodeChannelMessage(c, { generation: c.method === 'SetSharedSocket' ? 3 : 2 })),
      ...calls.filter((c) => c.method !== 'SetSharedSocket').map((c) => encodeChannelMessage(c, { generation: 1 })),
    ];
    const dgs = calls.filter((c) => c.method.startsWith('Record')).map((c) => encodeDatagram(c));
    let errors = 0;
    for (let i = 0; i < 4000; i++) {
      const useDg = i % 3 === 0;
      const src = useDg ? dgs[i % dgs.length]! : msgs[i % msgs.length]!;
      const m = mutate(src, r);
      try {
        if (useDg) decodeDatagram(m);
        else decodeChannelMessage(m);
      } catch (e) {
        if (!isProfkitError(e)) throw new Error(`non-typed error on mutation ${i}: ${String(e)}`);
        expect(e.code).toMatch(/^PROFKIT_E_/);
        expect(e.detail.offset).toBeTypeOf('number');
        errors++;
      }
    }
    expect(errors).toBeGreaterThan(1000);
  });
  it('whole recordings (1500 mutations, binary and datagram forms)', () => {
    const r = rng(7);
    const recs = [callsToRecording(calls), callsToRecording(calls, { generation: 1 }), callsToRecording(calls, { datagrams: true })];
    for (let i = 0; i < 1500; i++) {
      const m = mutate(recs[i % recs.length]!, r);
      try {
        const res = replayRecording(m, { format: 'fuchsia-sampler' });
        expect(res.profiles.length).toBeGreaterThan(0);
      } catch (e) {
        if (!isProfkitError(e)) throw new Error(`non-typed error on mutation ${i}: ${String(e)}`);
      }
    }
  });

  it('the fast path for Record* messages gives exactly the generic decoder\'s results (6000 cases)', () => {
    const r = rng(99);
    const outcome = (f: () => unknown) => {
      try {
        return { ok: f() };
      } catch (e) {
        if (!isProfkitError(e)) throw e;
        return { code: e.code, offset: e.detail.offset, message: e.message };
      }
    };
    let valid = 0;
    const hits0 = fastPathStats.hits;
    for (let i = 0; i < 6000; i++) {
      const n = Math.floor(r() * 6);
      const frames = BigUint64Array.from({ length: n }, () => BigInt(Math.floor(r() * 2 ** 48)) * 65536n + BigInt(Math.floor(r() * 65536)));
      const call: SamplerCall =
        r() < 0.5
          ? { method: 'RecordAllocation', address: BigInt(Math.floor(r() * 2 ** 52)), stackTrace: { stackFrames: frames }, size: BigInt(Math.floor(r() * 2 ** 40)) }
          : { method: 'RecordDeallocation', address: BigInt(Math.floor(r() * 2 ** 52)), stackTrace: { stackFrames: frames } };
      const kind = i % 3;
      let bytes = kind === 2 ? encodeDatagram(call) : encodeChannelMessage(call, { generation: kind === 0 ? 1 : 2 });
      if (i % 2 === 1) bytes = mutate(bytes, r);
      const decode = (fast: boolean) => (kind === 2 ? decodeDatagram(bytes, { fast }) : decodeChannelMessage(bytes, { fast }));
      const a = outcome(() => decode(true));
      const b = outcome(() => decode(false));
      expect(a).toEqual(b);
      if (i % 2 === 0) {
        expect(a.ok).toBeDefined();
        valid++;
      }
    }
    expect(valid).toBe(3000);
    // Every unmutated (canonical) message went through the fast path.
    expect(fastPathStats.hits - hits0).toBeGreaterThanOrEqual(3000);
  });
});
