/**
 * R's accounting (`summaryRprof`) as a profile, so that any pprof-style report of it (`profkit top
 * --accounting r`) shows R's numbers: the `r-accounting` transform.
 *
 * pprof's `-top` already counts like `summaryRprof` in most respects (self = innermost entry,
 * total = samples containing the entry, counted once per sample however often it recurs). What
 * differs, and what this rewrite changes:
 * - `<GC>`: the reader keeps it as a per-sample flag (`samples.gc` of the `rprof` extension);
 *   `summaryRprof` counts it as the innermost function of GC samples. It becomes a leaf frame.
 * - samples without any function (top-level code, memory-only lines) are left out of R's tables
 *   and of its percentages' denominator (`sum(self)`); they are dropped.
 * - with `lines: 'show'` (`summaryRprof(lines = "show")`), the entries are source lines
 *   `basename#line` (innermost first, `<no location>` for a sample without any, `<GC>` ignored,
 *   as R does): each stack becomes the list of its lines' keys, as frames.
 * The values of every sample type are kept (`samples/count`, `time/nanoseconds`, and
 * `memory/bytes`, whose cum per entry is `summaryRprof(memory = "both")`'s `mem.total`).
 * The same rules as `summarizeRprof`, which computes the tables directly.
 */

import { ErrorCodes, ProfileBuilder, ProfkitError, sampleTypes, type AdapterTransform, type Profile, type ReadLimits, type TransformContext, type TransformResult } from '@profkit/core';
import { rStacks, type RLinesView } from './r-stacks.js';

export { GC_FRAME, NO_LOCATION, type RLinesView } from './r-stacks.js';

/**
 * A profile whose `-top` per function shows `summaryRprof`'s numbers for `p` (see the file
 * comment): one sample per sample of `p` that R counts, stacks of R's entries (innermost first),
 * the same values, facts and sample types; no mappings, files or extensions. R's entries are
 * worked out once per distinct stack (`rStacks`), not once per sample.
 */
export function rAccounting(p: Profile, lines: RLinesView = 'hide', limits?: ReadLimits): Profile {
  const b = new ProfileBuilder({ sampleTypes: sampleTypes(p), facts: { ...p['.profile'], comments: p['.profile'].comments.slice() } });
  const stacks = rStacks(p, undefined, limits);
  const keys = stacks.keys[lines];
  // The location of each entry id, made when the entry is first used.
  const locationOf: number[] = [];
  const location = (id: number): number => (locationOf[id] ??= b.internLocation({ functionId: b.internFunction({ name: keys.key(id) }), line: 0 }));
  // Each group's stack of entry locations, interned in the order of the groups' first samples
  // (the order a per-sample pass would intern them in).
  const stackOfGroup = new Array<number[] | undefined>(stacks.groupCount);
  for (const g of stacks.order) stackOfGroup[g] = stacks.entries(g, lines).map(location);
  const cols = p.samples['.values'];
  const values = new Array<bigint>(cols.length);
  const n = p.samples.value.length;
  for (let i = 0; i < n; i++) {
    const g = stacks.sampleGroup[i]!;
    const stack = g >= 0 ? stackOfGroup[g]! : undefined;
    if (!stack || stack.length === 0) continue;
    for (let t = 0; t < cols.length; t++) values[t] = cols[t]![i]!;
    b.addSample(stack, values);
  }
  return b.build();
}

/**
 * The `r-accounting` transform: `rAccounting` with option `lines` (hide, default, or show), its
 * entries bounded by `ctx.limits.maxTableEntries`.
 */
export const rAccountingTransform: AdapterTransform = {
  name: 'r-accounting',
  summary: "R's summaryRprof accounting: <GC> as the innermost function, samples without functions left out (lines=show: per source line)",
  options: {
    lines: { type: 'string', valueName: 'hide|show', description: 'entries per function (hide, default) or per source line basename#line (show), as summaryRprof(lines=)' },
  },
  async apply(profile: Profile, ctx: TransformContext): Promise<TransformResult> {
    const lines = ctx.values.lines ?? 'hide';
    if (lines !== 'hide' && lines !== 'show') {
      throw new ProfkitError(ErrorCodes.USAGE, `the r-accounting transform's lines must be hide or show, got ${JSON.stringify(lines)}`, { option: 'lines', rule: 'r-accounting transform options' });
    }
    // R's entries are a table of their own, bounded like the reader's tables (`--limit maxTableEntries=`).
    return { profile: rAccounting(profile, lines, ctx.limits), warnings: [] };
  },
};
