/**
 * Tables produced by the R package `profile` itself (its readers call R's validate_profile, so R
 * accepted every one of them) must pass strict-r validation once put into the profkit model; and
 * breaking one rule in them must produce exactly that rule's problem.
 *
 * The reference outputs live in ../shared/fixtures/r-profile/derived (beside the clone, or under
 * $PROFKIT_SHARED); the tests skip with a message when they are absent.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { haveSharedFixtures, sharedFixturePath } from '@profkit/test-utils';
import { describe, expect, it } from 'vitest';
import { createProfile, validate, type Profile } from '../src/node/index.js';

const derived = sharedFixturePath('r-profile/derived');
const FILES = ['read_rprof-1.out.json', 'read_rprof-incomplete.out.json', 'read_pprof-1.out.prof.pb.gz.json'];
const present = haveSharedFixtures('validate-r-fixtures', 'r-profile/derived', 'the R reference-table tests are skipped');

interface RTables {
  meta: { key: string; value: string }[];
  sample_types: { type: string; unit: string }[];
  samples: { value: number; locations: number[] }[];
  locations: { location_id: number; function_id: number | null; line: number | null }[];
  functions: { function_id: number; name: string; system_name: string; filename: string | null; start_line: number }[];
}

/** R's tables (NA as null) → the profkit model (NA as 0 / ''). */
function fromR(t: RTables): Profile {
  const offsets = new Uint32Array(t.samples.length + 1);
  t.samples.forEach((s, i) => (offsets[i + 1] = offsets[i]! + s.locations.length));
  const value = BigInt64Array.from(t.samples, (s) => BigInt(s.value));
  const p = createProfile({
    sample_types: { type: t.sample_types.map((x) => x.type), unit: t.sample_types.map((x) => x.unit) },
    samples: { value, locations: { offsets, location_id: Uint32Array.from(t.samples.flatMap((s) => s.locations)) }, '.values': [value] },
    locations: {
      location_id: Uint32Array.from(t.locations, (l) => l.location_id),
      function_id: Uint32Array.from(t.locations, (l) => l.function_id ?? 0),
      line: Float64Array.from(t.locations, (l) => l.line ?? 0),
    },
    functions: {
      function_id: Uint32Array.from(t.functions, (f) => f.function_id),
      name: t.functions.map((f) => f.name),
      system_name: t.functions.map((f) => f.system_name),
      filename: t.functions.map((f) => f.filename ?? ''),
      start_line: Float64Array.from(t.functions, (f) => f.start_line),
    },
  });
  p.meta = { key: t.meta.map((m) => m.key), value: t.meta.map((m) => m.value) };
  return p;
}

function load(file: string): Profile {
  return fromR(JSON.parse(readFileSync(join(derived, file), 'utf8')) as RTables);
}

describe.skipIf(!present)("tables written by R's profile package", () => {
  it.each(FILES)('%s validates in strict-r and profkit mode', (file) => {
    const p = load(file);
    expect(p.samples.value.length).toBeGreaterThan(0);
    expect(p.locations.location_id.length).toBeGreaterThan(0);
    expect(validate(p, { mode: 'strict-r' }).problems).toEqual([]);
    expect(validate(p).problems).toEqual([]);
  });

  it('finds a broken rule in a real profile and names its row', () => {
    const p = load('read_rprof-1.out.json');
    const last = p.functions.function_id.length - 1;
    p.functions.function_id[last] = p.functions.function_id[0]!;
    const r = validate(p, { mode: 'strict-r' });
    // The repeated id is a duplicate (R38), and the locations of the lost function now dangle.
    expect(r.problems[0]).toMatchObject({ code: 'R38_FUNCTION_ID_UNIQUE', rule: 'R38', table: 'functions', column: 'function_id', row: last });
    expect(r.problems.slice(1).every((x) => x.code === 'R30_LOCATION_FUNCTION_EXISTS')).toBe(true);
    const lostId = load('read_rprof-1.out.json').functions.function_id[last]!;
    const users = Array.from(p.locations.function_id).filter((f) => f === lostId).length;
    expect(r.problems.length - 1).toBe(users);
  });
});
