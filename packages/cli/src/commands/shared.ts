/**
 * Helpers shared by the built-in commands: the common option definitions, reading with a
 * progress bar, and parsing option values (sample type, granularity, numbers).
 */

import {
  ErrorCodes,
  ProfkitError,
  applyDropFrames,
  defaultSampleTypeIndex,
  findSampleType,
  type CommandOption,
  type DropFramesPatterns,
  type Profile,
  type RegistryReadResult,
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
export const GRAPH_OPTIONS: Record<string, CommandOption> = {
  by: { type: 'string', valueName: 'function|file|line', description: 'granularity of the entries (default function)' },
  cum: { type: 'boolean', description: 'sort by cumulative value instead of flat' },
  'node-fraction': { type: 'string', valueName: 'F', description: 'hide entries whose cum is below F of the total (pprof -nodefraction, default 0.005)' },
  'edge-fraction': { type: 'string', valueName: 'F', description: 'hide calls below F of the total (pprof -edgefraction, default 0.001)' },
};

export const DROP_FRAMES_OPTION: Record<string, CommandOption> = {
  'no-drop-frames': { type: 'boolean', description: "show every frame: do not apply the profile's drop_frames/keep_frames (go tool pprof always applies them)" },
};

/** The options of the commands that look at one sample type of a profile: --from, --sample-type, --focus, --ignore, --no-drop-frames. */
export const VIEW_OPTIONS: Record<string, CommandOption> = { ...FROM_OPTION, ...SAMPLE_TYPE_OPTION, ...FOCUS_OPTIONS, ...DROP_FRAMES_OPTION };
/** `VIEW_OPTIONS` and the graph options: the options of top, tree, peek and diff. */
export const REPORT_OPTIONS: Record<string, CommandOption> = { ...VIEW_OPTIONS, ...GRAPH_OPTIONS };

/** Reads a profile with the TTY progress bar. */
export async function readWithProgress(ctx: CliContext, file: string): Promise<RegistryReadResult> {
  const bar = ctx.progress(`reading ${file}`);
  // Drawn at once (on a TTY only): not every adapter reports progress.
  bar.update(0);
  try {
    return await ctx.registry.read(file, { format: ctx.values.from as string | undefined, options: readOptionsOf(ctx), signal: ctx.signal, onProgress: (d, t) => bar.update(d, t) });
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
  return asViewed(ctx, await readWithProgress(ctx, file));
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

export function byOf(ctx: CliContext): 'function' | 'file' | 'line' | undefined {
  const by = ctx.values.by;
  if (by === undefined) return undefined;
  if (by === 'function' || by === 'file' || by === 'line') return by;
  throw usage(`--by ${String(by)}: expected function, file or line`, 'by', '--by is function, file or line');
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
    sampleTypeIndex,
    by: byOf(ctx),
    cum: ctx.values.cum === true,
    focus: stringOption(ctx, 'focus'),
    ignore: stringOption(ctx, 'ignore'),
    nodeFraction: numberOption(ctx, 'node-fraction', { max: 1 }),
    edgeFraction: numberOption(ctx, 'edge-fraction', { max: 1 }),
    nodeCount: numberOption(ctx, 'nodecount', { integer: true, min: nodeCountMin }),
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
