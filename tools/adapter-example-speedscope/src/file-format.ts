/**
 * The speedscope file format (https://www.speedscope.app/file-format-schema.json), as far as
 * this adapter reads and writes it. Mirrors speedscope's `src/lib/file-format-spec.ts`.
 */

export const SPEEDSCOPE_SCHEMA_URL = 'https://www.speedscope.app/file-format-schema.json';

export type ValueUnit = 'none' | 'nanoseconds' | 'microseconds' | 'milliseconds' | 'seconds' | 'bytes';
export const VALUE_UNITS: readonly ValueUnit[] = ['none', 'nanoseconds', 'microseconds', 'milliseconds', 'seconds', 'bytes'];

/** Nanoseconds per unit, for the time units. */
export const NANOS_PER_UNIT: Partial<Record<ValueUnit, number>> = { nanoseconds: 1, microseconds: 1e3, milliseconds: 1e6, seconds: 1e9 };

export interface SpeedscopeFrame {
  name: string;
  file?: string;
  line?: number;
  col?: number;
}

export interface SampledProfile {
  type: 'sampled';
  name: string;
  unit: ValueUnit;
  startValue: number;
  endValue: number;
  /** Stacks as indices into `shared.frames`, ROOT FIRST. */
  samples: number[][];
  weights: number[];
}

export interface FrameEvent {
  /** `O` opens a frame, `C` closes it. */
  type: 'O' | 'C';
  at: number;
  frame: number;
}

export interface EventedProfile {
  type: 'evented';
  name: string;
  unit: ValueUnit;
  startValue: number;
  endValue: number;
  events: FrameEvent[];
}

export interface SpeedscopeFile {
  $schema: typeof SPEEDSCOPE_SCHEMA_URL;
  shared: { frames: SpeedscopeFrame[] };
  profiles: (SampledProfile | EventedProfile)[];
  name?: string;
  activeProfileIndex?: number;
  exporter?: string;
}
