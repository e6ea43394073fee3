import { describe, expect, it } from 'vitest';
import {
  decodeBody,
  decodeChannelMessage,
  decodeDatagram,
  encodeBody,
  encodeChannelMessage,
  encodeDatagram,
  FuchsiaErrorCodes as C,
  methodOrdinal,
  ORDINALS,
  type FidlType,
  type SamplerCall,
} from '../src/node.js';
import { expectError, hex } from './helpers.js';
import { VECTOR_A, VECTOR_B, VECTOR_C, VECTOR_D } from './vectors.js';

const A = hex(VECTOR_A);
const B = hex(VECTOR_B);
const Cv = hex(VECTOR_C);
const D = hex(VECTOR_D);

const alloc: SamplerCall = { method: 'RecordAllocation', address: 0x1000n, stackTrace: { stackFrames: BigUint64Array.of(0x10n, 0x20n) }, size: 100n };
const processInfo: SamplerCall = {
  method: 'SetProcessInfo',
  processName: 'test',
  moduleMap: [{ buildId: Uint8Array.from({ length: 20 }, (_, i) => i + 1), executableSegments: [{ startAddress: 0x2000n, size: 0x1000n, relativeAddress: 0n }] }],
};

/** Writes a little-endian u64 into a copy. */
function patch64(b: Uint8Array, at: number, v: bigint): Uint8Array {
  const c = b.slice();
  new DataView(c.buffer).setBigUint64(at, v, true);
  return c;
}
function patch8(b: Uint8Array, at: number, v: number): Uint8Array {
  const c = b.slice();
  c[at] = v;
  return c;
}

describe('method ordinals (spec §1.5, §4.11)', () => {
  it('validates the algorithm on fuchsia.io/Node.Close', () => {
    expect(methodOrdinal('fuchsia.io/Node.Close')).toBe(0x5ac5d459ad7f657en);
  });
  it('computes the four Sampler ordinals from the method names', () => {
    expect(ORDINALS.RecordAllocation).toBe(0x6b0add9f7769824dn);
    expect(ORDINALS.RecordDeallocation).toBe(0x503bff5ec34dbeebn);
    expect(ORDINALS.SetProcessInfo).toBe(0x68a0557106e51783n);
    expect(ORDINALS.SetSharedSocket).toBe(0x32e9c11b7a2958fdn);
  });
});

describe('spec test vectors decode and encode byte-exact (§4.12)', () => {
  it('A: gen-1 RecordAllocation (88 bytes)', () => {
    expect(A.length).toBe(88);
    expect(encodeChannelMessage(alloc, { generation: 1 })).toEqual(A);
    const m = decodeChannelMessage(A);
    expect(m.kind === 'call' && m.generation).toBe(1);
    expect(m.kind === 'call' && m.call).toEqual(alloc);
  });
  it('B: gen-2 RecordAllocation (128 bytes)', () => {
    expect(B.length).toBe(128);
    expect(encodeChannelMessage(alloc, { generation: 2 })).toEqual(B);
    const m = decodeChannelMessage(B);
    expect(m.kind === 'call' && m.generation).toBe(2);
    expect(m.kind === 'call' && m.flexible).toBe(true);
    expect(m.kind === 'call' && m.call).toEqual(alloc);
  });
  it('C: gen-2 SetProcessInfo (240 bytes)', () => {
    expect(Cv.length).toBe(240);
    expect(encodeChannelMessage(processInfo, { generation: 2 })).toEqual(Cv);
    const m = decodeChannelMessage(Cv);
    expect(m.kind === 'call' && m.call).toEqual(processInfo);
  });
  it('D: gen-3 persisted SamplerDatagram (128 bytes)', () => {
    const call: SamplerCall = { method: 'RecordAllocation', address: 0x1000n, stackTrace: { stackFrames: BigUint64Array.of(0x10n) }, size: 100n };
    expect(D.length).toBe(128);
    expect(encodeDatagram(call)).toEqual(D);
    const d = decodeDatagram(D);
    expect(d).toEqual({ kind: 'call', call });
  });
  it('round-trips deallocations, absent fields and gen-3 SetSharedSocket', () => {
    const dealloc: SamplerCall = { method: 'RecordDeallocation', address: 0xffff_ffff_ffff_fff0n, stackTrace: { stackFrames: BigUint64Array.of(1n, 2n, 3n) } };
    for (const g of [1, 2] as const) {
      const m = decodeChannelMessage(encodeChannelMessage(dealloc, { generation: g }));
      expect(m.kind === 'call' && m.call).toEqual(dealloc);
    }
    expect(decodeDatagram(encodeDatagram(dealloc))).toEqual({ kind: 'call', call: dealloc });
    // Gen 2 tables: absent fields stay absent.
    const partial: SamplerCall = { method: 'RecordAllocation', address: 5n, stackTrace: undefined, size: undefined };
    const m = decodeChannelMessage(encodeChannelMessage(partial, { generation: 2 }));
    expect(m.kind === 'call' && m.call).toEqual(partial);
    const info: SamplerCall = { method: 'SetProcessInfo', processName: undefined, moduleMap: [{ buildId: undefined, executableSegments: [{ startAddress: 1n, size: undefined, relativeAddress: 3n }] }] };
    const mi = decodeChannelMessage(encodeChannelMessage(info));
    expect(mi.kind === 'call' && mi.call).toEqual(info);
    const sock = encodeChannelMessage({ method: 'SetSharedSocket' }, { generation: 3 });
    expect(sock.length).toBe(24);
    expect([...sock.subarray(16)]).toEqual([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
    const ms = decodeChannelMessage(sock);
    expect(ms.kind === 'call' && ms.call.method).toBe('SetSharedSocket');
  });
  it('gen-1 SetProcessInfo: strict header, the same table body as gen 2', () => {
    const g1 = encodeChannelMessage(processInfo, { generation: 1 });
    expect(g1[6]).toBe(0);
    expect(g1.subarray(16)).toEqual(Cv.subarray(16));
    const m = decodeChannelMessage(g1);
    expect(m.kind === 'call' && [m.generation, m.flexible]).toEqual([1, false]);
    expect(m.kind === 'call' && m.call).toEqual(processInfo);
  });
  it('ignores unknown flexible methods but rejects unknown strict ones', () => {
    const unknown = patch64(B, 8, 0x1234n);
    expect(decodeChannelMessage(unknown)).toEqual({ kind: 'unknown-method', ordinal: 0x1234n, flexible: true });
    expectError(() => decodeChannelMessage(patch64(A, 8, 0x1234n)), C.UNKNOWN_METHOD);
  });
  it('skips unknown table fields using the envelope size', () => {
    // A StackTrace-like table with an extra field 2 (u64) that our schema does not know.
    const known: FidlType = { kind: 'table', name: 'T', fields: { 1: { name: 'a', type: { kind: 'u64' } } } };
    const wider: FidlType = { kind: 'table', name: 'T', fields: { 1: { name: 'a', type: { kind: 'u64' } }, 2: { name: 'b', type: { kind: 'string' } } } };
    const bytes = encodeBody(wider, { a: 7n, b: 'hello' });
    expect(decodeBody(bytes, known)).toEqual({ a: 7n });
  });
});

describe('malformed messages give typed errors with offsets (§4.12 negative cases)', () => {
  it('non-zero padding in the process name string', () => {
    const e = expectError(() => decodeChannelMessage(patch8(Cv, 0x44, 0x41), { file: 'f.fsrec', offset: 100 }), C.PADDING);
    expect(e.detail.file).toBe('f.fsrec');
    expect(e.detail.offset).toBe(100 + 0x44);
    expect(e.detail.rule).toMatch(/padding/);
  });
  it('a presence word other than 0 or UINTPTR_MAX', () => {
    const e = expectError(() => decodeChannelMessage(patch64(B, 0x60, 0x1234n)), C.PRESENCE);
    expect(e.detail.offset).toBe(0x60);
    expectError(() => decodeChannelMessage(patch64(A, 0x20, 1n)), C.PRESENCE);
  });
  it('a required vector that is absent', () => {
    expectError(() => decodeChannelMessage(patch64(A, 0x40, 0n)), C.PRESENCE);
  });
  it('envelope num_bytes not a multiple of 8, or disagreeing with the content', () => {
    const e = expectError(() => decodeChannelMessage(patch64(B, 0x28, 0x3an)), C.ENVELOPE);
    expect(e.detail.offset).toBe(0x28);
    expect(e.message).toMatch(/multiple of 8/);
    const e2 = expectError(() => decodeChannelMessage(patch64(B, 0x28, 0x30n)), C.ENVELOPE);
    expect(e2.message).toMatch(/declares 48 bytes but its content takes 56/);
  });
  it('envelope flags other than 0 or 1, and the inline flag on an 8-byte field', () => {
    expectError(() => decodeChannelMessage(patch8(B, 0x26, 2)), C.ENVELOPE);
    const e = expectError(() => decodeChannelMessage(patch64(B, 0x20, 0x0001_0000_0000_0008n)), C.ENVELOPE);
    expect(e.message).toMatch(/inline envelope/);
  });
  it('handles in an envelope of a handle-less recording', () => {
    expectError(() => decodeChannelMessage(patch8(B, 0x24, 1)), C.ENVELOPE);
  });
  it('trailing bytes after the last object', () => {
    const longer = new Uint8Array(A.length + 8);
    longer.set(A);
    const e = expectError(() => decodeChannelMessage(longer), C.TRAILING);
    expect(e.detail.offset).toBe(88);
  });
  it('a message cut short', () => {
    for (const cut of [8, 40, 80, 87]) expectError(() => decodeChannelMessage(A.subarray(0, cut)), C.TRUNCATED);
  });
  it('build_id with 21 bytes', () => {
    const call = { ...processInfo, moduleMap: [{ buildId: new Uint8Array(20), executableSegments: [] }] } as SamplerCall;
    const ok = encodeChannelMessage(call);
    // Count word of the build id vector: header 16 + table 16 + 2 envs 16 + name (16+8) + module vector 16 + ModuleMap table 16 + 2 envs 16.
    const at = 16 + 16 + 16 + 24 + 16 + 16 + 16;
    expect(new DataView(ok.buffer).getBigUint64(at, true)).toBe(20n);
    const e = expectError(() => decodeChannelMessage(patch64(ok, at, 21n)), C.BOUNDS);
    expect(e.message).toMatch(/bound 20/);
  });
  it('process_name of 33 bytes, and invalid UTF-8 in it', () => {
    // Encode a 32-byte name, then grow it to 33 by patching the count and one more byte of padding space.
    const name32 = 'a'.repeat(32);
    const ok = encodeChannelMessage({ method: 'SetProcessInfo', processName: name32 });
    expect(decodeChannelMessage(ok).kind).toBe('call');
    const body = ok.subarray(16);
    // Build by hand: table(16) env1(8) string header(16) 40 bytes data (33 + 7 padding).
    const long = new Uint8Array(16 + 16 + 8 + 16 + 40);
    long.set(ok.subarray(0, 16 + 16 + 8 + 8), 0);
    const dv = new DataView(long.buffer);
    dv.setUint32(16 + 16, 16 + 40, true);
    dv.setBigUint64(16 + 24, 33n, true);
    dv.setBigUint64(16 + 32, 0xffff_ffff_ffff_ffffn, true);
    long.fill(0x61, 16 + 40, 16 + 40 + 33);
    expect(body.length).toBe(72);
    const e = expectError(() => decodeChannelMessage(long), C.BOUNDS);
    expect(e.message).toMatch(/bound 32/);
    const bad = ok.slice();
    bad[16 + 40] = 0xff;
    expectError(() => decodeChannelMessage(bad), C.UTF8);
  });
  it('recursion deeper than 32', () => {
    let t: FidlType = { kind: 'u64' };
    for (let i = 0; i < 40; i++) t = { kind: 'vector', element: t };
    let v: unknown = [1n];
    for (let i = 0; i < 39; i++) v = [v];
    const bytes = encodeBody(t, v as never);
    expectError(() => decodeBody(bytes, t), C.DEPTH);
    // 30 levels are fine.
    let t2: FidlType = { kind: 'u64' };
    for (let i = 0; i < 30; i++) t2 = { kind: 'vector', element: t2 };
    let v2: unknown = [1n];
    for (let i = 0; i < 29; i++) v2 = [v2];
    expect(decodeBody(encodeBody(t2, v2 as never), t2)).toBeTruthy();
  });
  it('magic other than 1, missing v2 flag, non-zero txid, ordinal 0, reserved flags', () => {
    expectError(() => decodeChannelMessage(patch8(A, 7, 2)), C.HEADER);
    expectError(() => decodeChannelMessage(patch8(A, 4, 0)), C.HEADER);
    expectError(() => decodeChannelMessage(patch8(A, 0, 1)), C.HEADER);
    expectError(() => decodeChannelMessage(patch64(A, 8, 0n)), C.HEADER);
    expectError(() => decodeChannelMessage(patch8(A, 6, 0x20)), C.HEADER);
  });
  it('the byte_overflow flag (RFC-0196) is rejected with its own code', () => {
    const e = expectError(() => decodeChannelMessage(patch8(B, 6, 0xc0), { file: 'x', offset: 16 }), C.BYTE_OVERFLOW);
    expect(e.detail.offset).toBe(22);
    expect(e.message).toMatch(/VMO/);
  });
  it('gen-1 body with the flexible flag (or vice versa) fails structurally', () => {
    expect(expectError(() => decodeChannelMessage(patch8(A, 6, 0x80)), C.HEADER).message).toMatch(/generation-1 struct body/);
    expect(expectError(() => decodeChannelMessage(patch8(B, 6, 0)), C.HEADER).message).toMatch(/generation-2 table body/);
  });
  it('malformed persisted datagrams', () => {
    expectError(() => decodeDatagram(patch8(D, 1, 2)), C.HEADER);
    expectError(() => decodeDatagram(patch8(D, 0, 1)), C.HEADER);
    expectError(() => decodeDatagram(patch8(D, 5, 1)), C.HEADER);
    expectError(() => decodeDatagram(patch64(D, 8, 0n)), C.UNION);
    expectError(() => decodeDatagram(D.subarray(0, 4)), C.TRUNCATED);
    // Unknown variant of the flexible union: kept as unknown, not an error.
    expect(decodeDatagram(patch64(D, 8, 9n))).toEqual({ kind: 'unknown-variant', ordinal: 9n });
  });
  it('huge counts in small messages fail without allocating', () => {
    expectError(() => decodeChannelMessage(patch64(A, 0x38, 0xffff_ffffn)), C.TRUNCATED);
    expectError(() => decodeChannelMessage(patch64(A, 0x38, 0x1_0000_0000n)), C.BOUNDS);
    expectError(() => decodeChannelMessage(patch64(A, 0x18, 0xffff_fffen)), C.TRUNCATED);
  });
  it('max_ordinal that points past the last present field', () => {
    const T: FidlType = { kind: 'table', name: 'T', fields: { 1: { name: 'a', type: { kind: 'u64' } } } };
    const good = hex('01 00 00 00 00 00 00 00 ff ff ff ff ff ff ff ff 08 00 00 00 00 00 00 00 07 00 00 00 00 00 00 00');
    expect(decodeBody(good, T)).toEqual({ a: 7n });
    // max_ordinal 2 with a zero (absent) 2nd envelope.
    const bad = hex('02 00 00 00 00 00 00 00 ff ff ff ff ff ff ff ff 08 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 07 00 00 00 00 00 00 00');
    const e = expectError(() => decodeBody(bad, T), C.ENVELOPE);
    expect(e.detail.offset).toBe(24);
  });
});
