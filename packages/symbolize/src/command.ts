/** Implementation of `profkit symbolize IN OUT` (see `command-def.ts`). */

import { ErrorCodes, ProfkitError, parseAllowedRedirectHosts, type CommandContext } from '@profkit/core/node';
import type { DemangleMode } from './demangle.js';
import { symbolize, type MappingReport, type SymbolizeMode, type SymbolizerTool } from './symbolize.js';

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function oneOf<T extends string>(v: string | undefined, allowed: readonly T[], option: string): T | undefined {
  if (v === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(v)) throw new ProfkitError(ErrorCodes.USAGE, `--${option} must be one of ${allowed.join(', ')}, got "${v}"`, { option });
  return v as T;
}

/** One line per mapping report, for people. */
export function formatReport(r: MappingReport): string {
  const what = r.mappingId === 0 ? 'unmapped addresses' : `mapping ${r.mappingId} ${r.filename || '(no file)'}${r.buildId ? ` [${r.buildId}]` : ''}`;
  return `${what}: ${r.status}: ${r.message}${r.hint ? `\n  hint: ${r.hint}` : ''}`;
}

export async function runSymbolize(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length !== 2) {
    throw new ProfkitError(ErrorCodes.USAGE, `symbolize takes 2 arguments (IN OUT), got ${ctx.positionals.length}`, { rule: 'usage: profkit symbolize IN OUT' });
  }
  const [input, output] = ctx.positionals as [string, string];
  const v = ctx.values;
  const mode = oneOf<SymbolizeMode>(str(v.mode), ['full', 'names'], 'mode');
  const tool = oneOf<SymbolizerTool>(str(v.tool), ['auto', 'llvm-symbolizer', 'addr2line'], 'tool');
  const demangle = oneOf<DemangleMode>(str(v.demangle), ['default', 'templates', 'full', 'none'], 'demangle');
  const remote = str(v.remote);
  if (v['no-local'] === true && remote === undefined) throw new ProfkitError(ErrorCodes.USAGE, '--no-local needs --remote URL', { option: 'no-local' });
  const allowHosts = str(v['allow-redirect-host']);
  if (allowHosts !== undefined && remote === undefined) throw new ProfkitError(ErrorCodes.USAGE, '--allow-redirect-host needs --remote URL', { option: 'allow-redirect-host' });
  const { profile, warnings: readWarnings } = await ctx.readProfile(input);
  const result = await symbolize(profile, {
    mode,
    tool,
    demangle,
    binary: str(v.binary),
    searchPath: str(v['search-path']),
    remote,
    remoteOptions: allowHosts === undefined ? undefined : { allowRedirectHosts: parseAllowedRedirectHosts(allowHosts) },
    force: v.force === true,
    local: v['no-local'] !== true,
    signal: ctx.signal,
  });
  const writeWarnings = await ctx.writeProfile(result.profile, output, { inputs: [input] });
  const warnings = [...readWarnings, ...result.warnings, ...writeWarnings];
  if (ctx.json) {
    const doc = {
      schema: 'profkit.symbolize/1',
      input,
      output,
      mappings: result.reports.map((r) => ({ ...r, base: r.base === undefined ? undefined : '0x' + r.base.toString(16) })),
      warnings,
    };
    ctx.stdout.write(JSON.stringify(doc) + '\n');
  } else if (!ctx.quiet) {
    // Mappings without addresses to symbolize are only listed with --verbose.
    for (const r of result.reports) if (ctx.verbose || r.status !== 'no-addresses') ctx.stderr.write(formatReport(r) + '\n');
    for (const w of warnings) ctx.stderr.write(`warning: ${w.message} [${w.code}]\n`);
  }
  return 0;
}
