/**
 * The built-in commands. Adding one: write `commands/<name>.ts` exporting a `CliCommand`, then
 * add it to this list.
 */

import type { CliCommand } from '../types.js';
import { convert } from './convert.js';
import { detect } from './detect.js';
import { formats } from './formats.js';
import { info } from './info.js';
import { validate } from './validate.js';
import { top } from './top.js';
import { tree } from './tree.js';
import { peek } from './peek.js';
import { folded } from './folded.js';
import { merge } from './merge.js';
import { diff } from './diff.js';
import { filter } from './filter.js';
import { flame } from './flame.js';
import { graph } from './graph.js';
import { completion } from './completion.js';
import { raw } from './raw.js';
import { traces } from './traces.js';
import { tags } from './tags.js';
import { list } from './list.js';
import { callgrind } from './callgrind.js';
import { topproto } from './topproto.js';
import { disasm } from './disasm.js';
import { web } from './web.js';

export const BUILTIN_COMMANDS: readonly CliCommand[] = [formats, detect, validate, info, convert, top, tree, peek, folded, diff, merge, filter, flame, graph, raw, traces, tags, list, disasm, callgrind, topproto, web, completion];
