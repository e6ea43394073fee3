/**
 * What `#node-commands` resolves to on Node (package.json `imports`; `commands-unavailable.ts`
 * elsewhere): the commands, each loading `commands.ts` (sockets, files) only when it runs, so the
 * CLI does not load them to read a recording. command-defs.ts imports this module statically: a
 * dynamic import() there would make a browser bundler (esbuild) wrap every module it reaches,
 * core included, in a lazy initializer that keeps their unused code (tools/browser-check).
 */

import type { CommandContext } from '@profkit/core';

export async function serveCommand(ctx: CommandContext): Promise<number> {
  return (await import('./commands.js')).serveCommand(ctx);
}

export async function replayCommand(ctx: CommandContext): Promise<number> {
  return (await import('./commands.js')).replayCommand(ctx);
}

export async function profilesCommand(ctx: CommandContext): Promise<number> {
  return (await import('./commands.js')).profilesCommand(ctx);
}
