import { rawReportText } from '@profkit/core';
import type { CliCommand } from '../types.js';
import { BASE_OPTIONS, FROM_OPTION, filterOptionsOf, inputFilesOf } from './shared.js';
import { readAsGoPprof } from './go-load.js';
import { REPORT_FILTER_OPTIONS } from './symbol-report.js';
import { streamedReportLimits, writeStreamedText } from './stream-text.js';

export const raw: CliCommand = {
  name: 'raw',
  summary: 'Print the profile as `go tool pprof -raw` does (google/pprof Profile.String())',
  usage: [
    'profkit raw FILE [--columns] [--focus RE] [--ignore RE] [--hide RE] [--show RE] [--show-from RE] [--tag-focus F] [--tag-ignore F] [--prune-from RE]',
    '',
    'The samples, locations and mappings of the profile as `go tool pprof` holds it after loading',
    '(merged with itself: all-zero samples dropped, equal samples summed, ids renumbered; the',
    "profile's drop_frames applied; samples without a stack dropped), byte for byte as",
    '`go tool pprof -raw` prints it for any format profkit reads. Differences: Time: is in UTC',
    '(pprof prints the local zone), and profkit does not symbolize (compare with pprof',
    '-symbolize=none, or run `profkit convert --symbolize` first).',
    '',
    "pprof's filters apply as in `go tool pprof -raw`: they drop samples, cut stacks and rewrite",
    "locations' lines (--hide, --show, --show-from, --prune-from), and every location stays listed",
    'under its id, used or not.',
    '',
    'Examples:',
    '  profkit raw cpu.pb.gz',
    '  profkit raw Rprof.out | less',
    '  profkit raw cpu.pb.gz --focus main --hide runtime',
  ].join('\n'),
  options: {
    ...FROM_OPTION,
    ...BASE_OPTIONS,
    ...REPORT_FILTER_OPTIONS,
    columns: { type: 'boolean', description: 'print file:line:column as current google/pprof does (Go 1.19\'s go tool pprof prints file:line)' },
  },
  positionals: 1,
  json: false,
  async run(ctx) {
    const file = ctx.positionals[0]!;
    const r = await readAsGoPprof(ctx, file);
    ctx.out.warnings(r.warnings);
    // Written as made: many lines can print one long name (maxReportBytes bounds the text).
    await writeStreamedText(ctx, rawReportText(r.loaded, { columns: ctx.values.columns === true, filters: filterOptionsOf(ctx), limits: streamedReportLimits(ctx, inputFilesOf(ctx, file)) }));
    return 0;
  },
};
