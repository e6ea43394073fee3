/**
 * `merge`: google/pprof `Merge` semantics on the columnar model (see docs/operations.md), with
 * the two bugs of the original fixed: `time_nanos` is the earliest nonzero time, and location
 * identity compares every line's function, line and column (no stride bug).
 */

import { ErrorCodes, ProfkitError } from '../errors.js';
import type { Profile, ProfileFacts, ValueType } from '../model.js';
import { ProfileIndex, sampleTypes } from '../views.js';
import { Rebuilder, SampleCombiner, checkedInt64, labelInputs, sampleTypeNames } from './internal.js';
import { selectSampleTypes } from './select.js';

export interface MergeOptions {
  /**
   * Reduce every profile to the sample types (by type name) common to all of them, in the
   * order of the first profile, before merging (pprof `CompatibilizeSampleTypes`). Without it,
   * profiles with different sample types are an error.
   */
  compatibilizeSampleTypes?: boolean;
}

function vtString(v: ValueType | undefined): string {
  return v ? `${v.type}/${v.unit}` : '(none)';
}

/**
 * Throws `PROFKIT_E_INCOMPATIBLE` unless `b` has the same period type and the same sample types
 * (type and unit, in order) as `a`.
 */
export function checkCompatible(a: Profile, b: Profile, what = 'profiles'): void {
  const pa = a['.profile'].period_type;
  const pb = b['.profile'].period_type;
  const samePeriod = pa === undefined || pb === undefined ? pa === pb : pa.type === pb.type && pa.unit === pb.unit;
  if (!samePeriod) {
    throw new ProfkitError(ErrorCodes.INCOMPATIBLE, `incompatible period types ${vtString(pa)} and ${vtString(pb)} of ${what}`, {
      rule: 'merged profiles must have the same period type',
    });
  }
  const ta = sampleTypes(a);
  const tb = sampleTypes(b);
  if (ta.length !== tb.length || ta.some((t, i) => t.type !== tb[i]!.type || t.unit !== tb[i]!.unit)) {
    throw new ProfkitError(
      ErrorCodes.INCOMPATIBLE,
      `incompatible sample types [${ta.map(vtString).join(' ')}] and [${tb.map(vtString).join(' ')}] of ${what}`,
      { rule: 'merged profiles must have the same sample types (type and unit) in the same order' },
    );
  }
}

/**
 * pprof `CompatibilizeSampleTypes`: keeps in every profile only the sample types whose type name
 * occurs in all profiles, in the order of the first profile. A profile whose default sample type
 * is dropped gets the first common type as its default.
 */
export function compatibilizeSampleTypes(profiles: Profile[]): Profile[] {
  if (profiles.length === 0) return [];
  const common = profiles[0]!.sample_types.type.filter(
    (t, i, all) => all.indexOf(t) === i && profiles.every((p) => p.sample_types.type.includes(t)),
  );
  if (common.length === 0) {
    throw new ProfkitError(ErrorCodes.INCOMPATIBLE, 'the profiles have no sample type in common', {
      rule: 'compatibilizeSampleTypes needs at least one sample type name shared by all profiles',
    });
  }
  return profiles.map((p) => {
    const indices = common.map((t) => p.sample_types.type.indexOf(t));
    const out = selectSampleTypes(p, indices);
    if (!common.includes(out['.profile'].default_sample_type)) out['.profile'].default_sample_type = common[0]!;
    return out;
  });
}

/** pprof's header combination, with `time_nanos` = earliest nonzero time. */
export function combineFacts(profiles: Profile[]): ProfileFacts {
  const first = profiles[0]!['.profile'];
  let timeNanos = 0n;
  let durationNanos = 0n;
  let period = 0n;
  const comments: string[] = [];
  const seen = new Set<string>();
  let defaultSampleType = '';
  let docUrl = '';
  for (const p of profiles) {
    const f = p['.profile'];
    if (f.time_nanos !== 0n && (timeNanos === 0n || f.time_nanos < timeNanos)) timeNanos = f.time_nanos;
    durationNanos = checkedInt64(durationNanos + f.duration_nanos, 'the sum of the profiles\' duration_nanos');
    if (period === 0n || period < f.period) period = f.period;
    for (const c of f.comments) {
      if (!seen.has(c)) {
        seen.add(c);
        comments.push(c);
      }
    }
    if (defaultSampleType === '') defaultSampleType = f.default_sample_type;
    if (docUrl === '') docUrl = f.doc_url;
  }
  return {
    period_type: first.period_type ? { ...first.period_type } : undefined,
    period,
    time_nanos: timeNanos,
    duration_nanos: durationNanos,
    comments,
    drop_frames: first.drop_frames,
    keep_frames: first.keep_frames,
    default_sample_type: defaultSampleType,
    doc_url: docUrl,
  };
}

/**
 * Merges profiles into one new profile (inputs are not modified). See docs/operations.md for
 * the exact rules; in short: compatible types required, headers combined, mappings identified
 * by (size rounded up to 4 KiB, offset, build id or file) with addresses rebased, locations,
 * functions and samples (stack + labels) deduplicated, values summed, all-zero samples dropped,
 * ids dense 1..n in first-use order.
 */
export function merge(profiles: readonly Profile[], options: MergeOptions = {}): Profile {
  if (profiles.length === 0) {
    throw new ProfkitError(ErrorCodes.USAGE, 'no profiles to merge', { rule: 'merge needs at least one profile' });
  }
  let srcs = profiles.slice();
  if (options.compatibilizeSampleTypes) srcs = compatibilizeSampleTypes(srcs);
  for (let i = 1; i < srcs.length; i++) checkCompatible(srcs[0]!, srcs[i]!, `profile 0 and profile ${i}`);

  const rb = new Rebuilder({ sampleTypes: sampleTypes(srcs[0]!), facts: combineFacts(srcs), mergeMappings: true });
  const combiner = new SampleCombiner(sampleTypes(srcs[0]!).length, sampleTypeNames(srcs[0]!));
  const buf: number[] = [];
  for (const p of srcs) {
    const index = new ProfileIndex(p);
    const src = rb.addSource(p, index);
    // The first mapping is the main binary: keep it first (pprof does the same).
    if (rb.mappingsAdded === 0 && p['.mappings'].mapping_id.length > 0) rb.mapping(src, 0);
    const cols = p.samples['.values'];
    const n = p.samples.value.length;
    const labelOffsets = p.samples['.label_offsets'];
    for (let i = 0; i < n; i++) {
      let zero = true;
      for (let t = 0; t < cols.length; t++) if (cols[t]![i] !== 0n) zero = false;
      if (zero) continue;
      const len = rb.sampleStack(src, i, buf);
      const labels = labelOffsets && labelOffsets[i + 1]! > labelOffsets[i]! ? labelInputs(p, i) : [];
      combiner.add(buf, len, (t) => cols[t]![i]!, labels, src, i);
    }
  }
  const anyZero = combiner.flush(rb);
  const out = rb.build();
  // Samples that cancelled out (e.g. a negated base): merge again to garbage-collect them.
  return anyZero ? merge([out]) : out;
}
