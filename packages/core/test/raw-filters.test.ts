/** `filtersKeepingLocations` (the filters of `rawReport`) on edge cases of the model. */

import { describe, expect, it } from 'vitest';
import { ProfileBuilder, filtersKeepingLocations, type Profile } from '../src/index.js';

/** Two samples `main` and `main;work` with values 5 and 7 in `samples.value`, and no sample types. */
function withoutSampleTypes(): Profile {
  const b = new ProfileBuilder({ sampleTypes: [] });
  const fMain = b.internFunction({ name: 'main' });
  const fWork = b.internFunction({ name: 'work' });
  const lMain = b.addLocation({ functionId: fMain, line: 1 });
  const lWork = b.addLocation({ functionId: fWork, line: 2 });
  b.addSample([lMain], []);
  b.addSample([lWork, lMain], []);
  const p = b.build();
  // Without sample types, `value` is a column of its own (no `.values[0]` aliases it). pprof's
  // CheckValid rejects samples without a type, but the operations take such a profile as given.
  return { ...p, samples: { ...p.samples, value: BigInt64Array.of(5n, 7n) } };
}

describe('filtersKeepingLocations', () => {
  it('keeps samples.value of a profile without sample types', () => {
    const out = filtersKeepingLocations(withoutSampleTypes(), {});
    expect([...out.samples.value]).toEqual([5n, 7n]);
    expect(out.samples['.values']).toEqual([]);
  });

  it('keeps the value of each sample a filter keeps, without sample types', () => {
    const out = filtersKeepingLocations(withoutSampleTypes(), { focus: '^work$' });
    expect([...out.samples.value]).toEqual([7n]);
  });
});
