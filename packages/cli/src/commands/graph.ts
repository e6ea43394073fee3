import { ErrorCodes, ProfkitError, dotReport, writeFileAtomic } from '@profkit/core/node';
import type { CliCommand } from '../types.js';
import {
  BASE_OPTIONS,
  GRAPH_OPTIONS,
  FILTER_OPTIONS,
  FOCUS_OPTIONS,
  FROM_OPTION,
  SAMPLE_TYPE_OPTION,
  TAG_FRAME_OPTIONS,
  TEXT_OPTIONS,
  byOf,
  filterOptionsOf,
  numberOption,
  phase,
  sampleTypeIndexOf,
  stringOption,
  textOptionsOf,
  withTagFramesOf,
} from './shared.js';
import { readAsGoPprof } from './go-load.js';

const FORMATS = ['dot', 'svg', 'png'] as const;
type GraphFormat = (typeof FORMATS)[number];

/** `--format`, or OUT's extension, or dot. */
function formatOf(format: string | undefined, output: string | undefined): GraphFormat {
  if (format === undefined) {
    const ext = /\.(dot|gv|svg|png)$/i.exec(output ?? '')?.[1]?.toLowerCase();
    return ext === 'gv' || ext === undefined ? 'dot' : (ext as GraphFormat);
  }
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw new ProfkitError(ErrorCodes.USAGE, `--format ${format}: expected dot, svg or png`, { option: 'format', rule: '--format is dot, svg or png' });
  }
  return format as GraphFormat;
}

export const graph: CliCommand = {
  name: 'graph',
  summary: 'The call graph as DOT, SVG or PNG, like `go tool pprof -dot` / `-svg` / `-png` (no Graphviz needed)',
  usage: [
    'profkit graph FILE [--format dot|svg|png] [-o OUT] [-n N] [--focus RE] [--ignore RE] [--call-tree]',
    '                   [--hide RE] [--show RE] [--tag-focus K=RE] … [--unit U] [--noinlines]',
    '',
    "pprof's call graph: a box per function with its flat and cumulative values (font size by flat,",
    'colour by cum), an arrow per call with its weight (dotted when it skips dropped nodes, marked',
    '(inline) when inlined), string labels and `bytes` sizes as small boxes beside their functions,',
    'and the profile\'s header in a legend. `dot` is the Graphviz text `go tool pprof -dot` writes:',
    'the same nodes, edges, labels and weights. `svg` and `png` are laid out by Graphviz compiled to',
    'WebAssembly and rasterised by resvg (WebAssembly): nothing to install. PNG text uses a system',
    'font (Liberation, DejaVu, Times or Arial); without one the text is left out, with a warning.',
    'Trimming as pprof: at most 80 nodes (-n; bytes/label boxes count), nodes below --node-fraction',
    'and calls below --edge-fraction of the total hidden. Format: --format, else by the extension of',
    'OUT (.dot/.gv, .svg, .png), else dot. Written to stdout, or atomically to OUT with -o.',
    '',
    'Examples:',
    '  profkit graph cpu.pb.gz -o cpu.svg',
    '  profkit graph heap.pb.gz --sample-type alloc_space -n 30 --format png -o heap.png',
    '  profkit graph cpu.pb.gz -focus=main -nodecount=20 > cpu.dot',
  ].join('\n'),
  options: {
    ...FROM_OPTION,
    ...SAMPLE_TYPE_OPTION,
    ...FOCUS_OPTIONS,
    ...FILTER_OPTIONS,
    ...TAG_FRAME_OPTIONS,
    ...BASE_OPTIONS,
    unit: TEXT_OPTIONS.unit!,
    'divide-by': TEXT_OPTIONS['divide-by']!,
    'drop-negative': TEXT_OPTIONS['drop-negative']!,
    mean: TEXT_OPTIONS.mean!,
    'relative-percentages': TEXT_OPTIONS['relative-percentages']!,
    noinlines: TEXT_OPTIONS.noinlines!,
    // pprof takes -compact_labels with -dot and still draws the full legend (fullHeaders): so does graph.
    'compact-labels': { type: 'boolean', description: 'accepted for pprof\'s spelling; the legend stays complete, as in go tool pprof -dot -compact_labels' },
    output: { type: 'string', short: 'o', valueName: 'OUT', description: 'write to OUT (atomically) instead of stdout' },
    format: { type: 'string', valueName: 'dot|svg|png', description: 'output format (default: by the extension of OUT, else dot)' },
    nodecount: { type: 'string', short: 'n', valueName: 'N', description: 'show at most N nodes, tag boxes counted (pprof -nodecount; default 80, 0 = all)' },
    'node-fraction': { type: 'string', valueName: 'F', description: 'hide nodes whose cum is below F of the total (pprof -nodefraction, default 0.005)' },
    'edge-fraction': { type: 'string', valueName: 'F', description: 'hide calls below F of the total (pprof -edgefraction, default 0.001)' },
    'call-tree': { type: 'boolean', description: 'one node per call path instead of per function (pprof -call_tree)' },
    by: GRAPH_OPTIONS.by!,
  },
  positionals: 1,
  json: false,
  async run(ctx) {
    const file = ctx.positionals[0]!;
    const output = stringOption(ctx, 'output');
    const format = formatOf(stringOption(ctx, 'format'), output);
    const by = byOf(ctx);
    const options = {
      by,
      ...filterOptionsOf(ctx),
      outputUnit: stringOption(ctx, 'unit'),
      relativePercentages: ctx.values['relative-percentages'] === true,
      divideBy: textOptionsOf(ctx).divideBy,
      dropNegative: ctx.values['drop-negative'] === true,
      // pprof -mean divides by the first sample type (the count).
      meanDivisorIndex: ctx.values.mean === true ? 0 : undefined,
      inline: ctx.values.noinlines !== true,
      nodeCount: numberOption(ctx, 'nodecount', { integer: true, min: 0 }),
      nodeFraction: numberOption(ctx, 'node-fraction', { max: 1 }),
      edgeFraction: numberOption(ctx, 'edge-fraction', { max: 1 }),
      callTree: ctx.values['call-tree'] === true,
    };
    const r = await readAsGoPprof(ctx, file, 'summed');
    const rep = phase(ctx, 'computing the graph', () => dotReport(withTagFramesOf(ctx, r.loaded), { ...options, sampleTypeIndex: sampleTypeIndexOf(ctx, r.loaded) }));
    let bytes: Uint8Array;
    if (format === 'dot') bytes = new TextEncoder().encode(rep.text);
    else {
      // Imported here: the WebAssembly renderers are loaded only for svg and png.
      const render = await import('../graph-render.js');
      const svg = await phase(ctx, 'laying out the graph (Graphviz, WebAssembly)', () => render.dotToSvg(rep.text));
      if (format === 'svg') bytes = new TextEncoder().encode(svg);
      else {
        const png = await phase(ctx, 'drawing the PNG (resvg, WebAssembly)', () => render.svgToPng(svg));
        if (png.noFont) r.warnings.push({ code: 'PROFKIT_W_NO_FONT', message: 'no font found (Liberation, DejaVu, Times or Arial): the PNG has no text; use --format svg' });
        bytes = png.png;
      }
    }
    ctx.out.warnings(r.warnings);
    if (output === undefined || output === '-') ctx.stdout.write(bytes);
    else await writeFileAtomic(output, bytes, { inputs: [file], signal: ctx.signal });
    return 0;
  },
};
