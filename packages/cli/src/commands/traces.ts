import { tracesReportStream } from '@profkit/core';
import type { CliCommand } from '../types.js';
import { FROM_OPTION, inputFilesOf, GRAPH_OPTIONS, SAMPLE_TYPE_OPTION, TRACES_OPTIONS, phase, sampleTypeJson } from './shared.js';
import { readAsGoPprof, sampleReportOptionsOf } from './go-load.js';
import { streamedReportLimits, writeStreamedText } from './stream-text.js';

export const traces: CliCommand = {
  name: 'traces',
  summary: 'Print every sample with its labels and stack, like `go tool pprof -traces`',
  usage: [
    'profkit traces FILE [--sample-type T] [--by G] [--focus RE] [--hide RE] [--tag-root KEYS] [--unit U] [--mean] …',
    '',
    "pprof's header lines, then each sample that has a stack: its string and numeric labels, its",
    'value and its frames innermost first (inlined frames marked "(inline)"), byte for byte as',
    '`go tool pprof -traces` prints them (Time: in UTC; profkit does not symbolize: compare with',
    'pprof -symbolize=none). Samples are those of the profile as pprof loads it (see `profkit raw`).',
    '',
    'Examples:',
    '  profkit traces cpu.pb.gz | less',
    '  profkit traces heap.pb.gz --sample-type inuse_space',
    '  profkit traces cpu.pb.gz --json | jq \'.samples[0].frames\'',
  ].join('\n'),
  options: { ...FROM_OPTION, ...SAMPLE_TYPE_OPTION, ...TRACES_OPTIONS, by: GRAPH_OPTIONS.by! },
  positionals: 1,
  json: true,
  async run(ctx) {
    const file = ctx.positionals[0]!;
    const r = await readAsGoPprof(ctx, file);
    const options = { ...sampleReportOptionsOf(ctx, r.loaded), limits: streamedReportLimits(ctx, inputFilesOf(ctx, file)) };
    const rep = phase(ctx, 'computing the report', () => tracesReportStream(r.loaded, options));
    if (ctx.json) {
      const samples = Array.from(rep.samples(), (s) => ({
        value: s.value,
        labels: Object.fromEntries(s.labels),
        numLabels: Object.fromEntries(s.numLabels.map(([k, v, unit]) => [k, { values: v, unit }])),
        frames: s.frames,
      }));
      ctx.out.document('traces', { file, format: r.format, sampleType: sampleTypeJson(r.loaded, rep.sampleTypeIndex), header: rep.header, samples, warnings: r.warnings });
      return 0;
    }
    ctx.out.warnings(r.warnings);
    // Written as made: every sample prints all inline frames of its locations (maxReportBytes bounds it).
    await writeStreamedText(ctx, rep.text());
    return 0;
  },
};
