import { validate as validateProfile, type ValidationMode } from '@profkit/core/node';
import type { CliCommand } from '../types.js';
import { READ_OPTION, readOptionsOf } from './shared.js';

export const validate: CliCommand = {
  name: 'validate',
  summary: 'Check a profile against every validity rule (--strict-r: could R\'s profile package read it?)',
  usage:
    'profkit validate FILE [--strict-r] [--from FORMAT] [--read-option K=V]... [--json]\n\nFILE may be - for stdin. Exits 1 when the profile has problems.\n\nExamples:\n  profkit validate cpu.pb.gz\n  profkit validate --strict-r Rprof.out',
  options: {
    'strict-r': { type: 'boolean', description: 'check strict conformance to R profile data format 1.0' },
    from: { type: 'string', valueName: 'FORMAT', description: 'read as FORMAT instead of detecting it' },
    ...READ_OPTION,
  },
  positionals: 1,
  json: true,
  async run(ctx) {
    const file = ctx.positionals[0]!;
    const mode: ValidationMode = ctx.values['strict-r'] === true ? 'strict-r' : 'profkit';
    const bar = ctx.progress(`reading ${file}`);
    const r = await ctx.registry.read(file, {
      format: ctx.values.from as string | undefined,
      options: readOptionsOf(ctx),
      validate: false,
      signal: ctx.signal,
      onProgress: (d, t) => bar.update(d, t),
    });
    bar.done();
    const result = validateProfile(r.profile, { mode });
    const errors = result.errorCount;
    const warnings = result.warningCount;
    if (ctx.json) {
      ctx.out.document('validate', {
        file,
        format: r.format,
        mode,
        ok: result.ok,
        errors,
        warnings,
        omitted: result.omitted,
        problems: result.problems,
        readerWarnings: r.warnings,
      });
      return result.ok ? 0 : 1;
    }
    ctx.out.warnings(r.warnings);
    for (const p of result.problems) {
      const where = `${p.table}${p.column ? '.' + p.column : ''}${p.row !== undefined ? `[${p.row}]` : ''}`;
      ctx.out.line(`${file}: ${p.severity}: ${where}: ${p.message} [${p.code}${p.rule ? ` ${p.rule}` : ''}]`);
    }
    const what = mode === 'strict-r' ? "valid R profile data format 1.0 (R's profile package can read it)" : 'valid';
    if (result.omitted > 0) ctx.out.line(`${file}: ${result.omitted} more problem${result.omitted > 1 ? 's' : ''} not listed`);
    if (result.ok) ctx.out.line(`${file}: ${what} (${r.format}${warnings ? `, ${warnings} warning${warnings > 1 ? 's' : ''}` : ''})`);
    else ctx.out.line(`${file}: not ${mode === 'strict-r' ? 'strict R 1.0' : 'valid'}: ${errors} error${errors > 1 ? 's' : ''}, ${warnings} warning${warnings === 1 ? '' : 's'}`);
    return result.ok ? 0 : 1;
  },
};
