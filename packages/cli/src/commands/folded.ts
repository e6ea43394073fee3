import { foldedChunks, foldedLines } from '@profkit/core/node';
import type { CliCommand } from '../types.js';
import { BASE_OPTIONS, inputFilesOf, TAG_FRAME_OPTIONS, VIEW_OPTIONS, readForView, withTagFramesOf, sampleTypeIndexOf, sampleTypeJson, stringOption } from './shared.js';
import { applyFilterOptions } from './filter.js';
import { streamedReportLimits, writeStreamedBytes } from './stream-text.js';

export const folded: CliCommand = {
  name: 'folded',
  summary: 'Print collapsed stacks (`root;caller;leaf value`, Brendan Gregg\'s folded format)',
  usage: [
    'profkit folded FILE [--sample-type T] [--focus RE] [--ignore RE] [-o OUT]',
    '',
    'One line per distinct stack, root first, inline frames expanded, values of identical stacks',
    'summed, sorted by stack. Feed it to flamegraph.pl, speedscope or inferno; or use `profkit flame`.',
    '',
    'Examples:',
    '  profkit folded cpu.pb.gz > cpu.folded',
    '  profkit folded Rprof.out --sample-type memory | sort -k2 -n -t" " | tail',
    '  profkit folded cpu.pb.gz --json | jq \'.stacks | length\'',
  ].join('\n'),
  options: {
    ...VIEW_OPTIONS,
    ...TAG_FRAME_OPTIONS,
    ...BASE_OPTIONS,
    output: { type: 'string', short: 'o', valueName: 'OUT', description: 'write to OUT (atomically) instead of stdout' },
  },
  positionals: 1,
  json: true,
  async run(ctx) {
    const file = ctx.positionals[0]!;
    const r = await readForView(ctx, file);
    const t = sampleTypeIndexOf(ctx, r.profile);
    const profile = applyFilterOptions(ctx, withTagFramesOf(ctx, r.profile));
    const limits = streamedReportLimits(ctx, inputFilesOf(ctx, file));
    if (ctx.json) {
      const stacks = Array.from(foldedLines(profile, t, limits), (l) => {
        const sp = l.lastIndexOf(' ');
        return { stack: l.slice(0, sp).split(';'), value: l.slice(sp + 1, -1) };
      });
      ctx.out.document('folded', {
        file,
        format: r.format,
        sampleType: sampleTypeJson(r.profile, t),
        stacks,
        warnings: r.warnings,
      });
      return 0;
    }
    ctx.out.warnings(r.warnings);
    const out = stringOption(ctx, 'output');
    // Written as made: the text of a large profile is hundreds of megabytes. A file is written
    // chunk by chunk, each before the next is made, so they can share one buffer (no copy per
    // chunk); a stdout stream given by an embedder may keep the chunks it was given.
    const reuseBuffer = out !== undefined;
    await writeStreamedBytes(ctx, foldedChunks(profile, t, limits, { reuseBuffer }), out === undefined ? undefined : { path: out, inputs: [file] });
    return 0;
  },
};
