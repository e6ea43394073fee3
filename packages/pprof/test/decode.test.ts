import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, ProfkitError, assertValid, labelsOf, resolveStack, stackOf } from '@profkit/core/node';
import { decodeProfile, encodeProfile, parsePprof } from '../src/codec.js';
import { pb, str, meaning, type Field } from './helpers.js';

const hex = (s: string): Uint8Array => new Uint8Array(s.trim().split(/\s+/).map((h) => parseInt(h, 16)));
const toHex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(' ');

function errorOf(f: () => unknown): ProfkitError {
  try {
    f();
  } catch (e) {
    if (e instanceof ProfkitError) return e;
    throw new Error(`expected a ProfkitError, got ${String(e)}`);
  }
  throw new Error('expected an error, none thrown');
}

/** The spec's worked example 1 (section 8), computed by hand from google/pprof's rules. */
const MINIMAL = hex(`
  0a 04 08 01 10 02
  12 04 08 01 10 01
  22 05 08 01 18 80 20
  32 00 32 07 73 61 6d 70 6c 65 73 32 05 63 6f 75 6e 74
  70 00`);

describe('decoder: the spec worked examples', () => {
  it('reads the minimal profile and writes it back byte for byte', () => {
    // The spec says "38 bytes in total" but its own byte list has 39: the list is right.
    expect(MINIMAL.length).toBe(39);
    const { profile: p, warnings } = decodeProfile(MINIMAL, { file: 'minimal.pb' });
    expect(warnings).toEqual([]);
    assertValid(p);
    expect(p.sample_types).toEqual({ type: ['samples'], unit: ['count'] });
    expect(Array.from(p.samples.value)).toEqual([1n]);
    expect(Array.from(stackOf(p, 0))).toEqual([1]);
    expect(p.locations['.address'][0]).toBe(0x1000n);
    expect(p.locations.function_id[0]).toBe(0);
    expect(toHex(encodeProfile(p))).toBe(toHex(MINIMAL));
  });

  it('packs repeated integers only when there are more than 2 (example 2)', () => {
    const input = pb([
      [1, [[1, 1], [2, 2]]],
      [1, [[1, 3], [2, 2]]],
      [1, [[1, 4], [2, 2]]],
      [2, [[1, 1], [2, 1], [2, 2], [2, 3]]],
      [4, [[1, 1]]],
      [6, str('')],
      [6, str('a')],
      [6, str('count')],
      [6, str('b')],
      [6, str('c')],
    ]);
    const { profile } = decodeProfile(input);
    const out = encodeProfile(profile);
    // The sample message: ids unpacked (1 element), values packed (3 elements).
    expect(toHex(out)).toContain('12 07 08 01 12 03 01 02 03');
  });
});

describe('decoder: wire format freedom', () => {
  // One profile written two ways: canonically (Go's layout, by hand) and scrambled (any field
  // order, unpacked values, split packed records, unknown fields everywhere).
  const canonical = pb([
    [1, [[1, 1], [2, 2]]],
    [1, [[1, 3], [2, 4]]],
    [2, [[1, { packed: [1, 2, 1] }], [2, 5], [2, -7]]],
    [3, [[1, 1], [2, 0x400000], [3, 0x500000], [5, 5], [7, 1]]],
    [4, [[1, 1], [2, 1], [3, 0x401000], [4, [[1, 1], [2, 10]]]]],
    [4, [[1, 2], [2, 1], [3, 0x402000], [4, [[1, 2], [2, 20], [3, 7]]], [4, [[1, 1], [2, 11]]], [5, 1]]],
    [5, [[1, 1], [2, 6], [3, 6], [4, 7], [5, 3]]],
    [5, [[1, 2], [2, 8], [3, 8], [4, 7]]],
    [6, str('')],
    [6, str('samples')],
    [6, str('count')],
    [6, str('cpu')],
    [6, str('nanoseconds')],
    [6, str('/bin/app')],
    [6, str('main')],
    [6, str('main.go')],
    [6, str('inner')],
    [9, 1700000000000000000n],
    [10, 60000000000n],
    [11, [[1, 3], [2, 4]]],
    [12, 10000000],
    [14, 0],
  ]);
  const scrambled = pb([
    [9, 1700000000000000000n],
    [99, 12345],
    [5, [[2, 6], [1, 1], [5, 3], [4, 7], [3, 6], [20, str('unknown')]]],
    [2, [[2, 5], [1, 1], [2, -7], [1, { packed: [2] }], [1, 1], [30, { fixed64: 7n }]]],
    [100, { fixed64: 1n }],
    [101, { fixed32: 2 }],
    [12, 10000000],
    [1, [[2, 2], [1, 1]]],
    [4, [[1, 1], [3, 0x401000], [2, 1], [4, [[2, 10], [1, 1]]]]],
    [3, [[7, 1], [5, 5], [3, 0x500000], [2, 0x400000], [1, 1]]],
    [1, [[1, 3], [2, 4]]],
    [4, [[4, [[2, 20], [1, 2], [3, 7]]], [4, [[1, 1], [2, 11], [9, 1]]], [5, 1], [3, 0x402000], [1, 2], [2, 1]]],
    [10, 60000000000n],
    [11, [[2, 4], [1, 3]]],
    [5, [[4, 7], [3, 8], [2, 8], [1, 2]]],
    [6, str('')],
    [6, str('samples')],
    [6, str('count')],
    [6, str('cpu')],
    [6, str('nanoseconds')],
    [6, str('/bin/app')],
    [6, str('main')],
    [6, str('main.go')],
    [6, str('inner')],
  ]);

  it('accepts any field order, packed or unpacked (even split), and skips unknown fields', () => {
    const a = decodeProfile(canonical).profile;
    const b = decodeProfile(scrambled).profile;
    assertValid(a);
    assertValid(b);
    expect(meaning(b)).toEqual(meaning(a));
    expect(Array.from(stackOf(b, 0))).toEqual([1, 2, 1]);
  });

  it('writes the scrambled input in google/pprof layout', () => {
    expect(toHex(encodeProfile(decodeProfile(scrambled).profile))).toBe(toHex(canonical));
    expect(toHex(encodeProfile(decodeProfile(canonical).profile))).toBe(toHex(canonical));
  });

  it('maps Location.line[0] to the location and further lines to .inline_lines', () => {
    const p = decodeProfile(canonical).profile;
    expect(p.locations.function_id[1]).toBe(2);
    expect(p.locations.line[1]).toBe(20);
    expect(p.locations['.column'][1]).toBe(7);
    expect(Array.from(p.locations['.inline_offsets'])).toEqual([0, 0, 1]);
    expect(p['.inline_lines'].function_id[0]).toBe(1);
    expect(p['.inline_lines'].line[0]).toBe(11);
    expect(p.locations['.is_folded'][1]).toBe(1);
    const frames = resolveStack(p, 0);
    expect(frames.map((f) => `${f.name}:${f.line}:${f.inlined}`)).toEqual(['main:10:false', 'inner:20:true', 'main:11:false', 'main:10:false']);
    expect(p['.mappings'].has_functions[0]).toBe(1);
    expect(p['.mappings'].has_filenames[0]).toBe(0);
    expect(p['.profile'].period_type).toEqual({ type: 'cpu', unit: 'nanoseconds' });
    expect(p['.profile'].time_nanos).toBe(1700000000000000000n);
  });
});

describe('decoder: 64-bit exactness', () => {
  const big = [2n ** 53n + 1n, -(2n ** 63n), 2n ** 63n - 1n, -1n, -123456789012345n];
  const input = pb([
    [1, [[1, 1], [2, 2]]],
    [1, [[1, 1], [2, 2]]],
    [1, [[1, 1], [2, 2]]],
    [1, [[1, 1], [2, 2]]],
    [1, [[1, 1], [2, 2]]],
    [2, [[1, 1], [2, { packed: big }], [3, [[1, 3], [3, -(2n ** 60n) - 7n], [4, 4]]], [3, [[1, 5], [2, 6]]]] as Field[]],
    [2, [[1, 1], [2, -5], [2, 0], [2, 2n ** 62n], [2, 1], [2, 2]] as Field[]],
    [3, [[1, 1], [2, 2n ** 63n], [3, 2n ** 64n - 1n], [4, 2n ** 53n + 3n]]],
    [4, [[1, 1], [2, 1], [3, 2n ** 64n - 2n]]],
    [6, str('')],
    [6, str('v')],
    [6, str('u')],
    [6, str('bytes')],
    [6, str('bytes')],
    [6, str('thread')],
    [6, str('t1')],
    [9, -(2n ** 62n)],
    [10, 2n ** 63n - 1n],
    [12, 2n ** 53n + 5n],
  ]);
  it('keeps values, addresses, label numbers and facts above 2^53 and negative', () => {
    const { profile: p } = decodeProfile(input);
    assertValid(p);
    expect(p.samples['.values'].map((c) => c[0])).toEqual(big);
    expect(p.samples['.values'].map((c) => c[1])).toEqual([-5n, 0n, 2n ** 62n, 1n, 2n]);
    expect(p.locations['.address'][0]).toBe(2n ** 64n - 2n);
    expect(p['.mappings'].memory_start[0]).toBe(2n ** 63n);
    expect(p['.mappings'].memory_limit[0]).toBe(2n ** 64n - 1n);
    expect(p['.mappings'].file_offset[0]).toBe(2n ** 53n + 3n);
    expect(labelsOf(p, 0)).toEqual([
      { key: 'bytes', num: -(2n ** 60n) - 7n, unit: 'bytes' },
      { key: 'thread', str: 't1' },
    ]);
    expect(p['.profile'].time_nanos).toBe(-(2n ** 62n));
    expect(p['.profile'].duration_nanos).toBe(2n ** 63n - 1n);
    expect(p['.profile'].period).toBe(2n ** 53n + 5n);
    // Write -> read is the identity on these fields.
    const again = decodeProfile(encodeProfile(p)).profile;
    expect(meaning(again)).toEqual(meaning(p));
    expect(again.samples['.values']).toEqual(p.samples['.values']);
  });

  it('writes negative int64 as 10-byte varints, as Go does', () => {
    const { profile: p } = decodeProfile(input);
    const out = encodeProfile(p);
    // -1 as a varint: nine 0xff bytes and 0x01.
    expect(toHex(out)).toContain('ff ff ff ff ff ff ff ff ff 01');
  });
});

describe('decoder: labels as google/pprof decodes and encodes them', () => {
  const input = pb([
    [1, [[1, 1], [2, 2]]],
    [2, [[1, 1], [2, 1], [3, [[1, 3], [2, 4]]], [3, [[1, 5], [3, 9], [4, 6]]], [3, [[1, 7], [2, 8]]], [3, [[1, 3]]], [3, [[1, 5], [3, 10]]], [3, [[1, 3], [2, 9]]]] as Field[]],
    [4, [[1, 1]]],
    [6, str('')],
    [6, str('samples')],
    [6, str('count')],
    [6, str('zeta')],
    [6, str('z1')],
    [6, str('bytes')],
    [6, str('B')],
    [6, str('alpha')],
    [6, str('a1')],
    [6, str('z2')],
  ]);
  it('drops labels without str, num and unit and keeps file order in the model', () => {
    const { profile: p } = decodeProfile(input);
    expect(labelsOf(p, 0)).toEqual([
      { key: 'zeta', str: 'z1' },
      { key: 'bytes', num: 9n, unit: 'B' },
      { key: 'alpha', str: 'a1' },
      { key: 'bytes', num: 10n },
      { key: 'zeta', str: 'z2' },
    ]);
  });
  it('writes string labels by sorted key, then numeric labels by sorted key, strings interned in that order', () => {
    const { profile: p } = decodeProfile(input);
    const expected = pb([
      [1, [[1, 1], [2, 2]]],
      [2, [[1, 1], [2, 1], [3, [[1, 3], [2, 4]]], [3, [[1, 5], [2, 6]]], [3, [[1, 5], [2, 7]]], [3, [[1, 8], [3, 9], [4, 9]]], [3, [[1, 8], [3, 10]]]] as Field[]],
      [4, [[1, 1]]],
      [6, str('')],
      [6, str('samples')],
      [6, str('count')],
      [6, str('alpha')],
      [6, str('a1')],
      [6, str('zeta')],
      [6, str('z1')],
      [6, str('z2')],
      [6, str('bytes')],
      [6, str('B')],
      [14, 0],
    ]);
    expect(toHex(encodeProfile(p))).toBe(toHex(expected));
  });
});

describe('decoder rules (section 1.3) as typed errors', () => {
  const good: Field[] = [
    [1, [[1, 1], [2, 2]]],
    [2, [[1, 1], [2, 1]]],
    [4, [[1, 1]]],
    [6, str('')],
    [6, str('samples')],
    [6, str('count')],
  ];
  const cases: [string, Uint8Array, string, string, number | undefined][] = [
    ['string_table[0] not empty', pb([[6, str('x')], [6, str('')]]), ErrorCodes.PARSE, "string_table[0] must be ''", 0],
    ['string index out of range', pb([...good, [7, 9]]), ErrorCodes.PARSE, 'malformed profile format', 34],
    ['negative string index', pb([...good, [14, -1]]), ErrorCodes.PARSE, 'malformed profile format', 34],
    ['no string table', pb([[9, 5]]), ErrorCodes.PARSE, 'malformed profile format', 0],
    ['time_nanos twice', pb([[9, 5], ...good, [9, 6]]), ErrorCodes.PARSE, 'concatenated profiles detected', 36],
    ['truncated varint', new Uint8Array([0x48, 0x80, 0x80]), ErrorCodes.PARSE, 'bad varint', 1],
    ['11-byte varint', new Uint8Array([0x48, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), ErrorCodes.PARSE, 'bad varint', 1],
    ['length beyond the end', new Uint8Array([0x32, 0x05, 0x61]), ErrorCodes.PARSE, 'too much data', 0],
    ['short fixed64', new Uint8Array([0x32, 0x00, 0xa1, 0x06, 1, 2, 3]), ErrorCodes.PARSE, 'not enough data', 2],
    ['short fixed32', new Uint8Array([0x32, 0x00, 0xa5, 0x06, 1]), ErrorCodes.PARSE, 'not enough data', 2],
    ['group wire type', new Uint8Array([0x32, 0x00, 0xa3, 0x06]), ErrorCodes.PARSE, 'unknown wire type: 3', 2],
    ['sample_type as varint', pb([[6, str('')], [1, 5]]), ErrorCodes.PARSE, 'type mismatch', 2],
    ['time_nanos as bytes', pb([[6, str('')], [9, str('x')]]), ErrorCodes.PARSE, 'type mismatch', 2],
    ['label key as bytes', pb([...good, [2, [[1, 1], [2, 1], [3, [[1, str('k')]]]]]]), ErrorCodes.PARSE, 'type mismatch', 42],
  ];
  for (const [name, bytes, code, rule, offset] of cases) {
    it(`${name} → ${code} "${rule}"`, () => {
      const e = errorOf(() => decodeProfile(bytes, { file: 'in.pb' }));
      expect(e.code).toBe(code);
      expect(e.detail.rule).toContain(rule);
      expect(e.message).toContain(rule);
      expect(e.detail.file).toBe('in.pb');
      if (offset !== undefined) expect(e.detail.offset).toBe(offset);
    });
  }

  it('empty input → EMPTY_INPUT "empty input file"', () => {
    const e = errorOf(() => decodeProfile(new Uint8Array(0), { file: 'e.pb' }));
    expect(e.code).toBe(ErrorCodes.EMPTY_INPUT);
    expect(e.detail.rule).toBe('empty input file');
  });

  it('two concatenated gzip members → "concatenated profiles detected"', () => {
    const one = pb([[9, 5], ...good]);
    const cat = new Uint8Array([...gzipSync(one), ...gzipSync(one)]);
    const e = errorOf(() => parsePprof(cat, { file: 'cat.pb.gz' }));
    expect(e.code).toBe(ErrorCodes.PARSE);
    expect(e.detail.rule).toBe('concatenated profiles detected');
  });

  it('time_nanos 0 then non-zero is not a concatenation (Go checks the first value)', () => {
    const { profile } = decodeProfile(pb([[9, 0], ...good, [9, 6]]));
    expect(profile['.profile'].time_nanos).toBe(6n);
  });

  it('corrupt gzip → DECOMPRESS; truncated gzip header → DECOMPRESS', () => {
    expect(errorOf(() => parsePprof(new Uint8Array([0x1f, 0x8b]))).code).toBe(ErrorCodes.DECOMPRESS);
    const z = gzipSync(pb(good));
    expect(errorOf(() => parsePprof(z.subarray(0, z.length - 12))).code).toBe(ErrorCodes.DECOMPRESS);
  });

  it('a line number beyond 2^53 → RANGE', () => {
    const e = errorOf(() => decodeProfile(pb([...good.slice(0, 2), [4, [[1, 1], [4, [[1, 1], [2, 2n ** 60n]]]]], [5, [[1, 1]]], ...good.slice(3)])));
    expect(e.code).toBe(ErrorCodes.RANGE);
  });
});

describe('CheckValid (section 1.5) with Go messages', () => {
  const st: Field[] = [[6, str('')], [6, str('s')], [6, str('c')]];
  const cases: [string, Field[], string][] = [
    ['samples without sample types', [[2, [[1, 1], [2, 1]]], [4, [[1, 1]]], ...st], 'missing sample type information'],
    ['value count mismatch', [[1, [[1, 1], [2, 2]]], [2, [[1, 1], [2, 1], [2, 2]]], [4, [[1, 1]]], ...st], 'mismatch: sample has 2 values vs. 1 types'],
    ['sample location 0', [[1, [[1, 1], [2, 2]]], [2, [[1, 0], [2, 1]]], ...st], 'sample has nil location'],
    ['unknown sample location', [[1, [[1, 1], [2, 2]]], [2, [[1, 7], [2, 1]]], [4, [[1, 1]]], ...st], 'sample has nil location'],
    ['mapping id 0', [[3, [[2, 1]]], ...st], 'found mapping with reserved ID=0'],
    ['duplicate mapping ids', [[3, [[1, 2]]], [3, [[1, 2]]], ...st], 'multiple mappings with same id: 2'],
    ['function id 0', [[5, [[2, 1]]], ...st], 'found function with reserved ID=0'],
    ['duplicate function ids', [[5, [[1, 3]]], [5, [[1, 3]]], ...st], 'multiple functions with same id: 3'],
    ['location id 0', [[4, [[3, 5]]], ...st], 'found location with reserved id=0'],
    ['duplicate location ids', [[4, [[1, 4]]], [4, [[1, 4]]], ...st], 'multiple locations with same id: 4'],
    ['line with function 0', [[4, [[1, 4], [4, [[2, 3]]]]], ...st], 'location id: 4 has a line with nil function'],
    ['line with unknown function', [[4, [[1, 4], [4, [[1, 9]]]]], [5, [[1, 1]]], ...st], 'location id: 4 has a line with nil function'],
  ];
  for (const [name, fields, rule] of cases) {
    it(`${name} → INVALID_PROFILE "${rule}"`, () => {
      const e = errorOf(() => decodeProfile(pb(fields), { file: 'bad.pb' }));
      expect(e.code).toBe(ErrorCodes.INVALID_PROFILE);
      expect(e.detail.rule).toContain(rule);
      expect(e.detail.file).toBe('bad.pb');
    });
  }
});

describe('ids and references', () => {
  it('renumbers ids above 2^32-1 (with a warning) and follows references', () => {
    const L = 2n ** 40n + 5n;
    const F = 2n ** 33n;
    const M = 2n ** 35n;
    const input = pb([
      [1, [[1, 1], [2, 2]]],
      [2, [[1, L], [1, 7], [2, 3]]],
      [3, [[1, M], [6, 3]]],
      [4, [[1, 7], [4, [[1, 9], [2, 1]]]]],
      [4, [[1, L], [2, M], [3, 0x10], [4, [[1, F], [2, 2]]]]],
      [5, [[1, 9], [2, 4]]],
      [5, [[1, F], [2, 5]]],
      [6, str('')],
      [6, str('samples')],
      [6, str('count')],
      [6, str('bid')],
      [6, str('f9')],
      [6, str('fbig')],
    ]);
    const { profile: p, warnings } = decodeProfile(input);
    assertValid(p);
    expect(warnings.map((w) => w.code)).toEqual(['PROFKIT_W_PPROF_RENUMBERED', 'PROFKIT_W_PPROF_RENUMBERED', 'PROFKIT_W_PPROF_RENUMBERED']);
    expect(Array.from(p.locations.location_id)).toEqual([7, 8]);
    expect(Array.from(p.functions.function_id)).toEqual([9, 10]);
    expect(Array.from(p['.mappings'].mapping_id)).toEqual([1]);
    expect(resolveStack(p, 0).map((f) => `${f.name}:${f.line}:${f.mappingId}`)).toEqual(['fbig:2:1', 'f9:1:0']);
  });

  it('makes a location whose mapping id matches no mapping unmapped, with a warning (Go does it silently)', () => {
    const { profile: p, warnings } = decodeProfile(pb([[3, [[1, 1]]], [4, [[1, 1], [2, 2]]], [4, [[1, 2], [2, 1]]], [6, str('')]]));
    expect(Array.from(p.locations['.mapping_id'])).toEqual([0, 1]);
    expect(warnings.map((w) => w.code)).toEqual(['PROFKIT_W_PPROF_UNKNOWN_MAPPING']);
  });

  it('reads empty function names as R\'s placeholder "<?>" and writes them back as ""', () => {
    const input = pb([[5, [[1, 1], [4, 1]]], [6, str('')], [6, str('??')], [14, 0]]);
    const { profile: p } = decodeProfile(input);
    expect(p.functions.name[0]).toBe('<?>');
    expect(p.functions.system_name[0]).toBe('<?>');
    assertValid(p);
    expect(toHex(encodeProfile(p))).toBe(toHex(input));
  });

  it('keeps non-ASCII strings', () => {
    const input = pb([[5, [[1, 1], [2, 1], [3, 1], [4, 2]]], [6, str('')], [6, str('größe→λ😀')], [6, str('файл.go')], [14, 0]]);
    const { profile: p } = decodeProfile(input);
    expect(p.functions.name[0]).toBe('größe→λ😀');
    expect(toHex(encodeProfile(p))).toBe(toHex(input));
  });
});

describe('robustness', () => {
  it('random corruptions give a profile or a ProfkitError, never another error or a hang', () => {
    const base = pb([
      [1, [[1, 1], [2, 2]]],
      [1, [[1, 3], [2, 4]]],
      [2, [[1, { packed: [1, 2, 1, 2] }], [2, 5], [2, -7], [3, [[1, 5], [2, 6]]], [3, [[1, 7], [3, 9], [4, 2]]]]],
      [3, [[1, 1], [2, 0x400000], [3, 0x500000], [5, 8]]],
      [4, [[1, 1], [2, 1], [3, 0x401000], [4, [[1, 1], [2, 10]]]]],
      [4, [[1, 2], [3, 0x402000], [4, [[1, 1], [2, 20], [3, 7]]], [4, [[1, 1], [2, 11]]], [5, 1]]],
      [5, [[1, 1], [2, 6], [3, 6], [4, 8], [5, 3]]],
      [6, str('')],
      [6, str('samples')],
      [6, str('count')],
      [6, str('cpu')],
      [6, str('nanoseconds')],
      [6, str('k')],
      [6, str('v')],
      [6, str('n')],
      [6, str('main')],
      [9, 17],
      [13, 6],
      [14, 3],
    ]);
    let a = 2024;
    const r = () => {
      a = (Math.imul(a, 1103515245) + 12345) >>> 0;
      return a / 4294967296;
    };
    const seen = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const b = new Uint8Array(base);
      for (let k = 1 + Math.floor(r() * 3); k > 0; k--) b[Math.floor(r() * b.length)] = Math.floor(r() * 256);
      const input = r() < 0.2 ? b.subarray(0, Math.floor(r() * b.length)) : b;
      try {
        const { profile } = decodeProfile(input);
        encodeProfile(profile);
        seen.add('ok');
      } catch (e) {
        expect(e).toBeInstanceOf(ProfkitError);
        seen.add((e as ProfkitError).code);
      }
    }
    // The corpus reaches decoded profiles as well as parse and validity errors.
    expect([...seen].sort()).toEqual(expect.arrayContaining(['ok', ErrorCodes.PARSE]));
  });
});
