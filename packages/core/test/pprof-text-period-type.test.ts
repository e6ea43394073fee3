/**
 * `raw` prints the period type of the profile as `go tool pprof` holds it: Go's proto decoder
 * makes an empty one when the file has none (`postDecode`), so `-raw` prints `PeriodType: ` with
 * an empty type and unit (the interop test against `go tool pprof` is in the CLI's tests).
 */

import { describe, expect, it } from 'vitest';
import { ProfileBuilder, goPprofLoad, rawReport, type ProfileFacts } from '../src/index.js';

async function rawOf(facts: Partial<ProfileFacts>): Promise<string[]> {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }], facts });
  b.addSample([b.internLocation({ functionId: b.internFunction({ name: 'main' }), line: 3 })], [4n]);
  const p = b.build();
  return rawReport((await goPprofLoad(p)).profile).split('\n').slice(0, 2);
}

describe('raw: PeriodType', () => {
  it('a profile without one prints an empty one, as Go decodes it', async () => {
    expect(await rawOf({})).toEqual(['PeriodType:  ', 'Period: 0']);
  });

  it('a profile with one prints it', async () => {
    expect(await rawOf({ period_type: { type: 'cpu', unit: 'nanoseconds' }, period: 10n })).toEqual(['PeriodType: cpu nanoseconds', 'Period: 10']);
  });
});
