import { describe, expect, it } from 'vitest';
import { assertValid, mappingRows, locationRows, sampleRows, type Profile } from '@profkit/core/node';
import {
  buildProfile,
  callsToJsonl,
  callsToRecording,
  poissonWeight,
  replayRecording,
  roundHalfAway,
  Sampler,
  FuchsiaErrorCodes as C,
  type SamplerCall,
} from '../src/node.js';
import { expectError } from './helpers.js';

const st = (...f: number[]) => ({ stackFrames: BigUint64Array.from(f.map(BigInt)) });
const modules = [
  { buildId: Uint8Array.of(1, 2, 3, 4), executableSegments: [{ startAddress: 2000n, size: 1000n, relativeAddress: 0n }, { startAddress: 4000n, size: 2000n, relativeAddress: 2000n }] },
  { buildId: Uint8Array.of(3, 4, 5, 6), executableSegments: [{ startAddress: 3000n, size: 100n, relativeAddress: 1000n }] },
];
/** The upstream end-to-end example (spec §2.11). */
const example: SamplerCall[] = [
  { method: 'SetProcessInfo', processName: 'test process', moduleMap: modules },
  { method: 'RecordAllocation', address: 0x100n, stackTrace: st(1000, 1500), size: 100n },
  { method: 'RecordAllocation', address: 0x200n, stackTrace: st(1000, 1500), size: 1000n },
  { method: 'RecordDeallocation', address: 0x100n, stackTrace: st(3000, 3001) },
];

/** Samples in meaning: stack of addresses, values. */
function samplesOf(p: Profile): { stack: bigint[]; values: bigint[] }[] {
  const addr = new Map<number, bigint>();
  for (const l of locationRows(p)) addr.set(l.locationId, l.address);
  return [...sampleRows(p)].map((s) => ({ stack: s.locationIds.map((id) => addr.get(id)!), values: s.values }));
}
function locationsOf(p: Profile): { address: bigint; mapping: string }[] {
  const maps = new Map<number, string>();
  for (const m of mappingRows(p)) maps.set(m.mappingId, `${m.memoryStart}-${m.memoryLimit}@${m.fileOffset}:${m.buildId}`);
  return [...locationRows(p)].map((l) => ({ address: l.address, mapping: maps.get(l.mappingId) ?? 'none' })).sort((a, b) => (a.address < b.address ? -1 : 1));
}

function run(calls: SamplerCall[], unsample: boolean): Profile {
  const bytes = callsToRecording(calls);
  const r = replayRecording(bytes, { unsample, file: 'example.fsrec' });
  expect(r.profiles.length).toBe(1);
  assertValid(r.profiles[0]!.profile, 'example.fsrec');
  return r.profiles[0]!.profile;
}

describe('the upstream end-to-end example (spec §2.11)', () => {
  for (const unsample of [false, true]) {
    it(`reproduces the ${unsample ? 'newer (weighted)' : 'old (raw)'} server's numbers`, () => {
      const p = run(example, unsample);
      expect(p['.extensions']['fuchsia-sampler']!.facts!.process_name).toBe('test process');
      expect([...mappingRows(p)].map((m) => [m.memoryStart, m.memoryLimit, m.fileOffset, m.buildId])).toEqual([
        [2000n, 3000n, 0n, '01020304'],
        [4000n, 6000n, 2000n, '01020304'],
        [3000n, 3100n, 1000n, '03040506'],
      ]);
      expect(locationsOf(p)).toEqual([
        { address: 1000n, mapping: 'none' },
        { address: 1500n, mapping: 'none' },
        { address: 3000n, mapping: '3000-3100@1000:03040506' },
        { address: 3001n, mapping: '3000-3100@1000:03040506' },
      ]);
      const expected = unsample
        ? [
            { stack: [1000n, 1500n], values: [132n, 131573n, 132n, 131573n, 0n, 0n] },
            { stack: [1000n, 1500n], values: [0n, 0n, 1311n, 131122n, 0n, 0n] },
            { stack: [3000n, 3001n], values: [0n, 0n, 0n, 0n, 1311n, 131122n] },
          ]
        : [
            { stack: [1000n, 1500n], values: [1n, 1000n, 1n, 1000n, 0n, 0n] },
            { stack: [1000n, 1500n], values: [0n, 0n, 1n, 100n, 0n, 0n] },
            { stack: [3000n, 3001n], values: [0n, 0n, 0n, 0n, 1n, 100n] },
          ];
      expect(samplesOf(p)).toEqual(expected);
      expect(p.sample_types.type).toEqual(['residual_allocated_objects', 'residual_allocated_space', 'allocated_objects', 'allocated_space', 'deallocated_objects', 'deallocated_space']);
      expect(p.sample_types.unit).toEqual(['count', 'bytes', 'count', 'bytes', 'count', 'bytes']);
      expect(p['.profile'].period_type).toEqual({ type: 'space', unit: 'bytes' });
      expect(p['.profile'].default_sample_type).toBe('residual_allocated_space');
      expect(p['.extensions']['fuchsia-sampler']!.samples!.group).toEqual(['live', 'dead', 'deallocated']);
    });
  }

  it('gives the same profile from gen-1, gen-2, JSONL and gen-3 datagram recordings', () => {
    const ref = samplesOf(run(example, true));
    for (const g of [1, 2] as const) {
      const p = replayRecording(callsToRecording(example, { generation: g })).profiles[0]!.profile;
      expect(samplesOf(p)).toEqual(ref);
    }
    const viaSocket = replayRecording(callsToRecording(example, { datagrams: true })).profiles[0]!.profile;
    expect(samplesOf(viaSocket)).toEqual(ref);
    const jsonl = new TextEncoder().encode(callsToJsonl(example));
    expect(samplesOf(replayRecording(jsonl).profiles[0]!.profile)).toEqual(ref);
  });
});

describe('other upstream cases (spec §2.11)', () => {
  it('SetProcessInfo twice: the last name wins, module maps accumulate (identical mappings de-duplicated)', () => {
    const s = new Sampler();
    s.apply({ method: 'SetProcessInfo', processName: 'test process', moduleMap: modules });
    s.apply({ method: 'SetProcessInfo', processName: 'other test process', moduleMap: modules });
    expect(s.processName).toBe('other test process');
    expect(s.moduleMaps.length).toBe(4); // accumulated, as upstream
    const p = buildProfile(s);
    expect(p['.mappings'].mapping_id.length).toBe(3); // upstream: 6 duplicates; ours: de-duplicated (documented)
    expect(p.locations.location_id.length).toBe(0);
  });
  it('a deallocation of an unknown address changes nothing but an anomaly counter', () => {
    const s = new Sampler();
    s.apply({ method: 'RecordDeallocation', address: 0x100n, stackTrace: st(3000) });
    const p = buildProfile(s);
    expect(p['.mappings'].mapping_id.length).toBe(0);
    expect(p.locations.location_id.length).toBe(0);
    expect(p.samples.value.length).toBe(0);
    expect(p['.extensions']['fuchsia-sampler']!.facts!.unknown_deallocations).toBe(1);
  });
  it('an allocation only: locations {1000, 1500}, process name ""', () => {
    const s = new Sampler();
    s.apply({ method: 'RecordAllocation', address: 0x100n, stackTrace: st(1000, 1500), size: 10n });
    const p = buildProfile(s);
    expect(locationsOf(p).map((l) => l.address)).toEqual([1000n, 1500n]);
    expect(p['.extensions']['fuchsia-sampler']!.facts!.process_name).toBe('');
  });
  it('gen-3 socket test: datagrams plus SetProcessInfo over the channel', () => {
    const calls: SamplerCall[] = [
      { method: 'SetProcessInfo', processName: 'p', moduleMap: modules },
      { method: 'RecordAllocation', address: 0x100n, stackTrace: st(1000, 1500), size: 200n },
      { method: 'RecordDeallocation', address: 0x100n, stackTrace: st(3000) },
    ];
    const p = replayRecording(callsToRecording(calls, { datagrams: true })).profiles[0]!.profile;
    expect(locationsOf(p).map((l) => l.address)).toEqual([1000n, 1500n, 3000n]);
  });
});

describe('weights and rounding (spec §2.6, §2.7)', () => {
  it('matches the reference weight table for R = 131072', () => {
    const table: [number, number, bigint, bigint][] = [
      [1, 131072.5, 131073n, 131073n],
      [8, 16384.5, 16385n, 131076n],
      [100, 1311.2201, 1311n, 131122n],
      [1000, 131.5726, 132n, 131573n],
      [4096, 32.5026, 33n, 133131n],
      [65536, 2.5415, 3n, 166559n],
      [131072, 1.582, 2n, 207353n],
      [1048576, 1.0003, 1n, 1048928n],
    ];
    for (const [size, w, rw, rs] of table) {
      expect(poissonWeight(size)).toBeCloseTo(w, 3);
      expect(roundHalfAway(poissonWeight(size))).toBe(rw);
      expect(roundHalfAway(size * poissonWeight(size))).toBe(rs);
    }
    expect(poissonWeight(0)).toBe(1);
  });
  it('rounds halves away from zero (upstream unit test values)', () => {
    expect([2.5, 25, 5.4, 20.8, 12.6, 20.2].map(roundHalfAway)).toEqual([3n, 25n, 5n, 21n, 13n, 20n]);
    expect(roundHalfAway(-2.5)).toBe(-3n);
  });
  it('uses a configurable rate', () => {
    const s = new Sampler({ samplingRate: 4096 });
    s.apply({ method: 'RecordAllocation', address: 1n, stackTrace: st(1), size: 4096n });
    const p = buildProfile(s);
    // W = 1/(1-e^-1) = 1.58198 → 2 objects, 6480 bytes.
    expect(p.samples['.values'][0]![0]).toBe(2n);
    expect(p.samples['.values'][1]![0]).toBe(roundHalfAway(4096 / -Math.expm1(-1)));
    expect(p['.extensions']['fuchsia-sampler']!.facts!.sampling_rate).toBe(4096);
  });
});

describe('state machine semantics', () => {
  it('re-allocation at a live address retires the old entry as dead and counts it', () => {
    const s = new Sampler();
    s.apply({ method: 'RecordAllocation', address: 1n, stackTrace: st(10), size: 8n });
    s.apply({ method: 'RecordAllocation', address: 1n, stackTrace: st(20), size: 16n });
    expect(s.anomalies.reallocationsAtLiveAddress).toBe(1);
    const p = buildProfile(s, { unsample: false });
    expect(samplesOf(p)).toEqual([
      { stack: [20n], values: [1n, 16n, 1n, 16n, 0n, 0n] },
      { stack: [10n], values: [0n, 0n, 1n, 8n, 0n, 0n] },
    ]);
  });
  it('aggregates frees under the allocation stack and the free stack, with the allocation size', () => {
    const s = new Sampler();
    for (let i = 0; i < 5; i++) s.apply({ method: 'RecordAllocation', address: BigInt(100 + i), stackTrace: st(1, 2), size: BigInt(10 * (i + 1)) });
    for (let i = 0; i < 5; i++) s.apply({ method: 'RecordDeallocation', address: BigInt(100 + i), stackTrace: st(i % 2 ? 7 : 8) });
    const p = buildProfile(s, { unsample: false });
    expect(samplesOf(p)).toEqual([
      { stack: [1n, 2n], values: [0n, 0n, 5n, 150n, 0n, 0n] },
      { stack: [7n], values: [0n, 0n, 0n, 0n, 2n, 20n + 40n] },
      { stack: [8n], values: [0n, 0n, 0n, 0n, 3n, 10n + 30n + 50n] },
    ]);
  });
  it('sample order is deterministic: by stack, then address', () => {
    const s = new Sampler();
    s.apply({ method: 'RecordAllocation', address: 9n, stackTrace: st(5, 1), size: 1n });
    s.apply({ method: 'RecordAllocation', address: 3n, stackTrace: st(2), size: 1n });
    s.apply({ method: 'RecordAllocation', address: 1n, stackTrace: st(5, 1), size: 1n });
    const p = buildProfile(s);
    const ext = p['.extensions']['fuchsia-sampler']!.samples!;
    expect([...(ext.address as BigUint64Array)]).toEqual([3n, 1n, 9n]);
    expect(samplesOf(p).map((x) => x.stack)).toEqual([[2n], [5n, 1n], [5n, 1n]]);
  });
  it('tracks the peak live heap by replaying events in order', () => {
    const s = new Sampler({ peakWeighted: false });
    s.apply({ method: 'RecordAllocation', address: 1n, stackTrace: st(1), size: 100n });
    s.apply({ method: 'RecordAllocation', address: 2n, stackTrace: st(2), size: 200n }); // peak 300 at event 1
    s.apply({ method: 'RecordDeallocation', address: 1n, stackTrace: st(9) });
    s.apply({ method: 'RecordAllocation', address: 3n, stackTrace: st(3), size: 150n }); // 350: new peak at event 3
    s.apply({ method: 'RecordDeallocation', address: 2n, stackTrace: st(9) });
    s.apply({ method: 'RecordAllocation', address: 4n, stackTrace: st(4), size: 10n }); // 160
    expect(s.peak).toEqual({ eventIndex: 3, bytes: 350, objects: 2 });
    const p = buildProfile(s, { unsample: false, peak: true });
    assertValid(p);
    expect(p.sample_types.type.slice(6)).toEqual(['peak_allocated_objects', 'peak_allocated_space']);
    const peak = samplesOf(p).filter((x) => x.values[6]! > 0n);
    expect(peak).toEqual([
      { stack: [2n], values: [0n, 0n, 0n, 0n, 0n, 0n, 1n, 200n] },
      { stack: [3n], values: [0n, 0n, 0n, 0n, 0n, 0n, 1n, 150n] },
    ]);
    expect(p['.extensions']['fuchsia-sampler']!.facts!.peak_live_bytes).toBe(350n);
    // Through a recording: raw reading measures the peak in raw bytes, unsampled in weighted bytes.
    const calls: SamplerCall[] = [
      { method: 'RecordAllocation', address: 1n, stackTrace: st(1), size: 100n },
      { method: 'RecordAllocation', address: 2n, stackTrace: st(2), size: 200n },
    ];
    const raw = replayRecording(callsToRecording(calls), { unsample: false }).profiles[0]!.profile;
    expect(raw['.extensions']['fuchsia-sampler']!.facts!.peak_live_bytes).toBe(300n);
    const weighted = replayRecording(callsToRecording(calls)).profiles[0]!.profile;
    expect(weighted['.extensions']['fuchsia-sampler']!.facts!.peak_live_bytes).toBe(roundHalfAway(100 * poissonWeight(100) + 200 * poissonWeight(200)));
  });
  it('tolerates frames outside every mapping and zero frame addresses (dense ids keep the profile valid)', () => {
    const s = new Sampler();
    s.apply({ method: 'SetProcessInfo', moduleMap: modules });
    s.apply({ method: 'RecordAllocation', address: 1n, stackTrace: st(0, 2500, 99999), size: 1n });
    const p = buildProfile(s);
    const f = p['.extensions']['fuchsia-sampler']!.facts!;
    expect(f.zero_frame_addresses).toBe(1);
    expect(f.frames_outside_mappings).toBe(2);
    expect([...p.locations.location_id].every((id) => id > 0)).toBe(true);
    assertValid(p);
  });
  it('skips incomplete segments and counts them', () => {
    const s = new Sampler();
    s.apply({ method: 'SetProcessInfo', moduleMap: [{ buildId: Uint8Array.of(0xab), executableSegments: [{ startAddress: 1n, size: 2n }, { startAddress: 10n, size: 5n, relativeAddress: 0n }] }] });
    const p = buildProfile(s);
    expect([...mappingRows(p)].map((m) => [m.memoryStart, m.memoryLimit, m.buildId])).toEqual([[10n, 15n, 'ab']]);
    expect(p['.extensions']['fuchsia-sampler']!.facts!.incomplete_segments).toBe(1);
  });
  it('missing required fields: typed error from the state machine; skipped with a warning when reading files', () => {
    const s = new Sampler();
    expectError(() => s.apply({ method: 'RecordAllocation', address: 1n, stackTrace: st(1) }), C.MISSING_FIELD);
    expectError(() => s.apply({ method: 'RecordAllocation', address: 1n, stackTrace: {}, size: 1n }), C.MISSING_FIELD);
    expectError(() => s.apply({ method: 'RecordAllocation', stackTrace: st(1), size: 1n }), C.MISSING_FIELD);
    expectError(() => s.apply({ method: 'RecordDeallocation', address: 1n }), C.MISSING_FIELD);
    const bytes = callsToRecording([
      { method: 'RecordAllocation', address: 1n, stackTrace: st(1), size: 5n },
      { method: 'RecordAllocation', address: 2n, stackTrace: st(1) },
    ]);
    const r = replayRecording(bytes, { file: 'm.fsrec' });
    expect(r.warnings.map((w) => w.code)).toEqual([C.MISSING_FIELD]);
    expect(r.warnings[0]!.detail!.offset).toBeGreaterThan(16);
    expect(r.profiles[0]!.profile.samples.value.length).toBe(1);
    expectError(() => replayRecording(bytes, { file: 'm.fsrec', missingField: 'fatal' }), C.MISSING_FIELD);
  });
  it('FIDL bounds hold for calls made through the library API too', () => {
    const s = new Sampler();
    expectError(() => s.apply({ method: 'SetProcessInfo', processName: 'é'.repeat(17) }), C.BOUNDS);
    expectError(() => s.apply({ method: 'SetProcessInfo', moduleMap: [{ buildId: new Uint8Array(21) }] }), C.BOUNDS);
    s.apply({ method: 'SetProcessInfo', processName: 'é'.repeat(16) });
    expect(s.processName).toBe('é'.repeat(16));
  });
  it('bounded memory: past maxLiveAllocations events are counted and ignored', () => {
    const s = new Sampler({ maxLiveAllocations: 10 });
    for (let i = 0; i < 50; i++) s.apply({ method: 'RecordAllocation', address: BigInt(i + 1), stackTrace: st(i), size: 1n });
    expect(s.live.size).toBe(10);
    expect(s.recordingDisabled).toBe(true);
    expect(s.anomalies.ignoredOverLimit).toBe(40);
    expect(s.events).toBe(50);
  });
});

describe('partial and final profiles (spec §2.8)', () => {
  it('partials hold all live allocations plus the period\'s freed aggregates; each freed allocation appears once', () => {
    const calls: SamplerCall[] = [{ method: 'SetProcessInfo', processName: 'proc' }];
    // 3 distinct stacks freed → with threshold 2 (dead + dealloc stacks), partials fire.
    calls.push({ method: 'RecordAllocation', address: 1n, stackTrace: st(1), size: 10n });
    calls.push({ method: 'RecordAllocation', address: 2n, stackTrace: st(2), size: 20n });
    calls.push({ method: 'RecordDeallocation', address: 2n, stackTrace: st(22) }); // dead {2}, dealloc {22} → 2 → partial
    calls.push({ method: 'RecordAllocation', address: 3n, stackTrace: st(3), size: 30n });
    calls.push({ method: 'RecordDeallocation', address: 3n, stackTrace: st(33) }); // → partial
    calls.push({ method: 'RecordAllocation', address: 4n, stackTrace: st(4), size: 40n });
    const r = replayRecording(callsToRecording(calls), { unsample: false, partialThreshold: 2 });
    expect(r.profiles.map((p) => [p.kind, p.iteration])).toEqual([
      ['partial', 4],
      ['partial', 6],
      ['final', 7],
    ]);
    for (const x of r.profiles) assertValid(x.profile);
    const [p1, p2, fin] = r.profiles.map((x) => samplesOf(x.profile));
    expect(p1).toEqual([
      { stack: [1n], values: [1n, 10n, 1n, 10n, 0n, 0n] },
      { stack: [2n], values: [0n, 0n, 1n, 20n, 0n, 0n] },
      { stack: [22n], values: [0n, 0n, 0n, 0n, 1n, 20n] },
    ]);
    expect(p2).toEqual([
      { stack: [1n], values: [1n, 10n, 1n, 10n, 0n, 0n] },
      { stack: [3n], values: [0n, 0n, 1n, 30n, 0n, 0n] },
      { stack: [33n], values: [0n, 0n, 0n, 0n, 1n, 30n] },
    ]);
    expect(fin).toEqual([
      { stack: [1n], values: [1n, 10n, 1n, 10n, 0n, 0n] },
      { stack: [4n], values: [1n, 40n, 1n, 40n, 0n, 0n] },
    ]);
    // Unreferenced stacks were pruned from the final profile's locations.
    expect(locationsOf(r.profiles[2]!.profile).map((l) => l.address)).toEqual([1n, 4n]);
    expect(r.profiles[0]!.profile['.extensions']['fuchsia-sampler']!.facts!.profile_kind).toBe('partial');
  });
});
