/**
 * `addTagFrames` (pprof -tagroot/-tagleaf) keys a frame by its label values and key through
 * StringKeyedMap: label values are the input's strings, and a Map hashes strings longer than
 * 16,383 units by their length alone (2,000 distinct 20,000-character values: one hash chain).
 */

import { describe, expect, it } from 'vitest';
import { ProfileBuilder, addTagFrames } from '../src/index.js';

describe('addTagFrames with long label values', () => {
  it('2,000 distinct 20,000-character values of one length are 2,000 root frames, an equal value one', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    const main = b.internLocation({ functionId: b.internFunction({ name: 'main' }) });
    const values = Array.from({ length: 2000 }, (_, i) => 'v'.repeat(20_000) + String(i).padStart(6, '0'));
    for (const v of [...values, values[7]!]) b.addSample([main], [1n], [{ key: 'req', str: v }]);
    const { profile, rootMatched } = addTagFrames(b.build(), ['req'], []);
    expect(rootMatched).toBe(true);
    expect(profile.samples.value.length).toBe(2001);
    // One location per distinct value, plus main's.
    expect(profile.locations.location_id.length).toBe(2001);
    // A Map: over 34 s here (2,000² comparisons of 20,000 characters); now 3.4 s on a busy machine.
    // The timeout is a bound, not a measurement.
  }, 20_000);
});
