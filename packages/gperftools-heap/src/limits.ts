/**
 * `maxSamples` and `maxFramesPerStack` as the text parsers (heap/growth, contention, Go count,
 * threadz, Java) check them: each parser calls `checkRecord` just before it adds a sample, so it
 * stops at the first record over a limit, after reporting any malformed record before it (errors
 * come in input order), and never parses the records after it. A parser calls it only once it
 * has recognized its header, so an input of another format is still passed on to the next parser.
 */

import { limitError } from '@profkit/core';

/** The limits a text parser checks while reading; a missing one (or no object) is no limit. */
export interface RecordLimits {
  maxSamples?: number;
  maxFramesPerStack?: number;
  /** Frames of all samples together (the profile's location column). */
  maxTotalFrames?: number;
  /** Distinct addresses or location ids of a text profile (each parser that interns them checks it as one is added). */
  maxTableEntries?: number;
}

/**
 * Throws the limit error when the sample about to be added (the parser has `kept` samples so far)
 * would be sample number `maxSamples + 1`, when its stack keeps more than `maxFramesPerStack`
 * frames, or when the stacks so far and its own (`totalFrames`, when the parser counts them) have
 * more than `maxTotalFrames` frames; `line` is the (1-based) line of its record.
 */
export function checkRecord(limits: RecordLimits | undefined, kept: number, frames: number, line: number, totalFrames = 0): void {
  if (limits === undefined) return;
  const maxSamples = limits.maxSamples ?? Infinity;
  if (kept >= maxSamples) throw limitError('maxSamples', `more than ${maxSamples} samples`, maxSamples, { line });
  const maxFrames = limits.maxFramesPerStack ?? Infinity;
  if (frames > maxFrames) throw limitError('maxFramesPerStack', `sample ${kept + 1} with ${frames} frames`, maxFrames, { line });
  const maxTotal = limits.maxTotalFrames ?? Infinity;
  if (totalFrames > maxTotal) throw limitError('maxTotalFrames', `the stacks of samples 1 to ${kept + 1} together have ${totalFrames} frames, which`, maxTotal, { line });
}
