/** `selectSampleTypes`: keep some value columns of a profile. */

import { ErrorCodes, ProfkitError } from '../errors.js';
import type { Profile } from '../model.js';
import { sampleTypes } from '../views.js';
import { copyFacts, rebuildSamplewise } from './internal.js';
import { ProfileIndex } from '../views.js';

/**
 * A new profile with only the sample types `indices` (in that order; an index may repeat).
 * Samples stay one per input sample, in order, even when their selected values are all zero, so
 * per-sample extension columns are kept. `default_sample_type` is kept when it is selected and
 * cleared otherwise (the default is then the last selected type).
 */
export function selectSampleTypes(p: Profile, indices: readonly number[]): Profile {
  const types = sampleTypes(p);
  if (indices.length === 0) {
    throw new ProfkitError(ErrorCodes.USAGE, 'selectSampleTypes needs at least one sample type index', {
      option: 'indices',
      rule: 'a profile with samples needs at least one sample type',
    });
  }
  for (const i of indices) {
    if (!Number.isInteger(i) || i < 0 || i >= types.length) {
      throw new ProfkitError(ErrorCodes.USAGE, `sample type index ${i} is out of range 0..${types.length - 1}`, {
        option: 'indices',
        rule: 'sample type indices must name existing sample types',
      });
    }
  }
  const index = new ProfileIndex(p);
  const facts = copyFacts(p['.profile']);
  const chosen = indices.map((i) => types[i]!);
  if (!chosen.some((t) => t.type === facts.default_sample_type)) facts.default_sample_type = '';
  const selected: Profile = {
    ...p,
    sample_types: { type: chosen.map((t) => t.type), unit: chosen.map((t) => t.unit) },
    samples: {
      ...p.samples,
      value: p.samples['.values'][indices[0] ?? 0] ?? new BigInt64Array(p.samples.value.length),
      '.values': indices.map((i) => p.samples['.values'][i]!),
    },
    '.profile': facts,
  };
  return rebuildSamplewise(selected, index, undefined, (_i, rows) => rows, { sampleTypes: chosen, facts });
}
