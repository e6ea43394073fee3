/**
 * What the stream reader (read-stream.ts) keeps of a speedscope file's large arrays, in place of
 * the arrays `JSON.parse` builds: frames as the reader's `Frame`s, stacks, weights and events as
 * typed columns. The converter (read.ts) reads a profile's entries through `StackList`,
 * `WeightList` and `EventList`, from these columns or from the parsed arrays alike, so both readers
 * check the same things in the same order and give the same profile and the same errors.
 *
 * A list keeps its entries up to its first bad one (an entry the converter would refuse on its own,
 * whatever the rest of the file says). That entry's error is kept and thrown when the converter
 * reaches it; later entries are only counted, never stored (the converter stops at the first error).
 * Whether a frame index is in `shared.frames` is checked by the converter, which knows their number.
 */

import { GrowableFloat64, GrowableUint32, GrowableUint8, type JsonSource, type ProfkitError } from '@profkit/core';

export interface Frame {
  name: string;
  file: string;
  line: number;
  col: number;
}

/** The error of a list's first bad entry (given the number of frames, for a frame index too large for a column). */
export type EntryError = (nFrames: number) => ProfkitError;

/** The checks a converter would make of a frame index (`frameIndex` in read.ts): a whole number < `nFrames`. */
export type FrameIndexCheck = (src: JsonSource, value: unknown, path: string, nFrames: number) => number;

/** Frame indices stored in a column are below this; a larger one is outside any `shared.frames`. */
export const MAX_STORED_FRAME_INDEX = 0xfffffffe;

/**
 * Frame indices, 2 bytes each while every one is below 65,536 (real files have fewer frames), 4
 * bytes from the first that is not. Grown by doubling, so each index is copied once on average.
 */
export class FrameIndexColumn {
  private data: Uint16Array | Uint32Array = new Uint16Array(1024);
  length = 0;

  push(i: number): void {
    const full = this.length === this.data.length;
    const widen = i > 0xffff && this.data instanceof Uint16Array;
    if (full || widen) {
      const capacity = full ? this.data.length * 2 : this.data.length;
      const grown = widen || this.data instanceof Uint32Array ? new Uint32Array(capacity) : new Uint16Array(capacity);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = i;
  }

  get(k: number): number {
    return this.data[k]!;
  }
}

/** A profile's `samples`, as the converter reads them. */
export interface StackList {
  readonly length: number;
  /** Sample `j`'s frame indices (root first) into `out`, each checked against `nFrames`. */
  stack(j: number, out: number[], nFrames: number, maxDepth: number): void;
}

/** A profile's `weights`, as the converter reads them. */
export interface WeightList {
  readonly length: number;
  /** Weight `j`: a finite number ≥ 0. */
  weight(j: number): number;
}

/** One event as the converter replays it: time and frame checked, `type` as written. */
export interface EventRead {
  at: number;
  frame: number;
  type: unknown;
}

/** A profile's `events`, as the converter reads them. */
export interface EventList {
  readonly length: number;
  /** Event `j` (the returned object is reused by the next call). */
  event(j: number, nFrames: number): EventRead;
}

export class StreamedFrames {
  readonly frames: Frame[] = [];
  /** Entries of `shared.frames`, counted against `maxTableEntries` as they come. */
  length = 0;
  fault: ProfkitError | undefined;
}

/** The first bad entry of a list: its index, and for a stack how many of its frames were stored before it. */
interface Fault {
  index: number;
  error: EntryError;
}

export class StreamedStacks implements StackList {
  /** Where each stored sample's frames start in `frames`, then where the last one ends. */
  readonly offsets = new GrowableUint32(1024);
  readonly frames = new FrameIndexColumn();
  /** Samples counted, stored or not. */
  length = 0;
  fault: (Fault & { storedFrames: number }) | undefined;

  constructor(
    private readonly src: JsonSource,
    /** `profiles[i]`, for the paths of errors. */
    private readonly path: string,
    private readonly frameIndex: FrameIndexCheck,
  ) {
    this.offsets.push(0);
  }

  stack(j: number, out: number[], nFrames: number): void {
    // A stored stack's length was checked against maxFramesPerStack as it grew.
    const bad = this.fault?.index === j ? this.fault : undefined;
    const start = this.offsets.get(j);
    const end = bad ? bad.storedFrames : this.offsets.get(j + 1);
    out.length = 0;
    for (let k = start; k < end; k++) {
      const i = this.frames.get(k);
      if (i >= nFrames) this.frameIndex(this.src, i, `${this.path}.samples[${j}][${k - start}]`, nFrames);
      out.push(i);
    }
    if (bad) throw bad.error(nFrames);
  }
}

export class StreamedWeights implements WeightList {
  readonly values = new GrowableFloat64(1024);
  /** Weights counted, stored or not. */
  length = 0;
  /** Some weight is a fraction (the profile is then read in whole nanoseconds). */
  fractional = false;
  fault: Fault | undefined;

  weight(j: number): number {
    if (this.fault?.index === j) throw this.fault.error(0);
    return this.values.get(j);
  }
}

/** `type` of a stored event: O, C, or neither (the fault's, kept as written). */
export const EVENT_OPEN = 1;
export const EVENT_CLOSE = 2;
export const EVENT_OTHER = 0;

export class StreamedEvents implements EventList {
  readonly at = new GrowableFloat64(1024);
  readonly frame = new FrameIndexColumn();
  readonly type = new GrowableUint8(1024);
  /** Events counted, stored or not. */
  length = 0;
  /** Some `at` is a fraction. */
  fractional = false;
  /** The first bad event: an error before its time and frame are known, or its `type` when only that is wrong (it is stored). */
  fault: (Fault & { badType?: undefined }) | { index: number; error?: undefined; badType: unknown } | undefined;
  private readonly read: EventRead = { at: 0, frame: 0, type: undefined };
  /** `type` as an array, once the list is complete (GrowableUint8 has no `get`). */
  private types: Uint8Array | undefined;

  constructor(
    private readonly src: JsonSource,
    private readonly path: string,
    private readonly frameIndex: FrameIndexCheck,
  ) {}

  event(j: number, nFrames: number): EventRead {
    const bad = this.fault?.index === j ? this.fault : undefined;
    if (bad?.error) throw bad.error(nFrames);
    const frame = this.frame.get(j);
    if (frame >= nFrames) this.frameIndex(this.src, frame, `${this.path}.events[${j}].frame`, nFrames);
    const type = (this.types ??= this.type.view())[j];
    this.read.at = this.at.get(j);
    this.read.frame = frame;
    this.read.type = type === EVENT_OPEN ? 'O' : type === EVENT_CLOSE ? 'C' : bad?.badType;
    return this.read;
  }
}
