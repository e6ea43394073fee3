/**
 * Splits a stream of byte chunks into text lines, accepting LF, CRLF and CR line ends (as R's
 * `readLines` does), decoding UTF-8 across chunk boundaries, and counting lines (1-based) for
 * error messages. Memory is bounded by the chunk size plus the longest line (`maxLineLength`).
 * Shared by the text readers (Rprof, folded, perf script).
 */

import { ErrorCodes, ProfkitError } from './errors.js';
import { READ_LIMITS } from './limits.js';

export interface LineSink {
  /** Called once per line (without its terminator); `lineNo` is 1-based. */
  line(text: string, lineNo: number): void;
}

export interface LineSplitterOptions {
  file?: string;
  /** Largest accepted line, in UTF-16 code units of decoded text (default `DEFAULT_MAX_LINE_LENGTH`). */
  maxLineLength?: number;
}

/** Core's `READ_LIMITS.maxLineLength` (16 Mi; see there). */
export const DEFAULT_MAX_LINE_LENGTH = READ_LIMITS.maxLineLength;

/**
 * Bytes of UTF-8 that one UTF-16 code unit can take (3: a character outside the BMP is 4 bytes
 * and 2 code units), so a line's bytes are refused before decoding once over 3 × the limit.
 */
const MAX_UTF8_BYTES_PER_UNIT = 3;

const LF = 10;
const CR = 13;

/**
 * Incremental line splitter. Feed `push(chunk)` any number of times, then `end()`.
 * Each chunk is cut after its last line end (0x0A/0x0D never occur inside UTF-8 multi-byte
 * sequences, so the cut never splits a character); the complete part is decoded at once and
 * split as a string, the rest is carried to the next chunk.
 */
export class LineSplitter {
  // ignoreBOM: each decode() call would otherwise drop a U+FEFF that starts it, i.e. at a chunk
  // boundary; only the file's first line loses its BOM (in `emit`).
  private readonly decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
  private carry: Uint8Array[] = [];
  private carryLength = 0;
  private lineNo = 0;
  private pendingCR = false;
  private readonly maxLineLength: number;
  private first = true;

  constructor(
    private readonly sink: LineSink,
    private readonly options: LineSplitterOptions = {},
  ) {
    this.maxLineLength = options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
  }

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    if (this.pendingCR) {
      this.pendingCR = false;
      if (chunk[0] === LF) chunk = chunk.subarray(1);
      if (chunk.length === 0) return;
    }
    const n = chunk.length;
    let last = n - 1;
    while (last >= 0 && chunk[last] !== LF && chunk[last] !== CR) last--;
    if (last === -1) {
      this.carry.push(chunk.slice());
      this.carryLength += n;
      if (this.carryLength > this.maxLineLength * MAX_UTF8_BYTES_PER_UNIT) this.tooLong(this.lineNo + 1);
      return;
    }
    let bytes = chunk.subarray(0, last + 1);
    if (this.carryLength > 0) {
      const joined = new Uint8Array(this.carryLength + bytes.length);
      let o = 0;
      for (const c of this.carry) {
        joined.set(c, o);
        o += c.length;
      }
      joined.set(bytes, o);
      bytes = joined;
      this.carry = [];
      this.carryLength = 0;
    }
    this.split(this.decoder.decode(bytes));
    if (chunk[last] === CR && last === n - 1) this.pendingCR = true;
    if (last + 1 < n) {
      this.carry.push(chunk.slice(last + 1));
      this.carryLength = n - last - 1;
      if (this.carryLength > this.maxLineLength * MAX_UTF8_BYTES_PER_UNIT) this.tooLong(this.lineNo + 1);
    }
  }

  end(): void {
    if (this.carryLength > 0) {
      const joined = new Uint8Array(this.carryLength);
      let o = 0;
      for (const c of this.carry) {
        joined.set(c, o);
        o += c.length;
      }
      this.carry = [];
      this.carryLength = 0;
      this.emit(this.decoder.decode(joined));
    }
  }

  /** Number of lines emitted so far. */
  get lines(): number {
    return this.lineNo;
  }

  /** Splits text that ends with a line terminator (a plain scan: linear whatever the content). */
  private split(text: string): void {
    const n = text.length;
    let i = 0;
    if (text.indexOf('\r') === -1) {
      // LF only (the usual case): memchr-speed search.
      for (let j = text.indexOf('\n'); j !== -1; j = text.indexOf('\n', i)) {
        this.emit(text.slice(i, j));
        i = j + 1;
      }
      return;
    }
    for (let j = 0; j < n; j++) {
      const c = text.charCodeAt(j);
      if (c === LF) {
        this.emit(text.slice(i, j));
        i = j + 1;
      } else if (c === CR) {
        this.emit(text.slice(i, j));
        if (j + 1 < n && text.charCodeAt(j + 1) === LF) j++;
        i = j + 1;
      }
    }
  }

  private emit(text: string): void {
    if (this.first) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    this.lineNo++;
    if (text.length > this.maxLineLength) this.tooLong(this.lineNo);
    this.sink.line(text, this.lineNo);
  }

  private tooLong(line: number): never {
    throw lineTooLongError(line, this.maxLineLength, this.options.file);
  }
}

/**
 * The error for line `line` of `file` being longer than `maxLineLength` UTF-16 code units: one
 * message and detail for every line splitter (this one and splitters of readers, such as the
 * Rprof reader's line index).
 */
export function lineTooLongError(line: number, maxLineLength: number, file: string | undefined): ProfkitError {
  return new ProfkitError(ErrorCodes.LIMIT, `line ${line} is longer than ${maxLineLength} characters (raise it with the option limits.maxLineLength)`, {
    file,
    line,
    option: 'maxLineLength',
    rule: 'line length limit',
  });
}
