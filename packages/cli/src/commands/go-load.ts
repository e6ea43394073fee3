import { goPprofLoad, parseLimitArgs, type Profile, type RegistryReadResult, type SampleReportOptions } from '@profkit/core';
import type { CliContext } from '../types.js';
import { byOf, filterOptionsOf, phase, readWithBase, sampleTypeIndexOf, sampleTypeJson, textOptionsOf, type SampleUse } from './shared.js';

/**
 * Reads FILE and loads it as `go tool pprof` does before a report (`goPprofLoad`: merged with
 * itself, drop_frames applied, URL mapping files cleared): how raw, traces and tags read.
 * `summed` for a command that only sums the values of the loaded samples (list, graph, callgrind,
 * topproto): the load merges equal samples anyway, so the reader may merge them first.
 */
export async function readAsGoPprof(ctx: CliContext, file: string, use: SampleUse = 'each'): Promise<RegistryReadResult & { loaded: Profile }> {
  const r = await readWithBase(ctx, file, use);
  const l = await phase(ctx, 'loading as go tool pprof does', () => goPprofLoad(r.profile, parseLimitArgs(ctx.values.limit)));
  return { ...r, loaded: l.profile, warnings: [...r.warnings, ...l.warnings] };
}

/** The options of a report over the samples (traces, tags) from the command line. */
export function sampleReportOptionsOf(ctx: CliContext, loaded: Profile): SampleReportOptions {
  return { ...filterOptionsOf(ctx), ...textOptionsOf(ctx), by: byOf(ctx), sampleTypeIndex: sampleTypeIndexOf(ctx, loaded), limits: parseLimitArgs(ctx.values.limit) };
}

/**
 * The run of a report over the samples (traces, tags): read FILE as pprof loads it, compute the
 * report for `--sample-type`, print its text, or with `--json` the document `name` with `data`.
 */
export async function runSampleReport<R extends { sampleTypeIndex: number; text: string }>(
  ctx: CliContext,
  name: string,
  report: (loaded: Profile, options: SampleReportOptions) => R,
  data: (rep: R) => Record<string, unknown>,
): Promise<number> {
  const file = ctx.positionals[0]!;
  const r = await readAsGoPprof(ctx, file);
  const options = sampleReportOptionsOf(ctx, r.loaded);
  const rep = phase(ctx, 'computing the report', () => report(r.loaded, options));
  if (ctx.json) {
    ctx.out.document(name, { file, format: r.format, sampleType: sampleTypeJson(r.loaded, rep.sampleTypeIndex), ...data(rep), warnings: r.warnings });
    return 0;
  }
  ctx.out.warnings(r.warnings);
  ctx.stdout.write(rep.text);
  return 0;
}
