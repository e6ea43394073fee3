/**
 * Frame lines longer than V8 hashes (16,383 UTF-16 units: such strings hash by their length
 * alone). The reader parses each distinct frame text once, through a map of those texts: 2,000
 * samples whose frames are distinct 20 KB names of one length (a 50 KB gzip) made it one hash
 * chain, 26.6 s for `profkit info`; with core's StringKeyedMap, 0.8 s.
 */
import { describe, expect, it } from 'vitest';
import { stackOf } from '@profkit/core';
import { readPerfScriptBytes } from '../src/index.js';

describe('long frame names', () => {
  it('distinct long frames are distinct locations, a repeated one the same', async () => {
    const name = (i: number) => 'x'.repeat(20_000) + String(i).padStart(6, '0');
    const sample = (i: number) => `app 1 cpu-clock: \n\t          400570 ${name(i)} (/bin/app)\n\t          4005b1 main (/bin/app)\n\n`;
    const text = Array.from({ length: 3000 }, (_, i) => sample(i)).join('') + sample(7);
    const { profile } = await readPerfScriptBytes(new TextEncoder().encode(text));
    expect(profile.samples.value.length).toBe(3001);
    expect(profile.locations.location_id.length).toBe(3001);
    expect(stackOf(profile, 3000)).toEqual(stackOf(profile, 7));
    expect(stackOf(profile, 3000)).not.toEqual(stackOf(profile, 8));
    // About a second with the fix, a minute without (2,000 frames: 26.6 s): a bound, not a measurement.
  }, 15_000);

  it('distinct long DSO paths are distinct mappings, distinct long comms distinct labels', async () => {
    // 3,000 of each: 17 s each when their maps were plain Maps, about a second with StringKeyedMap.
    const long = (i: number) => 'x'.repeat(20_000) + String(i).padStart(6, '0');
    const sample = (i: number) => `${long(i)} 1 cpu-clock: \n\t          400570 f (/${long(i)})\n\n`;
    const text = Array.from({ length: 3000 }, (_, i) => sample(i)).join('') + sample(7);
    const { profile } = await readPerfScriptBytes(new TextEncoder().encode(text));
    expect(profile.samples.value.length).toBe(3001);
    expect(profile['.mappings'].filename.length).toBe(3000);
    expect(profile['.mappings'].filename[0]).toBe(`/${long(0)}`); // the first comm's mapping first
    expect(profile['.mappings'].filename.includes(`/${long(2999)}`)).toBe(true);
    expect(stackOf(profile, 3000)).toEqual(stackOf(profile, 7));
  }, 15_000);
});
