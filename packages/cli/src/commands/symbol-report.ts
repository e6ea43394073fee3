import { applyReportFilters, compileGoPattern, parseLimitArgs, reportTotal, type CommandOption, type Profile, type ReadLimits, type Warning } from '@profkit/core/node';
import type { CliContext } from '../types.js';
import { FILTER_OPTIONS, FOCUS_OPTIONS, filterOptionsOf, sampleTypeIndexOf, sampleTypeJson, type SampleUse } from './shared.js';
import { readAsGoPprof } from './go-load.js';
import { streamedReportLimits, writeStreamedText } from './stream-text.js';

/** pprof's filters, applied before every report: --focus, --ignore, --hide, --show, --show-from, --tag-*, --prune-from. */
export const REPORT_FILTER_OPTIONS: Record<string, CommandOption> = { ...FOCUS_OPTIONS, ...FILTER_OPTIONS };

/**
 * `loaded` with the command line's filters applied, and the report total of sample type `t`
 * taken before them (pprof computes it first: percentages are of the whole profile).
 */
export function filteredForReport(ctx: CliContext, loaded: Profile, t: number): { profile: Profile; total: bigint } {
  return { total: reportTotal(loaded, t), profile: applyReportFilters(loaded, filterOptionsOf(ctx)) };
}

/** What `list` and `disasm` give their report: the sample type and the REGEX of `FILE REGEX`. */
export interface SymbolReportInput {
  total: bigint;
  sampleTypeIndex: number;
  symbol: (name: string) => boolean;
  symbolText: string;
  /** The command line's `--limit` values (`maxReportBytes` bounds the text). */
  limits: ReadLimits;
}

/**
 * The run of a report over the functions matching REGEX (`list`, `disasm`): FILE read as pprof
 * loads it (then `prepare`d), REGEX compiled as Go's, the report's text printed, or with `--json`
 * the document `name` with its total and routines; `warnings` of the report added to the file's.
 * With `streamed`, the text (not `--json`) is its pieces written as they are made, never held
 * whole (a listing can be a row for each of millions of source lines). `use`: as `readAsGoPprof`'s.
 */
export async function runSymbolReport(
  ctx: CliContext,
  name: string,
  report: (p: Profile, input: SymbolReportInput) => { sampleTypeIndex: number; total: bigint; routines: unknown[]; text: string; warnings?: Warning[] },
  prepare: (p: Profile) => Profile = (p) => p,
  streamed?: (p: Profile, input: SymbolReportInput) => Iterable<string>,
  use: SampleUse = 'each',
): Promise<number> {
  const [file, regex] = ctx.positionals as [string, string];
  const symbol = await compileGoPattern(regex, 'REGEX');
  const r = await readAsGoPprof(ctx, file, use);
  const sampleTypeIndex = sampleTypeIndexOf(ctx, r.loaded);
  const { profile: p, total } = filteredForReport(ctx, prepare(r.loaded), sampleTypeIndex);
  const input = { total, sampleTypeIndex, symbol: (s: string) => symbol.test(s), symbolText: regex };
  if (streamed && !ctx.json) {
    ctx.out.warnings(r.warnings);
    await writeStreamedText(ctx, streamed(p, { ...input, limits: streamedReportLimits(ctx, [file]) }));
    return 0;
  }
  const rep = report(p, { ...input, limits: parseLimitArgs(ctx.values.limit) });
  const warnings = [...r.warnings, ...(rep.warnings ?? [])];
  if (ctx.json) {
    ctx.out.document(name, { file, format: r.format, sampleType: sampleTypeJson(p, rep.sampleTypeIndex), total: rep.total, routines: rep.routines, warnings });
    return 0;
  }
  ctx.out.warnings(warnings);
  ctx.stdout.write(rep.text);
  return 0;
}
