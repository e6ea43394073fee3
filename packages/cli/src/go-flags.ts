/**
 * `go tool pprof` flag spellings on the profkit command line: `-nodecount=5`, `-focus=fib`,
 * `-sample_index=alloc_space`, `-lines`, `-top FILE`. Rewritten to profkit's options before
 * parsing (`normalizeGoFlags`, `goModeCommand`); `--help` shows the pprof spelling beside ours
 * (`pprofSpellingOf`). The table is pprof's flags (`internal/driver/cli.go`, `config.go`).
 */

import { ErrorCodes, ProfkitError, type CommandOption } from '@profkit/core';

/**
 * pprof flag → profkit option (and the value a pprof boolean flag stands for). A pprof name
 * that is, with `_` as `-`, already an option of the command needs no row (`-focus`, `-cum`,
 * `-seconds`, `-output`).
 */
const PPROF_FLAGS: Record<string, { option: string; value?: string }> = {
  nodecount: { option: 'nodecount' },
  nodefraction: { option: 'node-fraction' },
  edgefraction: { option: 'edge-fraction' },
  tagfocus: { option: 'tag-focus' },
  tagignore: { option: 'tag-ignore' },
  prune_from: { option: 'prune-from' },
  sample_index: { option: 'sample-type' },
  inuse_space: { option: 'sample-type', value: 'inuse_space' },
  inuse_objects: { option: 'sample-type', value: 'inuse_objects' },
  alloc_space: { option: 'sample-type', value: 'alloc_space' },
  alloc_objects: { option: 'sample-type', value: 'alloc_objects' },
  total_delay: { option: 'sample-type', value: 'delay' },
  contentions: { option: 'sample-type', value: 'contentions' },
  functions: { option: 'by', value: 'function' },
  filefunctions: { option: 'by', value: 'filefunctions' },
  files: { option: 'by', value: 'file' },
  lines: { option: 'by', value: 'line' },
  addresses: { option: 'by', value: 'address' },
  granularity: { option: 'by' },
  tagshow: { option: 'tag-show' },
  taghide: { option: 'tag-hide' },
  tagroot: { option: 'tag-root' },
  tagleaf: { option: 'tag-leaf' },
};

/** pprof flags that have no row above and are not profkit options of any built-in command. */
const PPROF_ONLY = new Set([
  'http', 'no_browser', 'tools', 'symbolize', 'buildid', 'timeout', 'add_comment', 'diff_base', 'base', 'normalize', 'mean_delay', 'mean',
  'call_tree', 'relative_percentages', 'unit', 'compact_labels', 'intel_syntax', 'sort', 'drop_negative', 'trim',
  'show_from', 'noinlines', 'divide_by', 'source_path', 'trim_path', 'flat',
  'list', 'disasm', 'weblist', 'dot', 'svg', 'png', 'pdf', 'gif', 'ps', 'eog', 'evince', 'gv', 'web', 'callgrind', 'kcachegrind', 'proto', 'topproto', 'comments',
]);

/** pprof output modes given as flags (`-top FILE`) → the profkit command (`-peek=RE` and the like take a regexp). */
const PPROF_MODES: Record<string, string> = {
  top: 'top', text: 'top', tree: 'tree', peek: 'peek', raw: 'raw', traces: 'traces', tags: 'tags', dot: 'graph', svg: 'graph', png: 'graph',
  list: 'list', disasm: 'disasm', callgrind: 'callgrind', topproto: 'topproto',
};

/** Modes whose flag carries a regexp (`-list=RE FILE` is `list FILE RE`). */
const PPROF_REGEX_MODES = new Set(['peek', 'list', 'disasm']);

/** Modes that are one format of their command: `-svg FILE` is `graph FILE --format=svg`. */
const PPROF_FORMAT_MODES = new Set(['dot', 'svg', 'png']);

const SINGLE_DASH_LONG = /^-([A-Za-z][A-Za-z0-9_-]+)(=[\s\S]*)?$/;

/** The pprof spellings of profkit option `option` (for `--help`), e.g. `-nodecount`. */
export function pprofSpellingOf(option: string): string[] {
  const out: string[] = [];
  for (const [flag, m] of Object.entries(PPROF_FLAGS)) if (m.option === option) out.push(m.value !== undefined ? `-${flag}` : `-${flag}=…`);
  return out;
}

/**
 * If `argv` names no command but holds a pprof output-mode flag (`profkit -top cpu.pb.gz`,
 * `profkit -peek=RE cpu.pb.gz`), the argv of the profkit command (`top cpu.pb.gz`,
 * `peek cpu.pb.gz RE`); otherwise `argv`. `commands` are the command words profkit knows.
 */
export function goModeCommand(argv: string[], commands: ReadonlySet<string>): string[] {
  const end = argv.indexOf('--');
  const scan = end < 0 ? argv : argv.slice(0, end);
  if (scan.some((a) => commands.has(a))) return argv;
  const modes = scan
    .map((a, i) => ({ i, m: SINGLE_DASH_LONG.exec(a) }))
    .filter((x) => x.m && Object.hasOwn(PPROF_MODES, x.m[1]!) && (x.m[2] === undefined) === !PPROF_REGEX_MODES.has(x.m[1]!));
  if (modes.length !== 1) return argv;
  const { i, m } = modes[0]!;
  const command = PPROF_MODES[m![1]!]!;
  const rest = [...argv.slice(0, i), ...argv.slice(i + 1)];
  if (PPROF_FORMAT_MODES.has(m![1]!)) return [command, ...rest, `--format=${m![1]}`];
  return PPROF_REGEX_MODES.has(m![1]!) ? [command, ...rest, m![2]!.slice(1)] : [command, ...rest];
}

/** Own keys only: `-constructor` or `-toString` must not find Object.prototype's members. */
const has = (o: object, k: string): boolean => Object.hasOwn(o, k);

/** Whether `-name` is a cluster of short options (`-qn5`: -q, then -n with the value 5). */
function isShortCluster(name: string, shorts: ReadonlyMap<string, CommandOption>): boolean {
  for (const c of name) {
    const o = shorts.get(c);
    if (!o) return false;
    if (o.type === 'string') return true;
  }
  return true;
}

/**
 * Rewrites pprof-style single-dash long options of a command to profkit's: `-nodecount=5` →
 * `--nodecount=5`, `-sample_index alloc_space` → `--sample-type alloc_space`, `-lines` → `--by
 * line`, `-focus=fib` → `--focus=fib`, and any `-name` that is a long option of the command.
 * Left alone: short options and their clusters (`-n 20`, `-o f`, `-qn5`), negative numbers, option
 * values (the token after an option that takes one), everything after `--`, and unknown names
 * (parseArgs then reports them).
 */
export function normalizeGoFlags(args: string[], options: Record<string, CommandOption>): string[] {
  const shorts = new Map<string, CommandOption>();
  for (const o of Object.values(options)) if (o.short) shorts.set(o.short, o);
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      out.push(...args.slice(i));
      break;
    }
    const m = SINGLE_DASH_LONG.exec(a);
    const name = m?.[1];
    const mapped = name === undefined ? undefined : has(options, name) && !name.includes('_') ? { option: name } : (has(PPROF_FLAGS, name) ? PPROF_FLAGS[name] : undefined) ?? (has(options, name.replace(/_/g, '-')) ? { option: name.replace(/_/g, '-') } : undefined);
    // A pprof flag name is one flag, never a cluster of short options (`-normalize` is not `-n ormalize`).
    const flag = name?.split('=')[0];
    const pprofName = flag !== undefined && (has(PPROF_FLAGS, flag) || PPROF_ONLY.has(flag));
    if (m && (!mapped || !has(options, mapped.option)) && (pprofName || !isShortCluster(name!, shorts))) {
      // Not a cluster of this command's short options: a long option it does not have.
      const pprof = (has(PPROF_FLAGS, flag!) ? PPROF_FLAGS[flag!] : undefined) ?? (pprofName ? { option: '' } : undefined);
      throw new ProfkitError(
        ErrorCodes.USAGE,
        pprof
          ? `-${flag} (go tool pprof) has no equivalent for this command${pprof.option ? ` (it would be --${pprof.option})` : ''}; see docs/cli.md, "go tool pprof equivalents"`
          : `Unknown option '-${flag}'`,
        { option: flag, rule: 'command-line usage' },
      );
    }
    if (!m || !mapped || !has(options, mapped.option)) {
      out.push(a);
      // The value of `--opt VALUE` or `-o VALUE` is not an option, whatever it looks like.
      const long = /^--([^=]+)$/.exec(a)?.[1];
      const short = /^-([A-Za-z])$/.exec(a)?.[1];
      const takes = long !== undefined ? options[long] : short !== undefined ? shorts.get(short) : undefined;
      if (takes?.type === 'string' && i + 1 < args.length) out.push(args[++i]!);
      continue;
    }
    const o = options[mapped.option]!;
    if (mapped.value !== undefined) {
      if (m[2] !== undefined) {
        out.push(a); // `-lines=x`: not a pprof spelling; let parseArgs say so.
        continue;
      }
      out.push(`--${mapped.option}=${mapped.value}`);
    } else if (m[2] !== undefined) {
      out.push(`--${mapped.option}${m[2]}`);
    } else {
      out.push(`--${mapped.option}`);
      if (o.type === 'string' && i + 1 < args.length) out.push(args[++i]!);
    }
  }
  return out;
}

/**
 * `args` for a scan that knows only the global options: single-dash long options (`-show=x`)
 * written as long ones, so that a lenient parse does not read them as clusters of short options.
 */
export function asLongOptionsForScan(args: string[]): string[] {
  const end = args.indexOf('--');
  return args.map((a, i) => ((end < 0 || i < end) && SINGLE_DASH_LONG.test(a) ? '-' + a : a));
}
