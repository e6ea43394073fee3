/**
 * Names longer than V8 hashes (16,383 UTF-16 units: such strings hash by their length alone): the
 * writer's frame table and the reader's profile names are keyed through core's StringKeyedMap.
 */

import { describe, expect, it } from 'vitest';
import { ProfileBuilder } from '@profkit/core';
import { readSpeedscopeBytes, writeSpeedscope } from '../src/index.js';

const names = Array.from({ length: 2000 }, (_, i) => 'n'.repeat(20_000) + String(i).padStart(6, '0'));

describe('long names', () => {
  it('writer: 2,000 distinct long function names of one length are 2,000 shared frames', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const locs = names.map((name) => b.internLocation({ functionId: b.internFunction({ name }) }));
    for (let r = 0; r < 3; r++) for (let i = 0; i < names.length; i++) b.addSample([locs[i]!, locs[(i + 1) % names.length]!], [1n]);
    const doc = JSON.parse(new TextDecoder().decode(writeSpeedscope(b.build()).data));
    expect(doc.shared.frames.map((f: { name: string }) => f.name)).toEqual([names[1], names[0], ...names.slice(2)]);
    // With a Map: 111 s on a busy machine; now 4.2 s. The timeout is a bound, not a measurement.
  }, 30_000);

  it('reader: 2,000 profiles with distinct long names of one length keep their names', () => {
    const profiles = names.map((name) => ({ type: 'sampled', name, unit: 'none', startValue: 0, endValue: 1, samples: [[0]], weights: [1] }));
    const doc = { $schema: 'https://www.speedscope.app/file-format-schema.json', shared: { frames: [{ name: 'main' }] }, profiles };
    const { profile } = readSpeedscopeBytes(new TextEncoder().encode(JSON.stringify(doc)));
    expect(Array.from(profile.sample_types.type)).toEqual(names);
    // With a Map: 25 s; now 1.5 s. The timeout is a bound, not a measurement.
  }, 15_000);
});
