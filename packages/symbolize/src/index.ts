/**
 * @profkit/symbolize: turns the addresses of a profile into functions, files and lines, with
 * local binaries (an ELF reader of our own, llvm-symbolizer / addr2line / nm, c++filt) or a
 * `/pprof/symbol` server. Used as a library (`symbolize`), by the CLI (`profkit symbolize`), and
 * as the `symbolize` transform (`profkit convert --symbolize`, `profkit fetch --symbolize local`).
 *
 * Symbolization is not a file format: the adapter object exists to contribute the `symbolize`
 * command and transform to the CLI.
 */

import { ErrorCodes, ProfkitError, defineAdapter, parseAllowedRedirectHosts, type AdapterTransform, type TransformContext, type TransformResult, type Profile, type Warning } from '@profkit/core/node';
import { symbolizeCommand } from './command-def.js';
import { PACKAGE_VERSION } from './version.js';

export { symbolize } from './symbolize.js';
export type { SymbolizeOptions, SymbolizeResult, MappingReport, MappingStatus, SymbolizeMode, SymbolizerTool } from './symbolize.js';
export { readElf, parseElf, isElf, findTextProgramHeader, elfTypeName, ET_REL, ET_EXEC, ET_DYN, ET_CORE, PT_LOAD, PT_NOTE, PF_X, SHT_NOTE, NT_GNU_BUILD_ID } from './elf.js';
export type { ElfFile, ElfProgramHeader, ElfSectionHeader } from './elf.js';
export { getBase, findProgramHeaderForMapping, segmentForMapping, BASE_ERROR } from './base.js';
export type { MappingRange } from './base.js';
export { candidateBinaries, defaultSearchPath, splitSearchPath, unsymbolizableReason } from './locate.js';
export { demangleAll, simplifyDemangled, displayName, isMangled, DEMANGLE_MODES } from './demangle.js';
export type { DemangleMode } from './demangle.js';
export { symbolzURL, parseSymbolReply, symbolizeRemoteAddresses } from './remote.js';
export type { RemoteOptions } from './remote.js';
export { LlvmSymbolizer, Addr2Line, NmSymbolizer, NmSymbols, loadNm, findTool, parseLlvmJson, parseAddr2LineFrame } from './tools.js';
export type { Frame, Symbolizer, ToolPaths } from './tools.js';
export { symbolizeCommand } from './command-def.js';

/** Report statuses that mean some addresses could not be symbolized: they become warnings. */
const PROBLEM_STATUSES = new Set(['unsymbolizable', 'missing-binary', 'build-id-mismatch', 'bad-binary', 'tool-failed', 'remote-failed']);

async function applySymbolizeTransform(profile: Profile, ctx: TransformContext): Promise<TransformResult> {
  const [{ symbolize }, { formatReport }] = await Promise.all([import('./symbolize.js'), import('./command.js')]);
  const v = ctx.values;
  const str = (k: string) => (typeof v[k] === 'string' ? (v[k] as string) : undefined);
  const mode = str('mode');
  if (mode !== undefined && mode !== 'full' && mode !== 'names') {
    throw new ProfkitError(ErrorCodes.USAGE, `the symbolize transform's --mode must be full or names, got "${mode}"`, { option: 'mode', rule: 'symbolize transform options' });
  }
  const allowHosts = str('allow-redirect-host');
  const remoteOptions = allowHosts === undefined ? undefined : { allowRedirectHosts: parseAllowedRedirectHosts(allowHosts) };
  const r = await symbolize(profile, { mode, binary: str('binary'), searchPath: str('search-path'), remote: str('remote'), remoteOptions, signal: ctx.signal });
  const warnings: Warning[] = [...r.warnings];
  for (const rep of r.reports) {
    if (PROBLEM_STATUSES.has(rep.status)) {
      warnings.push({
        code: `PROFKIT_W_SYMBOLIZE_${rep.status.toUpperCase().replace(/-/g, '_')}`,
        message: formatReport(rep).replace(/\n\s*hint: /, '; hint: '),
        detail: { mappingId: rep.mappingId, file: rep.binary ?? rep.filename, status: rep.status },
      });
    } else if (!ctx.quiet && (ctx.verbose || rep.status === 'symbolized' || rep.status === 'remote')) {
      ctx.stderr.write(`symbolize: ${formatReport(rep)}\n`);
    }
  }
  return { profile: r.profile, warnings };
}

/**
 * The `symbolize` transform: `symbolize()` with the options `binary`, `search-path`, `mode` and
 * `remote`, `allow-redirect-host` (the `profkit symbolize` options of the same names). Mappings that could not be
 * symbolized come back as `PROFKIT_W_SYMBOLIZE_<STATUS>` warnings (with the hint); the others are
 * reported on stderr unless quiet.
 */
export const symbolizeTransform: AdapterTransform = {
  name: 'symbolize',
  summary: 'turn the addresses of a profile into functions, files and lines (local binaries or a /pprof/symbol server)',
  options: {
    binary: symbolizeCommand.options!.binary!,
    'search-path': symbolizeCommand.options!['search-path']!,
    mode: symbolizeCommand.options!.mode!,
    remote: symbolizeCommand.options!.remote!,
    'allow-redirect-host': symbolizeCommand.options!['allow-redirect-host']!,
  },
  apply: applySymbolizeTransform,
};

export const symbolizeAdapter = defineAdapter({
  name: 'symbolize',
  packageName: '@profkit/symbolize',
  version: PACKAGE_VERSION,
  description: 'symbolization (addresses → functions, files, lines): contributes `profkit symbolize` and the `symbolize` transform (`convert --symbolize`)',
  // Not a file format. Core's registry requires at least one format and a read/write/load
  // function, so the adapter declares one pseudo format that can be neither read nor written
  // and never sniffs; `load` explains that if it is ever reached.
  formats: [{ id: 'symbolize', title: 'not a file format: the `profkit symbolize` command', extensions: [], binary: true, read: false, write: false }],
  sniff: () => 0,
  load: () =>
    Promise.reject(new ProfkitError(ErrorCodes.UNSUPPORTED, 'symbolize is not a file format: use `profkit symbolize IN OUT`', { rule: 'symbolize reads and writes through other adapters' })),
  commands: [symbolizeCommand],
  transforms: [symbolizeTransform],
});

export default symbolizeAdapter;
