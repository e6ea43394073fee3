import { applyReportFilters, prune, selectSampleTypes, type Profile } from '@profkit/core/node';
import type { CliCommand, CliContext } from '../types.js';
import { ANNOTATION_OPTIONS, withAddedComment, withBuildIdOverride } from './profile-annotations.js';
import { FILTER_OPTIONS, FOCUS_OPTIONS, FROM_OPTION, TO_OPTION, filterOptionsOf, readWithProgress, reportWritten, requiredOutput, sampleTypeIndexOf, stringOption } from './shared.js';

/**
 * The filters of the command line in pprof's order (--focus/--ignore/--hide/--show, --show-from,
 * --tag-focus/--tag-ignore, --tag-show/--tag-hide, --prune-from), then --drop-frames/--keep-frames.
 */
export function applyFilterOptions(ctx: CliContext, p: Profile): Profile {
  const s = (k: string) => stringOption(ctx, k);
  let q = applyReportFilters(p, filterOptionsOf(ctx));
  const drop = s('drop-frames');
  if (drop !== undefined) q = prune(q, { dropFrames: drop, keepFrames: s('keep-frames') });
  return q;
}

export const filter: CliCommand = {
  name: 'filter',
  summary: 'Write a new profile keeping, dropping or pruning samples and frames (pprof -focus/-ignore/-hide/-show/-prune_from)',
  usage: [
    'profkit filter IN -o OUT [--focus RE] [--ignore RE] [--hide RE] [--show RE] [--show-from RE] [--tag-focus K=RE]',
    '                         [--tag-ignore K=RE] [--tag-show RE] [--tag-hide RE] [--prune-from RE]',
    '                         [--drop-frames RE [--keep-frames RE]] [--sample-type T] [--to FORMAT]',
    '',
    'Applied in pprof\'s order: sample filters (--focus, --ignore: a frame\'s function, file or mapping',
    'matches RE anywhere), frame filters (--hide removes matching frames, --show keeps only them),',
    '--show-from (frames above the outermost match removed), label filters, label keys (--tag-show,',
    '--tag-hide), --prune-from (the first matching frame from the leaf becomes the leaf),',
    '--drop-frames (pprof drop_frames: frames from the first full match down to the leaf removed,',
    'unless --keep-frames matches), then --sample-type keeps just that sample type. OUT is written',
    'through its format\'s adapter (by extension or --to), atomically, never over IN.',
    '',
    'Examples:',
    '  profkit filter cpu.pb.gz -o main-only.pb.gz --focus "^main\\."',
    '  profkit filter Rprof.out -o fib.folded --prune-from "^fib$" --sample-type time',
    '  profkit filter heap.pb.gz -o small.pb.gz --drop-frames "runtime\\..*" --keep-frames "runtime\\.main"',
  ].join('\n'),
  options: {
    ...FROM_OPTION,
    ...TO_OPTION,
    output: { type: 'string', short: 'o', valueName: 'OUT', description: 'the output file (required; - for stdout with --to)' },
    ...FOCUS_OPTIONS,
    ...FILTER_OPTIONS,
    'drop-frames': { type: 'string', valueName: 'RE', description: 'remove the first fully matching frame and everything beneath it (pprof drop_frames)' },
    'keep-frames': { type: 'string', valueName: 'RE', description: 'frames matching --drop-frames that are kept anyway (pprof keep_frames)' },
    'sample-type': { type: 'string', valueName: 'TYPE', description: 'keep only this sample type (name or index)' },
    ...ANNOTATION_OPTIONS,
  },
  positionals: 1,
  json: true,
  async run(ctx) {
    const input = ctx.positionals[0]!;
    const { output, to } = requiredOutput(ctx, 'filter', 'filter writes a new profile');
    const r = await readWithProgress(ctx, input);
    let p = applyFilterOptions(ctx, withBuildIdOverride(ctx, r.profile));
    if (ctx.values['sample-type'] !== undefined) p = selectSampleTypes(p, [sampleTypeIndexOf(ctx, p)]);
    p = withAddedComment(ctx, p);
    const w = await ctx.registry.write(p, output, { format: to, inputs: [input], signal: ctx.signal });
    const warnings = [...r.warnings, ...w.warnings];
    const samples = { before: r.profile.samples.value.length, after: p.samples.value.length };
    return reportWritten(ctx, 'filter', output, { input, output, from: r.format, to: w.format, samples, warnings }, `${input} (${r.format}, ${samples.before} samples) -> ${output} (${w.format}, ${samples.after} samples)`);
  },
};
