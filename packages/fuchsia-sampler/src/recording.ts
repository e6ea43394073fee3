/**
 * Recordings: our own framing of a connection's traffic (FIDL gives none for a file of
 * messages), binary (`.fsrec`) and JSON Lines (`.fsrec.jsonl`).
 *
 * Binary layout (little-endian):
 *
 *   header (16 bytes): magic "FXSMPREC" (46 58 53 4d 50 52 45 43), u16 version = 1,
 *                      u16 flags = 0, u32 reserved = 0
 *   record:            u8 kind, 3 zero bytes, u32 length, `length` payload bytes,
 *                      zero padding to a multiple of 8
 *   kinds:             1 = channel message (16-byte transactional header + body),
 *                      2 = socket datagram (persisted `SamplerDatagram`: 8-byte wire metadata + body),
 *                      3 = socket closed (the zero-length datagram; length must be 0)
 *
 * The same byte stream (header, then records) is what the live collector accepts on a socket.
 */

import { utf8Length } from '@profkit/core';
import { fuchsiaError, FuchsiaErrorCodes as C } from './errors.js';
import { hexToBytes, buildIdHex, BUILD_ID_BYTES, MAX_NAME_LEN, type Generation, type ModuleMap, type SamplerCall } from './fidl/protocol.js';

export const RECORDING_MAGIC = Uint8Array.from([0x46, 0x58, 0x53, 0x4d, 0x50, 0x52, 0x45, 0x43]); // "FXSMPREC"
export const RECORDING_VERSION = 1;
export const RECORDING_HEADER_BYTES = 16;
/** `ZX_CHANNEL_MAX_MSG_BYTES`: the largest channel message; also our default record bound. */
export const DEFAULT_MAX_RECORD_BYTES = 65536;

export const RecordKind = { CHANNEL: 1, DATAGRAM: 2, SOCKET_CLOSED: 3 } as const;
export type RecordKindValue = (typeof RecordKind)[keyof typeof RecordKind];

export interface RawRecord {
  kind: RecordKindValue;
  payload: Uint8Array;
  /** Absolute offset of the payload in the stream. */
  offset: number;
}

export function recordingHeader(): Uint8Array {
  const h = new Uint8Array(RECORDING_HEADER_BYTES);
  h.set(RECORDING_MAGIC, 0);
  h[8] = RECORDING_VERSION;
  return h;
}

export function isRecording(head: Uint8Array): boolean {
  if (head.length < 8) return false;
  for (let i = 0; i < 8; i++) if (head[i] !== RECORDING_MAGIC[i]) return false;
  return true;
}

/** Frames one record (header + payload + padding). */
export function frameRecord(kind: RecordKindValue, payload: Uint8Array): Uint8Array {
  const padded = Math.ceil(payload.length / 8) * 8;
  const out = new Uint8Array(8 + padded);
  out[0] = kind;
  new DataView(out.buffer).setUint32(4, payload.length, true);
  out.set(payload, 8);
  return out;
}

/**
 * Incremental parser of the binary stream: feed chunks, get records. Memory is bounded by one
 * record (`maxRecordBytes`) plus one chunk.
 */
export class RecordReader {
  /** Chunks not yet parsed, joined only once enough bytes for the next step have arrived. */
  private parts: Uint8Array[] = [];
  private partsLen = 0;
  /** Bytes needed before parsing can make progress (the header, a record header, a whole record). */
  private need = RECORDING_HEADER_BYTES;
  private pos = 0; // absolute offset of the first unparsed byte
  private headerDone = false;
  readonly maxRecordBytes: number;

  constructor(
    private readonly file?: string,
    options: { maxRecordBytes?: number } = {},
  ) {
    this.maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  }

  /**
   * Appends a chunk and returns the complete records it makes available. Work is linear in the
   * input whatever the chunk sizes (a client sending one byte at a time costs no copying).
   */
  push(chunk: Uint8Array): RawRecord[] {
    if (chunk.length === 0) return [];
    this.parts.push(chunk);
    this.partsLen += chunk.length;
    if (this.partsLen < this.need) return [];
    const buf = this.parts.length === 1 ? this.parts[0]! : concatAll(this.parts, this.partsLen);
    const out: RawRecord[] = [];
    let i = 0;
    const fail = (m: string, at: number, rule: string) => fuchsiaError(C.RECORDING, m, { file: this.file, offset: this.pos + at, rule });
    const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    if (!this.headerDone) {
      for (let k = 0; k < 8; k++) if (buf[k] !== RECORDING_MAGIC[k]) throw fail('not a fuchsia-sampler recording (magic "FXSMPREC" expected)', k, 'recordings start with the magic FXSMPREC');
      const version = dv.getUint16(8, true);
      if (version !== RECORDING_VERSION) throw fail(`recording version ${version} is not supported (expected ${RECORDING_VERSION})`, 8, 'recording version 1');
      if (dv.getUint16(10, true) !== 0 || dv.getUint32(12, true) !== 0) throw fail('reserved recording header bytes are not zero', 10, 'reserved header fields are zero');
      this.headerDone = true;
      i = RECORDING_HEADER_BYTES;
    }
    this.need = 8;
    while (buf.length - i >= 8) {
      const kind = buf[i]!;
      if (kind < 1 || kind > 3) throw fail(`unknown record kind ${kind}`, i, 'record kinds are 1 (channel), 2 (datagram), 3 (socket closed)');
      if (buf[i + 1] !== 0 || buf[i + 2] !== 0 || buf[i + 3] !== 0) throw fail('reserved record header bytes are not zero', i + 1, 'reserved record bytes are zero');
      const len = dv.getUint32(i + 4, true);
      if (len > this.maxRecordBytes) throw fail(`record of ${len} bytes exceeds the limit of ${this.maxRecordBytes}`, i + 4, `records are at most ${this.maxRecordBytes} bytes (option maxRecordBytes)`);
      if (kind === RecordKind.SOCKET_CLOSED && len !== 0) throw fail(`socket-closed record with ${len} payload bytes`, i + 4, 'socket-closed records are empty');
      const padded = Math.ceil(len / 8) * 8;
      if (buf.length - i - 8 < padded) {
        this.need = 8 + padded;
        break;
      }
      for (let p = i + 8 + len; p < i + 8 + padded; p++) if (buf[p] !== 0) throw fail('non-zero record padding', p, 'record padding is zero');
      out.push({ kind: kind as RecordKindValue, payload: buf.slice(i + 8, i + 8 + len), offset: this.pos + i + 8 });
      i += 8 + padded;
    }
    const rest = buf.length - i;
    this.parts = rest > 0 ? [buf.slice(i)] : [];
    this.partsLen = rest;
    this.pos += i;
    return out;
  }

  /** Call at end of input: throws if a record or the header is incomplete. */
  end(): void {
    if (!this.headerDone) {
      const buf = concatAll(this.parts, this.partsLen);
      for (let k = 0; k < Math.min(8, buf.length); k++) {
        if (buf[k] !== RECORDING_MAGIC[k]) throw fuchsiaError(C.RECORDING, 'not a fuchsia-sampler recording (magic "FXSMPREC" expected)', { file: this.file, offset: k, rule: 'recordings start with the magic FXSMPREC' });
      }
      throw fuchsiaError(C.RECORDING, `recording ends inside its ${RECORDING_HEADER_BYTES}-byte header`, { file: this.file, offset: this.partsLen, rule: 'a recording has a 16-byte header' });
    }
    if (this.partsLen !== 0) throw fuchsiaError(C.RECORDING, `recording ends inside a record (${this.partsLen} bytes left over)`, { file: this.file, offset: this.pos, rule: 'records are complete' });
  }

  /** Whether the whole stream header has arrived (the collector's handshake timeout waits for it). */
  get headerRead(): boolean {
    return this.headerDone;
  }

  /** Bytes buffered (for bounded-memory checks). */
  get buffered(): number {
    return this.partsLen;
  }
}

function concatAll(parts: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}


// ---------------------------------------------------------------------------------------------
// JSON Lines

/** One line of a JSONL recording. */
export type JsonlEntry =
  | { kind: 'call'; call: SamplerCall; via: 'channel' | 'socket'; generation?: Generation; line: number }
  | { kind: 'socket-closed'; line: number };

/**
 * Parses a JSONL recording. One JSON object per line; blank lines and lines starting with `#`
 * are ignored. Numbers are JSON integers (safe range) or strings (decimal or `0x` hex).
 *
 *   {"method":"SetProcessInfo","process_name":"p","module_map":[{"build_id":"0102","executable_segments":[{"start_address":"0x2000","size":4096,"relative_address":0}]}]}
 *   {"method":"RecordAllocation","address":"0x100","stack_trace":["0x1000","0x1500"],"size":100}
 *   {"method":"RecordDeallocation","address":"0x100","stack_trace":[12288,12289],"via":"socket"}
 *   {"method":"SetSharedSocket"}
 *   {"event":"socket_closed"}
 *
 * Optional per line: `"via": "channel"|"socket"`, `"generation": 1|2|3` (for re-encoding).
 */
export function parseJsonl(text: string, file?: string): JsonlEntry[] {
  const out: JsonlEntry[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '' || raw.startsWith('#')) continue;
    out.push(parseJsonlLine(raw, i + 1, file));
  }
  return out;
}

/** A short rendering of an input JSON value for messages: bounded, never recursing into deep input. */
function showJson(v: unknown): string {
  if (typeof v === 'object' && v !== null) return Array.isArray(v) ? `an array of ${v.length}` : 'an object';
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

export function parseJsonlLine(raw: string, line: number, file?: string): JsonlEntry {
  const fail = (m: string, rule: string): never => {
    throw fuchsiaError(C.JSONL, m, { file, line, rule });
  };
  let o: unknown;
  try {
    o = JSON.parse(raw);
  } catch (e) {
    return fail(`invalid JSON: ${(e as Error).message}`, 'each line is one JSON object');
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return fail('a line must be a JSON object', 'each line is one JSON object');
  const r = o as Record<string, unknown>;
  if (r.event !== undefined) {
    if (r.event === 'socket_closed') return { kind: 'socket-closed', line };
    return fail(`unknown event ${showJson(r.event)}`, 'event is "socket_closed"');
  }
  const num = (v: unknown, what: string): bigint | undefined => {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'number') {
      if (!Number.isSafeInteger(v) || v < 0) fail(`${what} ${v} is not a non-negative safe integer (use a string for large values)`, 'u64 values are integers');
      return BigInt(v);
    }
    if (typeof v === 'string' && /^(0x[0-9a-fA-F]{1,16}|[0-9]{1,20})$/.test(v)) {
      const b = BigInt(v);
      if (b > 0xffff_ffff_ffff_ffffn) fail(`${what} ${v} exceeds 2^64-1`, 'u64 values fit in 64 bits');
      return b;
    }
    return fail(`${what} ${showJson(v)} is not an integer or integer string`, 'u64 values are integers or decimal/0x strings');
  };
  const stack = (v: unknown): { stackFrames?: BigUint64Array } | undefined => {
    if (v === undefined || v === null) return undefined;
    if (Array.isArray(v)) return { stackFrames: BigUint64Array.from(v.map((x, k) => num(x, `stack_trace[${k}]`)!)) };
    if (typeof v === 'object') {
      const f = (v as Record<string, unknown>).stack_frames;
      if (f === undefined) return {};
      if (!Array.isArray(f)) return fail('stack_trace.stack_frames must be an array', 'stack frames are an array');
      return { stackFrames: BigUint64Array.from(f.map((x, k) => num(x, `stack_frames[${k}]`)!)) };
    }
    return fail('stack_trace must be an array of frames or {"stack_frames": [...]}', 'stack_trace shape');
  };
  const via = r.via === undefined ? undefined : r.via;
  if (via !== undefined && via !== 'channel' && via !== 'socket') fail(`via ${showJson(via)} is not "channel" or "socket"`, 'via is channel or socket');
  const generation = r.generation;
  if (generation !== undefined && generation !== 1 && generation !== 2 && generation !== 3) fail(`generation ${showJson(generation)} is not 1, 2 or 3`, 'generation is 1, 2 or 3');
  let call: SamplerCall;
  switch (r.method) {
    case 'RecordAllocation':
      call = { method: 'RecordAllocation', address: num(r.address, 'address'), stackTrace: stack(r.stack_trace), size: num(r.size, 'size') };
      break;
    case 'RecordDeallocation':
      call = { method: 'RecordDeallocation', address: num(r.address, 'address'), stackTrace: stack(r.stack_trace) };
      break;
    case 'SetProcessInfo': {
      let processName: string | undefined;
      if (r.process_name !== undefined && r.process_name !== null) {
        if (typeof r.process_name !== 'string') fail('process_name must be a string', 'process_name is a string');
        processName = r.process_name as string;
        if (utf8Length(processName) > MAX_NAME_LEN) fail(`process_name is longer than ${MAX_NAME_LEN} bytes`, `process_name is string:${MAX_NAME_LEN}`);
      }
      let moduleMap: ModuleMap[] | undefined;
      if (r.module_map !== undefined && r.module_map !== null) {
        if (!Array.isArray(r.module_map)) fail('module_map must be an array', 'module_map is an array');
        moduleMap = (r.module_map as unknown[]).map((m, k) => {
          if (typeof m !== 'object' || m === null) return fail(`module_map[${k}] must be an object`, 'module maps are objects');
          const mm = m as Record<string, unknown>;
          let buildId: Uint8Array | undefined;
          if (mm.build_id !== undefined && mm.build_id !== null) {
            buildId = typeof mm.build_id === 'string' ? hexToBytes(mm.build_id) : undefined;
            if (!buildId) fail(`module_map[${k}].build_id must be a hex string`, 'build_id is hex');
            if (buildId!.length > BUILD_ID_BYTES) fail(`module_map[${k}].build_id has ${buildId!.length} bytes, more than ${BUILD_ID_BYTES}`, `build_id is at most ${BUILD_ID_BYTES} bytes`);
          }
          let segs: ModuleMap['executableSegments'];
          if (mm.executable_segments !== undefined && mm.executable_segments !== null) {
            if (!Array.isArray(mm.executable_segments)) fail(`module_map[${k}].executable_segments must be an array`, 'segments are an array');
            segs = (mm.executable_segments as unknown[]).map((sg, j) => {
              if (typeof sg !== 'object' || sg === null) return fail(`executable_segments[${j}] must be an object`, 'segments are objects');
              const x = sg as Record<string, unknown>;
              return { startAddress: num(x.start_address, 'start_address'), size: num(x.size, 'size'), relativeAddress: num(x.relative_address, 'relative_address') };
            });
          }
          return { buildId, executableSegments: segs };
        });
      }
      call = { method: 'SetProcessInfo', processName, moduleMap };
      break;
    }
    case 'SetSharedSocket':
      call = { method: 'SetSharedSocket' };
      break;
    default:
      return fail(`unknown method ${showJson(r.method)}`, 'method is RecordAllocation, RecordDeallocation, SetProcessInfo or SetSharedSocket');
  }
  if (via === 'socket' && call.method !== 'RecordAllocation' && call.method !== 'RecordDeallocation') fail(`${call.method} cannot travel over the socket`, 'only Record* calls are datagrams');
  return { kind: 'call', call, via: (via as 'channel' | 'socket' | undefined) ?? 'channel', generation: generation as Generation | undefined, line };
}

const hex = (v: bigint) => '0x' + v.toString(16);
const n = (v: bigint) => (v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString());

/** Serializes one call as a JSONL line (addresses and frames in hex, sizes as numbers). */
export function callToJsonl(call: SamplerCall, via: 'channel' | 'socket' = 'channel'): string {
  const o: Record<string, unknown> = { method: call.method };
  switch (call.method) {
    case 'RecordAllocation':
    case 'RecordDeallocation':
      if (call.address !== undefined) o.address = hex(call.address);
      if (call.stackTrace) o.stack_trace = call.stackTrace.stackFrames ? [...call.stackTrace.stackFrames].map(hex) : {};
      if (call.method === 'RecordAllocation' && call.size !== undefined) o.size = n(call.size);
      break;
    case 'SetProcessInfo':
      if (call.processName !== undefined) o.process_name = call.processName;
      if (call.moduleMap)
        o.module_map = call.moduleMap.map((m) => ({
          ...(m.buildId ? { build_id: buildIdHex(m.buildId) } : {}),
          ...(m.executableSegments
            ? {
                executable_segments: m.executableSegments.map((s) => ({
                  ...(s.startAddress !== undefined ? { start_address: hex(s.startAddress) } : {}),
                  ...(s.size !== undefined ? { size: n(s.size) } : {}),
                  ...(s.relativeAddress !== undefined ? { relative_address: hex(s.relativeAddress) } : {}),
                })),
              }
            : {}),
        }));
      break;
    case 'SetSharedSocket':
      break;
  }
  if (via === 'socket') o.via = 'socket';
  return JSON.stringify(o);
}
