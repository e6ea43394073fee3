/**
 * Interop with an independent protobuf implementation: protobufjs reflection over our
 * `src/profile.proto`. Random profiles are encoded by protobufjs and decoded by us, and encoded
 * by us and decoded by protobufjs; both sides must agree field by field.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { assertValid, type Profile } from '@profkit/core/node';
import { decodeProfile, encodeProfile } from '../src/codec.js';
import { packageDir } from './helpers.js';
import { seededRandom as rng } from '@profkit/test-utils';

const root = protobuf.parse(readFileSync(join(packageDir, 'src/profile.proto'), 'utf8'), { keepCase: true }).root;
const ProfileMsg = root.lookupType('perftools.profiles.Profile');


type Obj = Record<string, unknown>;

/** A random Profile message in protobufjs JSON form (64-bit numbers as decimal strings). */
function randomMessage(seed: number): Obj {
  const r = rng(seed);
  const int = (n: number) => Math.floor(r() * n);
  const strings = [''];
  const idx = (s: string) => {
    let i = strings.indexOf(s);
    if (i < 0) i = strings.push(s) - 1;
    return i;
  };
  const i64 = (): string => {
    const k = int(6);
    if (k === 0) return (-(2n ** 63n) + BigInt(int(1000))).toString();
    if (k === 1) return (2n ** 63n - 1n - BigInt(int(1000))).toString();
    if (k === 2) return (-BigInt(int(1e9))).toString();
    if (k === 3) return (2n ** 53n + BigInt(int(1e6))).toString();
    return String(int(100000));
  };
  const u64 = (): string => (int(3) === 0 ? (2n ** 64n - 1n - BigInt(int(1e6))).toString() : String(int(1 << 30)));
  const nTypes = 1 + int(4);
  const sample_type = Array.from({ length: nTypes }, (_, i) => ({ type: idx(`type${i}`), unit: idx(['count', 'bytes', 'nanoseconds'][int(3)]!) }));
  const nMap = int(3);
  const mapping = Array.from({ length: nMap }, (_, i) => ({
    id: String(i + 1),
    memory_start: u64(),
    memory_limit: u64(),
    file_offset: u64(),
    filename: idx(`/lib/lib${i}.so`),
    build_id: int(2) ? idx(`build${int(99)}`) : 0,
    has_functions: r() < 0.5,
    has_filenames: r() < 0.5,
    has_line_numbers: r() < 0.5,
    has_inline_frames: r() < 0.5,
  }));
  const nFn = 1 + int(20);
  const fnIds = Array.from({ length: nFn }, (_, i) => 1000 + i * 7);
  const fn = fnIds.map((id) => ({
    id: String(id),
    name: idx(`fn_${id}_ünï`),
    system_name: idx(int(2) ? `_Z${id}` : `fn_${id}_ünï`),
    filename: int(4) ? idx(`src/file${int(5)}.go`) : 0,
    start_line: String(int(3000)),
  }));
  const nLoc = 1 + int(30);
  const locIds = Array.from({ length: nLoc }, (_, i) => 1 + i * 3);
  const location = locIds.map((id) => ({
    id: String(id),
    mapping_id: nMap && int(3) ? String(1 + int(nMap)) : '0',
    address: u64(),
    line: Array.from({ length: int(4) }, () => ({ function_id: String(fnIds[int(nFn)]), line: String(int(5000)), column: int(3) ? '0' : String(int(120)) })),
    is_folded: r() < 0.2,
  }));
  const nS = int(40);
  const sample = Array.from({ length: nS }, () => {
    const labels: Obj[] = [];
    for (let k = int(4); k > 0; k--) {
      if (int(2)) labels.push({ key: idx(`key${int(3)}`), str: idx(`val${int(5)}`) });
      else labels.push({ key: idx(`nkey${int(3)}`), num: String(1 + int(1e6)), num_unit: int(2) ? idx('bytes') : 0 });
    }
    return {
      location_id: Array.from({ length: int(8) }, () => String(locIds[int(nLoc)])),
      value: Array.from({ length: nTypes }, i64),
      label: labels,
    };
  });
  const comment = Array.from({ length: int(4) }, (_, i) => idx(`comment ${i}`));
  return {
    sample_type,
    sample,
    mapping,
    location,
    function: fn,
    drop_frames: int(2) ? idx('malloc|free') : 0,
    keep_frames: int(2) ? idx('keepme') : 0,
    time_nanos: i64(),
    duration_nanos: String(int(1e9)),
    period_type: int(2) ? { type: idx('cpu'), unit: idx('nanoseconds') } : undefined,
    period: i64(),
    comment,
    default_sample_type: int(2) ? sample_type[0]!.type : 0,
    doc_url: int(2) ? idx('https://example.com/doc') : 0,
    string_table: strings,
  };
}

/** A message in protobufjs object form, resolved: strings instead of indices, all 64-bit as strings. */
function resolveMessage(m: Obj): unknown {
  const st = m.string_table as string[];
  const s = (i: unknown) => st[Number(i ?? 0)]!;
  const n = (v: unknown) => BigInt(String(v ?? '0')).toString();
  const u = (v: unknown) => BigInt.asUintN(64, BigInt(String(v ?? '0'))).toString();
  const samples = ((m.sample as Obj[]) ?? []).map((x) => ({
    locs: ((x.location_id as unknown[]) ?? []).map(u),
    values: ((x.value as unknown[]) ?? []).map(n),
    labels: ((x.label as Obj[]) ?? [])
      .map((l) => (Number(l.str ?? 0) !== 0 ? `${s(l.key)}=${s(l.str)}` : `${s(l.key)}#${n(l.num)}${s(l.num_unit)}`))
      .sort(),
  }));
  const pt = m.period_type as Obj | undefined;
  return {
    sampleTypes: ((m.sample_type as Obj[]) ?? []).map((t) => `${s(t.type)}/${s(t.unit)}`),
    samples,
    mappings: ((m.mapping as Obj[]) ?? []).map((x) => [u(x.id), u(x.memory_start), u(x.memory_limit), u(x.file_offset), s(x.filename), s(x.build_id), !!x.has_functions, !!x.has_filenames, !!x.has_line_numbers, !!x.has_inline_frames]),
    locations: ((m.location as Obj[]) ?? []).map((x) => [u(x.id), u(x.mapping_id), u(x.address), !!x.is_folded, ((x.line as Obj[]) ?? []).map((l) => [u(l.function_id), n(l.line), n(l.column)])]),
    functions: ((m.function as Obj[]) ?? []).map((x) => [u(x.id), s(x.name), s(x.system_name), s(x.filename), n(x.start_line)]),
    facts: [s(m.drop_frames), s(m.keep_frames), n(m.time_nanos), n(m.duration_nanos), pt ? `${s(pt.type)}/${s(pt.unit)}` : '/', n(m.period), ((m.comment as unknown[]) ?? []).map(s), s(m.default_sample_type), s(m.doc_url)],
  };
}

/** Our model resolved into the same shape. */
function resolveModel(p: Profile): unknown {
  const samples = [];
  const offs = p.samples.locations.offsets;
  for (let i = 0; i + 1 < offs.length; i++) {
    const labels: string[] = [];
    const lo = p.samples['.label_offsets'];
    if (lo) {
      const t = p['.labels'];
      for (let k = lo[i]!; k < lo[i + 1]!; k++) labels.push(t.is_num[k] ? `${t.key[k]}#${t.num[k]}${t.num_unit[k]}` : `${t.key[k]}=${t.str[k]}`);
    }
    samples.push({
      locs: Array.from(p.samples.locations.location_id.subarray(offs[i]!, offs[i + 1]!), String),
      values: p.samples['.values'].map((c) => c[i]!.toString()),
      labels: labels.sort(),
    });
  }
  const m = p['.mappings'];
  const L = p.locations;
  const inl = p['.inline_lines'];
  const f = p.functions;
  const facts = p['.profile'];
  return {
    sampleTypes: p.sample_types.type.map((t, i) => `${t}/${p.sample_types.unit[i]}`),
    samples,
    mappings: Array.from(m.mapping_id, (id, i) => [String(id), m.memory_start[i]!.toString(), m.memory_limit[i]!.toString(), m.file_offset[i]!.toString(), m.filename[i], m.build_id[i], !!m.has_functions[i], !!m.has_filenames[i], !!m.has_line_numbers[i], !!m.has_inline_frames[i]]),
    locations: Array.from(L.location_id, (id, i) => {
      const lines: string[][] = [];
      if (L.function_id[i]) lines.push([String(L.function_id[i]), String(L.line[i]), String(L['.column'][i])]);
      for (let k = L['.inline_offsets'][i]!; k < L['.inline_offsets'][i + 1]!; k++) lines.push([String(inl.function_id[k]), String(inl.line[k]), String(inl.column[k])]);
      return [String(id), String(L['.mapping_id'][i]), L['.address'][i]!.toString(), !!L['.is_folded'][i], lines];
    }),
    functions: Array.from(f.function_id, (id, i) => [String(id), f.name[i], f.system_name[i], f.filename[i], String(f.start_line[i])]),
    facts: [facts.drop_frames, facts.keep_frames, facts.time_nanos.toString(), facts.duration_nanos.toString(), facts.period_type ? `${facts.period_type.type}/${facts.period_type.unit}` : '/', facts.period.toString(), facts.comments, facts.default_sample_type, facts.doc_url],
  };
}

const toObj = (bytes: Uint8Array): Obj => ProfileMsg.toObject(ProfileMsg.decode(bytes), { longs: String, defaults: false, arrays: true }) as Obj;

describe('protobufjs reflection agrees with our codec', () => {
  for (let seed = 1; seed <= 40; seed++) {
    it(`random profile #${seed}`, () => {
      const original = randomMessage(seed);
      const message = ProfileMsg.fromObject(original);
      expect(ProfileMsg.verify(message)).toBeNull();
      const theirBytes = ProfileMsg.encode(message).finish();
      // protobufjs → us: the model carries exactly the message's content.
      const { profile } = decodeProfile(theirBytes);
      assertValid(profile);
      const expected = resolveMessage(toObj(theirBytes));
      expect(resolveModel(profile)).toEqual(expected);
      // us → protobufjs: our bytes decode (independently) to the same content.
      const ours = encodeProfile(profile);
      expect(resolveMessage(toObj(ours))).toEqual(expected);
    });
  }

  it('values near the int64 limits survive protobufjs → us → protobufjs exactly', () => {
    const msg = {
      sample_type: [{ type: 1, unit: 2 }],
      sample: [{ location_id: ['18446744073709551615'], value: ['-9223372036854775808'] }, { location_id: ['1'], value: ['9223372036854775807'] }],
      location: [{ id: '18446744073709551615' }, { id: '1', address: '18446744073709551615' }],
      string_table: ['', 's', 'c'],
    };
    const bytes = ProfileMsg.encode(ProfileMsg.fromObject(msg)).finish();
    const { profile, warnings } = decodeProfile(bytes);
    expect(warnings[0]!.code).toBe('PROFKIT_W_PPROF_RENUMBERED');
    expect(profile.samples.value[0]).toBe(-(2n ** 63n));
    expect(profile.samples.value[1]).toBe(2n ** 63n - 1n);
    expect(profile.locations['.address'][1]).toBe(2n ** 64n - 1n);
    const back = toObj(encodeProfile(profile));
    expect(((back.sample as Obj[])[0]!.value as string[])[0]).toBe('-9223372036854775808');
    expect(((back.location as Obj[])[1]!.address as string)).toBe('18446744073709551615');
  });
});
