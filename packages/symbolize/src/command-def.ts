/**
 * The `profkit symbolize` command definition. Its implementation (`command.ts`) is loaded on
 * first use, so listing commands stays cheap.
 */

import type { AdapterCommand, CommandContext } from '@profkit/core/node';

export const symbolizeCommand: AdapterCommand = {
  name: 'symbolize',
  summary: 'turn the addresses of a profile into functions, files and lines (local binaries or a /pprof/symbol server)',
  usage: [
    'profkit symbolize IN OUT [--binary PATH] [--search-path DIRS] [--mode full|names] [--remote URL]',
    '                         [--tool auto|llvm-symbolizer|addr2line] [--demangle default|templates|full|none] [--force]',
    '                         [--allow-redirect-host HOSTS]',
    '',
    'For each mapping the binary is looked for (--binary for the main one, the --search-path',
    'directories or $PPROF_BINARY_PATH, build-id directories, the mapping\'s own file), its build id',
    'checked, and every address symbolized with llvm-symbolizer (else addr2line), or nm with',
    '--mode names. Mappings that cannot be symbolized are reported with a hint and keep their',
    'addresses. --remote names what is left with the /pprof/symbol protocol (redirects: at most 10,',
    'http(s) only, on the URL\'s host unless --allow-redirect-host). --binary also becomes the',
    'first mapping\'s file in the output, as with pprof\'s command-line binary.',
    '',
    'Examples:',
    '  profkit symbolize prog.cpu prog.pb.gz --binary ./prog',
    '  PPROF_BINARY_PATH=/srv/debug profkit symbolize heap.pb.gz heap.sym.pb.gz',
    '  profkit symbolize prof.pb.gz out.pb.gz --remote http://host:8080/pprof/heap',
  ].join('\n'),
  options: {
    binary: { type: 'string', description: 'the main binary (overrides the first mapping\'s file, which becomes PATH)', valueName: 'PATH' },
    'search-path': { type: 'string', description: 'directories to search for binaries, separated by ":" (default $PPROF_BINARY_PATH or $HOME/pprof/binaries)', valueName: 'DIRS' },
    mode: { type: 'string', description: 'full (functions, files, lines, inline frames; default) or names (nm, faster)', valueName: 'MODE' },
    remote: { type: 'string', description: 'profile or symbol URL of a server speaking /pprof/symbol, for what local symbolization left', valueName: 'URL' },
    tool: { type: 'string', description: 'auto (llvm-symbolizer when installed, else addr2line), llvm-symbolizer or addr2line', valueName: 'TOOL' },
    demangle: { type: 'string', description: 'C++ names: default (no parameters/templates), templates, full, none', valueName: 'MODE' },
    force: { type: 'boolean', description: 'symbolize again what already has symbols' },
    'no-local': { type: 'boolean', description: 'skip local symbolization (remote only)' },
    'allow-redirect-host': {
      type: 'string',
      description: 'with --remote: hosts (host or host:port, comma-separated; * = any) its redirects may lead to; default: only its own host',
      valueName: 'HOSTS',
    },
  },
  run: async (ctx: CommandContext) => (await import('./command.js')).runSymbolize(ctx),
};
