/**
 * What `#node-commands` resolves to outside Node (see package.json `imports`): the commands need
 * sockets and files, so a browser bundle gets these stand-ins instead of `commands.ts`.
 */

import { nodeOnlyError, type CommandContext } from '@profkit/core';

export async function serveCommand(_ctx: CommandContext): Promise<number> {
  throw nodeOnlyError('profkit fuchsia-sampler serve');
}

export async function replayCommand(_ctx: CommandContext): Promise<number> {
  throw nodeOnlyError('profkit fuchsia-sampler replay');
}

export async function profilesCommand(_ctx: CommandContext): Promise<number> {
  throw nodeOnlyError('profkit fuchsia-sampler profiles');
}
