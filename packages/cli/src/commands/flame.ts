import { READ_LIMITS, parseLimitArgs } from '@profkit/core';
import { ErrorCodes, ProfkitError, renderFlameGraphChunks, writeFileAtomic } from '@profkit/core/node';
import { basename } from 'node:path';
import type { CliCommand } from '../types.js';
import { applyFilterOptions } from './filter.js';
import { TAG_FRAME_OPTIONS, phase, VIEW_OPTIONS, numberOption, withTagFramesOf, readForView, sampleTypeIndexOf, stringOption } from './shared.js';

/** `n` with thousands separators (65,536): the limits' defaults, as the docs print them. */
const thousands = (n: number) => n.toLocaleString('en-US');

export const flame: CliCommand = {
  name: 'flame',
  summary: 'Write a self-contained flame graph (HTML viewer or SVG image)',
  usage: [
    'profkit flame FILE -o OUT.html|OUT.svg [--sample-type T] [--focus RE] [--ignore RE] [--title TEXT] [--icicle]',
    '',
    'HTML (the default): one file, no network access, with a viewer: click a frame to zoom, the',
    'Icicle/Flame button flips the graph, the search box highlights frames matching a regular',
    'expression and sums them, tooltips show the value, the share of the total and self value.',
    'SVG: a static image (tooltips through <title>), for docs and issue trackers; --icicle draws',
    'the root at the top. Samples with negative values (diffs) are left out.',
    'Frames narrower than --min-width of the total (default 0.01%) are left out, so that the output',
    'stays small for any profile; the subtitle says how many. --min-width 0 keeps every frame.',
    `A graph deeper than ${thousands(READ_LIMITS.maxFlameDepth)} levels or of more than ${thousands(READ_LIMITS.maxFlameFrames)} frames is refused`,
    '(--limit maxFlameDepth=N, --limit maxFlameFrames=N raise them), as is one whose walk takes more',
    'steps than the size of the profile allows (--limit maxFlameWalkSteps=N; crafted stacks of many',
    'samples through inline frames of the same functions cut into locations at other boundaries).',
    '',
    'Examples:',
    '  profkit flame cpu.pb.gz -o cpu.html && xdg-open cpu.html',
    '  profkit flame Rprof.out -o fib.svg --sample-type time --title "fib(25)"',
    '  profkit flame heap.pb.gz -o - --format svg > heap.svg',
  ].join('\n'),
  options: {
    ...VIEW_OPTIONS,
    ...TAG_FRAME_OPTIONS,
    output: { type: 'string', short: 'o', valueName: 'OUT', description: 'the output file (required; - for stdout with --format)' },
    format: { type: 'string', valueName: 'html|svg', description: 'output format (default: by the extension of OUT, .html/.htm or .svg; html for -)' },
    title: { type: 'string', valueName: 'TEXT', description: 'title above the graph (default: the input file name)' },
    icicle: { type: 'boolean', description: 'SVG: root at the top' },
    width: { type: 'string', valueName: 'PX', description: 'SVG width in pixels (default 1200)' },
    'min-width': { type: 'string', valueName: 'FRACTION', description: 'leave out frames narrower than this fraction of the total (default 0.0001, i.e. 0.01%; 0 keeps every frame)' },
  },
  positionals: 1,
  json: true,
  async run(ctx) {
    const file = ctx.positionals[0]!;
    const output = stringOption(ctx, 'output');
    if (output === undefined) throw new ProfkitError(ErrorCodes.USAGE, 'flame needs -o OUT.html or -o OUT.svg (see `profkit help flame`)', { option: 'output', rule: 'flame writes a file' });
    let format = stringOption(ctx, 'format');
    if (format === undefined) {
      if (/\.svg$/i.test(output)) format = 'svg';
      else if (output === '-' || /\.html?$/i.test(output)) format = 'html';
      else throw new ProfkitError(ErrorCodes.USAGE, `cannot tell the flame graph format from ${output}: name it .html or .svg, or pass --format html|svg`, { option: 'output', rule: 'flame writes .html or .svg' });
    }
    if (format !== 'html' && format !== 'svg') throw new ProfkitError(ErrorCodes.USAGE, `--format ${format}: expected html or svg`, { option: 'format', rule: '--format is html or svg' });
    const width = numberOption(ctx, 'width', { integer: true, min: 100, max: 100000 });
    const minWidth = numberOption(ctx, 'min-width', { max: 1 });
    const r = await readForView(ctx, file);
    const t = sampleTypeIndexOf(ctx, r.profile);
    // The frames are cut here; the text is made chunk by chunk as it is written (a 2M-frame SVG is
    // 437 MB), so a limit met while drawing leaves no output file (writeFileAtomic).
    const chunks = phase(ctx, 'cutting the flame graph', () => renderFlameGraphChunks(applyFilterOptions(ctx, withTagFramesOf(ctx, r.profile)), {
      sampleTypeIndex: t,
      format,
      title: stringOption(ctx, 'title') ?? (file === '-' ? 'Flame graph' : basename(file)),
      icicle: ctx.values.icicle === true,
      width,
      minWidth,
      // maxFlameFrames bounds the frames drawn, maxFlameDepth their levels.
      limits: parseLimitArgs(ctx.values.limit),
    }));
    let bytes = 0;
    const encoder = new TextEncoder();
    function* encoded(): Generator<Uint8Array> {
      for (const chunk of chunks) {
        const utf8 = encoder.encode(chunk);
        bytes += utf8.length;
        yield utf8;
      }
    }
    try {
      await phase(ctx, 'drawing the flame graph', () => writeFileAtomic(output, encoded(), { inputs: [file], signal: ctx.signal }));
    } catch (e) {
      // A file is left as it was; standard output already holds what was drawn before the error
      // (maxReportBytes met mid-SVG): say so, whatever --quiet, before the error itself.
      if (output === '-' && bytes > 0) ctx.out.stderr.write(`profkit: flame: the ${bytes} bytes of ${format} written to standard output are incomplete (the error below stopped the drawing)\n`);
      throw e;
    }
    if (ctx.json && output !== '-') {
      ctx.out.document('flame', { input: file, output, format, sampleType: { type: r.profile.sample_types.type[t], unit: r.profile.sample_types.unit[t] }, bytes, warnings: r.warnings });
      return 0;
    }
    ctx.out.warnings(r.warnings);
    if (output !== '-' && !ctx.quiet) ctx.out.line(`${file} -> ${output} (${format} flame graph of ${r.profile.sample_types.type[t]}/${r.profile.sample_types.unit[t]})`);
    return 0;
  },
};
