/**
 * The built-in commands as the CLI entry sees them: names only, each command's module imported
 * when it runs (start-up cost is module loading; `profkit top` must not load `flame` or `merge`).
 * `BUILTIN_COMMANDS` (commands/index.ts) imports them all, for help and completion. Adding a
 * command: its module, a line in index.ts and a line here (a test checks the two agree).
 */

import type { CliCommand } from '../types.js';

const LOADERS: Record<string, () => Promise<CliCommand>> = {
  formats: async () => (await import('./formats.js')).formats,
  detect: async () => (await import('./detect.js')).detect,
  validate: async () => (await import('./validate.js')).validate,
  info: async () => (await import('./info.js')).info,
  convert: async () => (await import('./convert.js')).convert,
  top: async () => (await import('./top.js')).top,
  tree: async () => (await import('./tree.js')).tree,
  peek: async () => (await import('./peek.js')).peek,
  folded: async () => (await import('./folded.js')).folded,
  diff: async () => (await import('./diff.js')).diff,
  merge: async () => (await import('./merge.js')).merge,
  filter: async () => (await import('./filter.js')).filter,
  flame: async () => (await import('./flame.js')).flame,
  graph: async () => (await import('./graph.js')).graph,
  raw: async () => (await import('./raw.js')).raw,
  traces: async () => (await import('./traces.js')).traces,
  tags: async () => (await import('./tags.js')).tags,
  list: async () => (await import('./list.js')).list,
  disasm: async () => (await import('./disasm.js')).disasm,
  callgrind: async () => (await import('./callgrind.js')).callgrind,
  topproto: async () => (await import('./topproto.js')).topproto,
  web: async () => (await import('./web.js')).web,
  completion: async () => (await import('./completion.js')).completion,
};

/** Built-in command names, in the order of `BUILTIN_COMMANDS`. */
export const BUILTIN_COMMAND_NAMES: readonly string[] = Object.keys(LOADERS);

/** Imports one built-in command; undefined when `name` is not one. */
export function loadBuiltinCommand(name: string): Promise<CliCommand> | undefined {
  return Object.hasOwn(LOADERS, name) ? LOADERS[name]!() : undefined;
}

/** Imports every built-in command (help lists their summaries). */
export async function loadBuiltinCommands(): Promise<readonly CliCommand[]> {
  return (await import('./index.js')).BUILTIN_COMMANDS;
}
