/** `diff`: p minus base, like `pprof -diff_base` (or `-base`). */

import type { Profile } from '../model.js';
import { ProfileIndex } from '../views.js';
import { labelInputs, rebuildSamplewise } from './internal.js';
import { merge, checkCompatible } from './merge.js';
import { normalize, scale } from './scale.js';

/** The label pprof puts on the samples of a diff base. */
export const DIFF_BASE_LABEL = 'pprof::base';

export interface DiffOptions {
  /**
   * `true` (default, `pprof -diff_base`): base samples get the label `pprof::base=true` and
   * stay separate samples with negated values, so the result holds p's samples and the negated
   * base samples side by side (reports show the difference per frame, and know the base total).
   * `false` (`pprof -base`): base samples are subtracted from matching samples of p; samples
   * that cancel out disappear.
   */
  labelBase?: boolean;
  /** Scale p so that its totals equal the base's first (pprof `-normalize`, `Normalize`). */
  normalize?: boolean;
}

/** Sets label `key` to the single string `value` on every sample (pprof `SetLabel`). */
export function setLabel(p: Profile, key: string, value: string): Profile {
  const index = new ProfileIndex(p);
  return rebuildSamplewise(p, index, undefined, (_i, rows) => rows, {
    labelsFor: (i: number) => [...labelInputs(p, i).filter((l) => l.key !== key), { key, str: value }],
  });
}

/**
 * `p - base` as a new profile: values may be negative. The profiles must be compatible (same
 * period and sample types). See `DiffOptions` for the two pprof flavours.
 */
export function diff(base: Profile, p: Profile, options: DiffOptions = {}): Profile {
  checkCompatible(p, base, 'the profile and its diff base');
  let b = base;
  if (options.labelBase ?? true) b = setLabel(b, DIFF_BASE_LABEL, 'true');
  const q = options.normalize ? normalize(p, base) : p;
  b = scale(b, -1);
  return merge([q, b]);
}
