/**
 * @profkit/symbolize: turns the addresses of a profile into functions, files and lines, with
 * local binaries (an ELF reader of our own, llvm-symbolizer / addr2line / nm, c++filt) or a
 * `/pprof/symbol` server. Used as a library (`symbolize`) and by the CLI (`profkit symbolize`).
 *
 * Symbolization is not a file format: the adapter object exists to contribute the `symbolize`
 * command to the CLI.
 */

import { ErrorCodes, ProfkitError, defineAdapter } from '@profkit/core';
import { symbolizeCommand } from './command-def.js';

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

export const symbolizeAdapter = defineAdapter({
  name: 'symbolize',
  packageName: '@profkit/symbolize',
  version: '0.1.0',
  description: 'symbolization (addresses → functions, files, lines): contributes `profkit symbolize`',
  // Not a file format. Core's registry requires at least one format and a read/write/load
  // function, so the adapter declares one pseudo format that can be neither read nor written
  // and never sniffs; `load` explains that if it is ever reached.
  formats: [{ id: 'symbolize', title: 'not a file format: the `profkit symbolize` command', extensions: [], binary: true, read: false, write: false }],
  sniff: () => 0,
  load: () =>
    Promise.reject(new ProfkitError(ErrorCodes.UNSUPPORTED, 'symbolize is not a file format: use `profkit symbolize IN OUT`', { rule: 'symbolize reads and writes through other adapters' })),
  commands: [symbolizeCommand],
});

export default symbolizeAdapter;
