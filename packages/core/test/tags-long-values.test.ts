/**
 * `tagsReport` (pprof -tags) sums per label key and value through StringKeyedMap: values are the
 * input's strings, and a Map hashes strings longer than 16,383 units by their length alone.
 */

import { describe, expect, it } from 'vitest';
import { ProfileBuilder, goPprofLoad, tagsReport } from '../src/index.js';

describe('tagsReport with long label values', () => {
  it('2,000 distinct 20,000-character values of one length: each its own entry, an equal value summed', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    const main = b.internLocation({ functionId: b.internFunction({ name: 'main' }) });
    const values = Array.from({ length: 2000 }, (_, i) => 'v'.repeat(20_000) + String(i).padStart(6, '0'));
    for (const [i, v] of values.entries()) b.addSample([main], [BigInt(i + 1)], [{ key: 'req', str: v }]);
    b.addSample([main], [10_000n], [{ key: 'req', str: values[0]! }]);
    const rep = tagsReport((await goPprofLoad(b.build())).profile);
    const [req] = rep.keys;
    expect(req!.values.length).toBe(2000);
    expect(req!.values[0]).toEqual({ value: values[0], amount: 10_001n });
    expect(req!.values[1]).toEqual({ value: values[1999], amount: 2000n });
    // With Maps: timed out at 20 s (34 s); now 2.9 s on a busy machine. The timeout is a bound, not a measurement.
  }, 20_000);
});
