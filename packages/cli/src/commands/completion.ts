import { ErrorCodes, ProfkitError, type CommandOption } from '@profkit/core/node';
import type { CliCommand } from '../types.js';

interface Spec {
  name: string;
  summary: string;
  options: Record<string, CommandOption>;
}

/** Values offered after options that take one of a fixed set (or the installed formats). */
function choicesFor(option: string, formats: string[]): string[] | undefined {
  if (option === 'by') return ['function', 'filefunctions', 'file', 'line', 'address'];
  if (option === 'format') return ['html', 'svg'];
  if (option === 'from' || option === 'to') return formats;
  return undefined;
}

const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function bash(specs: Spec[], global: Record<string, CommandOption>, formats: string[]): string {
  const words = (o: Record<string, CommandOption>) => Object.entries(o).flatMap(([k, v]) => [`--${k}`, ...(v.short ? [`-${v.short}`] : [])]).join(' ');
  const valued = [...specs.flatMap((s) => Object.entries(s.options)), ...Object.entries(global)].filter(([, v]) => v.type === 'string').map(([k]) => `--${k}`);
  const lines = [
    '# profkit bash completion. Load it with: source <(profkit completion bash)',
    '# or install it: profkit completion bash > ~/.local/share/bash-completion/completions/profkit',
    '_profkit() {',
    '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
    `  local commands=${shq(specs.map((s) => s.name).join(' ') + ' help')}`,
    `  local global=${shq(words(global))}`,
    '  local cmd="" i',
    '  for ((i = 1; i < COMP_CWORD; i++)); do',
    '    case "${COMP_WORDS[i]}" in -*) ;; *) cmd="${COMP_WORDS[i]}"; break ;; esac',
    '  done',
    '  if [[ -z "$cmd" ]]; then',
    '    if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$global" -- "$cur")); else COMPREPLY=($(compgen -W "$commands" -- "$cur")); fi',
    '    return 0',
    '  fi',
    '  if [[ "$cmd" == help ]]; then COMPREPLY=($(compgen -W "$commands" -- "$cur")); return 0; fi',
    '  case "$prev" in',
    `    --by) COMPREPLY=($(compgen -W ${shq(choicesFor('by', formats)!.join(' '))} -- "$cur")); return 0 ;;`,
    `    --format) COMPREPLY=($(compgen -W ${shq(choicesFor('format', formats)!.join(' '))} -- "$cur")); return 0 ;;`,
    `    --from|--to) COMPREPLY=($(compgen -W ${shq(formats.join(' '))} -- "$cur")); return 0 ;;`,
    `    ${[...new Set(valued.filter((v) => !['--by', '--format', '--from', '--to'].includes(v)))].join('|') || '--none'}) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;`,
    '  esac',
    '  local opts=""',
    '  case "$cmd" in',
    ...specs.map((s) => `    ${shq(s.name.split(' ')[0]!)}) opts=${shq(words(s.options))} ;;`),
    '  esac',
    '  if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$opts $global" -- "$cur")); return 0; fi',
    '  COMPREPLY=($(compgen -f -- "$cur"))',
    '}',
    'complete -o filenames -o bashdefault -F _profkit profkit',
  ];
  return lines.join('\n') + '\n';
}

const zq = (s: string) => s.replace(/\\/g, '\\\\').replace(/'/g, `'\\''`).replace(/:/g, '\\:').replace(/\[/g, '\\[').replace(/\]/g, '\\]');

function zshOptionSpecs(opts: Record<string, CommandOption>, formats: string[]): string[] {
  return Object.entries(opts).map(([k, v]) => {
    const desc = zq(v.description);
    const names = v.short ? `{-${v.short},--${k}}` : `--${k}`;
    const rep = v.multiple ? '*' : '';
    if (v.type === 'boolean') return `${rep}${names}'[${desc}]'`;
    const choices = choicesFor(k, formats);
    const action = choices ? `(${choices.join(' ')})` : '_files';
    return `${rep}${names}'[${desc}]:${zq((v.valueName ?? 'value').toLowerCase())}:${action}'`;
  });
}

function zsh(specs: Spec[], global: Record<string, CommandOption>, formats: string[]): string {
  const lines = [
    '#compdef profkit',
    '# profkit zsh completion. Install: profkit completion zsh > "${fpath[1]}/_profkit" (then restart zsh),',
    '# or load it in the current shell: source <(profkit completion zsh)',
    '_profkit() {',
    '  local -a commands',
    '  commands=(',
    ...specs.map((s) => `    '${zq(s.name.split(' ')[0]!)}:${zq(s.summary)}'`),
    "    'help:Show help for profkit or for a command'",
    '  )',
    '  local -a global',
    `  global=(${zshOptionSpecs(global, formats).join(' ')})`,
    '  if (( CURRENT == 2 )); then',
    "    _describe -t commands 'profkit command' commands",
    '    return',
    '  fi',
    '  local cmd=${words[2]}',
    '  shift words; (( CURRENT-- ))',
    '  case $cmd in',
    "    help) _describe -t commands 'profkit command' commands ;;",
    ...specs.map((s) => `    ${s.name.split(' ')[0]}) _arguments -s $global ${zshOptionSpecs(s.options, formats).join(' ')} '*:file:_files' ;;`),
    "    *) _arguments -s $global '*:file:_files' ;;",
    '  esac',
    '}',
    'if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _profkit "$@"; else compdef _profkit profkit; fi',
  ];
  return lines.join('\n') + '\n';
}

const fq = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function fish(specs: Spec[], global: Record<string, CommandOption>, formats: string[]): string {
  const names = specs.map((s) => s.name.split(' ')[0]!);
  const opt = (cond: string, k: string, v: CommandOption) => {
    const choices = choicesFor(k, formats);
    return (
      `complete -c profkit ${cond}-l ${k}${v.short ? ` -s ${v.short}` : ''}` +
      (v.type === 'string' ? (choices ? ` -x -a ${fq(choices.join(' '))}` : ' -r -F') : '') +
      ` -d ${fq(v.description)}`
    );
  };
  const lines = [
    '# profkit fish completion. Install: profkit completion fish > ~/.config/fish/completions/profkit.fish',
    'complete -c profkit -f',
    ...specs.map((s, i) => `complete -c profkit -n '__fish_use_subcommand' -a ${fq(names[i]!)} -d ${fq(s.summary)}`),
    `complete -c profkit -n '__fish_use_subcommand' -a help -d 'Show help for profkit or for a command'`,
    `complete -c profkit -n '__fish_seen_subcommand_from help' -a ${fq(names.join(' '))}`,
    ...Object.entries(global).map(([k, v]) => opt('', k, v)),
  ];
  specs.forEach((s, i) => {
    const cond = `-n '__fish_seen_subcommand_from ${names[i]}' `;
    lines.push(`complete -c profkit ${cond}-F`);
    for (const [k, v] of Object.entries(s.options)) lines.push(opt(cond, k, v));
  });
  return lines.join('\n') + '\n';
}

export const completion: CliCommand = {
  name: 'completion',
  summary: 'Print a shell completion script (bash, zsh or fish)',
  usage: [
    'profkit completion bash|zsh|fish',
    '',
    'Completes commands (built-in and those of the installed adapters), options, --by/--format',
    'values, installed format names after --from/--to, and file names.',
    '',
    'Examples:',
    '  source <(profkit completion bash)                                   # current bash',
    '  profkit completion bash > ~/.local/share/bash-completion/completions/profkit',
    '  profkit completion zsh > "${fpath[1]}/_profkit"',
    '  profkit completion fish > ~/.config/fish/completions/profkit.fish',
  ].join('\n'),
  positionals: 1,
  json: false,
  allAdapters: true,
  async run(ctx) {
    const shell = ctx.positionals[0]!;
    // Loaded lazily: the command table imports this file.
    const { BUILTIN_COMMANDS } = await import('./index.js');
    const { GLOBAL_OPTIONS } = await import('../cli.js');
    const specs: Spec[] = [
      ...BUILTIN_COMMANDS.map((c) => ({ name: c.name, summary: c.summary, options: c.options ?? {} })),
      ...ctx.registry
        .commands()
        .filter((c) => !c.command.name.includes(' ') || !BUILTIN_COMMANDS.some((b) => b.name === c.command.name.split(' ')[0]))
        .map((c) => ({ name: c.command.name, summary: `${c.command.summary} (${c.adapter})`, options: c.command.options ?? {} })),
    ];
    // Adapter commands of several words ("fuchsia-sampler serve") complete by their first word.
    const seen = new Set<string>();
    const unique = specs.filter((s) => {
      const w = s.name.split(' ')[0]!;
      if (seen.has(w)) return false;
      seen.add(w);
      return true;
    });
    const formats = [...new Set(ctx.registry.formats().map((f) => f.format.id))].sort();
    let text: string;
    if (shell === 'bash') text = bash(unique, GLOBAL_OPTIONS, formats);
    else if (shell === 'zsh') text = zsh(unique, GLOBAL_OPTIONS, formats);
    else if (shell === 'fish') text = fish(unique, GLOBAL_OPTIONS, formats);
    else throw new ProfkitError(ErrorCodes.USAGE, `completion ${shell}: unknown shell (expected bash, zsh or fish)`, { rule: 'the shell is bash, zsh or fish' });
    ctx.stdout.write(text);
    return 0;
  },
};
