import type { CliCommand } from '../types.js';

export const convert: CliCommand = {
  name: 'convert',
  summary: 'Convert a profile between formats (output format by --to or by the output extension)',
  usage:
    'profkit convert IN OUT [--from FORMAT] [--to FORMAT]\n\nIN may be - for stdin and OUT - for stdout (then --to is required).\nThe output is written atomically and never overwrites IN.\n\nExamples:\n  profkit convert cpu.pb.gz cpu.speedscope.json\n  cat cpu.pb.gz | profkit convert - - --to speedscope > cpu.json',
  options: {
    from: { type: 'string', valueName: 'FORMAT', description: 'read IN as FORMAT instead of detecting it' },
    to: { type: 'string', valueName: 'FORMAT', description: 'write OUT as FORMAT instead of choosing by its extension' },
  },
  positionals: 2,
  json: true,
  async run(ctx) {
    const [input, output] = ctx.positionals as [string, string];
    // Fail on the output side (unknown extension, missing adapter) before reading a large input.
    ctx.registry.writerFor(output, ctx.values.to as string | undefined);
    const bar = ctx.progress(`reading ${input}`);
    const r = await ctx.registry.read(input, { format: ctx.values.from as string | undefined, signal: ctx.signal, onProgress: (d, t) => bar.update(d, t) });
    bar.done();
    const wbar = ctx.progress(`writing ${output}`);
    const w = await ctx.registry.write(r.profile, output, {
      format: ctx.values.to as string | undefined,
      inputs: [input],
      signal: ctx.signal,
      onProgress: (d, t) => wbar.update(d, t),
    });
    wbar.done();
    const warnings = [...r.warnings, ...w.warnings];
    if (ctx.json && output !== '-') {
      ctx.out.document('convert', { input, output, from: r.format, to: w.format, warnings });
      return 0;
    }
    ctx.out.warnings(warnings);
    if (output !== '-' && !ctx.quiet) ctx.out.line(`${input} (${r.format}) -> ${output} (${w.format})`);
    return 0;
  },
};
