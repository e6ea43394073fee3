import { detectionError, openStreamInput } from '@profkit/core/node';
import { table } from '../output.js';
import type { CliCommand } from '../types.js';

export const detect: CliCommand = {
  name: 'detect',
  summary: 'Detect the format of a profile file (--explain shows every adapter\'s score)',
  usage: 'profkit detect FILE [--explain] [--json]\n\nFILE may be - for stdin.\n\nExamples:\n  profkit detect cpu.pb.gz\n  profkit detect --explain mystery.out',
  options: {
    explain: { type: 'boolean', description: 'show every adapter\'s score and reason' },
  },
  positionals: 1,
  json: true,
  async run(ctx) {
    const file = ctx.positionals[0]!;
    const { registry, out } = ctx;
    // Detection needs only the head: an endless stdin is not read to its end.
    const source = file === '-' ? await openStreamInput('-').head(64 * 1024) : file;
    const d = await registry.detectFile(source, file);
    const explain = ctx.values.explain === true;
    if (ctx.json) {
      out.document('detect', {
        file,
        format: d.format ?? null,
        adapter: d.adapter ?? null,
        score: d.score ?? null,
        encoding: d.encoding,
        problem: d.problem ?? null,
        install: d.installHint?.command ?? null,
        recognized: d.recognized ?? null,
        scores: d.scores,
      });
      return d.format !== undefined ? 0 : 4;
    }
    if (d.format !== undefined) {
      out.line(`${file}: ${d.format} (adapter ${d.adapter}, score ${d.score!.toFixed(2)}${d.encoding ? `, ${d.encoding}` : ''})`);
    }
    if (explain) {
      const rows = [['ADAPTER', 'FORMAT', 'SCORE', 'PRIORITY', 'REASON']];
      for (const s of d.scores) rows.push([s.adapter, s.format, s.score.toFixed(2), String(s.priority), s.error ? `sniff threw: ${s.error}` : (s.reason ?? '')]);
      for (const l of table(rows, d.format !== undefined ? '  ' : '')) out.line(l);
    }
    if (d.format === undefined) throw detectionError(d, file);
    return 0;
  },
};
