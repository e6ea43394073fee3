import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, ProfkitError, assertValid, resolveStack, totalValue } from '@profkit/core/node';
import { encodeProfile, parsePprof } from '../src/codec.js';
import { sniffPprof } from '../src/sniff.js';
import { LEGACY_FIXTURES, PROTO_FIXTURES, fixture, hasFixtures, meaning, readFixture } from './helpers.js';

function score(r: ReturnType<typeof sniffPprof>): number {
  return typeof r === 'number' ? r : r.score;
}

describe.skipIf(!hasFixtures)('shared fixtures', () => {
  for (const rel of PROTO_FIXTURES) {
    describe(rel, () => {
      const bytes = hasFixtures ? readFixture(rel) : new Uint8Array(0);
      it('is detected by sniff (≥ 0.8) from its head', () => {
        expect(score(sniffPprof(bytes.subarray(0, 4096), { fileName: rel, size: bytes.length }))).toBeGreaterThanOrEqual(0.8);
      });
      it('reads into a valid profile', () => {
        const { profile, warnings } = parsePprof(bytes, { file: rel });
        assertValid(profile, rel);
        expect(warnings).toEqual([]);
        expect(profile.samples.value.length).toBeGreaterThan(0);
        expect(profile.sample_types.type.length).toBeGreaterThan(0);
      });
      it('writes the identical raw bytes after re-encoding our own output (fixed point) and keeps the meaning', () => {
        const { profile } = parsePprof(bytes, { file: rel });
        const raw = encodeProfile(profile);
        const again = parsePprof(raw).profile;
        expect(meaning(again)).toEqual(meaning(profile));
        expect(Buffer.from(encodeProfile(again)).equals(Buffer.from(raw))).toBe(true);
      });
    });
  }

  it('go.nomappings.crash: four unpacked values per sample, no mappings', () => {
    const { profile: p } = parsePprof(readFixture('pprof/internal/driver/testdata/go.nomappings.crash'));
    expect(p.sample_types.type.length).toBe(4);
    expect(p['.mappings'].mapping_id.length).toBe(0);
  });

  it('r-profile 1.out.prof.pb.gz agrees with the R package-derived dump (read_pprof JSON)', () => {
    const { profile: p } = parsePprof(readFixture('r-profile/inst/samples/proto/1.out.prof.pb.gz'));
    const r = JSON.parse(readFileSync(fixture('r-profile/derived/read_pprof-1.out.prof.pb.gz.json'), 'utf8')) as {
      samples: { value: number; locations: number[] }[];
      locations: { location_id: number; function_id: number | null; line: number | null }[];
      functions: { function_id: number; name: string; system_name: string; filename: string; start_line: number }[];
    };
    expect(p.samples.value.length).toBe(r.samples.length);
    expect(p.sample_types.type).toEqual(['samples', 'cpu']);
    for (let i = 0; i < r.samples.length; i++) {
      expect(p.samples.value[i]).toBe(BigInt(r.samples[i]!.value));
      expect(Array.from(p.samples.locations.location_id.subarray(p.samples.locations.offsets[i]!, p.samples.locations.offsets[i + 1]!))).toEqual(r.samples[i]!.locations);
    }
    // R keeps the *last* Line of a location; every location of this fixture has one Line.
    expect(p['.inline_lines'].function_id.length).toBe(0);
    for (const [i, l] of r.locations.entries()) {
      expect(p.locations.location_id[i]).toBe(l.location_id);
      expect(p.locations.function_id[i]).toBe(l.function_id ?? 0);
      expect(p.locations.line[i]).toBe(l.line ?? 0);
    }
    expect(p.functions.name).toEqual(r.functions.map((f) => f.name));
    expect(p.functions.system_name).toEqual(r.functions.map((f) => f.system_name));
    expect(p.functions.filename).toEqual(r.functions.map((f) => f.filename));
    expect(p['.mappings'].mapping_id.length).toBe(9);
    expect(p['.profile'].period).toBe(10000000n);
    expect(p['.profile'].drop_frames).toContain('|');
  });

  it('r-profile 1.out.prof.pb.gz agrees with its protoc text dump on mappings and period type', () => {
    const text = readFileSync(fixture('r-profile/derived/1.out.prof.pb.gz.textproto'), 'utf8');
    const { profile: p } = parsePprof(readFixture('r-profile/inst/samples/proto/1.out.prof.pb.gz'));
    const starts = [...text.matchAll(/memory_start:\s*(\d+)/g)].map((m) => BigInt(m[1]!));
    expect(Array.from(p['.mappings'].memory_start)).toEqual(starts);
    const addresses = [...text.matchAll(/address:\s*(\d+)/g)].map((m) => BigInt(m[1]!));
    expect(Array.from(p.locations['.address'])).toEqual(addresses);
  });

  it('large.cpu: totals equal a sum computed straight from the gunzipped bytes by a generic walker', () => {
    const gz = readFixture('pprof/internal/proftest/testdata/large.cpu');
    const { profile: p } = parsePprof(gz);
    // An independent walk: sum every Sample.value[1] and count samples.
    const raw = gunzipSync(gz);
    let pos = 0;
    const vr = (b: Uint8Array): bigint => {
      let r = 0n;
      let s = 0n;
      for (;;) {
        const x = b[pos++]!;
        r |= BigInt(x & 0x7f) << s;
        s += 7n;
        if (x < 0x80) return BigInt.asIntN(64, r);
      }
    };
    let n = 0;
    let sum = 0n;
    while (pos < raw.length) {
      const tag = Number(vr(raw));
      const wt = tag & 7;
      if (wt === 0) vr(raw);
      else if (wt === 2) {
        const len = Number(vr(raw));
        if (tag >> 3 === 2) {
          n++;
          const end = pos + len;
          const vals: bigint[] = [];
          while (pos < end) {
            const t = Number(vr(raw));
            if ((t & 7) === 0) {
              const v = vr(raw);
              if (t >> 3 === 2) vals.push(v);
            } else {
              const l = Number(vr(raw));
              const e = pos + l;
              if (t >> 3 === 2) while (pos < e) vals.push(vr(raw));
              pos = e;
            }
          }
          sum += vals[1]!;
        } else pos += len;
      } else throw new Error(`unexpected wire type ${wt}`);
    }
    expect(p.samples.value.length).toBe(n);
    expect(totalValue(p, 1)).toBe(sum);
    expect(resolveStack(p, 0).length).toBeGreaterThan(0);
  });

  for (const rel of LEGACY_FIXTURES) {
    it(`refuses legacy ${rel} (sniff 0, read → PARSE with offset and rule)`, () => {
      const bytes = readFixture(rel);
      expect(score(sniffPprof(bytes.subarray(0, 4096), { fileName: rel, size: bytes.length }))).toBe(0);
      let err: unknown;
      try {
        parsePprof(bytes, { file: rel });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ProfkitError);
      const e = err as ProfkitError;
      expect([ErrorCodes.PARSE, ErrorCodes.INVALID_PROFILE]).toContain(e.code);
      expect(e.detail.file).toBe(rel);
      expect(typeof e.detail.rule).toBe('string');
    });
  }

  it('refuses the empty fuzz corpus file with EMPTY_INPUT', () => {
    let err: unknown;
    try {
      parsePprof(readFixture('pprof/fuzz/corpus/empty'), { file: 'empty' });
    } catch (e) {
      err = e;
    }
    expect((err as ProfkitError).code).toBe(ErrorCodes.EMPTY_INPUT);
  });
});
