/**
 * Helpers shared by the built-in commands: the common option definitions, reading with a
 * progress bar, and parsing option values (sample type, granularity, numbers).
 */

import {
  DiffReportBuilder,
  ErrorCodes,
  ProfkitError,
  applyDropFrames,
  diffReportUnsupported,
  diff as diffProfiles,
  merge as mergeProfiles,
  parseGranularity,
  parseLimitArgs,
  withTagFrames,
  type ReportFilterOptions,
  type ReportGranularity,
  defaultSampleTypeIndex,
  findSampleType,
  type CommandOption,
  type DropFramesPatterns,
  type Profile,
  type RegistryReadResult,
  type ReportInput,
  type Warning,
} from '@profkit/core/node';
import type { CliContext } from '../types.js';

/** Options shared by the view commands (top, tree, peek, diff, flame). */
export const SAMPLE_TYPE_OPTION: Record<string, CommandOption> = {
  'sample-type': { type: 'string', valueName: 'TYPE', description: 'sample type to report, by name (cpu, alloc_space, time/nanoseconds) or index; default: the profile\'s default type' },
};
export const READ_OPTION: Record<string, CommandOption> = {
  'read-option': { type: 'string', multiple: true, valueName: 'KEY=VALUE', description: "an option of the input format's reader (see docs/formats/<format>.md), e.g. stream=false" },
};
export const FROM_OPTION: Record<string, CommandOption> = {
  from: { type: 'string', valueName: 'FORMAT', description: 'read the input(s) as FORMAT instead of detecting it' },
  ...READ_OPTION,
};
export const FOCUS_OPTIONS: Record<string, CommandOption> = {
  focus: { type: 'string', valueName: 'RE', description: 'keep only samples with a frame (function, file or mapping) matching RE (pprof -focus)' },
  ignore: { type: 'string', valueName: 'RE', description: 'drop samples with a frame matching RE (pprof -ignore)' },
};
/** The filters pprof applies before every report (driver `applyFocus`), besides --focus/--ignore. */
export const FILTER_OPTIONS: Record<string, CommandOption> = {
  hide: { type: 'string', valueName: 'RE', description: 'remove frames matching RE from stacks (pprof -hide)' },
  show: { type: 'string', valueName: 'RE', description: 'keep only frames matching RE in stacks (pprof -show)' },
  'show-from': { type: 'string', valueName: 'RE', description: 'drop the frames above the outermost frame matching RE, and samples without one (pprof -show_from)' },
  'tag-focus': { type: 'string', valueName: 'KEY=RE', description: 'keep only samples with a label KEY matching RE, or a numeric range such as 1kb:64kb (pprof -tagfocus)' },
  'tag-ignore': { type: 'string', valueName: 'KEY=RE', description: 'drop samples with a label KEY matching RE (pprof -tagignore)' },
  'tag-show': { type: 'string', valueName: 'RE', description: 'keep only the label keys matching RE (pprof -tagshow)' },
  'tag-hide': { type: 'string', valueName: 'RE', description: 'remove the label keys matching RE (pprof -taghide)' },
  'prune-from': { type: 'string', valueName: 'RE', description: 'cut stacks below the first frame (from the leaf) matching RE (pprof -prune_from)' },
};
/** pprof -tagroot/-tagleaf: label values as pseudo frames. */
export const TAG_FRAME_OPTIONS: Record<string, CommandOption> = {
  'tag-root': { type: 'string', valueName: 'KEYS', description: 'comma-separated label keys whose values become frames above the root (pprof -tagroot)' },
  'tag-leaf': { type: 'string', valueName: 'KEYS', description: 'comma-separated label keys whose values become frames below the leaf (pprof -tagleaf)' },
};
/** `--base FILE` / `--diff-base FILE`: report FILE minus a base profile, as pprof -base / -diff_base. */
export const BASE_OPTIONS: Record<string, CommandOption> = {
  base: { type: 'string', valueName: 'FILE', description: 'subtract the profile FILE (pprof -base: samples that cancel out disappear)' },
  'diff-base': { type: 'string', valueName: 'FILE', description: 'compare with the profile FILE (pprof -diff_base: percentages of the base total)' },
};
/** How the text reports print values (pprof's text options). */
export const TEXT_OPTIONS: Record<string, CommandOption> = {
  unit: { type: 'string', valueName: 'UNIT', description: 'print values in UNIT (ms, s, kb, MB, …; default minimum: pprof\'s choice) (pprof -unit)' },
  'relative-percentages': { type: 'boolean', description: 'percentages of the total after the filters, not before (pprof -relative_percentages)' },
  noinlines: { type: 'boolean', description: 'attribute inlined frames to the function they were inlined into (pprof -noinlines)' },
  mean: { type: 'boolean', description: 'print values divided by the first sample type (the count) of the same samples (pprof -mean)' },
  'divide-by': { type: 'string', valueName: 'N', description: 'print values divided by N (pprof -divide_by)' },
  'drop-negative': { type: 'boolean', description: 'leave out entries with negative values (pprof -drop_negative)' },
  'compact-labels': { type: 'boolean', description: 'leave the profile labels (File:, Type:, Time:, …) out of the header (pprof -compact_labels)' },
  ...TAG_FRAME_OPTIONS,
};
/** The options of `traces` (pprof applies these to -traces; -drop_negative and the trimming do not apply). */
export const TRACES_OPTIONS: Record<string, CommandOption> = {
  ...FOCUS_OPTIONS,
  ...FILTER_OPTIONS,
  ...TAG_FRAME_OPTIONS,
  ...BASE_OPTIONS,
  unit: TEXT_OPTIONS.unit!,
  'relative-percentages': TEXT_OPTIONS['relative-percentages']!,
  noinlines: TEXT_OPTIONS.noinlines!,
  mean: TEXT_OPTIONS.mean!,
  'divide-by': TEXT_OPTIONS['divide-by']!,
};
/** The options of `tags` (pprof's -tags sums plain values: no -mean, -divide_by or granularity). */
export const TAGS_OPTIONS: Record<string, CommandOption> = { ...FOCUS_OPTIONS, ...FILTER_OPTIONS, ...TAG_FRAME_OPTIONS, ...BASE_OPTIONS, unit: TEXT_OPTIONS.unit! };
export const GRAPH_OPTIONS: Record<string, CommandOption> = {
  by: { type: 'string', valueName: 'function|filefunctions|file|line|address', description: 'granularity of the entries (default function; pprof\'s plural spellings work too)' },
  cum: { type: 'boolean', description: 'sort by cumulative value instead of flat' },
  'node-fraction': { type: 'string', valueName: 'F', description: 'hide entries whose cum is below F of the total (pprof -nodefraction, default 0.005)' },
  'edge-fraction': { type: 'string', valueName: 'F', description: 'hide calls below F of the total (pprof -edgefraction, default 0.001)' },
};

export const DROP_FRAMES_OPTION: Record<string, CommandOption> = {
  'no-drop-frames': { type: 'boolean', description: "show every frame: do not apply the profile's drop_frames/keep_frames (go tool pprof always applies them)" },
};

/** The options of the commands that look at one sample type of a profile: --from, --sample-type, the filters, --no-drop-frames. */
export const VIEW_OPTIONS: Record<string, CommandOption> = { ...FROM_OPTION, ...SAMPLE_TYPE_OPTION, ...FOCUS_OPTIONS, ...FILTER_OPTIONS, ...DROP_FRAMES_OPTION };
/** `VIEW_OPTIONS`, the graph and the text options: the options of top, tree, peek and diff. */
export const REPORT_OPTIONS: Record<string, CommandOption> = { ...VIEW_OPTIONS, ...GRAPH_OPTIONS, ...TEXT_OPTIONS };

/**
 * What a command does with the samples it reads: `summed` when it only sums their values (the
 * report views top, tree, peek, folded, flame, diff), which lets the reader merge equal samples
 * (`samplesSummed`: pprof then reads with `aggregate`, memory following the distinct samples).
 */
export type SampleUse = 'each' | 'summed';

/** Reads a profile with the TTY progress bar. */
export async function readWithProgress(ctx: CliContext, file: string, use: SampleUse = 'each'): Promise<RegistryReadResult> {
  const bar = ctx.progress(`reading ${file}`);
  // Drawn at once (on a TTY only): not every adapter reports progress.
  bar.update(0);
  try {
    return await ctx.registry.read(file, {
      format: ctx.values.from as string | undefined,
      options: readOptionsOf(ctx),
      signal: ctx.signal,
      onProgress: (d, t) => bar.update(d, t),
      ...(use === 'summed' ? { samplesSummed: true } : {}),
    });
  } finally {
    bar.done();
  }
}

/**
 * A read profile as the views show it: with its `drop_frames`/`keep_frames` applied as
 * `go tool pprof` applies them on load (or `patterns`, e.g. the new profile's for a diff),
 * unless `--no-drop-frames`. An invalid pattern becomes a warning of the result.
 */
export async function asViewed<R extends { profile: Profile; warnings: Warning[] }>(ctx: CliContext, r: R, patterns?: DropFramesPatterns): Promise<R> {
  if (ctx.values['no-drop-frames'] === true) return r;
  const bar = ctx.progress('applying drop_frames');
  bar.update(0);
  let applied: Awaited<ReturnType<typeof applyDropFrames>>;
  try {
    applied = await applyDropFrames(r.profile, patterns);
  } finally {
    bar.done();
  }
  return applied.warnings.length === 0 && !applied.pruned ? r : { ...r, profile: applied.profile, warnings: [...r.warnings, ...applied.warnings] };
}

/** `readWithProgress` then `asViewed`: how the view commands (top, tree, peek, folded, flame) read their input. */
export async function readForView(ctx: CliContext, file: string): Promise<RegistryReadResult> {
  const r = await readWithBase(ctx, file, 'summed');
  // pprof prunes the merged profile with its first source's drop_frames.
  return asViewed(ctx, r, r.patterns);
}

/** FILE and the profile of `--base` / `--diff-base` when given: the files a report is made from. */
export function inputFilesOf(ctx: CliContext, file: string): string[] {
  const base = stringOption(ctx, 'base') ?? stringOption(ctx, 'diff-base');
  return base === undefined ? [file] : [file, base];
}

/**
 * Reads FILE, minus the profile of `--base` / `--diff-base` when given (pprof -base / -diff_base:
 * the base negated and merged in, labelled pprof::base=true for -diff_base); `patterns` are
 * FILE's drop_frames/keep_frames, which pprof applies to the result.
 */
export async function readWithBase(ctx: CliContext, file: string, use: SampleUse = 'each'): Promise<RegistryReadResult & { patterns?: DropFramesPatterns }> {
  const r = await readWithProgress(ctx, file, use);
  const base = stringOption(ctx, 'base');
  const diffBase = stringOption(ctx, 'diff-base');
  if (base === undefined && diffBase === undefined) return r;
  if (base !== undefined && diffBase !== undefined) throw usage('--base and --diff-base exclude each other', 'base', 'one base profile');
  const b = await readWithProgress(ctx, (base ?? diffBase)!, use);
  const profile = diffProfiles(b.profile, r.profile, { labelBase: diffBase !== undefined });
  return { ...r, profile, warnings: [...r.warnings, ...b.warnings], patterns: r.profile['.profile'] };
}

/**
 * NEW of a diff as pprof's driver holds it when `-normalize` scales it: merged (pprof merges the
 * samples of every source it loads), so that a sample repeated in the file is rounded once.
 */
export async function readDiffNew(ctx: CliContext, file: string, normalize: boolean, use: SampleUse = 'each'): Promise<RegistryReadResult> {
  const r = await readWithProgress(ctx, file, use);
  return normalize ? { ...r, profile: mergeProfiles([r.profile]) } : r;
}

/** What the text reports (top, tree, peek, diff) read: a profile, or NEW and BASE side by side; the report options; the sample type. */
export interface ReportRead {
  input: Profile | ReportInput;
  t: number;
  options: ReturnType<typeof reportOptionsOf>;
  sampleType: ReturnType<typeof sampleTypeJson>;
  /** The format of FILE (NEW for a diff). */
  format: string;
  warnings: Warning[];
}

/**
 * How top, tree and peek read FILE: `readForView`, or with `--diff-base B` FILE minus B as
 * `readDiffReport` computes it (without merging when it can); `untrimmed` for peek, whose report
 * shows every node.
 */
export async function readForReport(ctx: CliContext, file: string, nodeCountMin: number, untrimmed = false): Promise<ReportRead> {
  const diffBase = stringOption(ctx, 'diff-base');
  if (diffBase !== undefined && stringOption(ctx, 'base') === undefined) return readDiffReport(ctx, diffBase, file, nodeCountMin, { normalize: false, baseWarningsFirst: false, untrimmed });
  const r = await readForView(ctx, file);
  const t = sampleTypeIndexOf(ctx, r.profile);
  return { input: r.profile, t, options: reportOptionsOf(ctx, t, nodeCountMin), sampleType: sampleTypeJson(r.profile, t), format: r.format, warnings: r.warnings };
}

/**
 * NEW minus BASE as pprof -diff_base reports it, for the text reports. When the options allow
 * (core's `diffReportUnsupported`), each profile is reduced to its samples' frames as soon as it
 * is read and dropped (`DiffReportBuilder`): no merged profile, and never both profiles at once.
 * Otherwise (or when the profiles turn out to need it) the base is negated and merged in, the new
 * profile's drop_frames applied to the result, as before. The numbers are the same either way.
 */
export async function readDiffReport(
  ctx: CliContext,
  baseFile: string,
  newFile: string,
  nodeCountMin: number,
  how: { normalize: boolean; baseWarningsFirst: boolean; untrimmed?: boolean },
): Promise<ReportRead> {
  const merged = async (base: RegistryReadResult, next: RegistryReadResult): Promise<ReportRead> => {
    const d = diffProfiles(base.profile, next.profile, { normalize: how.normalize });
    // pprof prunes the merged NEW - BASE profile with its first source's (NEW's) drop_frames.
    const viewed = await asViewed(ctx, { profile: d, warnings: [] }, next.profile['.profile']);
    const t = sampleTypeIndexOf(ctx, viewed.profile);
    const read = how.baseWarningsFirst ? [...base.warnings, ...next.warnings] : [...next.warnings, ...base.warnings];
    return { input: viewed.profile, t, options: reportOptionsOf(ctx, t, nodeCountMin), sampleType: sampleTypeJson(viewed.profile, t), format: next.format, warnings: [...read, ...viewed.warnings] };
  };
  // NEW is reduced to its samples' frames here, and its profile is gone when BASE is read.
  const side = await (async () => {
    const next = await readDiffNew(ctx, newFile, how.normalize, 'summed');
    const t = sampleTypeIndexOf(ctx, next.profile);
    const options = reportOptionsOf(ctx, t, nodeCountMin);
    if (diffReportUnsupported({ ...options, normalize: how.normalize }) !== undefined) return { mergeWith: next };
    const builder = new DiffReportBuilder({ ...options, sampleTypeIndex: t, normalize: how.normalize, sampleTypeDefaulted: ctx.values['sample-type'] === undefined, untrimmed: how.untrimmed });
    const viewed = await asViewed(ctx, next, next.profile['.profile']);
    if (builder.addNew(viewed.profile) !== undefined) return { mergeWith: next };
    const patterns = { drop_frames: next.profile['.profile'].drop_frames, keep_frames: next.profile['.profile'].keep_frames };
    const dropWarnings = viewed.warnings.slice(next.warnings.length);
    // Standard input cannot be read twice: NEW from `-` is kept for the fallback below.
    const kept = newFile === '-' ? next : undefined;
    return { builder, t, options, patterns, format: next.format, warnings: next.warnings, dropWarnings, sampleType: sampleTypeJson(next.profile, t), kept };
  })();
  if (side.mergeWith) return merged(await readWithProgress(ctx, baseFile, 'summed'), side.mergeWith);
  const base = await readWithProgress(ctx, baseFile, 'summed');
  const viewedBase = await asViewed(ctx, base, side.patterns);
  // Values that make the merged total differ from the sides' (rare): merge after all, reading NEW again.
  if (side.builder.addBase(viewedBase.profile) !== undefined) return merged(base, side.kept ?? (await readDiffNew(ctx, newFile, how.normalize, 'summed')));
  const read = how.baseWarningsFirst ? [...base.warnings, ...side.warnings] : [...side.warnings, ...base.warnings];
  return { input: side.builder.input(), t: side.t, options: side.options, sampleType: side.sampleType, format: side.format, warnings: [...read, ...side.dropWarnings] };
}

/** `--read-option KEY=VALUE`s as the reader's options. */
export function readOptionsOf(ctx: CliContext): Record<string, unknown> {
  return parseFormatOptions(ctx.values['read-option'], 'read-option');
}

/**
 * `KEY=VALUE` pairs for a reader or writer. Values `true`/`false` become booleans and decimal
 * integers numbers; everything else stays a string. Adapters document their options.
 */
export function parseFormatOptions(raw: unknown, flag: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  for (const item of list as string[]) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new ProfkitError(ErrorCodes.USAGE, `--${flag} takes KEY=VALUE, got "${item}"`, { option: flag, rule: 'command-line usage' });
    const key = item.slice(0, eq);
    const text = item.slice(eq + 1);
    out[key] = text === 'true' ? true : text === 'false' ? false : /^-?\d{1,15}$/.test(text) ? Number(text) : text;
  }
  return out;
}

/** Runs `work` with a progress line `label` on a TTY (the report computations on large profiles take seconds). */
export function phase<T>(ctx: CliContext, label: string, work: () => T): T {
  const bar = ctx.progress(label);
  bar.update(0);
  try {
    return work();
  } finally {
    bar.done();
  }
}

function usage(message: string, option: string, rule: string): ProfkitError {
  return new ProfkitError(ErrorCodes.USAGE, message, { option, rule });
}

/** `--sample-type` as an index (the default sample type without it). */
export function sampleTypeIndexOf(ctx: CliContext, p: Profile): number {
  const name = ctx.values['sample-type'];
  if (typeof name !== 'string') {
    const d = defaultSampleTypeIndex(p);
    // The data's fault, not the command line's: exit 1 (invalid profile), not 2 (usage).
    if (d < 0) {
      throw new ProfkitError(ErrorCodes.INVALID_PROFILE, 'the profile has no sample types, so there are no values to report', {
        file: ctx.positionals.length === 1 ? ctx.positionals[0] : undefined,
        rule: 'a report needs a sample type',
      });
    }
    return d;
  }
  const i = findSampleType(p, name);
  if (i < 0) {
    const known = p.sample_types.type.map((t, k) => `${t}/${p.sample_types.unit[k]}`).join(', ');
    throw usage(`--sample-type ${name}: no such sample type (the profile has ${known || 'none'})`, 'sample-type', 'the sample type must exist in the profile');
  }
  return i;
}

export function byOf(ctx: CliContext): ReportGranularity | undefined {
  const by = ctx.values.by;
  if (by === undefined) return undefined;
  return parseGranularity(String(by), 'by');
}

/** The filters of the command line (--focus … --prune-from) as core's `ReportFilterOptions`. */
export function filterOptionsOf(ctx: CliContext): ReportFilterOptions {
  const s = (k: string) => stringOption(ctx, k);
  return {
    focus: s('focus'),
    ignore: s('ignore'),
    hide: s('hide'),
    show: s('show'),
    showFrom: s('show-from'),
    tagFocus: s('tag-focus'),
    tagIgnore: s('tag-ignore'),
    tagShow: s('tag-show'),
    tagHide: s('tag-hide'),
    pruneFrom: s('prune-from'),
  };
}

/** The label keys of `--tag-root` / `--tag-leaf` (comma-separated, as pprof splits them). */
function keysOf(ctx: CliContext, name: string): string[] | undefined {
  const v = stringOption(ctx, name);
  return v === undefined ? undefined : v.split(',').filter((k) => k !== '');
}

/** `p` with the pseudo frames of `--tag-root` / `--tag-leaf` (pprof -tagroot/-tagleaf; numeric values in --unit). */
export function withTagFramesOf(ctx: CliContext, p: Profile): Profile {
  return withTagFrames(p, { tagRoot: keysOf(ctx, 'tag-root'), tagLeaf: keysOf(ctx, 'tag-leaf'), outputUnit: stringOption(ctx, 'unit') });
}

/** The text options (pprof -unit, -relative_percentages, -noinlines, -mean, -divide_by, -drop_negative, -tagroot, -tagleaf). */
export function textOptionsOf(ctx: CliContext) {
  const divideBy = ctx.values['divide-by'] === undefined ? undefined : Number(ctx.values['divide-by']);
  if (divideBy !== undefined && (!Number.isFinite(divideBy) || divideBy === 0 || String(ctx.values['divide-by']).trim() === '')) {
    throw usage(`--divide-by ${String(ctx.values['divide-by'])}: expected a nonzero number`, 'divide-by', '--divide-by is a nonzero number');
  }
  return {
    outputUnit: stringOption(ctx, 'unit'),
    relativePercentages: ctx.values['relative-percentages'] === true,
    inline: ctx.values.noinlines === true ? false : undefined,
    mean: ctx.values.mean === true,
    divideBy,
    dropNegative: ctx.values['drop-negative'] === true,
    tagRoot: keysOf(ctx, 'tag-root'),
    tagLeaf: keysOf(ctx, 'tag-leaf'),
  };
}

export function numberOption(ctx: CliContext, name: string, { integer = false, min = 0, max = Infinity } = {}): number | undefined {
  const v = ctx.values[name];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || v.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
    throw usage(`--${name} ${String(v)}: expected ${integer ? 'an integer' : 'a number'} in [${min}, ${max === Infinity ? '∞' : max}]`, name, `--${name} must be a number in range`);
  }
  return n;
}

export function stringOption(ctx: CliContext, name: string): string | undefined {
  const v = ctx.values[name];
  return typeof v === 'string' ? v : undefined;
}

/** `v` as a percentage of `total` (4 decimals) for JSON output. */
export function pct(v: bigint, total: bigint): number {
  return total === 0n ? 0 : Math.round((Number(v) / Number(total)) * 1e6) / 1e4;
}

/** The options of the `top`-like reports (top, tree, peek, diff) as `topReport`/`treeReport` options. */
export function reportOptionsOf(ctx: CliContext, sampleTypeIndex: number, nodeCountMin: number) {
  return {
    ...filterOptionsOf(ctx),
    ...textOptionsOf(ctx),
    sampleTypeIndex,
    by: byOf(ctx),
    cum: ctx.values.cum === true,
    nodeFraction: numberOption(ctx, 'node-fraction', { max: 1 }),
    edgeFraction: numberOption(ctx, 'edge-fraction', { max: 1 }),
    nodeCount: numberOption(ctx, 'nodecount', { integer: true, min: nodeCountMin }),
    compactLabels: ctx.values['compact-labels'] === true,
    limits: parseLimitArgs(ctx.values.limit),
  };
}

/** The `sampleType` member of the JSON documents. */
export function sampleTypeJson(p: Profile, t: number): { type: string | undefined; unit: string | undefined } {
  return { type: p.sample_types.type[t], unit: p.sample_types.unit[t] };
}

export const TO_OPTION: Record<string, CommandOption> = {
  to: { type: 'string', valueName: 'FORMAT', description: 'write OUT as FORMAT instead of choosing by its extension' },
};

/**
 * `-o OUT` of the commands that write a new profile: required (a usage error naming `command`
 * and `rule` without it), and checked with `--to` against the registry before any input is read.
 */
export function requiredOutput(ctx: CliContext, command: string, rule: string): { output: string; to: string | undefined } {
  const output = stringOption(ctx, 'output');
  if (output === undefined) throw new ProfkitError(ErrorCodes.USAGE, `${command} needs -o OUT (see \`profkit help ${command}\`)`, { option: 'output', rule });
  const to = stringOption(ctx, 'to');
  ctx.registry.writerFor(output, to);
  return { output, to };
}

/**
 * Reports a written profile: the JSON document `body` with `--json` (unless OUT is stdout, which
 * holds the profile), otherwise the warnings and, unless `--quiet` or OUT is stdout, `line`.
 */
export function reportWritten(ctx: CliContext, command: string, output: string, body: Record<string, unknown> & { warnings: Warning[] }, line: string): number {
  if (ctx.json && output !== '-') {
    ctx.out.document(command, body);
    return 0;
  }
  ctx.out.warnings(body.warnings);
  if (output !== '-' && !ctx.quiet) ctx.out.line(line);
  return 0;
}
