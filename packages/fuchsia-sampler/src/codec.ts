/**
 * The adapter's codec: reading recordings (binary and JSONL) into profiles, and writing a
 * profile back to a recording that replays its live allocations.
 */

import {
  ErrorCodes,
  ProfkitError,
  type Profile,
  type ReadInput,
  type ReadOptions,
  type ReadResult,
  type Warning,
  type WriteOptions,
  type WriteResult,
  utf8Length,
} from '@profkit/core';
import { fuchsiaError, FuchsiaErrorCodes as C } from './errors.js';
import { BUILD_ID_BYTES, encodeChannelMessage, encodeDatagram, hexToBytes, MAX_NAME_LEN, type Generation, type ModuleMap, type SamplerCall } from './fidl/protocol.js';
import { ADAPTER_NAME } from './profile.js';
import { DEFAULT_SAMPLING_RATE, poissonWeight } from './sampler.js';
import { callToJsonl, frameRecord, isRecording, parseJsonl, parseJsonlLine, RecordKind, recordingHeader, RecordReader } from './recording.js';
import { Session, type EmittedProfile, type SessionOptions } from './session.js';

export const FORMAT_BINARY = 'fuchsia-sampler';
export const FORMAT_JSONL = 'fuchsia-sampler-jsonl';

export interface ReplayOptions extends SessionOptions {
  format?: typeof FORMAT_BINARY | typeof FORMAT_JSONL;
  maxRecordBytes?: number;
}

export interface ReplayResult {
  /** Partial profiles (in order) followed by the final profile. */
  profiles: EmittedProfile[];
  warnings: Warning[];
  format: string;
}

/** A session that also collects every profile it emits (and passes each to `options.onProfile`). */
function collectingSession(options: ReplayOptions): { profiles: EmittedProfile[]; session: Session } {
  const profiles: EmittedProfile[] = [];
  const userOnProfile = options.onProfile;
  const session = new Session({
    ...options,
    onProfile: (p) => {
      profiles.push(p);
      userOnProfile?.(p);
    },
  });
  return { profiles, session };
}

/**
 * Replays a whole recording (binary or JSONL, detected by the magic) through a session and
 * returns every partial profile and the final one.
 */
export function replayRecording(bytes: Uint8Array, options: ReplayOptions = {}): ReplayResult {
  const { profiles, session } = collectingSession(options);
  const format = options.format ?? (isRecording(bytes) ? FORMAT_BINARY : FORMAT_JSONL);
  if (bytes.length === 0) throw new ProfkitError(ErrorCodes.EMPTY_INPUT, 'empty fuchsia-sampler recording', { file: options.file });
  if (format === FORMAT_BINARY) {
    const reader = new RecordReader(options.file, { maxRecordBytes: options.maxRecordBytes });
    for (const r of reader.push(bytes)) session.handleRecord(r);
    reader.end();
  } else {
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw fuchsiaError(C.JSONL, 'JSONL recording is not valid UTF-8', { file: options.file, rule: 'JSONL is UTF-8' });
    }
    for (const e of parseJsonl(text, options.file)) session.handleJsonl(e);
  }
  session.finish();
  return { profiles, warnings: session.warnings, format };
}

/**
 * The same as `replayRecording`, over a stream of chunks: memory is bounded by one record (or
 * one JSONL line, at most `maxLineBytes`) plus the sampler's state, whatever the file size.
 */
export async function replayRecordingChunks(chunks: AsyncIterable<Uint8Array>, options: ReplayOptions & { maxLineBytes?: number } = {}): Promise<ReplayResult> {
  const { profiles, session } = collectingSession(options);
  const maxLine = options.maxLineBytes ?? 16 * 1024 * 1024;
  let format = options.format;
  let head: Uint8Array = new Uint8Array(0);
  let total = 0;
  const reader = new RecordReader(options.file, { maxRecordBytes: options.maxRecordBytes });
  const td = new TextDecoder('utf-8', { fatal: true });
  let pending = '';
  let line = 0;
  const text = (chunk: Uint8Array, last: boolean) => {
    const searchFrom = pending.length; // `pending` holds no newline: only the new text needs scanning
    try {
      pending += td.decode(chunk, { stream: !last });
    } catch {
      throw fuchsiaError(C.JSONL, 'JSONL recording is not valid UTF-8', { file: options.file, line: line + 1, rule: 'JSONL is UTF-8' });
    }
    let nl: number;
    let start = 0;
    while ((nl = pending.indexOf('\n', Math.max(start, searchFrom))) >= 0) {
      const raw = pending.slice(start, nl).trim();
      start = nl + 1;
      line++;
      if (raw !== '' && !raw.startsWith('#')) session.handleJsonl(parseJsonlLine(raw, line, options.file));
    }
    pending = pending.slice(start);
    if (pending.length > maxLine) {
      throw fuchsiaError(C.JSONL, `line longer than ${maxLine} characters`, { file: options.file, line: line + 1, rule: 'JSONL lines are bounded (option maxLineBytes)', option: 'maxLineBytes' });
    }
    if (last && pending.trim() !== '') {
      line++;
      const raw = pending.trim();
      pending = '';
      if (!raw.startsWith('#')) session.handleJsonl(parseJsonlLine(raw, line, options.file));
    }
  };
  const feed = (chunk: Uint8Array) => {
    if (format === FORMAT_BINARY) for (const r of reader.push(chunk)) session.handleRecord(r);
    else text(chunk, false);
  };
  for await (const chunk of chunks) {
    if (chunk.length === 0) continue;
    total += chunk.length;
    if (format === undefined) {
      // Decide on the first 8 bytes (the magic), buffering a tiny head if chunks are smaller.
      head = head.length ? Uint8Array.from([...head, ...chunk]) : chunk;
      if (head.length < 8) continue;
      format = isRecording(head) ? FORMAT_BINARY : FORMAT_JSONL;
      feed(head);
      continue;
    }
    feed(chunk);
  }
  if (total === 0) throw new ProfkitError(ErrorCodes.EMPTY_INPUT, 'empty fuchsia-sampler recording', { file: options.file });
  if (format === undefined) {
    format = FORMAT_JSONL; // fewer than 8 bytes: cannot be a binary recording
    text(head, false);
  }
  if (format === FORMAT_BINARY) reader.end();
  else text(new Uint8Array(0), true);
  session.finish();
  return { profiles, warnings: session.warnings, format };
}

/** Read options understood by the adapter (`options.options`). */
export interface FuchsiaReadOptions {
  /** `final` (default), `all-partials-merged` is not offered; a number picks the n-th emitted profile (0-based, partials first). */
  profile?: 'final' | number;
  /** Apply the Poisson weight (default true). */
  unsample?: boolean;
  samplingRate?: number;
  peak?: boolean;
  partialThreshold?: number;
}

export async function read(input: ReadInput, options: ReadOptions): Promise<ReadResult> {
  const o = (options.options ?? {}) as FuchsiaReadOptions;
  const which = o.profile ?? 'final';
  const res = await replayRecordingChunks(input.chunks(), {
    file: input.fileName,
    format: options.format === FORMAT_BINARY || options.format === FORMAT_JSONL ? options.format : undefined,
    unsample: o.unsample,
    samplingRate: o.samplingRate,
    peak: o.peak,
    partialThreshold: o.partialThreshold,
    partialIntervalMs: 0,
    buildPartials: which !== 'final',
    maxRecordBytes: options.limits?.maxRecordBytes,
    maxLineBytes: options.limits?.maxLineBytes,
    limits: options.limits,
  });
  let chosen: EmittedProfile | undefined;
  if (which === 'final') chosen = res.profiles[res.profiles.length - 1];
  else chosen = res.profiles[which];
  if (!chosen) {
    throw new ProfkitError(ErrorCodes.USAGE, `profile ${String(which)} requested but the recording yields ${res.profiles.length} profiles`, { file: input.fileName, option: 'profile' });
  }
  return { profile: chosen.profile, warnings: res.warnings, format: res.format };
}

// ---------------------------------------------------------------------------------------------
// Writing

export interface FuchsiaWriteOptions {
  /** Protocol generation of the channel messages (default 2). */
  generation?: Generation;
  /** Send Record* calls as gen-3 socket datagrams (after a SetSharedSocket), default false. */
  datagrams?: boolean;
  /** Refuse to replay more allocations than this (default 10,000,000). */
  maxAllocations?: number;
}

const TYPE_PAIRS: [string, string][] = [
  ['residual_allocated_objects', 'residual_allocated_space'],
  ['inuse_objects', 'inuse_space'],
];

/**
 * Turns a profile's live heap into calls: one `SetProcessInfo` (name and module map rebuilt from
 * the mappings, grouped by build id) and `RecordAllocation`s that replay the live objects.
 */
export function profileToCalls(p: Profile, options: FuchsiaWriteOptions = {}): { calls: SamplerCall[]; warnings: Warning[] } {
  const warnings: Warning[] = [];
  const types = p.sample_types.type;
  let pair: [number, number] | undefined;
  for (const [o, s] of TYPE_PAIRS) {
    const oi = types.indexOf(o);
    const si = types.indexOf(s);
    if (oi >= 0 && si >= 0) {
      pair = [oi, si];
      break;
    }
  }
  if (!pair) {
    throw new ProfkitError(ErrorCodes.UNSUPPORTED, `the profile has no live-heap sample types (residual_allocated_objects/space or inuse_objects/space); it has: ${types.join(', ')}`, {
      rule: 'a recording replays live allocations',
    });
  }
  const ext = p['.extensions'][ADAPTER_NAME];
  const facts = ext?.facts ?? {};
  // Without our extension (e.g. after a trip through pprof), our comments say the same.
  const comments = p['.profile'].comments;
  const weightComment = comments.map((c) => /^fuchsia-sampler: values unsampled with the Poisson weight 1\/\(1-exp\(-size\/([0-9.e+]+)\)\)$/.exec(c)).find((m) => m);
  const nameComment = comments.map((c) => /^fuchsia-sampler: process (".*")$/.exec(c)).find((m) => m);
  const unsampled = ext?.facts ? facts.unsampled === true : !!weightComment;
  let rate = typeof facts.sampling_rate === 'number' ? facts.sampling_rate : weightComment ? Number(weightComment[1]) : DEFAULT_SAMPLING_RATE;
  if (!(rate > 0) || !Number.isFinite(rate)) rate = DEFAULT_SAMPLING_RATE;
  let commentName: string | undefined;
  if (nameComment) {
    try {
      const v: unknown = JSON.parse(nameComment[1]!);
      if (typeof v === 'string') commentName = v;
    } catch {
      commentName = undefined;
    }
  }
  const extAddr = ext?.samples?.address;
  const addrCol = extAddr instanceof BigUint64Array || extAddr instanceof BigInt64Array ? extAddr : undefined;
  const maxAlloc = options.maxAllocations ?? 10_000_000;

  // Mappings → module maps grouped by build id, in order of first appearance.
  const m = p['.mappings'];
  const modules = new Map<string, ModuleMap>();
  for (let i = 0; i < m.mapping_id.length; i++) {
    const id = m.build_id[i]!;
    let mm = modules.get(id);
    if (!mm) {
      let buildId: Uint8Array | undefined;
      if (id !== '') {
        buildId = hexToBytes(id);
        if (!buildId || buildId.length > BUILD_ID_BYTES) {
          warnings.push({ code: 'FUCHSIA_BUILD_ID_DROPPED', message: `build id ${JSON.stringify(id)} is not hex of at most ${BUILD_ID_BYTES} bytes; written without a build id` });
          buildId = undefined;
        }
      }
      mm = { buildId, executableSegments: [] };
      modules.set(id, mm);
    }
    const start = m.memory_start[i]!;
    const limit = m.memory_limit[i]!;
    mm.executableSegments!.push({ startAddress: start, size: limit >= start ? limit - start : 0n, relativeAddress: m.file_offset[i]! });
  }
  let name = typeof facts.process_name === 'string' ? facts.process_name : commentName ?? '';
  // Only the first MAX_NAME_LEN code points can fit (each takes at least one byte): keep those,
  // then drop from the end until the UTF-8 fits, so a huge name costs one pass, not one per character.
  const points: string[] = [];
  for (const c of name) {
    if (points.length === MAX_NAME_LEN) break;
    points.push(c);
  }
  while (utf8Length(points.join('')) > MAX_NAME_LEN) points.pop();
  name = points.join('');
  const calls: SamplerCall[] = [{ method: 'SetProcessInfo', processName: name, moduleMap: [...modules.values()] }];

  // Location → address (synthetic for locations without one).
  const L = p.locations;
  const rowOf = new Map<number, number>();
  for (let i = 0; i < L.location_id.length; i++) rowOf.set(L.location_id[i]!, i);
  let synthetic = 0;
  const frameAddr = (locId: number): bigint => {
    const row = rowOf.get(locId);
    const a = row === undefined ? 0n : L['.address'][row]!;
    if (a !== 0n) return a;
    synthetic++;
    return 0xffff_0000_0000_0000n + BigInt(locId);
  };

  const used = new Set<bigint>();
  let nextSynthetic = 0x7f00_0000_0000n;
  const freshAddress = (): bigint => {
    while (used.has(nextSynthetic)) nextSynthetic += 16n;
    const a = nextSynthetic;
    nextSynthetic += 16n;
    return a;
  };
  const objects = p.samples['.values'][pair[0]]!;
  const space = p.samples['.values'][pair[1]]!;
  const off = p.samples.locations.offsets;
  const ids = p.samples.locations.location_id;
  let count = 0;
  for (let i = 0; i < objects.length; i++) {
    const c = objects[i]!;
    const s = space[i]!;
    if (c <= 0n || s < 0n) continue;
    const frames = new BigUint64Array(off[i + 1]! - off[i]!);
    for (let k = 0; k < frames.length; k++) frames[k] = frameAddr(ids[off[i]! + k]!);
    // Our unsampled profiles: one sampled object of size space/objects per sample; raw profiles: `c` objects.
    const n = unsampled ? 1n : c;
    const each = unsampled ? sampledSize(c, s, rate) : s / c;
    const rest = unsampled ? 0n : s - each * c;
    // Checked before the loop too, so a huge object count fails at once instead of after maxAlloc calls.
    if (BigInt(count) + n > BigInt(maxAlloc)) {
      throw new ProfkitError(ErrorCodes.LIMIT, `replaying the profile needs more than ${maxAlloc} allocations (raise it with the option maxAllocations)`, { option: 'maxAllocations', rule: 'bounded output' });
    }
    for (let k = 0n; k < n; k++) {
      if (++count > maxAlloc) {
        throw new ProfkitError(ErrorCodes.LIMIT, `replaying the profile needs more than ${maxAlloc} allocations`, { option: 'maxAllocations', rule: 'bounded output' });
      }
      let address = k === 0n && addrCol && addrCol[i] ? BigInt.asUintN(64, addrCol[i]!) : 0n;
      if (address === 0n || used.has(address)) address = freshAddress();
      used.add(address);
      calls.push({ method: 'RecordAllocation', address, stackTrace: { stackFrames: frames }, size: each + (k === 0n ? rest : 0n) });
    }
  }
  if (synthetic > 0) warnings.push({ code: 'FUCHSIA_SYNTHETIC_ADDRESSES', message: `${synthetic} frames had no address and were given synthetic addresses 0xffff0000000000xx` });
  return { calls, warnings };
}

/**
 * The sampled allocation size whose unsampled values `round(W(size))` and `round(size * W(size))`
 * equal `count` and `space`: size * W(size) grows with size and W(size) shrinks, so two binary
 * searches find the sizes matching `space`, then the one among them matching `count`.
 */
export function sampledSize(count: bigint, space: bigint, rate: number): bigint {
  if (space <= 0n) return 0n;
  // Beyond 2^53 doubles cannot step by one and the searches below would never end (found by
  // fuzzing); at such sizes the Poisson weight is 1, so the sampled size is the space itself.
  if (space > BigInt(Number.MAX_SAFE_INTEGER)) return space;
  const target = Number(space);
  const f = (x: number) => x * poissonWeight(x, rate);
  const firstAtLeast = (g: (x: number) => boolean, lo: number, hi: number) => {
    while (lo < hi) {
      // lo + (hi - lo) / 2: (lo + hi) can pass 2^53 and round, and the search would not end.
      const mid = lo + Math.floor((hi - lo) / 2);
      if (g(mid)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  const lo = firstAtLeast((x) => f(x) >= target - 0.5, 0, target);
  const hi = Math.max(lo, firstAtLeast((x) => f(x) >= target + 0.5, lo, target + 1) - 1);
  const c = Number(count);
  const s = firstAtLeast((x) => poissonWeight(x, rate) < c + 0.5, lo, hi);
  return BigInt(Math.min(Math.max(s, lo), hi));
}

export function callsToRecording(calls: SamplerCall[], options: FuchsiaWriteOptions = {}): Uint8Array {
  const parts: Uint8Array[] = [recordingHeader()];
  const gen = options.generation ?? 2;
  let socket = false;
  for (const c of calls) {
    if (options.datagrams && (c.method === 'RecordAllocation' || c.method === 'RecordDeallocation')) {
      if (!socket) {
        parts.push(frameRecord(RecordKind.CHANNEL, encodeChannelMessage({ method: 'SetSharedSocket' }, { generation: 3 })));
        socket = true;
      }
      parts.push(frameRecord(RecordKind.DATAGRAM, encodeDatagram(c)));
    } else {
      parts.push(frameRecord(RecordKind.CHANNEL, encodeChannelMessage(c, { generation: c.method === 'SetSharedSocket' ? 3 : gen })));
    }
  }
  let len = 0;
  for (const x of parts) len += x.length;
  const out = new Uint8Array(len);
  let o = 0;
  for (const x of parts) {
    out.set(x, o);
    o += x.length;
  }
  return out;
}

export function callsToJsonl(calls: SamplerCall[], options: FuchsiaWriteOptions = {}): string {
  const lines: string[] = [];
  let socket = false;
  for (const c of calls) {
    const dg = !!options.datagrams && (c.method === 'RecordAllocation' || c.method === 'RecordDeallocation');
    if (dg && !socket) {
      lines.push(callToJsonl({ method: 'SetSharedSocket' }));
      socket = true;
    }
    lines.push(callToJsonl(c, dg ? 'socket' : 'channel'));
  }
  return lines.join('\n') + '\n';
}

export async function write(profile: Profile, options: WriteOptions): Promise<WriteResult> {
  const o = (options.options ?? {}) as FuchsiaWriteOptions;
  const fmt = options.format ?? (options.fileName?.endsWith('.jsonl') ? FORMAT_JSONL : FORMAT_BINARY);
  if (fmt !== FORMAT_BINARY && fmt !== FORMAT_JSONL) throw new ProfkitError(ErrorCodes.UNSUPPORTED, `fuchsia-sampler cannot write format ${fmt}`);
  const { calls, warnings } = profileToCalls(profile, o);
  warnings.push({
    code: 'FUCHSIA_LIVE_ONLY',
    message: 'the recording replays live allocations only: freed totals, deallocation stacks and symbols are not written',
  });
  const data = fmt === FORMAT_BINARY ? callsToRecording(calls, o) : new TextEncoder().encode(callsToJsonl(calls, o));
  return { data, warnings };
}
