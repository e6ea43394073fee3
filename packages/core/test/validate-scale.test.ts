import { describe, expect, it } from 'vitest';
import { DATA_FORMAT_VERSION, createProfile, validate, type Profile } from '../src/node/index.js';

/**
 * A profile with `n` samples built directly as typed arrays (no builder, no per-row objects):
 * stacks of 1..8 frames over `nLoc` locations and `nFn` functions, ids spread by `idStride`
 * (a stride > 4 makes ids sparse, exercising the Map-based id lookup).
 */
function bigProfile(n: number, nLoc: number, nFn: number, idStride = 1): Profile {
  const offsets = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i]! + 1 + (i % 8);
  const stackIds = new Uint32Array(offsets[n]!);
  for (let j = 0; j < stackIds.length; j++) stackIds[j] = ((j * 7919) % nLoc) * idStride + 1;
  const value = new BigInt64Array(n);
  for (let i = 0; i < n; i++) value[i] = BigInt(1 + (i % 5));
  const locationId = new Uint32Array(nLoc);
  const locFn = new Uint32Array(nLoc);
  const line = new Float64Array(nLoc);
  for (let i = 0; i < nLoc; i++) {
    locationId[i] = i * idStride + 1;
    locFn[i] = (i % nFn) * idStride + 1;
    line[i] = i % 300;
  }
  const fnId = new Uint32Array(nFn);
  const names: string[] = new Array(nFn);
  for (let i = 0; i < nFn; i++) {
    fnId[i] = i * idStride + 1;
    names[i] = `fn${i}`;
  }
  const p = createProfile({
    sample_types: { type: ['samples'], unit: ['count'] },
    samples: { value, locations: { offsets, location_id: stackIds }, '.values': [value] },
    locations: { location_id: locationId, function_id: locFn, line },
    functions: { function_id: fnId, name: names, system_name: names.slice(), filename: new Array(nFn).fill('big.R'), start_line: new Float64Array(nFn) },
  });
  expect(p.meta.value[0]).toBe(DATA_FORMAT_VERSION);
  return p;
}

describe('validate at scale', () => {
  it('validates a profile of one million samples built from typed arrays, in both modes', () => {
    const p = bigProfile(1_000_000, 20_000, 2_000);
    expect(p.samples.locations.location_id.length).toBe(4_500_000);
    expect(validate(p)).toEqual({ ok: true, problems: [], errorCount: 0, warningCount: 0, omitted: 0 });
    expect(validate(p, { mode: 'strict-r' }).ok).toBe(true);
  });

  it('validates sparse ids through the Map lookup and still finds a dangling reference', () => {
    const p = bigProfile(200_000, 5_000, 500, 100_003);
    expect(validate(p).ok).toBe(true);
    const last = p.samples.locations.location_id.length - 1;
    p.samples.locations.location_id[last] = 42; // not a multiple of the stride + 1
    const r = validate(p);
    expect(r.problems.map((x) => [x.code, x.row])).toEqual([['R24_SAMPLE_LOCATION_EXISTS', 199_999]]);
  });

  it('finds every kind of bad stack entry with dense ids (the one-pass scan falls back to the per-sample loop)', () => {
    const p = bigProfile(100_000, 5_000, 500);
    const ids = p.samples.locations.location_id;
    const offsets = p.samples.locations.offsets;
    expect(validate(p).ok).toBe(true);
    const problems = (mutate: () => void) => {
      const saved = ids.slice();
      mutate();
      const r = validate(p);
      ids.set(saved);
      return r.problems.map((x) => [x.code, x.row, x.severity]);
    };
    // The very first and the very last entry, an id just past the dense array's end, a gap.
    expect(problems(() => (ids[0] = 0))).toEqual([['PPROF_SAMPLE_LOCATION_ZERO', 0, 'error']]);
    expect(problems(() => (ids[ids.length - 1] = 5_001))).toEqual([['R24_SAMPLE_LOCATION_EXISTS', 99_999, 'error']]);
    expect(problems(() => (ids[offsets[500]!] = 4_000_000_000))).toEqual([['R24_SAMPLE_LOCATION_EXISTS', 500, 'error']]);
    p.locations.location_id[10] = 9_999; // location 11 no longer exists; 9,999 is in range but unused
    const missing = validate(p).problems.filter((x) => x.code === 'R24_SAMPLE_LOCATION_EXISTS');
    expect(missing.length).toBeGreaterThan(0);
    for (const m of missing) {
      const row = m.row!;
      expect(Array.from(ids.subarray(offsets[row]!, offsets[row + 1]!))).toContain(11);
    }
    p.locations.location_id[10] = 11;
    expect(validate(p).ok).toBe(true);
  });

  it('strict-r still rejects stack ids above 2^31 - 1 (such ids make the location ids sparse)', () => {
    const p = bigProfile(1_000, 100, 10);
    const { offsets, location_id: ids } = p.samples.locations;
    const at = 7;
    const sample = offsets.findIndex((o, i) => o <= at && at < offsets[i + 1]!);
    p.locations.location_id[ids[at]! - 1] = 2_147_483_648;
    ids[at] = 2_147_483_648;
    const problems = validate(p, { mode: 'strict-r' }).problems.map((x) => [x.code, x.table, x.row]);
    expect(problems).toContainEqual(['STRICT_R_INT32', 'samples', sample]);
    expect(validate(p).problems.filter((x) => x.table === 'samples' && x.code !== 'R24_SAMPLE_LOCATION_EXISTS')).toEqual([]);
  });

  it('lists at most 100 rows per rule for a million broken rows and counts the rest', () => {
    const p = bigProfile(1_000_000, 1_000, 100);
    p.samples.value.fill(0n);
    const r = validate(p, { mode: 'strict-r' });
    expect(r.ok).toBe(false);
    expect(r.errorCount).toBe(1_000_000);
    expect(r.omitted).toBe(999_900);
    expect(r.problems).toHaveLength(101);
    expect(r.problems.slice(0, 100).map((x) => x.row)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(r.problems[100]).toMatchObject({ code: 'R20_SAMPLE_VALUE_POSITIVE', rule: 'R20', table: 'samples', column: 'value', severity: 'error' });
    expect(r.problems[100]!.row).toBeUndefined();
    expect(r.problems[100]!.message).toMatch(/^999900 more rows of samples\.value break rule R20/);
    // Zero values are fine in profkit mode.
    expect(validate(p).ok).toBe(true);
  });
});
