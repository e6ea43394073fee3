/**
 * The encoder's label offsets of a profile built by hand (readers never make such ones; the
 * registry's write validates only profiles a transform made): a typed error before any loop is
 * sized by them, never a loop of up to 2^32 steps or a 16 GB allocation.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCodes, isProfkitError } from '@profkit/core';
import { decodeProfile, encodeProfile } from '../src/codec.js';
import { everyFieldProfile } from './helpers.js';

const outcome = (spoil: (o: Uint32Array) => void): string => {
  const { profile } = decodeProfile(everyFieldProfile());
  spoil(profile.samples['.label_offsets']!);
  try {
    encodeProfile(profile);
    return 'encoded';
  } catch (e) {
    return isProfkitError(e) ? e.code : String(e);
  }
};

describe('pprof encoder: label offsets', () => {
  it('encodes the labels of a decoded profile (the control: its two samples have labels)', () => {
    const { profile } = decodeProfile(everyFieldProfile());
    expect(profile.samples['.label_offsets']![2]).toBeGreaterThan(0);
    expect(outcome(() => undefined)).toBe('encoded');
  });

  it.each([
    ['decreasing', (o: Uint32Array) => void (o[1] = o[2]! + 1)],
    ['past the label rows', (o: Uint32Array) => void (o[2] = 1000)],
    ['wrapping', (o: Uint32Array) => void (o[2] = 0xfffffff0)],
  ])('refuses offsets %s with PROFKIT_E_INVALID_PROFILE', (_what, spoil) => {
    expect(outcome(spoil)).toBe(ErrorCodes.INVALID_PROFILE);
  });
});
