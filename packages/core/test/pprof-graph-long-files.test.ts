/**
 * `goGraph` trims each file name once, caching the result through StringKeyedMap: file names are
 * the input's, and a Map hashes strings longer than 16,383 units by their length alone (2,000
 * distinct long names of one length: one hash chain, looked up for every location line).
 */

import { describe, expect, it } from 'vitest';
import { ProfileBuilder, goGraph, goPprofLoad } from '../src/index.js';

describe('goGraph with long file names', () => {
  it('2,000 distinct 20,000-character file names of one length are 2,000 files', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    const files = Array.from({ length: 2000 }, (_, i) => '/src/' + 'd'.repeat(20_000) + String(i).padStart(6, '0') + '.go');
    const locs = files.map((filename, i) => b.internLocation({ functionId: b.internFunction({ name: `f${i}`, filename }), line: 3 }));
    for (let r = 0; r < 5; r++) for (let i = 0; i < files.length; i++) b.addSample([locs[i]!, locs[(i + 1) % files.length]!], [1n]);
    const p = (await goPprofLoad(b.build())).profile;
    const g = goGraph(p, { granularity: 'lines' });
    // (Not a Set of the names: that is the slow map this test is about.)
    expect(g.nodes.map((n) => n.info.file).sort()).toEqual([...files].sort());
    expect(g.nodes.find((n) => n.info.name === 'f7')!.info.file).toBe(files[7]);
    // With a Map: timed out at 20 s (28 s); now 3.6 s on a busy machine. The timeout is a bound, not a measurement.
  }, 20_000);
});
