import { callGraphNode, treeReport, type TreeReport } from '@profkit/core/node';
import type { CliCommand, CliContext } from '../types.js';
import { BASE_OPTIONS, REPORT_OPTIONS, pct, phase, readForReport } from './shared.js';

/** Runs `tree` (symbol undefined) or `peek` (symbol = RE) and prints the text or JSON report. */
export async function runTree(ctx: CliContext, name: 'tree' | 'peek', file: string, symbol: string | undefined): Promise<number> {
  // peek is never trimmed (see core's DiffReportBuilder `untrimmed`).
  const r = await readForReport(ctx, file, 0, name === 'peek');
  const rep: TreeReport = phase(ctx, 'computing the report', () => treeReport(r.input, { ...r.options, symbol }));
  if (ctx.json) {
    const g = rep.graph;
    const edge = (e: { src: number; dst: number; weight: bigint; inline: boolean }, other: number, cum: bigint) => ({
      name: callGraphNode(g, other).name,
      weight: e.weight,
      percentOfCum: pct(e.weight, cum),
      inline: e.inline,
    });
    ctx.out.document(name, {
      file,
      format: r.format,
      sampleType: r.sampleType,
      total: g.total,
      outputUnit: g.outputUnit,
      header: rep.header,
      ...(symbol !== undefined ? { regexp: symbol } : {}),
      nodes: rep.printed.map((k) => {
        const n = g.nodes[k]!;
        return {
          name: n.name,
          flat: n.flat,
          flatPercent: pct(n.flat, g.total),
          cum: n.cum,
          cumPercent: pct(n.cum, g.total),
          callers: n.in.map((e) => edge(e, e.src, n.cum)),
          callees: n.out.map((e) => edge(e, e.dst, n.cum)),
        };
      }),
      warnings: r.warnings,
    });
    return 0;
  }
  ctx.out.warnings(r.warnings);
  ctx.stdout.write(rep.text);
  return 0;
}

export const TREE_OPTIONS = { ...REPORT_OPTIONS, ...BASE_OPTIONS };

export const tree: CliCommand = {
  name: 'tree',
  summary: 'Every function with its callers and callees, like `go tool pprof -tree`',
  usage: [
    'profkit tree FILE [--sample-type T] [-n N] [--focus RE] [--ignore RE] [--by function|file|line] [--cum]',
    '',
    'For each entry (sorted like `top`): its callers above it, then the entry with flat, flat%,',
    'sum%, cum and cum%, then its callees; each call shows its value and the share of the entry\'s',
    'cum it accounts for. Same trimming as pprof: at most 80 entries by default (-n), entries below',
    '--node-fraction and calls below --edge-fraction of the total hidden.',
    '',
    'Examples:',
    '  profkit tree cpu.pb.gz',
    '  profkit tree cpu.pb.gz -n 20 --focus "^main\\."',
    '  profkit tree Rprof.out --sample-type time --json',
  ].join('\n'),
  options: {
    ...TREE_OPTIONS,
    nodecount: { type: 'string', short: 'n', valueName: 'N', description: 'show at most N entries (pprof -nodecount; default 80, 0 = all)' },
  },
  positionals: 1,
  json: true,
  run: (ctx) => runTree(ctx, 'tree', ctx.positionals[0]!, undefined),
};
