/**
 * `goPprofLoad` and `rawReport` bounded by construction (issue #17): the load's merge holds an
 * object per location line, so it is bounded by `maxTableEntries` whatever made the profile, and
 * `raw` without filters prints the loaded profile itself instead of a filtered copy of it (the
 * copy read every line as an object: 9M inline lines, a 67 MB pprof, peaked at 3.15 GB).
 */

import { describe, expect, it, vi } from 'vitest';
import * as rawFilters from '../src/ops/raw-filters.js';
import { ProfileBuilder, ProfkitError, formatPprofDump, goPprofLoad, rawReport, type Profile } from '../src/index.js';

vi.mock('../src/ops/raw-filters.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../src/ops/raw-filters.js')>();
  return { ...actual, filtersKeepingLocations: vi.fn(actual.filtersKeepingLocations) };
});

/**
 * `locations` samples, each on a location of its own with `inlined` inline lines and a label of
 * its own (as the reviewer's 67 MB profile, scaled down); `emptyStack` adds a sample without one.
 */
function inlineHeavy(locations: number, inlined: number, emptyStack = false): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }] });
  const rec = b.internFunction({ name: 'recursive', filename: 'r.go' });
  const callers = Array.from({ length: inlined }, (_, i) => (i % 2 ? rec : b.internFunction({ name: `caller${i}`, filename: 'c.go' })));
  const leaf = b.internFunction({ name: 'leaf', filename: 'l.go' });
  for (let s = 0; s < locations; s++) {
    const location = b.addLocation({ functionId: leaf, line: 1, address: 0x1000 + s, inlinedInto: callers.map((functionId, i) => ({ functionId, line: i + 1 })) });
    b.addSample([location], [1, 1000 * (s + 1)], [{ key: 'k', num: s }, { key: 'name', str: `s${s}` }]);
  }
  if (emptyStack) b.addSample([], [5, 5]);
  return b.build();
}

const filtersKeepingLocations = vi.mocked(rawFilters.filtersKeepingLocations);

describe('goPprofLoad: bounded by maxTableEntries', () => {
  it('refuses, before merging, a profile whose locations and lines exceed maxTableEntries', async () => {
    // 200 locations of 201 lines: 40,400 lines, each an object while merged.
    const p = inlineHeavy(200, 200);
    const e = await goPprofLoad(p, { maxTableEntries: 10_000 }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(ProfkitError);
    expect((e as ProfkitError).code).toBe('PROFKIT_E_LIMIT');
    expect((e as ProfkitError).detail.option).toBe('maxTableEntries');
    expect((e as ProfkitError).detail.limit).toBe(10_000);
  });

  it('loads the same profile under the default limit and under one just large enough', async () => {
    const p = inlineHeavy(200, 200);
    // 200 locations + 40,200 inline lines + 200 first lines + 102 functions + 400 labels.
    const entries = 200 + 200 * 201 + 102 + 400;
    expect((await goPprofLoad(p)).profile.locations.location_id.length).toBe(200);
    expect((await goPprofLoad(p, { maxTableEntries: entries })).profile.locations.location_id.length).toBe(200);
    await expect(goPprofLoad(p, { maxTableEntries: entries - 1 })).rejects.toMatchObject({ code: 'PROFKIT_E_LIMIT', detail: { option: 'maxTableEntries' } });
  });
});

describe('rawReport: no filtered copy when there is nothing to filter', () => {
  it('prints the loaded profile as the filters would, without copying it through them', async () => {
    const loaded = (await goPprofLoad(inlineHeavy(20, 30))).profile;
    filtersKeepingLocations.mockClear();
    const text = rawReport(loaded, { filters: { focus: '', tagFocus: undefined } });
    expect(filtersKeepingLocations).not.toHaveBeenCalled();
    // Byte for byte what the filters' copy prints (the text `go tool pprof -raw` is compared with).
    expect(text).toBe(formatPprofDump(rawFilters.filtersKeepingLocations(loaded, {}), { columns: false, emptyNamePlaceholder: '<?>' }));
    expect(text).toContain('caller28 c.go:29 s=0');
  });

  it('still filters when a filter is given or a sample has no stack (pprof drops it)', async () => {
    const loaded = (await goPprofLoad(inlineHeavy(3, 4, true))).profile;
    filtersKeepingLocations.mockClear();
    const withEmpty = rawReport(loaded);
    expect(filtersKeepingLocations).toHaveBeenCalledTimes(1);
    expect(withEmpty).not.toMatch(/^ +5 +5: $/m);
    expect(formatPprofDump(loaded, { columns: false })).toMatch(/^ +5 +5: $/m);

    const plain = (await goPprofLoad(inlineHeavy(3, 4))).profile;
    filtersKeepingLocations.mockClear();
    expect(rawReport(plain, { filters: { focus: 'caller2' } })).toContain('caller2 c.go:3');
    expect(filtersKeepingLocations).toHaveBeenCalledTimes(1);
  });
});
