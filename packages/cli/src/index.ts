/**
 * @profkit/cli: the `profkit` command line. The programmatic entry runs it in-process
 * (`await main(['info', 'cpu.pb.gz'])` resolves to the exit code).
 */
export { main, GLOBAL_OPTIONS, type MainIO } from './cli.js';
export { ExitCode, exitCodeFor } from './exit-codes.js';
export { BUILTIN_COMMANDS } from './commands/index.js';
export type { CliCommand, CliContext } from './types.js';
export { toJson } from './output.js';
