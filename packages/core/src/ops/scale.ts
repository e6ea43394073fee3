/** `scale` and `normalize`: pprof `Scale`/`ScaleN`/`Normalize`. */

import { ErrorCodes, ProfkitError } from '../errors.js';
import type { Profile } from '../model.js';
import { ProfileIndex, sampleTypes, totalValue } from '../views.js';
import { checkCompatible } from './merge.js';
import { copyFacts, rebuildSamplewise } from './internal.js';

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/**
 * Go's `int64(math.Round(float64(v) * ratio))`: rounds half away from zero. A ratio of -1 (what
 * `diff` scales its base by) negates exactly instead: through a double, values beyond 2^53 would
 * change (pprof's diff of a profile with itself then shows -1B), and -(-2^63) is a range error.
 */
export function scaleValue(v: bigint, ratio: number): bigint {
  if (ratio === -1) {
    if (v === INT64_MIN) throw new ProfkitError(ErrorCodes.RANGE, `scaling ${v} by -1 gives ${-v}, beyond int64`, { rule: 'scaled values must fit in int64' });
    return -v;
  }
  const x = Number(v) * ratio;
  const r = x < 0 ? -Math.round(-x) : Math.round(x);
  if (!Number.isFinite(r)) {
    throw new ProfkitError(ErrorCodes.RANGE, `scaling ${v} by ${ratio} is not a finite number`, { rule: 'scaled values must fit in int64' });
  }
  const b = BigInt(r);
  if (b < INT64_MIN || b > INT64_MAX) {
    throw new ProfkitError(ErrorCodes.RANGE, `scaling ${v} by ${ratio} gives ${b}, beyond int64`, { rule: 'scaled values must fit in int64' });
  }
  return b === 0n ? 0n : b;
}

/**
 * Multiplies every value by `ratio` (one number for all sample types, or one per sample type),
 * rounding to the nearest integer (halves away from zero, like Go's `math.Round`), and drops
 * the samples whose values are then all zero. Columns with ratio 1 are not touched (exact even
 * beyond 2^53); when every ratio is 1 the profile is copied unchanged. Samples are only
 * subset, so per-sample extension columns are kept.
 */
export function scale(p: Profile, ratio: number | readonly number[]): Profile {
  const nt = sampleTypes(p).length;
  const ratios = typeof ratio === 'number' ? new Array<number>(nt).fill(ratio) : ratio.slice();
  if (ratios.length !== nt) {
    throw new ProfkitError(ErrorCodes.USAGE, `mismatched scale ratios, got ${ratios.length}, want ${nt}`, {
      option: 'ratio',
      rule: 'one ratio per sample type',
    });
  }
  for (const r of ratios) {
    if (!Number.isFinite(r)) throw new ProfkitError(ErrorCodes.USAGE, `scale ratio ${r} is not a finite number`, { option: 'ratio', rule: 'ratios must be finite' });
  }
  const allOnes = ratios.every((r) => r === 1);
  const cols = p.samples['.values'];
  const n = p.samples.value.length;
  const scaled = cols.map((c, t) => {
    if (ratios[t] === 1) return c;
    const out = new BigInt64Array(n);
    for (let i = 0; i < n; i++) out[i] = scaleValue(c[i]!, ratios[t]!);
    return out;
  });
  const index = new ProfileIndex(p);
  const view: Profile = { ...p, samples: { ...p.samples, value: scaled[0] ?? p.samples.value, '.values': scaled } };
  return rebuildSamplewise(view, index, undefined, (i, rows) => {
    if (allOnes) return rows;
    for (let t = 0; t < scaled.length; t++) if (scaled[t]![i] !== 0n) return rows;
    return undefined;
  }, { facts: copyFacts(p['.profile']) });
}

/**
 * pprof `Normalize`: scales each sample type of `p` by sum(base)/sum(p) for that type (0 when
 * p's sum is 0), so that `p` has the same totals as `base`. Profiles must be compatible.
 */
export function normalize(p: Profile, base: Profile): Profile {
  checkCompatible(p, base, 'the profile and its normalization base');
  const ratios = sampleTypes(p).map((_, t) => {
    const src = totalValue(p, t);
    return src === 0n ? 0 : Number(totalValue(base, t)) / Number(src);
  });
  return scale(p, ratios);
}
