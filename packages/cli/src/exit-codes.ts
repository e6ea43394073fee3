/** Process exit codes of `profkit` (documented in docs/cli.md). */

import { ErrorCodes, DiscoveryErrorCodes } from '@profkit/core/node';

export const ExitCode = {
  OK: 0,
  /** The profile is invalid, or the input breaks its format. */
  INVALID: 1,
  /** Wrong usage: unknown command or option, missing argument, bad config or adapter. */
  USAGE: 2,
  /** Reading or writing a file failed, or a write would overwrite an input. */
  IO: 3,
  /** Unknown or ambiguous format, or no installed adapter reads/writes it. */
  FORMAT: 4,
  /** A network or protocol failure (adapter commands such as `fetch`). */
  NETWORK: 5,
  /** A bug in profkit or in an adapter: please report it. */
  INTERNAL: 70,
  /** Interrupted by SIGINT/SIGTERM. */
  INTERRUPTED: 130,
} as const;

const BY_CODE: Record<string, number> = {
  [ErrorCodes.PARSE]: ExitCode.INVALID,
  [ErrorCodes.TRUNCATED]: ExitCode.INVALID,
  [ErrorCodes.EMPTY_INPUT]: ExitCode.INVALID,
  [ErrorCodes.INVALID_PROFILE]: ExitCode.INVALID,
  [ErrorCodes.LIMIT]: ExitCode.INVALID,
  [ErrorCodes.RANGE]: ExitCode.INVALID,
  [ErrorCodes.DECOMPRESS]: ExitCode.INVALID,
  [ErrorCodes.INCOMPATIBLE]: ExitCode.INVALID,
  PROFKIT_E_ADAPTER_FAILED: ExitCode.INVALID,
  [ErrorCodes.USAGE]: ExitCode.USAGE,
  [ErrorCodes.CONFIG]: ExitCode.USAGE,
  [ErrorCodes.ADAPTER_API]: ExitCode.USAGE,
  [ErrorCodes.ADAPTER_SHAPE]: ExitCode.USAGE,
  [ErrorCodes.ADAPTER_DUPLICATE]: ExitCode.USAGE,
  [DiscoveryErrorCodes.ADAPTER_NOT_FOUND]: ExitCode.USAGE,
  [DiscoveryErrorCodes.ADAPTER_LOAD]: ExitCode.USAGE,
  [ErrorCodes.IO]: ExitCode.IO,
  [ErrorCodes.CLOBBER]: ExitCode.IO,
  [ErrorCodes.UNKNOWN_FORMAT]: ExitCode.FORMAT,
  [ErrorCodes.NO_ADAPTER]: ExitCode.FORMAT,
  [ErrorCodes.UNSUPPORTED]: ExitCode.FORMAT,
  [ErrorCodes.NETWORK]: ExitCode.NETWORK,
  [ErrorCodes.TIMEOUT]: ExitCode.NETWORK,
  PROFKIT_E_ABORTED: ExitCode.INTERRUPTED,
};

/** The exit code for a `ProfkitError` code; adapter-specific codes count as invalid input. */
export function exitCodeFor(code: string): number {
  return BY_CODE[code] ?? ExitCode.INVALID;
}
