import { tagsReport } from '@profkit/core';
import type { CliCommand } from '../types.js';
import { FROM_OPTION, SAMPLE_TYPE_OPTION, TAGS_OPTIONS } from './shared.js';
import { runSampleReport } from './go-load.js';

export const tags: CliCommand = {
  name: 'tags',
  summary: 'Totals per sample label key and value, like `go tool pprof -tags`',
  usage: [
    'profkit tags FILE [--sample-type T] [--focus RE] [--tag-focus K=RE] [--tag-show RE] [--unit U] [--base FILE] …',
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
  options: { ...FROM_OPTION, ...SAMPLE_TYPE_OPTION, ...TAGS_OPTIONS },
  positionals: 1,
  json: true,
  run: (ctx) => runSampleReport(ctx, 'tags', tagsReport, (rep) => ({ keys: rep.keys })),
};
