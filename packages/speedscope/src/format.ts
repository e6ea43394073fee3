/**
 * The speedscope file format, schema 0.7 (https://www.speedscope.app/file-format-schema.json;
 * speedscope's `src/lib/file-format-spec.ts`), and the names this adapter keeps it under.
 */

export const ADAPTER_NAME = 'speedscope';
export const FORMAT_ID = 'speedscope';
export const SCHEMA_URL = 'https://www.speedscope.app/file-format-schema.json';

export type SpeedscopeUnit = 'none' | 'nanoseconds' | 'microseconds' | 'milliseconds' | 'seconds' | 'bytes';
export const UNITS: readonly SpeedscopeUnit[] = ['none', 'nanoseconds', 'microseconds', 'milliseconds', 'seconds', 'bytes'];

/** Nanoseconds in one of each time unit (fractional time values are read as whole nanoseconds). */
export const NANOS_IN: Readonly<Partial<Record<SpeedscopeUnit, number>>> = { nanoseconds: 1, microseconds: 1e3, milliseconds: 1e6, seconds: 1e9 };

export interface SpeedscopeFrame {
  name: string;
  file?: string;
  line?: number;
  col?: number;
}

export interface SpeedscopeEvent {
  type: 'O' | 'C';
  at: number;
  frame: number;
}

interface ProfileHead {
  name: string;
  unit: SpeedscopeUnit;
  startValue: number;
  endValue: number;
}

export interface SampledProfile extends ProfileHead {
  type: 'sampled';
  /** Stacks as indices into `shared.frames`, root first. */
  samples: number[][];
  weights: number[];
}

export interface EventedProfile extends ProfileHead {
  type: 'evented';
  events: SpeedscopeEvent[];
}

export interface SpeedscopeFile {
  $schema: string;
  shared: { frames: SpeedscopeFrame[] };
  profiles: (SampledProfile | EventedProfile)[];
  name?: string;
  activeProfileIndex?: number;
  exporter?: string;
}

/**
 * What the reader keeps in `.extensions.speedscope.facts.profiles` for each speedscope profile
 * (one per sample type, same order), so that the writer gives the file back.
 */
export interface ProfileFacts {
  name: string;
  type: 'sampled' | 'evented';
  unit: SpeedscopeUnit;
  startValue: number;
  endValue: number;
  /** Values were multiplied by this to make them whole (fractional times → nanoseconds), else 1. */
  scale: number;
}
