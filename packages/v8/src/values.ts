/**
 * Which of a profile's sample types the V8 writers use, and time units in microseconds (V8's
 * unit of time).
 */

import { defaultSampleTypeIndex, type Profile } from '@profkit/core';

/** V8's usual sampling interval (Node's `--cpu-prof-interval` default is 1000 µs). */
export const DEFAULT_INTERVAL_US = 1000;

const MICROS_PER: Record<string, number> = { nanoseconds: 1e-3, microseconds: 1, milliseconds: 1e3, seconds: 1e6 };

/** A value in `unit` as microseconds, or undefined when `unit` is not a unit of time. */
export function toMicros(value: bigint, unit: string): number | undefined {
  const f = MICROS_PER[unit];
  return f === undefined ? undefined : Number(value) * f;
}

/** Index of the sample type of `unit` preferring the default type, then `preferred` names, then the first. */
function typeIndex(p: Profile, fits: (unit: string) => boolean, preferred: readonly string[]): number {
  const units = p.sample_types.unit;
  const def = units.length > 0 ? defaultSampleTypeIndex(p) : -1;
  if (def >= 0 && fits(units[def]!)) return def;
  for (const name of preferred) {
    const i = p.sample_types.type.findIndex((t, k) => t === name && fits(units[k]!));
    if (i >= 0) return i;
  }
  return units.findIndex(fits);
}

/** The sample count type (`samples`/`count` as V8 and pprof-nodejs write it), or -1. */
export function countTypeIndex(p: Profile): number {
  const units = p.sample_types.unit;
  const i = p.sample_types.type.findIndex((t, k) => t === 'samples' && units[k] === 'count');
  return i >= 0 ? i : units.findIndex((u) => u === 'count');
}

/** The time type (`cpu`/`wall` in a unit of time), or -1. */
export function timeTypeIndex(p: Profile): number {
  return typeIndex(p, (u) => u in MICROS_PER, ['cpu', 'wall', 'time']);
}

/** The bytes type of a heap profile (`space`, `inuse_space`, `alloc_space`…), or -1. */
export function bytesTypeIndex(p: Profile): number {
  return typeIndex(p, (u) => u === 'bytes', ['space', 'inuse_space', 'alloc_space']);
}
