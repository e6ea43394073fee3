import { ErrorCodes, ProfkitError, formatTopTable, topReport, type TopReport } from '@profkit/core/node';
import type { CliCommand, CliContext } from '../types.js';
import { BASE_OPTIONS, REPORT_OPTIONS, byOf, pct, phase, readForReport, readForView, reportOptionsOf, sampleTypeIndexOf, sampleTypeJson, type ReportRead } from './shared.js';

/** Whose numbers `top` shows: pprof's (default) or R's `summaryRprof`'s. */
type Accounting = 'pprof' | 'r';

/** The header line naming a non-default accounting (pprof's own header has none). */
const ACCOUNTING_LINE: Record<Exclude<Accounting, 'pprof'>, string> = {
  r: "Accounting: R summaryRprof (<GC> counted as the innermost function, samples without functions left out)",
};

function accountingOf(ctx: CliContext): Accounting {
  const a = ctx.values.accounting;
  if (a === undefined || a === 'pprof') return 'pprof';
  if (a === 'r') return 'r';
  throw new ProfkitError(ErrorCodes.USAGE, `--accounting ${String(a)}: expected pprof or r`, { option: 'accounting', rule: '--accounting is pprof or r' });
}

/** pprof's header lines, with the accounting line before "Showing nodes accounting for" unless pprof's. */
function headerWithAccounting(rep: TopReport, accounting: Accounting): string[] {
  if (accounting === 'pprof') return rep.header;
  const header = rep.header.slice();
  const at = header.findIndex((l) => l.startsWith('Showing nodes accounting for'));
  header.splice(at < 0 ? header.length : at, 0, ACCOUNTING_LINE[accounting]);
  return header;
}

export const top: CliCommand = {
  name: 'top',
  summary: 'Flat and cumulative values per function, file or line, like `go tool pprof -top`',
  usage: [
    'profkit top FILE [--sample-type T] [--cum] [-n N] [--focus RE] [--ignore RE] [--by function|file|line] [--accounting pprof|r]',
    '',
    'Prints the same header, numbers, units and order as `go tool pprof -top` (entries whose cum',
    'is below --node-fraction of the total are hidden, as pprof does; --node-fraction 0 shows all).',
    'Percentages are of the total before --focus/--ignore, as in pprof. The profile\'s drop_frames/',
    'keep_frames are applied as pprof does (--no-drop-frames shows every frame).',
    '',
    '--accounting r shows the numbers of R\'s summaryRprof() instead (transform r-accounting of',
    '@profkit/rprof): <GC> is the innermost function of GC samples (pprof\'s accounting keeps GC a',
    'sample flag and counts those samples under their stack), samples without functions are left',
    'out, every entry is shown (--node-fraction 0 unless given); flat = by.self, cum = by.total,',
    'per source line (basename#line, lines = "show") with --by line; --sample-type memory gives',
    'mem.total (memory = "both") as cum. The header then says "Accounting: R summaryRprof".',
    '',
    'Examples:',
    '  profkit top cpu.pb.gz -n 10',
    '  profkit top Rprof.out --sample-type time --cum',
    '  profkit top Rprof.out --accounting r --sample-type samples',
    '  profkit top heap.pb.gz --sample-type inuse_space --focus "^main\\." --by line',
    '  profkit top cpu.pb.gz --json | jq \'.entries[0]\'',
  ].join('\n'),
  options: {
    ...REPORT_OPTIONS,
    ...BASE_OPTIONS,
    nodecount: { type: 'string', short: 'n', valueName: 'N', description: 'show at most N entries (pprof -nodecount; default all)' },
    accounting: { type: 'string', valueName: 'pprof|r', description: "whose numbers: pprof's (default) or R's summaryRprof (<GC> as the innermost function; needs @profkit/rprof)" },
  },
  positionals: 1,
  json: true,
  async run(ctx) {
    const file = ctx.positionals[0]!;
    const accounting = accountingOf(ctx);
    const by = byOf(ctx);
    if (accounting === 'r' && by === 'file') {
      throw new ProfkitError(ErrorCodes.USAGE, '--accounting r has no --by file: summaryRprof counts per function or per source line', { option: 'by', rule: '--accounting r is per function or line' });
    }
    let r: ReportRead;
    if (accounting === 'r') {
      const read = await readForView(ctx, file);
      const accounted = await ctx.registry.transform('r-accounting', read.profile, {
        values: { lines: by === 'line' ? 'show' : 'hide' },
        stderr: ctx.stderr,
        signal: ctx.signal,
        verbose: ctx.verbose,
        quiet: ctx.quiet || ctx.json,
      });
      const t = sampleTypeIndexOf(ctx, accounted.profile);
      const options = reportOptionsOf(ctx, t, 1);
      // R's entries are already per function or per line (as functions named basename#line); R lists them all.
      Object.assign(options, { by: 'function', nodeFraction: options.nodeFraction ?? 0 });
      r = { input: accounted.profile, t, options, sampleType: sampleTypeJson(accounted.profile, t), format: read.format, warnings: [...read.warnings, ...accounted.warnings] };
    } else r = await readForReport(ctx, file, 1);
    const rep = phase(ctx, 'computing the report', () => topReport(r.input, r.options));
    if (ctx.json) {
      let sum = 0n;
      ctx.out.document('top', {
        file,
        format: r.format,
        accounting,
        sampleType: r.sampleType,
        total: rep.total,
        outputUnit: rep.table.outputUnit,
        header: headerWithAccounting(rep, accounting),
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
    ctx.stdout.write(accounting === 'pprof' ? rep.text : headerWithAccounting(rep, accounting).join('\n') + '\n' + formatTopTable(rep.table));
    return 0;
  },
};
