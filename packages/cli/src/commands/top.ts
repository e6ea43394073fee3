import {
  ErrorCodes,
  ProfkitError,
  defaultSampleTypeIndex,
  findSampleType,
  topReport,
  type CommandOption,
  type Profile,
  type RegistryReadResult,
} from '@profkit/core';
import type { CliCommand, CliContext } from '../types.js';

/** Options shared by the view commands (top, tree, peek, diff, flame). */
export const SAMPLE_TYPE_OPTION: Record<string, CommandOption> = {
  'sample-type': { type: 'string', valueName: 'TYPE', description: 'sample type to report, by name (cpu, alloc_space, time/nanoseconds) or index; default: the profile\'s default type' },
};
export const FROM_OPTION: Record<string, CommandOption> = {
  from: { type: 'string', valueName: 'FORMAT', description: 'read the input(s) as FORMAT instead of detecting it' },
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

/** Reads a profile with the TTY progress bar. */
export async function readWithProgress(ctx: CliContext, file: string): Promise<RegistryReadResult> {
  const bar = ctx.progress(`reading ${file}`);
  // Drawn at once (on a TTY only): not every adapter reports progress.
  bar.update(0);
  try {
    return await ctx.registry.read(file, { format: ctx.values.from as string | undefined, signal: ctx.signal, onProgress: (d, t) => bar.update(d, t) });
  } finally {
    bar.done();
  }
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
    if (d < 0) throw usage('the profile has no sample types', 'sample-type', 'a report needs a sample type');
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

export const top: CliCommand = {
  name: 'top',
  summary: 'Flat and cumulative values per function, file or line, like `go tool pprof -top`',
  usage: [
    'profkit top FILE [--sample-type T] [--cum] [-n N] [--focus RE] [--ignore RE] [--by function|file|line]',
    '',
    'Prints the same header, numbers, units and order as `go tool pprof -top` (entries whose cum',
    'is below --node-fraction of the total are hidden, as pprof does; --node-fraction 0 shows all).',
    'Percentages are of the total before --focus/--ignore, as in pprof.',
    '',
    'Examples:',
    '  profkit top cpu.pb.gz -n 10',
    '  profkit top Rprof.out --sample-type time --cum',
    '  profkit top heap.pb.gz --sample-type inuse_space --focus "^main\\." --by line',
    '  profkit top cpu.pb.gz --json | jq \'.entries[0]\'',
  ].join('\n'),
  options: {
    ...FROM_OPTION,
    ...SAMPLE_TYPE_OPTION,
    ...FOCUS_OPTIONS,
    ...GRAPH_OPTIONS,
    nodecount: { type: 'string', short: 'n', valueName: 'N', description: 'show at most N entries (pprof -nodecount; default all)' },
  },
  positionals: 1,
  json: true,
  async run(ctx) {
    const file = ctx.positionals[0]!;
    const r = await readWithProgress(ctx, file);
    const t = sampleTypeIndexOf(ctx, r.profile);
    const rep = phase(ctx, 'computing the report', () => topReport(r.profile, {
      sampleTypeIndex: t,
      by: byOf(ctx),
      cum: ctx.values.cum === true,
      focus: stringOption(ctx, 'focus'),
      ignore: stringOption(ctx, 'ignore'),
      nodeFraction: numberOption(ctx, 'node-fraction', { max: 1 }),
      edgeFraction: numberOption(ctx, 'edge-fraction', { max: 1 }),
      nodeCount: numberOption(ctx, 'nodecount', { integer: true, min: 1 }),
    }));
    if (ctx.json) {
      let sum = 0n;
      ctx.out.document('top', {
        file,
        format: r.format,
        sampleType: { type: r.profile.sample_types.type[t], unit: r.profile.sample_types.unit[t] },
        total: rep.total,
        outputUnit: rep.table.outputUnit,
        header: rep.header,
        droppedNodes: rep.droppedNodes,
        entriesBeforeLimit: rep.origCount,
        entries: rep.table.entries.map((e) => {
          sum += e.flat;
          return { name: e.name, flat: e.flat, flatPercent: pct(e.flat, rep.total), sumPercent: pct(sum, rep.total), cum: e.cum, cumPercent: pct(e.cum, rep.total), inline: e.inline || null };
        }),
        warnings: r.warnings,
      });
      return 0;
    }
    ctx.out.warnings(r.warnings);
    ctx.stdout.write(rep.text);
    return 0;
  },
};
