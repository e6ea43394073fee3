/**
 * Names longer than V8 hashes (16,383 UTF-16 units: such strings hash by their length alone): the
 * writer's frame table and the reader's profile names are keyed through core's StringKeyedMap.
 */

import { describe, expect, it } from 'vitest';
import { ProfileBuilder } from '@profkit/core';
import { readSpeedscopeBytes, writeSpeedscope } from '../src/index.js';

/** `n` distinct names of one length past V8's 16,383 (hashed by their length alone). */
const longNames = (n: number, length: number) => Array.from({ length: n }, (_, i) => 'n'.repeat(length) + String(i).padStart(6, '0'));
const names = longNames(2000, 20_000);

describe('long names', () => {
  it('writer: 1,200 distinct long function names of one length are 1,200 shared frames', () => {
    // Fewer and shorter names than the reader's: the writer's own work is larger (a few seconds here).
    const names = longNames(1200, 16_400);
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const locs = names.map((name) => b.internLocation({ functionId: b.internFunction({ name }) }));
    for (let r = 0; r < 3; r++) for (let i = 0; i < names.length; i++) b.addSample([locs[i]!, locs[(i + 1) % names.length]!], [1n]);
    const doc = JSON.parse(new TextDecoder().decode(writeSpeedscope(b.build()).data));
    expect(doc.shared.frames.map((f: { name: string }) => f.name)).toEqual([names[1], names[0], ...names.slice(2)]);
    // With a Map: 111 s on a busy machine for 2,000 names of 20,006, 23 s for these; now 1.4 s for
    // these. The timeout is a bound, not a measurement.
  }, 10_000);

  it('reader: 2,000 profiles with distinct long names of one length keep their names', () => {
    const profiles = names.map((name) => ({ type: 'sampled', name, unit: 'none', startValue: 0, endValue: 1, samples: [[0]], weights: [1] }));
    const doc = { $schema: 'https://www.speedscope.app/file-format-schema.json', shared: { frames: [{ name: 'main' }] }, profiles };
    const { profile } = readSpeedscopeBytes(new TextEncoder().encode(JSON.stringify(doc)));
    expect(Array.from(profile.sample_types.type)).toEqual(names);
    // With a Map: 25 s; now 1.5 s. The timeout is a bound, not a measurement.
  }, 15_000);
});
