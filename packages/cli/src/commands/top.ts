import { topReport } from '@profkit/core';
import type { CliCommand } from '../types.js';
import { REPORT_OPTIONS, pct, phase, readForView, reportOptionsOf, sampleTypeIndexOf, sampleTypeJson } from './shared.js';

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
    ...REPORT_OPTIONS,
    nodecount: { type: 'string', short: 'n', valueName: 'N', description: 'show at most N entries (pprof -nodecount; default all)' },
  },
  positionals: 1,
  json: true,
  async run(ctx) {
    const file = ctx.positionals[0]!;
    const r = await readForView(ctx, file);
    const t = sampleTypeIndexOf(ctx, r.profile);
    const rep = phase(ctx, 'computing the report', () => topReport(r.profile, reportOptionsOf(ctx, t, 1)));
    if (ctx.json) {
      let sum = 0n;
      ctx.out.document('top', {
        file,
        format: r.format,
        sampleType: sampleTypeJson(r.profile, t),
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
