/**
 * The Rprof writer numbers `#File` paths through StringKeyedMap (once per location row), not a
 * Map keyed by the path for every frame of every sample: a Map hashes strings longer than 16,383
 * units by their length alone, so 2,000 distinct long paths of one length were one hash chain.
 */

import { describe, expect, it } from 'vitest';
import { ProfileBuilder } from '@profkit/core';
import { writeRprofText } from '../src/index.js';

describe('Rprof writer, long file paths', () => {
  it('2,000 distinct 20,000-character paths of one length get 2,000 #File lines, each used by its frames', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const paths = Array.from({ length: 2000 }, (_, i) => '/src/' + 'p'.repeat(20_000) + String(i).padStart(6, '0') + '.R');
    const locs = paths.map((filename, i) => b.internLocation({ functionId: b.internFunction({ name: `f${i}`, filename }), line: 3 }));
    for (let i = 0; i < paths.length; i++) b.addSample([locs[i]!, locs[(i + 1) % paths.length]!], [1n]);
    const { text } = await writeRprofText(b.build());
    const lines = text.split('\n');
    const files = lines.filter((l) => l.startsWith('#File '));
    expect(files.length).toBe(2000);
    expect(files[0]).toBe(`#File 1: ${paths[0]}`);
    expect(files[1]).toBe(`#File 2: ${paths[1]}`);
    // Sample 2 is f1 (file 2) called by f2 (file 3).
    expect(lines.filter((l) => l.startsWith('2#3 "f1" '))).toEqual(['2#3 "f1" 3#3 "f2" ']);
    // A Map keyed by path for every frame: 10,000 such samples took 184 s to write, now 1.3 s. The
    // timeout is a bound, not a measurement.
  }, 20_000);
});
