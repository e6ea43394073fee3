import { topProtoReport } from '@profkit/core/node';
import type { CliCommand } from '../types.js';
import { FROM_OPTION, SAMPLE_TYPE_OPTION, TO_OPTION, numberOption, reportWritten, requiredOutput, sampleTypeIndexOf } from './shared.js';
import { readAsGoPprof } from './go-load.js';
import { REPORT_FILTER_OPTIONS, filteredForReport } from './symbol-report.js';

export const topproto: CliCommand = {
  name: 'topproto',
  summary: 'The `top` table written as a profile, like `go tool pprof -topproto`',
  usage: [
    'profkit topproto FILE -o OUT [--to FORMAT] [--sample-type T] [--cum] [--node-fraction F]',
    '',
    'pprof\'s top table (functions whose cum is at least --node-fraction of the total, default',
    '0.005) as a profile: sample types cum and flat in the table\'s unit (values truncated to',
    'integers of that unit, as pprof does), one sample per entry at a location of its own with the',
    'entry\'s function; the time, duration and period of the input. The same profile as',
    '`go tool pprof -topproto` writes. OUT is written through its format\'s adapter (by extension',
    'or --to; `-o - --to pprof` for stdout), atomically.',
    '',
    'Examples:',
    '  profkit topproto cpu.pb.gz -o top.pb.gz && profkit top top.pb.gz --sample-type flat',
    '  profkit topproto Rprof.out -o top.pb.gz --sample-type time',
  ].join('\n'),
  options: {
    ...FROM_OPTION,
    ...SAMPLE_TYPE_OPTION,
    ...REPORT_FILTER_OPTIONS,
    ...TO_OPTION,
    output: { type: 'string', short: 'o', valueName: 'OUT', description: 'the output file (required; - for stdout with --to)' },
    cum: { type: 'boolean', description: 'order entries by cumulative value (pprof -cum)' },
    'node-fraction': { type: 'string', valueName: 'F', description: 'leave out entries whose cum is below F of the total (pprof -nodefraction; default 0.005)' },
  },
  positionals: 1,
  json: true,
  async run(ctx) {
    const file = ctx.positionals[0]!;
    const { output, to } = requiredOutput(ctx, 'topproto', 'topproto writes a new profile');
    const r = await readAsGoPprof(ctx, file, 'summed');
    const sampleTypeIndex = sampleTypeIndexOf(ctx, r.loaded);
    const { profile, total } = filteredForReport(ctx, r.loaded, sampleTypeIndex);
    const top = topProtoReport(profile, {
      sampleTypeIndex,
      total,
      cum: ctx.values.cum === true,
      nodeFraction: numberOption(ctx, 'node-fraction', { max: 1 }),
    });
    const w = await ctx.registry.write(top, output, { format: to, inputs: [file], signal: ctx.signal });
    const warnings = [...r.warnings, ...w.warnings];
    const entries = top.samples.value.length;
    return reportWritten(ctx, 'topproto', output, { input: file, output, to: w.format, entries, warnings }, `${file} (${r.format}) -> ${output} (${w.format}, ${entries} entries)`);
  },
};
