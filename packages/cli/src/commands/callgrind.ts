import { callgrindReport, writeFileAtomic } from '@profkit/core/node';
import type { CliCommand } from '../types.js';
import { FROM_OPTION, SAMPLE_TYPE_OPTION, sampleTypeIndexOf, stringOption } from './shared.js';
import { readAsGoPprof } from './go-load.js';
import { REPORT_FILTER_OPTIONS, filteredForReport } from './symbol-report.js';

export const callgrind: CliCommand = {
  name: 'callgrind',
  summary: 'The call graph in callgrind format (callgrind_annotate, KCachegrind), like `go tool pprof -callgrind`',
  usage: [
    'profkit callgrind FILE [-o OUT] [--sample-type T] [--cum]',
    '',
    'One node per address (with its function, file and line), its flat value as the cost of that',
    'instruction, and its calls with their weights, in the callgrind format that',
    '`callgrind_annotate` and KCachegrind read. Byte for byte as `go tool pprof -callgrind` writes',
    'it: values in the largest unit that keeps them integers (the `events:` line names it), nodes',
    'in pprof\'s flat order (--cum: cumulative), names and addresses compressed as pprof does.',
    'Written to stdout, or atomically to OUT with -o.',
    '',
    'Examples:',
    '  profkit callgrind cpu.pb.gz -o callgrind.out && callgrind_annotate callgrind.out',
    '  profkit callgrind heap.pb.gz --sample-type alloc_space > heap.callgrind',
  ].join('\n'),
  options: {
    ...FROM_OPTION,
    ...SAMPLE_TYPE_OPTION,
    ...REPORT_FILTER_OPTIONS,
    output: { type: 'string', short: 'o', valueName: 'OUT', description: 'write to OUT (atomically) instead of stdout' },
    cum: { type: 'boolean', description: 'order nodes by cumulative value (pprof -cum)' },
  },
  positionals: 1,
  json: false,
  async run(ctx) {
    const file = ctx.positionals[0]!;
    const r = await readAsGoPprof(ctx, file, 'summed');
    const sampleTypeIndex = sampleTypeIndexOf(ctx, r.loaded);
    const { profile, total } = filteredForReport(ctx, r.loaded, sampleTypeIndex);
    const text = callgrindReport(profile, { sampleTypeIndex, total, cum: ctx.values.cum === true });
    ctx.out.warnings(r.warnings);
    const output = stringOption(ctx, 'output');
    if (output === undefined || output === '-') ctx.stdout.write(text);
    else await writeFileAtomic(output, new TextEncoder().encode(text), { inputs: [file], signal: ctx.signal });
    return 0;
  },
};
