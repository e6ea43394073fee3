/**
 * What a built-in command is and what it receives. A built-in command is one file in
 * `commands/` exporting a `CliCommand`, plus one line in `commands/index.ts`.
 */

import type { BuildRegistryResult, CommandContext, CommandOption, Registry } from '@profkit/core/node';
import type { Output } from './output.js';

/** The context of a built-in command: the adapter command context plus the registry. */
export interface CliContext extends CommandContext {
  registry: Registry;
  /** The config file and discovery warnings the registry was built from. */
  discovery: BuildRegistryResult;
  out: Output;
  cwd: string;
}

export interface CliCommand {
  /** The word after `profkit`. */
  name: string;
  /** One line for `profkit --help`. */
  summary: string;
  /** Usage line(s) and examples for `profkit help <name>`. */
  usage: string;
  /** Command-specific options (node:util parseArgs shape); global options are always accepted. */
  options?: Record<string, CommandOption>;
  /** Positional arguments: exact count, or [min, max]. */
  positionals: number | [number, number];
  /** Whether the command supports `--json` (read-only commands do). */
  json: boolean;
  /**
   * The command lists adapters' commands or transforms, so every adapter is imported before it
   * runs. Otherwise discovered adapters that declare themselves in package.json stay lazy
   * stand-ins (only the adapter a file needs is imported).
   */
  allAdapters?: boolean;
  run(ctx: CliContext): Promise<number>;
}
