import { tagsReport } from '@profkit/core';
import type { CliCommand } from '../types.js';
import { FROM_OPTION, SAMPLE_TYPE_OPTION, sampleTypeIndexOf, sampleTypeJson } from './shared.js';
import { readAsGoPprof } from './go-load.js';

export const tags: CliCommand = {
  name: 'tags',
  summary: 'Totals per sample label key and value, like `go tool pprof -tags`',
  usage: [
    'profkit tags FILE [--sample-type T]',
    '',
    'For each label key (sorted): the total of the sample type over the samples carrying it, then',
    'each value with its amount and share, largest first; numeric labels scaled by their unit',
    "(512kB). Byte for byte as `go tool pprof -tags` prints it; nothing when the profile has no labels.",
    '',
    'Examples:',
    '  profkit tags cpu.pb.gz',
    '  profkit tags heap.pb.gz --sample-type alloc_space',
    '  profkit tags cpu.pb.gz --json | jq \'.keys[].key\'',
  ].join('\n'),
  options: { ...FROM_OPTION, ...SAMPLE_TYPE_OPTION },
  positionals: 1,
  json: true,
  async run(ctx) {
    const file = ctx.positionals[0]!;
    const r = await readAsGoPprof(ctx, file);
    const rep = tagsReport(r.loaded, { sampleTypeIndex: sampleTypeIndexOf(ctx, r.loaded) });
    if (ctx.json) {
      ctx.out.document('tags', { file, format: r.format, sampleType: sampleTypeJson(r.loaded, rep.sampleTypeIndex), keys: rep.keys, warnings: r.warnings });
      return 0;
    }
    ctx.out.warnings(r.warnings);
    ctx.stdout.write(rep.text);
    return 0;
  },
};
