/**
 * The `Sampler` state machine: what Fuchsia's memory_sampler `ProfileBuilder` keeps for one
 * connection (one instrumented process), with the deliberate differences documented in
 * docs/formats/fuchsia-sampler.md:
 *
 * - live allocations by address; a re-allocation at a live address retires the old entry as dead
 *   (under its allocation stack) and is counted, instead of being silently overwritten;
 * - freed allocations aggregated under their allocation stack (`dead`) and their free stack
 *   (`deallocations`), using the allocation's size (a free carries none);
 * - frees of unknown addresses ignored and counted;
 * - the peak of the live heap tracked by replaying events in order, cheaply: the live set at the
 *   peak is the current live entries allocated before the peak plus an aggregate, per stack, of
 *   those freed since (reset at every new peak);
 * - both raw (+1, +size) and unsampled (Poisson weight) accumulators, so one replay can emit
 *   either kind of profile.
 */

import { StringKeyedMap, latin1String, utf8Length } from '@profkit/core';
import { fuchsiaError, FuchsiaErrorCodes as C } from './errors.js';
import { buildIdHex, BUILD_ID_BYTES, MAX_NAME_LEN, type ModuleMap, type SamplerCall } from './fidl/protocol.js';

/** Fuchsia's `DEFAULT_SAMPLING_RATE_BYTES` / the client's `kSamplingIntervalBytes` (128 KiB). */
export const DEFAULT_SAMPLING_RATE = 131072;
/** Newer upstream partial-profile trigger: distinct dead + deallocation stacks. */
export const RECLAIMABLE_STACK_TRACES_PROFILE_THRESHOLD = 1000;
/** Newer upstream time trigger between partial profiles (12 h), for live collection. */
export const MAX_DURATION_BETWEEN_PARTIAL_PROFILES_MS = 12 * 3600 * 1000;

/** Poisson unsampling weight `1 / (1 − e^(−size/R))` (1 for size 0), computed with expm1. */
export function poissonWeight(size: bigint | number, rate: number = DEFAULT_SAMPLING_RATE): number {
  const s = Number(size);
  if (s === 0) return 1;
  return 1 / -Math.expm1(-s / rate);
}

export interface Stack {
  id: number;
  frames: BigUint64Array;
  /** Live allocations + dead/deallocation entries referring to this stack. */
  refs: number;
}

export interface LiveAllocation {
  size: bigint;
  weight: number;
  stack: Stack;
  /** Event index of the allocation (0-based). */
  index: number;
}

/** An aggregate: raw count and bytes (exact), and weighted count and bytes (floats). */
export interface Aggregate {
  stack: Stack;
  count: number;
  bytes: bigint;
  wCount: number;
  wBytes: number;
}

export interface AnomalyCounters {
  /** Deallocations of addresses that are not live (ignored, as upstream). */
  unknownDeallocations: number;
  /** Allocations at an address that was already live (the old entry is retired as dead). */
  reallocationsAtLiveAddress: number;
  /** Records skipped because a required field was absent (offline reading only). */
  missingFieldRecords: number;
  /** Flexible methods with unknown ordinals (ignored, as upstream). */
  unknownMethods: number;
  /** Datagrams with unknown union variants or that failed to decode (ignored, as upstream). */
  droppedDatagrams: number;
  /** Events consumed but ignored because the connection exceeded its memory bounds. */
  ignoredOverLimit: number;
  /** Executable segments lacking start, size or relative address (skipped in mappings). */
  incompleteSegments: number;
}

export interface SamplerOptions {
  /** Poisson sampling rate R in bytes for the unsampled values and the peak. Default 131072. */
  samplingRate?: number;
  /** Track the peak in weighted (estimated) bytes (true, default) or raw sampled bytes. */
  peakWeighted?: boolean;
  /** Memory bounds: once exceeded, later events are counted and ignored (upstream disables recording). */
  maxLiveAllocations?: number;
  maxStacks?: number;
  maxFrames?: number;
  maxModuleSegments?: number;
}

export interface PeakInfo {
  /** Event index (0-based) at which the live heap was largest; -1 = never grew. */
  eventIndex: number;
  /** Live bytes at the peak (weighted or raw, per `peakWeighted`). */
  bytes: number;
  /** Live objects at the peak (raw count). */
  objects: number;
}

const EMPTY_FRAMES = new BigUint64Array(0);

export class Sampler {
  processName = '';
  readonly moduleMaps: ModuleMap[] = [];
  readonly live = new Map<bigint, LiveAllocation>();
  dead = new Map<Stack, Aggregate>();
  deallocations = new Map<Stack, Aggregate>();
  /**
   * Interned stacks by key (8 latin1 characters a frame): through StringKeyedMap, as a stack of
   * more than 2,047 frames is a key longer than V8 hashes (a Map hashes it by its length alone).
   */
  private readonly stacks = new StringKeyedMap<Stack>();
  private nextStackId = 1;
  private frameCount = 0;
  private segmentCount = 0;
  /** Events processed (including ignored ones), the upstream "iteration". */
  events = 0;
  /** True once a memory bound was exceeded: later events are ignored (upstream disables recording). */
  recordingDisabled = false;
  readonly anomalies: AnomalyCounters = {
    unknownDeallocations: 0,
    reallocationsAtLiveAddress: 0,
    missingFieldRecords: 0,
    unknownMethods: 0,
    droppedDatagrams: 0,
    ignoredOverLimit: 0,
    incompleteSegments: 0,
  };
  readonly rate: number;
  private readonly peakWeighted: boolean;
  private readonly limits: Required<Pick<SamplerOptions, 'maxLiveAllocations' | 'maxStacks' | 'maxFrames' | 'maxModuleSegments'>>;
  private liveBytes = 0;
  private liveObjects = 0;
  readonly peak: PeakInfo = { eventIndex: -1, bytes: 0, objects: 0 };
  /** Allocations live at the peak and freed since, aggregated by allocation stack. */
  private peakFreed = new Map<Stack, Aggregate>();
  /** Totals over the whole connection (not reset by partial profiles). */
  readonly totals = { allocations: 0, deallocations: 0, allocatedBytes: 0n, deallocatedBytes: 0n };

  constructor(options: SamplerOptions = {}) {
    this.rate = options.samplingRate ?? DEFAULT_SAMPLING_RATE;
    if (!(this.rate > 0) || !Number.isFinite(this.rate)) throw new RangeError(`sampling rate must be a positive number, got ${this.rate}`);
    this.peakWeighted = options.peakWeighted ?? true;
    this.limits = {
      maxLiveAllocations: options.maxLiveAllocations ?? Number.MAX_SAFE_INTEGER,
      maxStacks: options.maxStacks ?? Number.MAX_SAFE_INTEGER,
      maxFrames: options.maxFrames ?? Number.MAX_SAFE_INTEGER,
      maxModuleSegments: options.maxModuleSegments ?? Number.MAX_SAFE_INTEGER,
    };
  }

  /**
   * Applies one protocol call. A missing required field (address, stack_trace, stack_frames,
   * size) throws `PROFKIT_E_FUCHSIA_MISSING_FIELD` after counting the event; callers decide
   * whether that ends the connection (upstream, the live collector) or skips the record (files).
   */
  apply(call: SamplerCall): void {
    const index = this.events++;
    if (this.recordingDisabled && call.method !== 'SetSharedSocket') {
      this.anomalies.ignoredOverLimit++;
      return;
    }
    switch (call.method) {
      case 'RecordAllocation': {
        const frames = call.stackTrace?.stackFrames;
        if (call.address === undefined || frames === undefined || call.size === undefined) {
          this.anomalies.missingFieldRecords++;
          throw fuchsiaError(C.MISSING_FIELD, `RecordAllocation lacks required field ${call.address === undefined ? 'address' : call.stackTrace === undefined ? 'stack_trace' : frames === undefined ? 'stack_trace.stack_frames' : 'size'}`, {
            rule: 'address, stack_trace.stack_frames and size are required',
            event: index,
          });
        }
        this.allocate(call.address, frames, call.size, index);
        return;
      }
      case 'RecordDeallocation': {
        const frames = call.stackTrace?.stackFrames;
        if (call.address === undefined || frames === undefined) {
          this.anomalies.missingFieldRecords++;
          throw fuchsiaError(C.MISSING_FIELD, `RecordDeallocation lacks required field ${call.address === undefined ? 'address' : call.stackTrace === undefined ? 'stack_trace' : 'stack_trace.stack_frames'}`, {
            rule: 'address and stack_trace.stack_frames are required',
            event: index,
          });
        }
        this.deallocate(call.address, frames);
        return;
      }
      case 'SetProcessInfo':
        this.setProcessInfo(call.processName, call.moduleMap);
        return;
      case 'SetSharedSocket':
        return;
    }
  }

  /** Counts an event that carried nothing to apply (unknown flexible method, dropped datagram). */
  skip(kind: 'unknownMethods' | 'droppedDatagrams'): void {
    this.events++;
    this.anomalies[kind]++;
  }

  setProcessInfo(name: string | undefined, moduleMap: ModuleMap[] | undefined): void {
    if (name !== undefined) {
      if (utf8Length(name) > MAX_NAME_LEN) throw fuchsiaError(C.BOUNDS, `process name longer than ${MAX_NAME_LEN} bytes`, { rule: `process_name is string:${MAX_NAME_LEN}` });
      this.processName = name;
    }
    for (const m of moduleMap ?? []) {
      if (m.buildId && m.buildId.length > BUILD_ID_BYTES) throw fuchsiaError(C.BOUNDS, `build id longer than ${BUILD_ID_BYTES} bytes`, { rule: `build_id is vector<uint8>:${BUILD_ID_BYTES}` });
      this.segmentCount += m.executableSegments?.length ?? 0;
      if (this.segmentCount > this.limits.maxModuleSegments) {
        this.disable();
        return;
      }
      this.moduleMaps.push(m);
    }
  }

  allocate(address: bigint, frames: BigUint64Array, size: bigint, index = this.events - 1): void {
    const old = this.live.get(address);
    if (old) {
      this.anomalies.reallocationsAtLiveAddress++;
      this.retire(address, old, undefined);
    } else if (this.live.size >= this.limits.maxLiveAllocations) {
      this.disable();
      return;
    }
    const stack = this.intern(frames);
    if (!stack) return;
    const weight = poissonWeight(size, this.rate);
    stack.refs++;
    this.live.set(address, { size, weight, stack, index });
    this.totals.allocations++;
    this.totals.allocatedBytes += size;
    this.liveObjects++;
    this.liveBytes += this.peakWeighted ? Number(size) * weight : Number(size);
    if (this.liveBytes > this.peak.bytes) {
      this.peak.bytes = this.liveBytes;
      this.peak.objects = this.liveObjects;
      this.peak.eventIndex = index;
      this.releaseAll(this.peakFreed);
      this.peakFreed = new Map();
    }
  }

  deallocate(address: bigint, frames: BigUint64Array): void {
    const a = this.live.get(address);
    if (!a) {
      this.anomalies.unknownDeallocations++;
      return;
    }
    const stack = this.intern(frames);
    if (!stack) return;
    this.retire(address, a, stack);
  }

  /** Moves a live allocation to the dead aggregates (and to `deallocations` under `freeStack`). */
  private retire(address: bigint, a: LiveAllocation, freeStack: Stack | undefined): void {
    this.live.delete(address);
    this.totals.deallocations++;
    this.totals.deallocatedBytes += a.size;
    this.liveObjects--;
    this.liveBytes -= this.peakWeighted ? Number(a.size) * a.weight : Number(a.size);
    if (this.liveObjects === 0) this.liveBytes = 0; // no float drift once the heap is empty
    this.addTo(this.dead, a.stack, a);
    if (freeStack) this.addTo(this.deallocations, freeStack, a);
    if (a.index <= this.peak.eventIndex) this.addTo(this.peakFreed, a.stack, a);
    a.stack.refs--; // the live reference moved into the aggregate (which took its own)
  }

  private addTo(map: Map<Stack, Aggregate>, stack: Stack, a: LiveAllocation): void {
    let agg = map.get(stack);
    if (!agg) {
      agg = { stack, count: 0, bytes: 0n, wCount: 0, wBytes: 0 };
      map.set(stack, agg);
      stack.refs++;
    }
    agg.count++;
    agg.bytes += a.size;
    agg.wCount += a.weight;
    agg.wBytes += Number(a.size) * a.weight;
  }

  private disable(): void {
    this.recordingDisabled = true;
    this.anomalies.ignoredOverLimit++;
  }

  private intern(frames: BigUint64Array): Stack | undefined {
    const key = latin1String(frames);
    let s = this.stacks.get(key);
    if (!s) {
      if (this.stacks.size >= this.limits.maxStacks || this.frameCount + frames.length > this.limits.maxFrames) {
        this.disable();
        return undefined;
      }
      s = { id: this.nextStackId++, frames: frames.length ? frames.slice() : EMPTY_FRAMES, refs: 0 };
      this.stacks.set(key, s);
      this.frameCount += frames.length;
    }
    return s;
  }

  /** Distinct dead + deallocation stacks: upstream's partial-profile trigger. */
  get reclaimableStacks(): number {
    return this.dead.size + this.deallocations.size;
  }

  /** The allocations live at the peak, aggregated by allocation stack. */
  peakSet(): Aggregate[] {
    const out = new Map<Stack, Aggregate>();
    if (this.peak.eventIndex < 0) return [];
    for (const a of this.live.values()) {
      if (a.index > this.peak.eventIndex) continue;
      let agg = out.get(a.stack);
      if (!agg) out.set(a.stack, (agg = { stack: a.stack, count: 0, bytes: 0n, wCount: 0, wBytes: 0 }));
      agg.count++;
      agg.bytes += a.size;
      agg.wCount += a.weight;
      agg.wBytes += Number(a.size) * a.weight;
    }
    for (const f of this.peakFreed.values()) {
      let agg = out.get(f.stack);
      if (!agg) out.set(f.stack, (agg = { stack: f.stack, count: 0, bytes: 0n, wCount: 0, wBytes: 0 }));
      agg.count += f.count;
      agg.bytes += f.bytes;
      agg.wCount += f.wCount;
      agg.wBytes += f.wBytes;
    }
    return [...out.values()];
  }

  /**
   * After a partial profile: clears the dead and deallocation aggregates and prunes stacks no
   * longer referenced (upstream semantics: a freed allocation appears in exactly one profile).
   */
  resetPeriod(): void {
    this.releaseAll(this.dead);
    this.releaseAll(this.deallocations);
    this.dead = new Map();
    this.deallocations = new Map();
    for (const s of this.stacks.values()) {
      if (s.refs <= 0) {
        this.stacks.delete(latin1String(s.frames));
        this.frameCount -= s.frames.length;
      }
    }
  }

  private releaseAll(map: Map<Stack, Aggregate>): void {
    for (const s of map.keys()) s.refs--;
  }

  /** Memory-relevant sizes, for bounded-memory checks and tests. */
  get sizes(): { live: number; stacks: number; frames: number; segments: number } {
    return { live: this.live.size, stacks: this.stacks.size, frames: this.frameCount, segments: this.segmentCount };
  }

  /** Build ids of the module map as lowercase hex, in order (for symbolization by build id). */
  buildIds(): string[] {
    return this.moduleMaps.map((m) => buildIdHex(m.buildId));
  }
}
