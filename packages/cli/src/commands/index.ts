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

export const BUILTIN_COMMANDS: readonly CliCommand[] = [formats, detect, validate, info, convert];
