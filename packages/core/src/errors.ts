/**
 * Errors are values with stable codes. Every failure a user can cause (bad input, bad usage,
 * I/O) is a `ProfkitError` whose `code` tests and callers can rely on, and whose `detail` says
 * where (file, byte offset, line) and which rule was broken.
 */

/** Every error code profkit emits. Adapters may add codes of the form `PROFKIT_E_<ADAPTER>_…`. */
export const ErrorCodes = {
  /** The input does not follow its format's grammar (with offset/line in `detail`). */
  PARSE: 'PROFKIT_E_PARSE',
  /** The input ended early. */
  TRUNCATED: 'PROFKIT_E_TRUNCATED',
  /** The input is empty. */
  EMPTY_INPUT: 'PROFKIT_E_EMPTY_INPUT',
  /** The profile breaks a validity rule (see `validate`). */
  INVALID_PROFILE: 'PROFKIT_E_INVALID_PROFILE',
  /** A configured limit was exceeded (`detail.option` names the option that raises it). */
  LIMIT: 'PROFKIT_E_LIMIT',
  /** A number does not fit the model without losing precision. */
  RANGE: 'PROFKIT_E_RANGE',
  /** gzip data is corrupt. */
  DECOMPRESS: 'PROFKIT_E_DECOMPRESS',
  /** No adapter recognizes the input, or several do equally. */
  UNKNOWN_FORMAT: 'PROFKIT_E_UNKNOWN_FORMAT',
  /** A named format or adapter is not registered. */
  NO_ADAPTER: 'PROFKIT_E_NO_ADAPTER',
  /** An adapter targets an adapter API version this core does not support. */
  ADAPTER_API: 'PROFKIT_E_ADAPTER_API',
  /** An adapter module does not have the shape of the contract. */
  ADAPTER_SHAPE: 'PROFKIT_E_ADAPTER_SHAPE',
  /** Two adapters with the same name were registered. */
  ADAPTER_DUPLICATE: 'PROFKIT_E_ADAPTER_DUPLICATE',
  /** A config file could not be read or is malformed. */
  CONFIG: 'PROFKIT_E_CONFIG',
  /** The adapter cannot write this format, or cannot represent this profile in it. */
  UNSUPPORTED: 'PROFKIT_E_UNSUPPORTED',
  /** Reading or writing a file failed. */
  IO: 'PROFKIT_E_IO',
  /** A write would overwrite one of its inputs. */
  CLOBBER: 'PROFKIT_E_CLOBBER',
  /** Wrong arguments to a function or command. */
  USAGE: 'PROFKIT_E_USAGE',
  /** Profiles cannot be combined (different sample or period types). */
  INCOMPATIBLE: 'PROFKIT_E_INCOMPATIBLE',
  /** A network or protocol failure. */
  NETWORK: 'PROFKIT_E_NETWORK',
  /** An operation exceeded its time bound. */
  TIMEOUT: 'PROFKIT_E_TIMEOUT',
  /** The operation was interrupted (SIGINT/SIGTERM or an AbortSignal); a write left the old file. */
  ABORTED: 'PROFKIT_E_ABORTED',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes] | `PROFKIT_E_${string}`;

/** Where and why an error happened. All fields optional; fill what is known. */
export interface ErrorDetail {
  /** The file (path or `-` for stdin) being read or written. */
  file?: string;
  /** Byte offset in the (decompressed) input. */
  offset?: number;
  /** 1-based line number in a text input. */
  line?: number;
  /** The rule broken, in words or as a rule id (`R24`, `pprof.CheckValid.3`...). */
  rule?: string;
  /** For LIMIT errors: the option that raises the limit. */
  option?: string;
  /** Anything else machine-readable. */
  [key: string]: unknown;
}

export class ProfkitError extends Error {
  readonly code: ErrorCode;
  readonly detail: ErrorDetail;

  constructor(code: ErrorCode, message: string, detail: ErrorDetail = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProfkitError';
    this.code = code;
    this.detail = detail;
  }

  /** One line for a user: `file:line: message` (or `file@offset: message`). */
  describe(): string {
    const d = this.detail;
    let where = '';
    if (d.file !== undefined) where = d.file;
    if (d.line !== undefined) where += `${where ? ':' : 'line '}${d.line}`;
    else if (d.offset !== undefined) where += `${where ? '@' : 'offset '}${d.offset}`;
    return where ? `${where}: ${this.message}` : this.message;
  }

  /** A copy of this error with more detail (e.g. the file name, added by the caller). */
  withDetail(extra: ErrorDetail): ProfkitError {
    const copy = new ProfkitError(this.code, this.message, { ...extra, ...this.detail, ...definedOnly(extra) }, {
      cause: this.cause,
    });
    copy.stack = this.stack;
    return copy;
  }
}

function definedOnly(d: ErrorDetail): ErrorDetail {
  const out: ErrorDetail = {};
  for (const [k, v] of Object.entries(d)) if (v !== undefined) out[k] = v;
  return out;
}

export function isProfkitError(e: unknown): e is ProfkitError {
  return e instanceof ProfkitError || (typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'ProfkitError' && typeof (e as { code?: unknown }).code === 'string');
}

/** Shorthand for `new ProfkitError(...)`. */
export function profkitError(code: ErrorCode, message: string, detail?: ErrorDetail): ProfkitError {
  return new ProfkitError(code, message, detail);
}

/**
 * Non-fatal findings of readers and writers (a truncated frame, information a format cannot
 * represent). Readers return them next to the profile instead of printing them.
 */
export interface Warning {
  code: string;
  message: string;
  detail?: ErrorDetail;
}
