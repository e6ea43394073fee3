import { listReport, listReportText, type ListReportOptions } from '@profkit/core/node';
import type { CliCommand } from '../types.js';
import { FROM_OPTION, SAMPLE_TYPE_OPTION, stringOption } from './shared.js';
import { sourceFileReader } from './source-files.js';
import { REPORT_FILTER_OPTIONS, runSymbolReport } from './symbol-report.js';

export const list: CliCommand = {
  name: 'list',
  summary: 'Source lines of the functions matching a regexp with their costs, like `go tool pprof -list`',
  usage: [
    'profkit list FILE REGEX [--source-path DIRS] [--trim-path PREFIXES] [--noinlines] [--sample-type T]',
    '',
    'For each function whose name matches REGEX (Go RE2 syntax, searched anywhere in the name),',
    'sorted by name, and each of its source files: the flat and cum of the function, then its',
    'source from its first line (or 5 lines before the first line with samples) to 5 lines after',
    'the last, each line with its flat and cum ("." for none). Byte for byte as `go tool pprof',
    '-list` prints it. A source file is looked up as pprof does: an absolute name as it is, a',
    'relative one under each --source-path directory (default: the working directory) and their',
    'parents; --trim-path removes prefixes first (without it, the part up to the name of a',
    'source-path directory is cut). A file that cannot be read is reported in the listing (Error:',
    '…), not fatal. Works for every format with line numbers: Go, gperftools symbolized, R profiles',
    'with srcrefs (Rprof(line.profiling = TRUE)): R users see line costs next to their code.',
    '',
    'Examples:',
    '  profkit list cpu.pb.gz "^main\\.busyLoop$" --source-path ~/src/app',
    '  profkit list Rprof.out "^fib$" --sample-type time',
    '  profkit list cpu.pb.gz main --trim-path /build/app --json | jq \'.routines[].lines\'',
  ].join('\n'),
  options: {
    ...FROM_OPTION,
    ...SAMPLE_TYPE_OPTION,
    ...REPORT_FILTER_OPTIONS,
    'source-path': { type: 'string', valueName: 'DIRS', description: "directories to search for source files, ':'-separated (pprof -source_path; default the working directory)" },
    'trim-path': { type: 'string', valueName: 'PREFIXES', description: "prefixes removed from the profile's file names, ':'-separated (pprof -trim_path)" },
    noinlines: { type: 'boolean', description: 'count inlined calls on the line of the call (pprof -noinlines)' },
  },
  positionals: 2,
  json: true,
  run: (ctx) => {
    const sourcePath = stringOption(ctx, 'source-path') ?? '';
    const trimPath = stringOption(ctx, 'trim-path') ?? '';
    const readSource = sourceFileReader(sourcePath === '' ? ctx.cwd : sourcePath, trimPath);
    const options = { sourcePath, trimPath, inlines: ctx.values.noinlines !== true, readSource } satisfies Partial<ListReportOptions>;
    return runSymbolReport(
      ctx,
      'list',
      (p, input) => listReport(p, { ...input, ...options }),
      undefined,
      // The text written as it is made: a listing has a row for every line of a function's range.
      (p, input) => listReportText(p, { ...input, ...options }),
      // Its lines sum the values of the loaded (merged) samples: the reader may merge them first.
      'summed',
    );
  },
};
