/**
 * Error codes of the fuchsia-sampler adapter. Every malformed input yields a `ProfkitError` with
 * one of these codes and a `detail` naming the file, the byte offset (or line) and the rule.
 */

import { ProfkitError, type ErrorDetail } from '@profkit/core';

export const FuchsiaErrorCodes = {
  /** Transactional header or persisted wire-metadata header is malformed (magic, flags, txid, ordinal). */
  HEADER: 'PROFKIT_E_FUCHSIA_HEADER',
  /** The RFC-0196 `byte_overflow` flag is set: the body lives in a VMO a byte recording cannot carry. */
  BYTE_OVERFLOW: 'PROFKIT_E_FUCHSIA_BYTE_OVERFLOW',
  /** A strict method with an unknown ordinal. */
  UNKNOWN_METHOD: 'PROFKIT_E_FUCHSIA_UNKNOWN_METHOD',
  /** An object or value extends past the end of the message. */
  TRUNCATED: 'PROFKIT_E_FUCHSIA_TRUNCATED',
  /** Bytes remain after the last object of the message. */
  TRAILING: 'PROFKIT_E_FUCHSIA_TRAILING',
  /** A padding byte is not zero. */
  PADDING: 'PROFKIT_E_FUCHSIA_PADDING',
  /** A presence marker is neither 0 nor UINTPTR_MAX, or a required object is absent. */
  PRESENCE: 'PROFKIT_E_FUCHSIA_PRESENCE',
  /** An envelope's flags, byte count or handle count is wrong. */
  ENVELOPE: 'PROFKIT_E_FUCHSIA_ENVELOPE',
  /** A vector or string is longer than its declared bound (or than 2^32-1). */
  BOUNDS: 'PROFKIT_E_FUCHSIA_BOUNDS',
  /** A string is not valid UTF-8. */
  UTF8: 'PROFKIT_E_FUCHSIA_UTF8',
  /** Nesting deeper than FIDL's maximum recursion depth (32). */
  DEPTH: 'PROFKIT_E_FUCHSIA_DEPTH',
  /** A handle where a byte recording has none, or a malformed handle slot. */
  HANDLE: 'PROFKIT_E_FUCHSIA_HANDLE',
  /** A union ordinal that is 0 or unknown to a strict union. */
  UNION: 'PROFKIT_E_FUCHSIA_UNION',
  /** A required field (address, stack_trace, stack_frames, size) is absent. */
  MISSING_FIELD: 'PROFKIT_E_FUCHSIA_MISSING_FIELD',
  /** The recording container (magic, record kind, record length) is malformed. */
  RECORDING: 'PROFKIT_E_FUCHSIA_RECORDING',
  /** A JSON Lines recording line is malformed. */
  JSONL: 'PROFKIT_E_FUCHSIA_JSONL',
} as const;

export type FuchsiaErrorCode = (typeof FuchsiaErrorCodes)[keyof typeof FuchsiaErrorCodes];

export function fuchsiaError(code: FuchsiaErrorCode, message: string, detail: ErrorDetail = {}): ProfkitError {
  return new ProfkitError(code, message, detail);
}
