/**
 * What `#node-commands` resolves to outside Node (see package.json `imports`): `fetch` and
 * `serve` need HTTP and files, so a browser bundle gets these stand-ins instead of `commands.ts`.
 */

import { nodeOnlyError, type CommandContext } from '@profkit/core';

export async function runFetch(_ctx: CommandContext): Promise<number> {
  throw nodeOnlyError('profkit fetch');
}

export async function runServe(_ctx: CommandContext): Promise<number> {
  throw nodeOnlyError('profkit serve');
}
