import { resolve } from 'node:path';
import { disasmReport, type Profile } from '@profkit/core/node';
import type { CliCommand } from '../types.js';
import { FROM_OPTION, SAMPLE_TYPE_OPTION, stringOption } from './shared.js';
import { binutilsTool } from './binutils.js';
import { REPORT_FILTER_OPTIONS, runSymbolReport } from './symbol-report.js';

/** `p` with its first mapping's file replaced by `binary` (pprof's `go tool pprof BINARY PROFILE`). */
function withMainBinary(p: Profile, binary: string | undefined): Profile {
  const m = p['.mappings'];
  if (binary === undefined || m.filename.length === 0) return p;
  return { ...p, '.mappings': { ...m, filename: [binary, ...m.filename.slice(1)] } };
}

export const disasm: CliCommand = {
  name: 'disasm',
  summary: 'Instructions of the functions matching a regexp with their costs, like `go tool pprof -disasm`',
  usage: [
    'profkit disasm FILE REGEX [--binary PATH] [--intel-syntax] [--sample-type T]',
    '',
    'For each symbol of the profile\'s binaries whose name matches REGEX (Go RE2 syntax) and that',
    'holds samples, sorted by name: its flat and cum, then its instructions, each with the flat and',
    'cum of the samples at its address and its source position where that changes. Needs a',
    'profile with addresses (Go, gperftools, perf-derived pprof…) and the binaries at the paths its',
    'mappings name (--binary PATH replaces the main one). Binaries are read with GNU binutils',
    '(`nm`, `objdump`): instructions are in AT&T syntax (--intel-syntax: Intel\'s), where `go tool pprof` prints Go',
    'assembler syntax; the addresses, values and routines are the same. Function names must be',
    'in the profile (symbolize first with `profkit convert --symbolize`). Binaries that cannot be',
    'read are reported on stderr.',
    '',
    'Examples:',
    '  profkit disasm cpu.pb.gz "^main\\.busyLoop$" --binary ./app',
    '  profkit disasm prog.sym.pb.gz spin --json | jq \'.routines[0].instructions[:3]\'',
  ].join('\n'),
  options: {
    ...FROM_OPTION,
    ...SAMPLE_TYPE_OPTION,
    ...REPORT_FILTER_OPTIONS,
    binary: { type: 'string', valueName: 'PATH', description: "the binary of the profile's main (first) mapping" },
    'intel-syntax': { type: 'boolean', description: "instructions in Intel syntax (pprof -intel_syntax; objdump -M intel)" },
  },
  positionals: 2,
  json: true,
  run: (ctx) =>
    runSymbolReport(
      ctx,
      'disasm',
      (p, input) => {
        const rep = disasmReport(p, { ...input, tool: binutilsTool(ctx.values['intel-syntax'] === true) });
        return { ...rep, warnings: rep.errors.map((message) => ({ code: 'binary-unreadable', message })) };
      },
      (p) => {
        const binary = stringOption(ctx, 'binary');
        // Relative to the command's working directory (as list's --source-path), not the process's.
        return withMainBinary(p, binary === undefined ? undefined : resolve(ctx.cwd, binary));
      },
    ),
};
