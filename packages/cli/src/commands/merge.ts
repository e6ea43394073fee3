import { merge as mergeProfiles } from '@profkit/core/node';
import type { CliCommand } from '../types.js';
import { ANNOTATION_OPTIONS, withAddedComment, withBuildIdOverride } from './profile-annotations.js';
import { FROM_OPTION, TO_OPTION, readWithProgress, reportWritten, requiredOutput } from './shared.js';

export const merge: CliCommand = {
  name: 'merge',
  summary: 'Merge profiles into one (values of identical stacks summed, like `pprof -proto A B`)',
  usage: [
    'profkit merge A B... -o OUT [--compatibilize] [--to FORMAT]',
    '',
    'The inputs must have the same sample types and period type (--compatibilize keeps the sample',
    'types common to all of them instead). Mappings, locations, functions and samples are',
    'deduplicated; time is the earliest, duration the sum (see docs/operations.md).',
    '',
    'Examples:',
    '  profkit merge cpu1.pb.gz cpu2.pb.gz cpu3.pb.gz -o cpu-all.pb.gz',
    '  profkit merge run1/Rprof.out run2/Rprof.out -o both.pb.gz',
    '  profkit merge a.heap b.heap -o ab.pb.gz --compatibilize --json',
  ].join('\n'),
  options: {
    ...FROM_OPTION,
    ...TO_OPTION,
    output: { type: 'string', short: 'o', valueName: 'OUT', description: 'the merged profile (required; - for stdout with --to)' },
    compatibilize: { type: 'boolean', description: 'keep only the sample types common to all inputs (pprof CompatibilizeSampleTypes)' },
    ...ANNOTATION_OPTIONS,
  },
  positionals: [1, 10000],
  json: true,
  async run(ctx) {
    const { output, to } = requiredOutput(ctx, 'merge', 'merge writes a new profile');
    const inputs = ctx.positionals;
    const read = [];
    for (const f of inputs) read.push(await readWithProgress(ctx, f));
    const merged = withAddedComment(
      ctx,
      mergeProfiles(
        read.map((r) => withBuildIdOverride(ctx, r.profile)),
        { compatibilizeSampleTypes: ctx.values.compatibilize === true },
      ),
    );
    const w = await ctx.registry.write(merged, output, { format: to, inputs, signal: ctx.signal });
    const warnings = [...read.flatMap((r) => r.warnings), ...w.warnings];
    return reportWritten(ctx, 'merge', output, { inputs, output, to: w.format, samples: merged.samples.value.length, warnings }, `${inputs.length} profiles -> ${output} (${w.format}, ${merged.samples.value.length} samples)`);
  },
};
