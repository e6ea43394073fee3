/**
 * A schema-driven FIDL wire-format v2 codec (RFC-0114): enough of the language for the
 * `fuchsia.memory.sampler` library, done strictly.
 *
 * - Types are described as data (`FidlType`); `decodeBody`/`encodeBody` walk them.
 * - A message is one primary (inline) object followed by out-of-line objects in depth-first
 *   traversal order, each 8-aligned and zero-padded; decoding claims out-of-line space with a
 *   single cursor, so the traversal order is enforced rather than assumed.
 * - Checked while decoding: bounds of every object, zero padding (inside structs, after
 *   out-of-line objects, in inline envelopes), presence markers (0 or UINTPTR_MAX only), envelope
 *   flags, byte counts and handle counts, vector/string bounds, UTF-8, recursion depth 32,
 *   trailing bytes, union ordinals. A byte recording carries no handles, so any non-zero handle
 *   count (or a present handle slot in a type that is not declared to carry one) is an error.
 *
 * Offsets in errors are absolute: `base` (the position of the body in the file) plus the offset
 * inside the body.
 */

import { fuchsiaError, FuchsiaErrorCodes as C } from '../errors.js';

export const UINTPTR_MAX = 0xffff_ffff_ffff_ffffn;
export const MAX_RECURSION_DEPTH = 32;
const MAX_COUNT = 0xffff_ffff;

export type FidlType =
  | { kind: 'u8' }
  | { kind: 'u64' }
  /** A handle slot (u32 0 / 0xffffffff). Present handles decode to `true`. */
  | { kind: 'handle'; nullable?: boolean }
  | { kind: 'string'; max?: number; nullable?: boolean }
  | { kind: 'vector'; element: FidlType; max?: number; nullable?: boolean }
  | { kind: 'struct'; name: string; fields: { name: string; type: FidlType }[] }
  | { kind: 'table'; name: string; fields: Record<number, { name: string; type: FidlType }> }
  | { kind: 'union'; name: string; flexible: boolean; variants: Record<number, { name: string; type: FidlType }> };

/** Decoded values: u64 → bigint, u8 → number, vector<u8> → Uint8Array, vector<u64> → BigUint64Array. */
export type FidlValue =
  | number
  | bigint
  | boolean
  | string
  | null
  | undefined
  | Uint8Array
  | BigUint64Array
  | FidlValue[]
  | { [field: string]: FidlValue };

/** A decoded union: the variant's name and value, or `unknown` with the ordinal for flexible unions. */
export interface UnionValue {
  $variant: string;
  $ordinal: bigint;
  value?: FidlValue;
  [k: string]: FidlValue;
}

export interface DecodeContext {
  file?: string;
  /** Absolute position of the body's first byte (for error offsets). */
  base?: number;
  /** Handles that came with the message (a byte recording has none: default 0). */
  handles?: number;
}

interface Layout {
  size: number;
  align: number;
}

const layoutCache = new WeakMap<FidlType, Layout & { offsets?: number[] }>();

/** Inline size and alignment of a type. */
export function layoutOf(t: FidlType): Layout & { offsets?: number[] } {
  const cached = layoutCache.get(t);
  if (cached) return cached;
  let l: Layout & { offsets?: number[] };
  switch (t.kind) {
    case 'u8':
      l = { size: 1, align: 1 };
      break;
    case 'u64':
      l = { size: 8, align: 8 };
      break;
    case 'handle':
      l = { size: 4, align: 4 };
      break;
    case 'string':
    case 'vector':
    case 'table':
    case 'union':
      l = { size: 16, align: 8 };
      break;
    case 'struct': {
      let off = 0;
      let align = 1;
      const offsets: number[] = [];
      for (const f of t.fields) {
        const fl = layoutOf(f.type);
        off = roundUp(off, fl.align);
        offsets.push(off);
        off += fl.size;
        align = Math.max(align, fl.align);
      }
      l = { size: Math.max(1, roundUp(off, align)), align, offsets };
      break;
    }
  }
  layoutCache.set(t, l);
  return l;
}

function roundUp(n: number, a: number): number {
  return Math.ceil(n / a) * a;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const utf8enc = new TextEncoder();

/** Decodes one FIDL body (primary object at offset 0) of type `t`, requiring every byte to be used. */
export function decodeBody(bytes: Uint8Array, t: FidlType, ctx: DecodeContext = {}): FidlValue {
  const d = new Decoder(bytes, ctx);
  const l = layoutOf(t);
  const at = d.claim(l.size, 0);
  const v = d.decodeInline(t, at, 0);
  d.finish();
  return v;
}

class Decoder {
  private readonly view: DataView;
  private next = 0;
  private handlesLeft: number;
  private readonly file: string | undefined;
  private readonly base: number;

  constructor(
    private readonly bytes: Uint8Array,
    ctx: DecodeContext,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.file = ctx.file;
    this.base = ctx.base ?? 0;
    this.handlesLeft = ctx.handles ?? 0;
  }

  fail(code: (typeof C)[keyof typeof C], message: string, at: number, rule: string): never {
    throw fuchsiaError(code, `${message} (at body offset ${at})`, { file: this.file, offset: this.base + at, rule });
  }

  /** Claims the next out-of-line object of `size` bytes (8-aligned, zero-padded). */
  claim(size: number, at: number): number {
    const start = this.next;
    const end = start + roundUp(size, 8);
    if (end > this.bytes.length) {
      this.fail(C.TRUNCATED, `object of ${size} bytes needs ${end - this.bytes.length} more bytes than the message has`, at, 'objects lie within the message');
    }
    for (let i = start + size; i < end; i++) {
      if (this.bytes[i] !== 0) this.fail(C.PADDING, `non-zero padding byte 0x${this.bytes[i]!.toString(16)}`, i, 'padding bytes must be zero');
    }
    this.next = end;
    return start;
  }

  finish(): void {
    if (this.next !== this.bytes.length) {
      this.fail(C.TRAILING, `${this.bytes.length - this.next} trailing bytes after the last object`, this.next, 'the message must be consumed exactly');
    }
    if (this.handlesLeft !== 0) this.fail(C.HANDLE, `${this.handlesLeft} unused handles`, this.next, 'handles must be consumed exactly');
  }

  u64(at: number): bigint {
    return this.view.getBigUint64(at, true);
  }

  presence(at: number, nullable: boolean, what: string): boolean {
    const w = this.u64(at);
    if (w === 0n) {
      if (!nullable) this.fail(C.PRESENCE, `required ${what} is absent`, at, 'non-nullable objects must be present');
      return false;
    }
    if (w !== UINTPTR_MAX) this.fail(C.PRESENCE, `presence marker 0x${w.toString(16)} is neither 0 nor UINTPTR_MAX`, at, 'presence markers are 0 or UINTPTR_MAX');
    return true;
  }

  count(at: number, max: number | undefined, what: string): number {
    const c = this.u64(at);
    if (c > BigInt(MAX_COUNT)) this.fail(C.BOUNDS, `${what} count ${c} exceeds 2^32-1`, at, 'vector counts fit in 32 bits');
    const n = Number(c);
    if (max !== undefined && n > max) this.fail(C.BOUNDS, `${what} has ${n} elements, more than its bound ${max}`, at, `${what} is bounded to ${max}`);
    return n;
  }

  decodeInline(t: FidlType, at: number, depth: number): FidlValue {
    switch (t.kind) {
      case 'u8':
        return this.bytes[at]!;
      case 'u64':
        return this.u64(at);
      case 'handle': {
        const h = this.view.getUint32(at, true);
        if (h === 0) {
          if (!t.nullable) this.fail(C.HANDLE, 'required handle is absent', at, 'non-nullable handles must be present');
          return false;
        }
        if (h !== 0xffffffff) this.fail(C.HANDLE, `handle slot 0x${h.toString(16)} is neither 0 nor 0xffffffff`, at, 'handle presence is 0 or UINT32_MAX');
        if (this.handlesLeft === 0) this.fail(C.HANDLE, 'a present handle but the message carries no handles (handles are not recorded)', at, 'handles must be supplied');
        this.handlesLeft--;
        return true;
      }
      case 'string': {
        const n = this.count(at, t.max, 'string');
        if (!this.presence(at + 8, !!t.nullable, 'string')) {
          if (n !== 0) this.fail(C.PRESENCE, `absent string with count ${n}`, at, 'absent strings have count 0');
          return null;
        }
        this.depthCheck(depth + 1, at);
        const o = this.claim(n, at);
        try {
          return utf8.decode(this.bytes.subarray(o, o + n));
        } catch {
          return this.fail(C.UTF8, 'string is not valid UTF-8', o, 'strings are UTF-8');
        }
      }
      case 'vector': {
        const n = this.count(at, t.max, 'vector');
        if (!this.presence(at + 8, !!t.nullable, 'vector')) {
          if (n !== 0) this.fail(C.PRESENCE, `absent vector with count ${n}`, at, 'absent vectors have count 0');
          return null;
        }
        this.depthCheck(depth + 1, at);
        const el = layoutOf(t.element);
        // Check the size before allocating anything (a huge count in a small message is an error, not an allocation).
        if (n * el.size > this.bytes.length - this.next) {
          this.fail(C.TRUNCATED, `vector of ${n} elements of ${el.size} bytes exceeds the message`, at, 'objects lie within the message');
        }
        const o = this.claim(n * el.size, at);
        if (t.element.kind === 'u8') return this.bytes.slice(o, o + n);
        if (t.element.kind === 'u64') {
          const out = new BigUint64Array(n);
          for (let i = 0; i < n; i++) out[i] = this.view.getBigUint64(o + i * 8, true);
          return out;
        }
        const out: FidlValue[] = new Array(n);
        for (let i = 0; i < n; i++) out[i] = this.decodeInline(t.element, o + i * el.size, depth + 1);
        return out;
      }
      case 'struct': {
        const l = layoutOf(t);
        const out: Record<string, FidlValue> = {};
        let covered = at;
        t.fields.forEach((f, i) => {
          const fo = at + l.offsets![i]!;
          for (let p = covered; p < fo; p++) {
            if (this.bytes[p] !== 0) this.fail(C.PADDING, `non-zero struct padding byte in ${t.name}`, p, 'padding bytes must be zero');
          }
          out[f.name] = this.decodeInline(f.type, fo, depth);
          covered = fo + layoutOf(f.type).size;
        });
        for (let p = covered; p < at + l.size; p++) {
          if (this.bytes[p] !== 0) this.fail(C.PADDING, `non-zero struct padding byte in ${t.name}`, p, 'padding bytes must be zero');
        }
        return out;
      }
      case 'table': {
        const maxOrd = this.u64(at);
        if (!this.presence(at + 8, false, `table ${t.name}`)) return undefined;
        if (maxOrd > BigInt(MAX_COUNT)) this.fail(C.BOUNDS, `table ${t.name} max_ordinal ${maxOrd} exceeds 2^32-1`, at, 'table max_ordinal fits in 32 bits');
        const m = Number(maxOrd);
        this.depthCheck(depth + 1, at);
        if (m * 8 > this.bytes.length - this.next) {
          this.fail(C.TRUNCATED, `table ${t.name} with max_ordinal ${m} exceeds the message`, at, 'objects lie within the message');
        }
        const envs = this.claim(m * 8, at);
        const out: Record<string, FidlValue> = {};
        let lastPresent = 0;
        for (let i = 0; i < m; i++) {
          const f = t.fields[i + 1];
          const present = this.envelope(envs + i * 8, f?.type, depth + 1, `${t.name}.${f?.name ?? `#${i + 1}`}`, (v) => {
            if (f) out[f.name] = v;
          });
          if (present) lastPresent = i + 1;
        }
        if (m > 0 && lastPresent !== m) {
          this.fail(C.ENVELOPE, `table ${t.name} max_ordinal ${m} but its last envelope is absent`, envs + (m - 1) * 8, 'max_ordinal is the highest present field');
        }
        return out;
      }
      case 'union': {
        const ord = this.u64(at);
        if (ord === 0n) this.fail(C.UNION, `union ${t.name} has ordinal 0`, at, 'a required union has a non-zero ordinal');
        this.depthCheck(depth + 1, at);
        const vnum = ord > BigInt(MAX_COUNT) ? -1 : Number(ord);
        const variant = t.variants[vnum];
        if (!variant && !t.flexible) this.fail(C.UNION, `unknown ordinal ${ord} of strict union ${t.name}`, at, 'strict unions accept only their variants');
        const out: UnionValue = { $variant: variant?.name ?? 'unknown', $ordinal: ord };
        const present = this.envelope(at + 8, variant?.type, depth + 1, `${t.name}.${variant?.name ?? ord}`, (v) => {
          out.value = v;
        });
        if (!present) this.fail(C.UNION, `union ${t.name} ordinal ${ord} with an empty envelope`, at + 8, 'a union variant is present');
        return out;
      }
    }
  }

  private depthCheck(depth: number, at: number): void {
    if (depth > MAX_RECURSION_DEPTH) this.fail(C.DEPTH, `nesting depth ${depth} exceeds ${MAX_RECURSION_DEPTH}`, at, 'maximum recursion depth is 32');
  }

  /** Decodes the envelope at `at`; returns whether it was present. `t` undefined = unknown field (skipped). */
  private envelope(at: number, t: FidlType | undefined, depth: number, what: string, set: (v: FidlValue) => void): boolean {
    const numBytes = this.view.getUint32(at, true);
    const numHandles = this.view.getUint16(at + 4, true);
    const flags = this.view.getUint16(at + 6, true);
    if (numBytes === 0 && numHandles === 0 && flags === 0) return false;
    if (flags !== 0 && flags !== 1) this.fail(C.ENVELOPE, `envelope of ${what} has flags 0x${flags.toString(16)}`, at, 'envelope flags are 0 or 1 (inline)');
    if (numHandles > this.handlesLeft) this.fail(C.ENVELOPE, `envelope of ${what} claims ${numHandles} handles but none are left`, at, 'handles must be supplied');
    this.depthCheck(depth, at);
    if (flags === 1) {
      // Inline form: the value itself in the 4 bytes, only for values of at most 4 bytes.
      if (t && layoutOf(t).size > 4) this.fail(C.ENVELOPE, `inline envelope for ${what}, an ${layoutOf(t).size}-byte value`, at, 'only values of at most 4 bytes are inlined');
      if (t) {
        const sz = layoutOf(t).size;
        for (let p = at + sz; p < at + 4; p++) {
          if (this.bytes[p] !== 0) this.fail(C.PADDING, `non-zero padding in the inline envelope of ${what}`, p, 'padding bytes must be zero');
        }
        const before = this.handlesLeft;
        set(this.decodeInline(t, at, depth));
        if (before - this.handlesLeft !== numHandles) this.fail(C.ENVELOPE, `envelope of ${what} declares ${numHandles} handles but holds ${before - this.handlesLeft}`, at, 'envelope handle count matches its content');
      } else {
        this.handlesLeft -= numHandles;
      }
      return true;
    }
    if (numBytes % 8 !== 0) this.fail(C.ENVELOPE, `envelope of ${what} has num_bytes ${numBytes}, not a multiple of 8`, at, 'envelope num_bytes is a multiple of 8');
    if (t && layoutOf(t).size <= 4) this.fail(C.ENVELOPE, `out-of-line envelope for ${what}, a value of at most 4 bytes`, at, 'values of at most 4 bytes must be inlined');
    const start = this.next;
    if (!t) {
      if (numBytes > this.bytes.length - start) this.fail(C.TRUNCATED, `unknown field ${what} of ${numBytes} bytes exceeds the message`, at, 'objects lie within the message');
      this.next = start + numBytes;
      this.handlesLeft -= numHandles;
      return true;
    }
    const before = this.handlesLeft;
    const o = this.claim(layoutOf(t).size, at);
    set(this.decodeInline(t, o, depth));
    const used = this.next - start;
    if (used !== numBytes) this.fail(C.ENVELOPE, `envelope of ${what} declares ${numBytes} bytes but its content takes ${used}`, at, 'envelope num_bytes equals the bytes consumed');
    if (before - this.handlesLeft !== numHandles) this.fail(C.ENVELOPE, `envelope of ${what} declares ${numHandles} handles but holds ${before - this.handlesLeft}`, at, 'envelope handle count matches its content');
    return true;
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding

/** Encodes `v` as a FIDL body of type `t` (primary object at 0, out-of-line objects after). */
export function encodeBody(t: FidlType, v: FidlValue): Uint8Array {
  // One scratch encoder, reset per call (encoding runs no user code, so it is never re-entered).
  const e = scratch;
  e.reset();
  try {
    const at = e.alloc(layoutOf(t).size);
    e.encodeInline(t, v, at);
    return e.finish();
  } finally {
    e.shrink();
  }
}

const ordinalCache = new WeakMap<FidlType, number[]>();
function tableOrdinals(t: Extract<FidlType, { kind: 'table' }>): number[] {
  let o = ordinalCache.get(t);
  if (!o) {
    o = Object.keys(t.fields)
      .map(Number)
      .sort((a, b) => a - b);
    ordinalCache.set(t, o);
  }
  return o;
}

class Encoder {
  private buf = new Uint8Array(512);
  private view = new DataView(this.buf.buffer);
  private len = 0;

  alloc(size: number): number {
    const at = this.len;
    const end = at + roundUp(size, 8);
    if (end > this.buf.length) {
      let cap = this.buf.length * 2;
      while (cap < end) cap *= 2;
      const nb = new Uint8Array(cap);
      nb.set(this.buf.subarray(0, this.len));
      this.buf = nb;
      this.view = new DataView(nb.buffer);
    }
    this.len = end;
    return at;
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.len);
  }

  /** Zeroes the used part (padding and absent values rely on zeroed memory) and starts over. */
  reset(): void {
    this.buf.fill(0, 0, this.len);
    this.len = 0;
  }

  /** Drops an unusually large buffer after use, so one big message does not pin memory. */
  shrink(): void {
    if (this.buf.length > 1 << 20) {
      this.buf = new Uint8Array(512);
      this.view = new DataView(this.buf.buffer);
      this.len = 0;
    }
  }

  encodeInline(t: FidlType, v: FidlValue, at: number): void {
    switch (t.kind) {
      case 'u8':
        this.buf[at] = Number(v ?? 0) & 0xff;
        return;
      case 'u64':
        this.view.setBigUint64(at, BigInt(v as bigint | number), true);
        return;
      case 'handle':
        this.view.setUint32(at, v ? 0xffffffff : 0, true);
        return;
      case 'string': {
        if (v === null || v === undefined) {
          if (!t.nullable) throw new TypeError('required string is absent');
          return; // count 0, presence 0 (buffer is zeroed)
        }
        const b = utf8enc.encode(v as string);
        if (t.max !== undefined && b.length > t.max) throw new RangeError(`string of ${b.length} bytes exceeds its bound ${t.max}`);
        this.view.setBigUint64(at, BigInt(b.length), true);
        this.view.setBigUint64(at + 8, UINTPTR_MAX, true);
        const o = this.alloc(b.length);
        this.buf.set(b, o);
        return;
      }
      case 'vector': {
        if (v === null || v === undefined) {
          if (!t.nullable) throw new TypeError('required vector is absent');
          return;
        }
        const arr = v as ArrayLike<FidlValue>;
        const n = arr.length;
        if (t.max !== undefined && n > t.max) throw new RangeError(`vector of ${n} elements exceeds its bound ${t.max}`);
        this.view.setBigUint64(at, BigInt(n), true);
        this.view.setBigUint64(at + 8, UINTPTR_MAX, true);
        const el = layoutOf(t.element);
        const o = this.alloc(n * el.size);
        if (t.element.kind === 'u8') {
          this.buf.set(arr as Uint8Array, o);
          return;
        }
        for (let i = 0; i < n; i++) this.encodeInline(t.element, arr[i]!, o + i * el.size);
        return;
      }
      case 'struct': {
        const l = layoutOf(t);
        const obj = (v ?? {}) as Record<string, FidlValue>;
        t.fields.forEach((f, i) => this.encodeInline(f.type, obj[f.name], at + l.offsets![i]!));
        return;
      }
      case 'table': {
        const obj = (v ?? {}) as Record<string, FidlValue>;
        const all = tableOrdinals(t);
        const ords: number[] = [];
        for (const o of all) {
          const x = obj[t.fields[o]!.name];
          if (x !== undefined && x !== null) ords.push(o);
        }
        const m = ords.length ? ords[ords.length - 1]! : 0;
        this.view.setBigUint64(at, BigInt(m), true);
        this.view.setBigUint64(at + 8, UINTPTR_MAX, true);
        const envs = this.alloc(m * 8);
        for (const ord of ords) {
          const f = t.fields[ord]!;
          this.envelope(envs + (ord - 1) * 8, f.type, obj[f.name]);
        }
        return;
      }
      case 'union': {
        const u = v as UnionValue;
        const entry = Object.entries(t.variants).find(([, x]) => x.name === u.$variant);
        if (!entry) throw new TypeError(`unknown variant ${u.$variant} of ${t.name}`);
        this.view.setBigUint64(at, BigInt(entry[0]), true);
        this.envelope(at + 8, entry[1].type, u.value);
        return;
      }
    }
  }

  private envelope(at: number, t: FidlType, v: FidlValue): void {
    const size = layoutOf(t).size;
    if (size <= 4) {
      this.encodeInline(t, v, at);
      this.view.setUint16(at + 4, t.kind === 'handle' && v ? 1 : 0, true);
      this.view.setUint16(at + 6, 1, true);
      return;
    }
    const start = this.len;
    const o = this.alloc(size);
    this.encodeInline(t, v, o);
    this.view.setUint32(at, this.len - start, true);
  }
}

const scratch = new Encoder();
