/**
 * `profkit`: parses the command line (node:util `parseArgs`), builds the registry, and dispatches
 * to a built-in command (`commands/`) or to a command contributed by an adapter. No format logic
 * lives here.
 */

import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import {
  ADAPTER_API_VERSION,
  ErrorCodes,
  ProfkitError,
  READ_LIMITS,
  parseLimitArgs,
  coreVersion,
  isProfkitError,
  type AdapterCommand,
  type BuildRegistryResult,
  type CommandContext,
  type CommandOption,
  type DiscoveryCache,
} from '@profkit/core/node';
import { BUILTIN_COMMAND_NAMES, loadBuiltinCommand, loadBuiltinCommands } from './commands/lazy.js';
import { asLongOptionsForScan, goModeCommand, normalizeGoFlags, pprofSpellingOf } from './go-flags.js';
import { loadRegistry } from './config.js';
import { ExitCode, exitCodeFor } from './exit-codes.js';
import { createOutput, formatError, table, type Output } from './output.js';
import { CommandStdout, isStdoutClosed } from './stdout.js';
import type { CliCommand, CliContext } from './types.js';

/** Options every command accepts. */
export const GLOBAL_OPTIONS: Record<string, CommandOption> = {
  json: { type: 'boolean', description: 'machine-readable output ({"schema":"profkit.<command>/1", ...}) for read-only commands' },
  help: { type: 'boolean', short: 'h', description: 'show help (for a command: profkit help <command>)' },
  version: { type: 'boolean', description: 'print the versions of profkit, @profkit/core and the adapter API' },
  verbose: { type: 'boolean', description: 'print error details (rule, cause, stack)' },
  quiet: { type: 'boolean', short: 'q', description: 'print no warnings, notes or progress' },
  config: { type: 'string', valueName: 'FILE', description: 'use this config file instead of searching for profkit.config.{json,js,mjs}' },
  adapter: { type: 'string', multiple: true, valueName: 'SPECIFIER', description: 'load an adapter module (package name or path)' },
  discover: { type: 'boolean', description: 'load the installed adapter packages even when the config says "autoDiscover": false' },
  'no-discover': { type: 'boolean', description: 'load only the adapters named by the config file and --adapter (no search of node_modules)' },
  limit: { type: 'string', multiple: true, valueName: 'NAME=N', description: 'raise or lower a read limit, e.g. maxSamples=1e9 or maxDecompressedBytes=8GiB (see docs/security.md)' },
};

export interface MainIO {
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  /** Where the config file search starts (default `process.cwd()`); file arguments are relative to the process's cwd. */
  cwd?: string;
  /** Install SIGINT/SIGTERM handlers (the bin does; in-process callers may not want it). */
  handleSignals?: boolean;
  /** Where discovery remembers what it found in node_modules between runs (the bin passes one; default none). */
  discoveryCache?: DiscoveryCache;
}

function cliVersion(): string {
  try {
    return String(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
  } catch {
    return 'unknown';
  }
}

function toParseArgsOptions(opts: Record<string, CommandOption>): NonNullable<ParseArgsConfig['options']> {
  const out: NonNullable<ParseArgsConfig['options']> = {};
  for (const [k, o] of Object.entries(opts)) {
    out[k] = { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) };
  }
  return out;
}

function usageError(message: string, command?: string): ProfkitError {
  return new ProfkitError(ErrorCodes.USAGE, `${message} (see \`profkit help${command ? ' ' + command : ''}\`)`, { rule: 'command-line usage' });
}

/** ` [pprof -nodecount=…]` after an option's help unless its description already names the pprof flag. */
function pprofSpellingNote(option: string, description: string): string {
  const spellings = pprofSpellingOf(option).filter((s) => !description.includes(`pprof ${s.replace(/=\u2026$/, '')}`));
  return spellings.length ? ` [pprof ${spellings.join(', ')}]` : '';
}

function optionHelp(opts: Record<string, CommandOption>): string[] {
  return table(
    Object.entries(opts).map(([k, o]) => [
      `${o.short ? `-${o.short}, ` : '    '}--${k}${o.type === 'string' ? ` ${o.valueName ?? 'VALUE'}` : ''}`,
      o.description + (o.multiple ? ' (repeatable)' : '') + pprofSpellingNote(k, o.description),
    ]),
    '  ',
  );
}

function mainHelp(builtins: readonly CliCommand[], adapterCommands: { adapter: string; command: AdapterCommand }[], note?: string): string {
  const lines = [
    'profkit: read, convert, validate and inspect profiler data',
    '',
    'Usage: profkit <command> [arguments] [options]',
    '',
    'Commands:',
    ...table(
      [
        ...builtins.map((c) => [c.name, c.summary]),
        ['help [COMMAND]', 'Show help for profkit or for a command'],
      ],
      '  ',
    ),
  ];
  if (adapterCommands.length) {
    lines.push('', 'Adapter commands:', ...table(adapterCommands.map((c) => [c.command.name, `${c.command.summary} (${c.adapter})`]), '  '));
  }
  lines.push('', 'Global options:', ...optionHelp(GLOBAL_OPTIONS), '');
  lines.push('Exit codes: 0 ok, 1 invalid profile or input, 2 usage/config, 3 I/O, 4 unknown or unsupported format,');
  lines.push('            5 network, 70 internal error, 130 interrupted.');
  lines.push('Run `profkit help <command>` for a command\'s options. Documentation: docs/cli.md');
  if (note) lines.push('', note);
  return lines.join('\n') + '\n';
}

function commandHelp(c: { name: string; summary: string; usage: string; options?: Record<string, CommandOption> }, adapter?: string): string {
  const lines = [`profkit ${c.name}: ${c.summary}${adapter ? ` (from the ${adapter} adapter)` : ''}`, '', ...c.usage.split('\n')];
  if (c.options && Object.keys(c.options).length) {
    lines.push('', 'Options:', ...optionHelp(c.options));
    lines.push('  (go tool pprof spellings work too: -name=VALUE or -name VALUE for --name, and the [pprof …] names)');
  }
  lines.push('', 'Global options:', ...optionHelp(GLOBAL_OPTIONS));
  return lines.join('\n') + '\n';
}

/** Finds the longest adapter command whose words start `positionals`. */
function matchAdapterCommand(cmds: { adapter: string; command: AdapterCommand }[], positionals: string[]) {
  let best: { adapter: string; command: AdapterCommand; words: number } | undefined;
  for (const c of cmds) {
    const words = c.command.name.split(' ');
    if (words.length <= positionals.length && words.every((w, i) => positionals[i] === w) && (!best || words.length > best.words)) {
      best = { ...c, words: words.length };
    }
  }
  return best;
}

/**
 * A command group: the longest leading words of `positionals` that start the names of adapter
 * commands (`fuchsia-sampler` for `fuchsia-sampler serve`, `… replay`, …), with those commands.
 */
function matchCommandGroup(cmds: { adapter: string; command: AdapterCommand }[], positionals: string[]) {
  for (let n = positionals.length; n >= 1; n--) {
    const name = positionals.slice(0, n).join(' ');
    const members = cmds.filter((c) => c.command.name.startsWith(`${name} `));
    if (members.length) return { name, words: n, members };
  }
  return undefined;
}

/** `profkit help GROUP`: the group's subcommands with their summaries. */
function groupHelp(group: NonNullable<ReturnType<typeof matchCommandGroup>>): string {
  const adapters = [...new Set(group.members.map((m) => m.adapter))].join(', ');
  const lines = [
    `profkit ${group.name}: commands of the ${adapters} adapter`,
    '',
    `Usage: profkit ${group.name} <subcommand> [arguments] [options]`,
    '',
    'Subcommands:',
    ...table(group.members.map((m) => [m.command.name.slice(group.name.length + 1), m.command.summary]), '  '),
    '',
    `Run \`profkit help ${group.name} <subcommand>\` for a subcommand's options.`,
  ];
  return lines.join('\n') + '\n';
}

/** Runs `profkit` with `argv` (without the node and script paths); resolves to the exit code. */
export async function main(argv: string[], io: MainIO = {}): Promise<number> {
  const stderr = io.stderr ?? process.stderr;
  const cwd = io.cwd ?? process.cwd();
  let verbose = argv.includes('--verbose');
  const controller = new AbortController();
  let interrupted = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) process.exit(ExitCode.INTERRUPTED);
    interrupted = true;
    stderr.write(`profkit: interrupted by ${sig}\n`);
    controller.abort(new ProfkitError(ErrorCodes.ABORTED, `interrupted by ${sig}`));
  };
  if (io.handleSignals) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  // Every write to stdout goes through one writer; a failed write stops the command (its signal
  // is aborted) and becomes its error. See stdout.ts.
  const stdout = new CommandStdout(io.stdout, (e) => controller.abort(e));
  try {
    const code = await run(argv, { stdout, stderr, cwd, signal: controller.signal, setVerbose: (v) => (verbose = v), discoveryCache: io.discoveryCache });
    // No exit code before stdout is known to be written (a full disk must not exit 0).
    await stdout.flush();
    if (interrupted) return ExitCode.INTERRUPTED;
    // An adapter command that returns nothing (or nonsense) succeeded.
    return Number.isInteger(code) && code >= 0 && code <= 255 ? code : ExitCode.OK;
  } catch (thrown) {
    // What was written before the error still reaches stdout.
    await stdout.flush().catch(() => undefined);
    // A failed stdout aborted the command: whatever it threw then is a consequence of that.
    const e = stdout.failure && !interrupted ? stdout.failure : thrown;
    if (isStdoutClosed(e)) return ExitCode.OK;
    if (interrupted) {
      stderr.write(formatError(isProfkitError(e) ? e : new ProfkitError(ErrorCodes.ABORTED, 'interrupted'), verbose));
      return ExitCode.INTERRUPTED;
    }
    stderr.write(formatError(e, verbose));
    return isProfkitError(e) ? exitCodeFor(e.code) : ExitCode.INTERNAL;
  } finally {
    if (io.handleSignals) {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }
}

interface RunIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  cwd: string;
  signal: AbortSignal;
  setVerbose(v: boolean): void;
  discoveryCache: DiscoveryCache | undefined;
}

async function run(argv: string[], io: RunIO): Promise<number> {
  // pprof's `-top FILE` is `top FILE` (go-flags.ts).
  argv = goModeCommand(argv, new Set([...BUILTIN_COMMAND_NAMES, 'help']));
  // First pass: global flags only, to find the command words. Single-dash long options
  // (`-show=x`, pprof's spelling) are scanned as long ones, not as clusters of -s -h -o -w.
  const first = parseArgs({ args: asLongOptionsForScan(argv), options: toParseArgsOptions(GLOBAL_OPTIONS), strict: false, allowPositionals: true });
  const g = first.values as Record<string, unknown>;
  const positionals = first.positionals;
  const flags = {
    cwd: io.cwd,
    config: typeof g.config === 'string' ? g.config : undefined,
    adapters: Array.isArray(g.adapter) ? (g.adapter as unknown[]).filter((x): x is string => typeof x === 'string') : [],
    discover: g['no-discover'] === true ? false : g.discover === true ? true : undefined,
    discoveryCache: io.discoveryCache,
  };
  const bare = createOutput({ stdout: io.stdout, stderr: io.stderr, json: g.json === true, quiet: g.quiet === true, verbose: g.verbose === true });
  const limits = parseLimits(g.limit);

  if (positionals.length === 0) {
    if (g.version === true) return printVersion(bare);
    const { cmds, note } = await adapterCommandsForHelp(flags);
    (g.help === true ? io.stdout : io.stderr).write(mainHelp(await loadBuiltinCommands(), cmds, note));
    return g.help === true ? ExitCode.OK : ExitCode.USAGE;
  }

  let name = positionals[0]!;
  let helpRequested = g.help === true;
  let rest = argv;
  if (name === 'help') {
    helpRequested = true;
    const i = argv.indexOf('help');
    rest = [...argv.slice(0, i), ...argv.slice(i + 1)];
    if (positionals.length === 1) {
      const { cmds, note } = await adapterCommandsForHelp(flags);
      io.stdout.write(mainHelp(await loadBuiltinCommands(), cmds, note));
      return ExitCode.OK;
    }
    name = positionals[1]!;
  }

  // Only the command that runs is imported (start-up time is module loading).
  const builtin = await loadBuiltinCommand(name);
  if (builtin) {
    if (helpRequested) {
      io.stdout.write(commandHelp(builtin));
      return ExitCode.OK;
    }
    const parsed = strictParse(rest, builtin.name, builtin.options ?? {});
    if (parsed.values.version === true) return printVersion(bare);
    const args = parsed.positionals.slice(1);
    const [min, max] = typeof builtin.positionals === 'number' ? [builtin.positionals, builtin.positionals] : builtin.positionals;
    if (args.length < min || args.length > max) {
      throw usageError(`${builtin.name} takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}, got ${args.length}: usage: ${builtin.usage.split('\n')[0]}`, builtin.name);
    }
    const values = parsed.values as CommandContext['values'];
    io.setVerbose(values.verbose === true);
    if (values.json === true && !builtin.json) throw usageError(`${builtin.name} has no --json output`, builtin.name);
    // Discovered adapters stay lazy stand-ins unless the command lists adapter commands/transforms.
    const discovery = await loadRegistry({ ...flags, lazy: builtin.allAdapters !== true });
    discovery.registry.setDefaultLimits(limits);
    const ctx = makeContext(discovery, io, args, values);
    for (const w of discovery.warnings) ctx.out.note(`warning: ${w.message} [${w.code}]`);
    return builtin.run(ctx);
  }

  // Not built in: an adapter command (needs the registry to know them).
  const discovery = await loadRegistry(flags);
  discovery.registry.setDefaultLimits(limits);
  const words = helpRequested && positionals[0] === 'help' ? positionals.slice(1) : positionals;
  const match = matchAdapterCommand(discovery.registry.commands(), words);
  if (!match) {
    // A group without (or with an unknown) subcommand lists the group's subcommands: on stdout
    // with exit 0 when help was asked, else on stderr with exit 2 (docs/cli.md, "Command groups").
    const group = matchCommandGroup(discovery.registry.commands(), words);
    if (group && words.length === group.words) {
      (helpRequested ? io.stdout : io.stderr).write(groupHelp(group));
      return helpRequested ? ExitCode.OK : ExitCode.USAGE;
    }
    if (group) {
      const subcommands = group.members.map((m) => m.command.name.slice(group.name.length + 1)).join(', ');
      throw usageError(`unknown ${group.name} subcommand "${words[group.words]}" (subcommands: ${subcommands})`, group.name);
    }
    const known = [...BUILTIN_COMMAND_NAMES, ...discovery.registry.commands().map((c) => c.command.name), 'help'];
    throw usageError(`unknown command "${words[0]}" (commands: ${known.join(', ')})`);
  }
  if (helpRequested) {
    io.stdout.write(commandHelp(match.command, match.adapter));
    return ExitCode.OK;
  }
  const parsed = strictParse(rest, match.command.name, match.command.options ?? {});
  // --version answers before anything runs (a server must not start because of it).
  if (parsed.values.version === true) return printVersion(bare);
  const values = parsed.values as CommandContext['values'];
  io.setVerbose(values.verbose === true);
  const ctx = makeContext(discovery, io, parsed.positionals.slice(match.words), values);
  for (const w of discovery.warnings) ctx.out.note(`warning: ${w.message} [${w.code}]`);
  const adapterCtx: CommandContext = ctx;
  return match.command.run(adapterCtx);
}

function strictParse(args: string[], command: string, options: Record<string, CommandOption>) {
  const globalShorts = new Set(Object.values(GLOBAL_OPTIONS).map((o) => o.short).filter(Boolean));
  for (const [k, o] of Object.entries(options)) {
    if (k in GLOBAL_OPTIONS) throw new ProfkitError(ErrorCodes.USAGE, `command ${command} redefines the global option --${k}`, { rule: 'command options' });
    if (o.short && globalShorts.has(o.short)) throw new ProfkitError(ErrorCodes.USAGE, `command ${command} redefines the global option -${o.short}`, { rule: 'command options' });
  }
  try {
    return parseArgs({ args: normalizeGoFlags(args, { ...GLOBAL_OPTIONS, ...options }), options: toParseArgsOptions({ ...GLOBAL_OPTIONS, ...options }), strict: true, allowPositionals: true });
  } catch (e) {
    const msg = (e as Error).message.replace(/\. To specify a positional argument.*$/s, '');
    throw usageError(`${command}: ${msg}`, command);
  }
}

async function adapterCommandsForHelp(flags: Parameters<typeof loadRegistry>[0]): Promise<{ cmds: { adapter: string; command: AdapterCommand }[]; note?: string }> {
  try {
    const d = await loadRegistry(flags);
    return { cmds: d.registry.commands() };
  } catch (e) {
    return { cmds: [], note: `note: adapters could not be loaded, so adapter commands are not listed: ${isProfkitError(e) ? e.describe() : String(e)}` };
  }
}

function printVersion(out: Output): number {
  const v = { profkit: cliVersion(), core: coreVersion(), adapterApi: ADAPTER_API_VERSION, node: process.versions.node };
  if (out.json) out.document('version', v);
  else out.line(`profkit ${v.profkit} (@profkit/core ${v.core}, adapter API ${v.adapterApi}, node ${v.node})`);
  return ExitCode.OK;
}

function makeContext(discovery: BuildRegistryResult, io: RunIO, positionals: string[], values: CommandContext['values']): CliContext {
  const out = createOutput({ stdout: io.stdout, stderr: io.stderr, json: values.json === true, quiet: values.quiet === true, verbose: values.verbose === true, limits: () => parseLimits(values.limit) });
  const registry = discovery.registry;
  return {
    registry,
    discovery,
    out,
    cwd: io.cwd,
    positionals,
    values,
    stdout: io.stdout,
    stderr: io.stderr,
    json: out.json,
    quiet: out.quiet,
    verbose: out.verbose,
    signal: io.signal,
    progress: (label, total) => out.progress(label, total),
    readProfile: (path, options = {}) => registry.read(path, { format: options.format, signal: io.signal }),
    readProfileBytes: (bytes, options = {}) => registry.read(bytes, { format: options.format, fileName: options.fileName, signal: io.signal }),
    writeProfile: async (profile, path, options = {}) => (await registry.write(profile, path, { format: options.format, inputs: options.inputs, signal: options.signal ?? io.signal })).warnings,
    transform: (name, profile, tv = {}) => registry.transform(name, profile, { values: tv, stderr: io.stderr, signal: io.signal, verbose: out.verbose, quiet: out.quiet || out.json }),
  };
}


/** `--limit NAME=N` values as read limits (core's `parseLimitArgs`, shared with adapter commands). */
export const parseLimits = parseLimitArgs;
