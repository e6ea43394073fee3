/**
 * pprof `-mean`: every node and the total report the sum of the values of a sample type divided
 * by the sum of the first sample type (the count) over the same samples (pprof graph
 * `Node.FlatValue`: `Flat / FlatDiv` when `FlatDiv` is not 0). The report engine sums both over
 * one stack table (`meanStackTables`) and divides once the sums are known.
 */

import type { Profile } from '../model.js';
import type { ProfileIndex } from '../views.js';
import { RowSums, buildStackTable, sumsExactInDoubles, type StackTable, type StackValues } from './stack-table.js';

export interface MeanStacks {
  /** The stacks of the samples whose value or divisor is nonzero; `self` sums the values. */
  stacks: StackTable;
  /** Per stack, the sums of the divisor (sample type `divisorIndex`) over the same samples. */
  divisor: { self: StackValues };
}

/**
 * The stack table of sample type `t` over the samples pprof's graph counts with `-mean` (value
 * or divisor nonzero), with the divisor sums beside the value sums.
 */
export function meanStackTables(p: Profile, index: ProfileIndex, t: number, divisorIndex: number): MeanStacks {
  const col = p.samples['.values'][t]!;
  const div = p.samples['.values'][divisorIndex]!;
  const stacks = buildStackTable(p, index, t, () => true, (i) => col[i] !== 0n || div[i] !== 0n);
  const divSelf = new RowSums(sumsExactInDoubles(div, () => true));
  for (let i = 0; i < div.length; i++) if (stacks.sampleStack[i]! >= 0) divSelf.add(stacks.sampleStack[i]!, div[i]!);
  return { stacks, divisor: { self: divSelf.finish(stacks.length) } };
}

/** pprof's mean of a sum: `value / divisor` (Go integer division, toward zero) unless the divisor is 0. */
export function meanOf(value: bigint, divisor: bigint): bigint {
  return divisor === 0n ? value : value / divisor;
}
