/**
 * The `fuchsia.memory.sampler` library on the wire: type schemas of the three protocol
 * generations, method ordinals computed from the selectors, transactional headers (16 bytes),
 * persisted wire-metadata headers (8 bytes, RFC-0120) and the message-level codec.
 */

import { fuchsiaError, FuchsiaErrorCodes as C } from '../errors.js';
import { sha256 } from './sha256.js';
import { decodeBody, encodeBody, type DecodeContext, type FidlType, type FidlValue, type UnionValue } from './wire.js';

export const LIBRARY = 'fuchsia.memory.sampler';
export const PROTOCOL = 'Sampler';
/** `BUILD_ID_BYTES`. */
export const BUILD_ID_BYTES = 20;
/** `zx.MAX_NAME_LEN`, the bound of `process_name`. */
export const MAX_NAME_LEN = 32;

/** Header flag bits. */
export const AT_REST_FLAG_V2 = 0x02;
export const DYNAMIC_FLAG_FLEXIBLE = 0x80;
export const DYNAMIC_FLAG_BYTE_OVERFLOW = 0x40;
export const MAGIC_NUMBER_INITIAL = 0x01;

/**
 * Computes a FIDL method ordinal (RFC-0020/RFC-0029): SHA-256 of `<library>/<Protocol>.<Method>`,
 * the first 8 bytes as a little-endian u64, with the most significant bit cleared.
 */
export function methodOrdinal(selector: string): bigint {
  const h = sha256(new TextEncoder().encode(selector));
  return new DataView(h.buffer).getBigUint64(0, true) & 0x7fff_ffff_ffff_ffffn;
}

export type MethodName = 'RecordAllocation' | 'RecordDeallocation' | 'SetProcessInfo' | 'SetSharedSocket';
export const METHODS: readonly MethodName[] = ['RecordAllocation', 'RecordDeallocation', 'SetProcessInfo', 'SetSharedSocket'];

export const ORDINALS: Readonly<Record<MethodName, bigint>> = Object.freeze(
  Object.fromEntries(METHODS.map((m) => [m, methodOrdinal(`${LIBRARY}/${PROTOCOL}.${m}`)])) as Record<MethodName, bigint>,
);
const BY_ORDINAL = new Map<bigint, MethodName>(METHODS.map((m) => [ORDINALS[m], m]));

// ---------------------------------------------------------------------------------------------
// Types

const u64: FidlType = { kind: 'u64' };
export const StackTraceType: FidlType = {
  kind: 'table',
  name: 'StackTrace',
  fields: { 1: { name: 'stack_frames', type: { kind: 'vector', element: u64 } } },
};
export const ExecutableSegmentType: FidlType = {
  kind: 'table',
  name: 'ExecutableSegment',
  fields: { 1: { name: 'start_address', type: u64 }, 2: { name: 'size', type: u64 }, 3: { name: 'relative_address', type: u64 } },
};
export const ModuleMapType: FidlType = {
  kind: 'table',
  name: 'ModuleMap',
  fields: {
    1: { name: 'build_id', type: { kind: 'vector', element: { kind: 'u8' }, max: BUILD_ID_BYTES } },
    2: { name: 'executable_segments', type: { kind: 'vector', element: ExecutableSegmentType } },
  },
};
export const SetProcessInfoType: FidlType = {
  kind: 'table',
  name: 'SamplerSetProcessInfoRequest',
  fields: {
    1: { name: 'process_name', type: { kind: 'string', max: MAX_NAME_LEN } },
    2: { name: 'module_map', type: { kind: 'vector', element: ModuleMapType } },
  },
};
/** Generation 1: strict methods, struct payloads. */
export const Gen1RecordAllocationType: FidlType = {
  kind: 'struct',
  name: 'SamplerRecordAllocationRequest',
  fields: [
    { name: 'address', type: u64 },
    { name: 'stack_trace', type: StackTraceType },
    { name: 'size', type: u64 },
  ],
};
export const Gen1RecordDeallocationType: FidlType = {
  kind: 'struct',
  name: 'SamplerRecordDeallocationRequest',
  fields: [
    { name: 'address', type: u64 },
    { name: 'stack_trace', type: StackTraceType },
  ],
};
/** Generations 2 and 3: flexible methods, table payloads (gen 3 names them RecordAllocationEvent...). */
export const RecordAllocationTableType: FidlType = {
  kind: 'table',
  name: 'RecordAllocationEvent',
  fields: { 1: { name: 'address', type: u64 }, 2: { name: 'stack_trace', type: StackTraceType }, 3: { name: 'size', type: u64 } },
};
export const RecordDeallocationTableType: FidlType = {
  kind: 'table',
  name: 'RecordDeallocationEvent',
  fields: { 1: { name: 'address', type: u64 }, 2: { name: 'stack_trace', type: StackTraceType } },
};
export const SetSharedSocketType: FidlType = {
  kind: 'struct',
  name: 'SamplerSetSharedSocketRequest',
  fields: [{ name: 'socket', type: { kind: 'handle' } }],
};
/**
 * Generation 3 `SamplerDatagram` (flexible union). The variant ordinals 1 and 2 (declaration
 * order) are an assumption of the spec (§1.4): the .fidl text was not available.
 */
export const SamplerDatagramType: FidlType = {
  kind: 'union',
  name: 'SamplerDatagram',
  flexible: true,
  variants: { 1: { name: 'record_allocation', type: RecordAllocationTableType }, 2: { name: 'record_deallocation', type: RecordDeallocationTableType } },
};

// ---------------------------------------------------------------------------------------------
// Calls: the protocol's requests as plain values (fields absent on the wire are undefined)

export interface ExecutableSegment {
  startAddress?: bigint;
  size?: bigint;
  relativeAddress?: bigint;
}
export interface ModuleMap {
  buildId?: Uint8Array;
  executableSegments?: ExecutableSegment[];
}
export interface StackTrace {
  stackFrames?: BigUint64Array;
}

export type SamplerCall =
  | { method: 'RecordAllocation'; address?: bigint; stackTrace?: StackTrace; size?: bigint }
  | { method: 'RecordDeallocation'; address?: bigint; stackTrace?: StackTrace }
  | { method: 'SetProcessInfo'; processName?: string; moduleMap?: ModuleMap[] }
  | { method: 'SetSharedSocket' };

export type Generation = 1 | 2 | 3;

/** A decoded channel message: a known call, or an unknown flexible method (ignored by servers). */
export type ChannelMessage =
  | { kind: 'call'; call: SamplerCall; generation: Generation; flexible: boolean; ordinal: bigint }
  | { kind: 'unknown-method'; ordinal: bigint; flexible: true };

/** A decoded datagram: a Record* call, or an unknown union variant (ignored, as upstream). */
export type DatagramMessage = { kind: 'call'; call: SamplerCall } | { kind: 'unknown-variant'; ordinal: bigint };

// -- value conversion --------------------------------------------------------------------------

type Obj = Record<string, FidlValue>;

function stackFromWire(v: FidlValue): StackTrace | undefined {
  if (v === undefined) return undefined;
  const o = v as Obj;
  return { stackFrames: o.stack_frames as BigUint64Array | undefined };
}
function stackToWire(s: StackTrace | undefined): FidlValue {
  if (!s) return undefined;
  return { stack_frames: s.stackFrames };
}

function callFromWire(method: MethodName, v: FidlValue): SamplerCall {
  const o = (v ?? {}) as Obj;
  switch (method) {
    case 'RecordAllocation':
      return { method, address: o.address as bigint | undefined, stackTrace: stackFromWire(o.stack_trace), size: o.size as bigint | undefined };
    case 'RecordDeallocation':
      return { method, address: o.address as bigint | undefined, stackTrace: stackFromWire(o.stack_trace) };
    case 'SetProcessInfo': {
      const mm = o.module_map as Obj[] | undefined;
      return {
        method,
        processName: (o.process_name as string | undefined) ?? undefined,
        moduleMap: mm?.map((m) => ({
          buildId: m.build_id as Uint8Array | undefined,
          executableSegments: (m.executable_segments as Obj[] | undefined)?.map((s) => ({
            startAddress: s.start_address as bigint | undefined,
            size: s.size as bigint | undefined,
            relativeAddress: s.relative_address as bigint | undefined,
          })),
        })),
      };
    }
    case 'SetSharedSocket':
      return { method };
  }
}

function callToWire(c: SamplerCall): FidlValue {
  switch (c.method) {
    case 'RecordAllocation':
      return { address: c.address, stack_trace: stackToWire(c.stackTrace), size: c.size };
    case 'RecordDeallocation':
      return { address: c.address, stack_trace: stackToWire(c.stackTrace) };
    case 'SetProcessInfo':
      return {
        process_name: c.processName,
        module_map: c.moduleMap?.map((m) => ({
          build_id: m.buildId,
          executable_segments: m.executableSegments?.map((s) => ({ start_address: s.startAddress, size: s.size, relative_address: s.relativeAddress })),
        })),
      };
    case 'SetSharedSocket':
      return { socket: true };
  }
}

function bodyType(method: MethodName, gen: Generation): FidlType {
  switch (method) {
    case 'RecordAllocation':
      return gen === 1 ? Gen1RecordAllocationType : RecordAllocationTableType;
    case 'RecordDeallocation':
      return gen === 1 ? Gen1RecordDeallocationType : RecordDeallocationTableType;
    case 'SetProcessInfo':
      return SetProcessInfoType;
    case 'SetSharedSocket':
      return SetSharedSocketType;
  }
}

// -- channel messages ---------------------------------------------------------------------------

export interface EncodeChannelOptions {
  /** Protocol generation (1: strict + structs, 2/3: flexible + tables). Default 2. */
  generation?: Generation;
  txid?: number;
}

/**
 * Encodes a call as a transactional channel message (16-byte header + body). Gen-1 struct
 * payloads require address, stack_trace and size (structs have no absent fields): missing ones
 * are encoded as zero / an empty table. `SetSharedSocket` is gen 3 only and carries a handle,
 * which the bytes cannot hold: only its slot is written.
 */
export function encodeChannelMessage(call: SamplerCall, options: EncodeChannelOptions = {}): Uint8Array {
  const gen = options.generation ?? 2;
  const flexible = gen !== 1;
  const wire = callToWire(call) as Obj;
  if (gen === 1 && (call.method === 'RecordAllocation' || call.method === 'RecordDeallocation')) {
    wire.address ??= 0n;
    wire.stack_trace ??= {};
    if (call.method === 'RecordAllocation') wire.size ??= 0n;
  }
  const body = encodeBody(bodyType(call.method, gen), wire);
  const out = new Uint8Array(16 + body.length);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, options.txid ?? 0, true);
  out[4] = AT_REST_FLAG_V2;
  out[5] = 0;
  out[6] = flexible ? DYNAMIC_FLAG_FLEXIBLE : 0;
  out[7] = MAGIC_NUMBER_INITIAL;
  dv.setBigUint64(8, ORDINALS[call.method], true);
  out.set(body, 16);
  return out;
}

export interface DecodeChannelOptions {
  file?: string;
  /** Absolute offset of the message in the file. */
  offset?: number;
  /** Handles delivered with the message; a byte recording has none except the noted socket. */
  handles?: number;
  /** Try the fast path for canonical Record* messages first (default true; same results). */
  fast?: boolean;
}

/**
 * Decodes a transactional channel message. Generation 1 and 2 share ordinals: the flexible flag
 * selects struct (gen 1) or table (gen 2/3) payloads, and a message whose flag disagrees with its
 * body's structure (word 1: a gen-1 StackTrace max_ordinal ≤ 1 vs the gen-2 presence word) fails
 * to decode with a typed error.
 */
export function decodeChannelMessage(bytes: Uint8Array, options: DecodeChannelOptions = {}): ChannelMessage {
  const base = options.offset ?? 0;
  const file = options.file;
  const err = (message: string, at: number, rule: string, code: (typeof C)[keyof typeof C] = C.HEADER) =>
    fuchsiaError(code, message, { file, offset: base + at, rule });
  if (bytes.length < 16) throw err(`channel message of ${bytes.length} bytes is shorter than the 16-byte header`, 0, 'a transactional header is 16 bytes', C.TRUNCATED);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const txid = dv.getUint32(0, true);
  const atRest0 = bytes[4]!;
  const dyn = bytes[6]!;
  const magic = bytes[7]!;
  const ordinal = dv.getBigUint64(8, true);
  if (magic !== MAGIC_NUMBER_INITIAL) throw err(`magic number ${magic} is not 1`, 7, 'header magic number is 0x01');
  if ((atRest0 & AT_REST_FLAG_V2) === 0) throw err(`at-rest flags 0x${atRest0.toString(16)} lack the v2 wire-format bit`, 4, 'wire format v2 (flags[0] & 0x02)');
  if (txid !== 0) throw err(`txid ${txid} on a one-way method (every Sampler method is one-way)`, 0, 'one-way messages have txid 0');
  if (dyn & DYNAMIC_FLAG_BYTE_OVERFLOW) {
    throw fuchsiaError(C.BYTE_OVERFLOW, 'byte_overflow flag set: the body is in a VMO (RFC-0196 large message), which a byte recording does not carry', {
      file,
      offset: base + 6,
      rule: 'RFC-0196 large messages are not supported in recordings',
    });
  }
  if (dyn & ~(DYNAMIC_FLAG_FLEXIBLE | DYNAMIC_FLAG_BYTE_OVERFLOW)) throw err(`reserved dynamic flag bits set (0x${dyn.toString(16)})`, 6, 'reserved dynamic flags are zero');
  if (ordinal === 0n) throw err('ordinal 0', 8, 'ordinal 0 is invalid');
  const flexible = (dyn & DYNAMIC_FLAG_FLEXIBLE) !== 0;
  const method = BY_ORDINAL.get(ordinal);
  if (!method) {
    if (flexible) return { kind: 'unknown-method', ordinal, flexible: true };
    throw err(`unknown strict method ordinal 0x${ordinal.toString(16)}`, 8, 'strict methods must be known', C.UNKNOWN_METHOD);
  }
  if ((method === 'RecordAllocation' || method === 'RecordDeallocation') && bytes.length >= 32) {
    // Structural cross-check of the generation: word 1 of a gen-1 struct body is the StackTrace
    // table's max_ordinal (<= 1), of a gen-2 table body the table presence word (UINTPTR_MAX).
    const word1 = dv.getBigUint64(24, true);
    if (flexible && word1 <= 1n) throw err('flexible (generation 2) header on a generation-1 struct body', 6, 'the flexible flag matches the payload layout');
    if (!flexible && word1 === 0xffff_ffff_ffff_ffffn) throw err('strict (generation 1) header on a generation-2 table body', 6, 'the flexible flag matches the payload layout');
  }
  if ((method === 'RecordAllocation' || method === 'RecordDeallocation') && options.fast !== false && !options.handles) {
    const isAlloc = method === 'RecordAllocation';
    const r = flexible ? fastTable(dv, 16, isAlloc) : fastStruct(dv, 16, isAlloc);
    if (r && r.end === bytes.length) {
      fastPathStats.hits++;
      return { kind: 'call', call: r.call, generation: flexible ? 2 : 1, flexible, ordinal };
    }
  }
  const ctx: DecodeContext = { file, base: base + 16, handles: options.handles ?? (method === 'SetSharedSocket' ? 1 : 0) };
  const body = bytes.subarray(16);
  let gen: Generation;
  if (method === 'SetSharedSocket') gen = 3;
  else if (method === 'SetProcessInfo') gen = flexible ? 2 : 1;
  else gen = flexible ? 2 : 1;
  const v = decodeBody(body, bodyType(method, gen), ctx);
  return { kind: 'call', call: callFromWire(method, v), generation: gen, flexible, ordinal };
}

// -- persisted datagrams (generation 3) ----------------------------------------------------------

/** The 8-byte wire-metadata header of persisted FIDL (RFC-0120). */
export const PERSISTED_HEADER = Uint8Array.of(0x00, 0x01, 0x02, 0x00, 0, 0, 0, 0);

/** Encodes a Record* call as a gen-3 socket datagram (persisted `SamplerDatagram`). */
export function encodeDatagram(call: SamplerCall): Uint8Array {
  let u: UnionValue;
  if (call.method === 'RecordAllocation') u = { $variant: 'record_allocation', $ordinal: 1n, value: callToWire(call) };
  else if (call.method === 'RecordDeallocation') u = { $variant: 'record_deallocation', $ordinal: 2n, value: callToWire(call) };
  else throw new TypeError(`${call.method} cannot travel as a datagram`);
  const body = encodeBody(SamplerDatagramType, u);
  const out = new Uint8Array(8 + body.length);
  out.set(PERSISTED_HEADER, 0);
  out.set(body, 8);
  return out;
}

export function decodeDatagram(bytes: Uint8Array, options: { file?: string; offset?: number; fast?: boolean } = {}): DatagramMessage {
  const base = options.offset ?? 0;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const file = options.file;
  if (bytes.length < 8) throw fuchsiaError(C.TRUNCATED, `datagram of ${bytes.length} bytes is shorter than the 8-byte wire metadata`, { file, offset: base, rule: 'persisted FIDL has an 8-byte header' });
  const fail = (m: string, at: number, rule: string) => fuchsiaError(C.HEADER, m, { file, offset: base + at, rule });
  if (bytes[0] !== 0) throw fail(`disambiguator ${bytes[0]} is not 0`, 0, 'persisted header byte 0 is 0');
  if (bytes[1] !== MAGIC_NUMBER_INITIAL) throw fail(`magic number ${bytes[1]} is not 1`, 1, 'persisted header magic number is 0x01');
  const flags = bytes[2]! | (bytes[3]! << 8);
  if ((flags & AT_REST_FLAG_V2) === 0) throw fail(`at-rest flags 0x${flags.toString(16)} lack the v2 bit`, 2, 'wire format v2');
  for (let i = 4; i < 8; i++) if (bytes[i] !== 0) throw fail(`reserved header byte ${i} is ${bytes[i]}`, i, 'reserved header bytes are zero');
  if (options.fast !== false && bytes.length >= 24) {
    // Fast path: union header (ordinal 1 or 2, out-of-line envelope) then a canonical table.
    const ord = dv.getBigUint64(8, true);
    if ((ord === 1n || ord === 2n) && dv.getUint16(20, true) === 0 && dv.getUint16(22, true) === 0) {
      const r = fastTable(dv, 24, ord === 1n);
      if (r && r.end === bytes.length && dv.getUint32(16, true) === r.end - 24) {
        fastPathStats.hits++;
        return { kind: 'call', call: r.call };
      }
    }
  }
  const u = decodeBody(bytes.subarray(8), SamplerDatagramType, { file, base: base + 8 }) as UnionValue;
  if (u.$variant === 'record_allocation') return { kind: 'call', call: callFromWire('RecordAllocation', u.value) };
  if (u.$variant === 'record_deallocation') return { kind: 'call', call: callFromWire('RecordDeallocation', u.value) };
  return { kind: 'unknown-variant', ordinal: u.$ordinal };
}

// -- fast paths ---------------------------------------------------------------------------------
//
// Record* messages dominate the traffic. These recognize only the canonical encoding (every field
// present, each envelope exactly as the generic encoder writes it) and return undefined for
// anything else, which then goes through the generic, strict decoder: so results (values and
// errors) are the same, only faster. test/fuzz.test.ts checks the equivalence.

const MAXW = 0xffff_ffff_ffff_ffffn;

/** How many messages the fast path decoded (for tests and benchmarks). */
export const fastPathStats = { hits: 0 };

function envelopeIs(dv: DataView, at: number, numBytes: number): boolean {
  return dv.getUint32(at, true) === numBytes && dv.getUint16(at + 4, true) === 0 && dv.getUint16(at + 6, true) === 0;
}

/** The StackTrace table {1: stack_frames} at `at` with its out-of-line data right after. */
function fastStack(dv: DataView, at: number): { frames: BigUint64Array; end: number } | undefined {
  const len = dv.byteLength;
  if (at + 40 > len) return undefined;
  if (dv.getBigUint64(at, true) !== 1n || dv.getBigUint64(at + 8, true) !== MAXW) return undefined;
  const count = dv.getBigUint64(at + 24, true);
  if (count > BigInt((len - at - 40) >> 3)) return undefined;
  const n = Number(count);
  if (!envelopeIs(dv, at + 16, 16 + 8 * n) || dv.getBigUint64(at + 32, true) !== MAXW) return undefined;
  const frames = new BigUint64Array(n);
  for (let i = 0; i < n; i++) frames[i] = dv.getBigUint64(at + 40 + 8 * i, true);
  return { frames, end: at + 40 + 8 * n };
}

/** Gen 2/3 RecordAllocationEvent / RecordDeallocationEvent table at `at`. */
function fastTable(dv: DataView, at: number, isAlloc: boolean): { call: SamplerCall; end: number } | undefined {
  const m = isAlloc ? 3 : 2;
  const data = at + 16 + 8 * m;
  if (data + 8 > dv.byteLength) return undefined;
  if (dv.getBigUint64(at, true) !== BigInt(m) || dv.getBigUint64(at + 8, true) !== MAXW) return undefined;
  if (!envelopeIs(dv, at + 16, 8)) return undefined;
  const st = fastStack(dv, data + 8);
  if (!st || !envelopeIs(dv, at + 24, st.end - data - 8)) return undefined;
  const address = dv.getBigUint64(data, true);
  if (!isAlloc) return { call: { method: 'RecordDeallocation', address, stackTrace: { stackFrames: st.frames } }, end: st.end };
  if (!envelopeIs(dv, at + 32, 8) || st.end + 8 > dv.byteLength) return undefined;
  const size = dv.getBigUint64(st.end, true);
  return { call: { method: 'RecordAllocation', address, stackTrace: { stackFrames: st.frames }, size }, end: st.end + 8 };
}

/** Gen 1 struct {address, StackTrace, size?} at `at`. */
function fastStruct(dv: DataView, at: number, isAlloc: boolean): { call: SamplerCall; end: number } | undefined {
  const inline = isAlloc ? 32 : 24;
  if (at + inline + 24 > dv.byteLength) return undefined;
  const address = dv.getBigUint64(at, true);
  if (dv.getBigUint64(at + 8, true) !== 1n || dv.getBigUint64(at + 16, true) !== MAXW) return undefined;
  // The StackTrace's envelope array and vector follow the inline struct.
  const p = at + inline;
  const count = dv.getBigUint64(p + 8, true);
  if (count > BigInt((dv.byteLength - p - 24) >> 3)) return undefined;
  const n = Number(count);
  if (!envelopeIs(dv, p, 16 + 8 * n) || dv.getBigUint64(p + 16, true) !== MAXW) return undefined;
  const frames = new BigUint64Array(n);
  for (let i = 0; i < n; i++) frames[i] = dv.getBigUint64(p + 24 + 8 * i, true);
  const end = p + 24 + 8 * n;
  if (!isAlloc) return { call: { method: 'RecordDeallocation', address, stackTrace: { stackFrames: frames } }, end };
  return { call: { method: 'RecordAllocation', address, stackTrace: { stackFrames: frames }, size: dv.getBigUint64(at + 24, true) }, end };
}

/** Lowercase hex of a build id (no separators), as pprof mappings and `.build-id/xx/rest.debug` use. */
export function buildIdHex(b: Uint8Array | undefined): string {
  if (!b) return '';
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
}

export function hexToBytes(hex: string): Uint8Array | undefined {
  if (!/^([0-9a-fA-F]{2})*$/.test(hex)) return undefined;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}
