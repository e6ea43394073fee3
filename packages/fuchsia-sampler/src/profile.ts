/**
 * Profiles out of a `Sampler`: the six sample types of Fuchsia's memory_sampler, mappings with
 * lowercase-hex build ids (one per executable segment), locations by address and mapping, raw
 * or Poisson-unsampled values, deterministic sample order, and extension facts.
 */

import { ProfileBuilder, type FactValue, type Profile } from '@profkit/core';
import { buildIdHex } from './fidl/protocol.js';
import type { Aggregate, Sampler, Stack } from './sampler.js';

export const ADAPTER_NAME = 'fuchsia-sampler';

/** The six sample types, in upstream's order. */
export const SAMPLE_TYPES = [
  { type: 'residual_allocated_objects', unit: 'count' },
  { type: 'residual_allocated_space', unit: 'bytes' },
  { type: 'allocated_objects', unit: 'count' },
  { type: 'allocated_space', unit: 'bytes' },
  { type: 'deallocated_objects', unit: 'count' },
  { type: 'deallocated_space', unit: 'bytes' },
] as const;
/** Extra types appended with `peak: true`. */
export const PEAK_SAMPLE_TYPES = [
  { type: 'peak_allocated_objects', unit: 'count' },
  { type: 'peak_allocated_space', unit: 'bytes' },
] as const;

export interface ProfileOptions {
  /** Apply the Poisson weight (default true, as newer upstream); false = raw sampled values (older upstream). */
  unsample?: boolean;
  /** `final` (on disconnect) or `partial`. Only recorded in the extension facts. */
  kind?: 'final' | 'partial';
  /** Also emit the live set at the peak as two extra sample types. */
  peak?: boolean;
}

/** Rounds half away from zero (Rust's `f64::round`), to a bigint. */
export function roundHalfAway(x: number): bigint {
  const r = Math.sign(x) * Math.floor(Math.abs(x) + 0.5);
  return BigInt(r);
}

interface Segment {
  start: bigint;
  limit: bigint;
  id: number;
}

function compareFrames(a: BigUint64Array, b: BigUint64Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  }
  return a.length - b.length;
}

/** Builds the profile of the sampler's current state (does not reset anything). */
export function buildProfile(s: Sampler, options: ProfileOptions = {}): Profile {
  const unsample = options.unsample ?? true;
  const types = options.peak ? [...SAMPLE_TYPES, ...PEAK_SAMPLE_TYPES] : [...SAMPLE_TYPES];
  const comments = unsample
    ? [`fuchsia-sampler: values unsampled with the Poisson weight 1/(1-exp(-size/${s.rate}))`]
    : ['fuchsia-sampler: raw sampled values (not unsampled)'];
  // Facts that must survive formats without extensions (pprof keeps comments).
  comments.push(`fuchsia-sampler: process ${JSON.stringify(s.processName)}`);
  const b = new ProfileBuilder({
    sampleTypes: types,
    facts: {
      period_type: { type: 'space', unit: 'bytes' },
      period: 1n,
      default_sample_type: 'residual_allocated_space',
      comments,
    },
  });

  // Mappings: one per complete executable segment, modules in order, identical ones de-duplicated.
  const segments: Segment[] = [];
  let incomplete = 0;
  for (const m of s.moduleMaps) {
    const buildId = buildIdHex(m.buildId);
    for (const seg of m.executableSegments ?? []) {
      if (seg.startAddress === undefined || seg.size === undefined || seg.relativeAddress === undefined) {
        incomplete++;
        continue;
      }
      const limit = (seg.startAddress + seg.size) & 0xffff_ffff_ffff_ffffn;
      const id = b.internMapping({ memoryStart: seg.startAddress, memoryLimit: limit, fileOffset: seg.relativeAddress, buildId });
      segments.push({ start: seg.startAddress, limit, id });
    }
  }
  // Upstream lookup: ordered by limit, the first limit > address, used when start <= address;
  // a later segment with the same limit replaces an earlier one.
  const byLimit = new Map<bigint, Segment>();
  for (const seg of segments) byLimit.set(seg.limit, seg);
  const sorted = [...byLimit.values()].sort((x, y) => (x.limit < y.limit ? -1 : x.limit > y.limit ? 1 : 0));
  const mappingOf = (addr: bigint): number => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]!.limit > addr) hi = mid;
      else lo = mid + 1;
    }
    const seg = sorted[lo];
    return seg && seg.start <= addr ? seg.id : 0;
  };

  const locOf = new Map<bigint, number>();
  let outside = 0;
  let zero = 0;
  const idsByStack = new Map<Stack, number[]>();
  const stackIds = (stack: Stack): number[] => {
    const cached = idsByStack.get(stack);
    if (cached) return cached;
    const frames = stack.frames;
    const ids = new Array<number>(frames.length);
    for (let i = 0; i < frames.length; i++) {
      const addr = frames[i]!;
      let id = locOf.get(addr);
      if (id === undefined) {
        const mappingId = mappingOf(addr);
        if (mappingId === 0) outside++;
        if (addr === 0n) zero++;
        id = b.addLocation({ address: addr, mappingId });
        locOf.set(addr, id);
      }
      ids[i] = id;
    }
    idsByStack.set(stack, ids);
    return ids;
  };

  const width = types.length;
  const groups: string[] = [];
  const addresses: bigint[] = [];
  const push = (stack: Stack, vals: Map<number, bigint>, group: string, address = 0n) => {
    const v = new Array<bigint>(width).fill(0n);
    for (const [i, x] of vals) v[i] = x;
    b.addSample(stackIds(stack), v);
    groups.push(group);
    addresses.push(address);
  };
  const cnt = (a: Aggregate) => (unsample ? roundHalfAway(a.wCount) : BigInt(a.count));
  const byt = (a: Aggregate) => (unsample ? roundHalfAway(a.wBytes) : a.bytes);
  // Deterministic order: distinct stacks sorted once by their frames, then ranked.
  const distinct = new Set<Stack>();
  for (const a of s.live.values()) distinct.add(a.stack);
  for (const a of s.dead.keys()) distinct.add(a);
  for (const a of s.deallocations.keys()) distinct.add(a);
  const peakSet = options.peak ? s.peakSet() : [];
  for (const a of peakSet) distinct.add(a.stack);
  const rank = new Map<Stack, number>();
  [...distinct].sort((x, y) => compareFrames(x.frames, y.frames)).forEach((st, i) => rank.set(st, i));
  const byStack = (x: Aggregate, y: Aggregate) => rank.get(x.stack)! - rank.get(y.stack)!;

  // 1. Live allocations, one sample each, sorted by stack then address.
  const live = [...s.live.entries()].sort((x, y) => rank.get(x[1].stack)! - rank.get(y[1].stack)! || (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  for (const [addr, a] of live) {
    const c = unsample ? roundHalfAway(a.weight) : 1n;
    const sz = unsample ? roundHalfAway(Number(a.size) * a.weight) : a.size;
    push(a.stack, new Map([[0, c], [1, sz], [2, c], [3, sz]]), 'live', addr);
  }
  // 2. Dead allocations by allocation stack.
  for (const a of [...s.dead.values()].sort(byStack)) push(a.stack, new Map([[2, cnt(a)], [3, byt(a)]]), 'dead');
  // 3. Deallocations by deallocation stack.
  for (const a of [...s.deallocations.values()].sort(byStack)) push(a.stack, new Map([[4, cnt(a)], [5, byt(a)]]), 'deallocated');
  // 4. Optional: the live set at the peak, by allocation stack.
  if (options.peak) {
    for (const a of peakSet.sort(byStack)) push(a.stack, new Map([[6, cnt(a)], [7, byt(a)]]), 'peak');
  }

  const ext = b.extension(ADAPTER_NAME);
  const facts: Record<string, FactValue> = {
    process_name: s.processName,
    profile_kind: options.kind ?? 'final',
    iteration: s.events,
    unsampled: unsample,
    sampling_rate: s.rate,
    events: s.events,
    live_allocations: s.live.size,
    total_allocations: s.totals.allocations,
    total_deallocations: s.totals.deallocations,
    total_allocated_bytes: s.totals.allocatedBytes,
    total_deallocated_bytes: s.totals.deallocatedBytes,
    peak_event_index: s.peak.eventIndex,
    peak_live_bytes: unsample ? roundHalfAway(s.peak.bytes) : BigInt(Math.round(s.peak.bytes)),
    peak_live_objects: s.peak.objects,
    unknown_deallocations: s.anomalies.unknownDeallocations,
    reallocations_at_live_address: s.anomalies.reallocationsAtLiveAddress,
    missing_field_records: s.anomalies.missingFieldRecords,
    unknown_methods: s.anomalies.unknownMethods,
    dropped_datagrams: s.anomalies.droppedDatagrams,
    ignored_over_limit: s.anomalies.ignoredOverLimit,
    recording_disabled: s.recordingDisabled,
    incomplete_segments: incomplete,
    frames_outside_mappings: outside,
    zero_frame_addresses: zero,
    build_ids: s.buildIds(),
  };
  ext.facts = facts;
  const profile = b.build();
  const n = groups.length;
  const addrCol = new BigUint64Array(n);
  for (let i = 0; i < n; i++) addrCol[i] = addresses[i]!;
  profile['.extensions'][ADAPTER_NAME] = { ...profile['.extensions'][ADAPTER_NAME], samples: { group: groups, address: addrCol } };
  return profile;
}
