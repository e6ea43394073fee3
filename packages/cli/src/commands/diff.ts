import { diff as diffProfiles, topReport } from '@profkit/core/node';
import type { CliCommand } from '../types.js';
import { REPORT_OPTIONS, pct, phase, readDiffNew, readDiffReport, readWithProgress, reportWritten, stringOption } from './shared.js';

export const diff: CliCommand = {
  name: 'diff',
  summary: 'NEW minus BASE per function (like `go tool pprof -top -diff_base BASE NEW`), or as a profile with -o',
  usage: [
    'profkit diff BASE NEW [--sample-type T] [-n N] [--cum] [--by function|file|line] [--normalize] [-o OUT]',
    '',
    'Prints the `top` table of the difference: flat and cum of NEW minus BASE per entry, in percent',
    'of the BASE total (pprof -diff_base). Positive values grew, negative ones shrank. The profiles',
    'must have the same sample types. With -o the difference is written as a profile instead: the',
    'samples of NEW plus the samples of BASE negated and labelled pprof::base=true (readable by',
    '`go tool pprof` and by `profkit top`, which then reports the same table).',
    '',
    'Examples:',
    '  profkit diff before.pb.gz after.pb.gz -n 20',
    '  profkit diff before.pb.gz after.pb.gz --normalize --cum',
    '  profkit diff old/Rprof.out new/Rprof.out --sample-type time -o delta.pb.gz',
  ].join('\n'),
  options: {
    ...REPORT_OPTIONS,
    nodecount: { type: 'string', short: 'n', valueName: 'N', description: 'show at most N entries' },
    normalize: { type: 'boolean', description: 'scale NEW to the total of BASE first (pprof -normalize)' },
    output: { type: 'string', short: 'o', valueName: 'OUT', description: 'write the difference as a profile instead of printing the table' },
    to: { type: 'string', valueName: 'FORMAT', description: 'with -o: write OUT as FORMAT' },
  },
  positionals: 2,
  json: true,
  async run(ctx) {
    const [baseFile, newFile] = ctx.positionals as [string, string];
    const output = stringOption(ctx, 'output');
    const to = stringOption(ctx, 'to');
    if (output !== undefined) ctx.registry.writerFor(output, to);
    const normalize = ctx.values.normalize === true;
    if (output !== undefined) {
      const base = await readWithProgress(ctx, baseFile);
      const next = await readDiffNew(ctx, newFile, normalize);
      const d = diffProfiles(base.profile, next.profile, { normalize });
      const warnings = [...base.warnings, ...next.warnings];
      const w = await ctx.registry.write(d, output, { format: to, inputs: [baseFile, newFile], signal: ctx.signal });
      warnings.push(...w.warnings);
      return reportWritten(ctx, 'diff', output, { base: baseFile, new: newFile, output, to: w.format, warnings }, `${newFile} - ${baseFile} -> ${output} (${w.format})`);
    }
    // The table is computed from the two profiles' stack tables (merged only when the options need it).
    const d = await readDiffReport(ctx, baseFile, newFile, 1, { normalize, baseWarningsFirst: true });
    const warnings = d.warnings;
    const rep = phase(ctx, 'computing the report', () => topReport(d.input, d.options));
    if (ctx.json) {
      ctx.out.document('diff', {
        base: baseFile,
        new: newFile,
        sampleType: d.sampleType,
        baseTotal: rep.total,
        outputUnit: rep.table.outputUnit,
        header: rep.header,
        entries: rep.table.entries.map((e) => ({ name: e.name, flat: e.flat, flatPercent: pct(e.flat, rep.total), cum: e.cum, cumPercent: pct(e.cum, rep.total) })),
        warnings,
      });
      return 0;
    }
    ctx.out.warnings(warnings);
    ctx.stdout.write(rep.text);
    return 0;
  },
};
