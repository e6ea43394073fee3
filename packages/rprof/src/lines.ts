/**
 * Splits a stream of byte chunks into text lines, accepting LF, CRLF and CR line ends (as R's
 * `readLines` does), decoding UTF-8 across chunk boundaries, and counting lines (1-based) and
 * byte offsets for error messages. Memory is bounded by the longest line (`maxLineBytes`).
 */

import { ErrorCodes, ProfkitError } from '@profkit/core';

export interface LineSink {
  /** Called once per line (without its terminator); `lineNo` is 1-based, `offset` the byte offset of the line start. */
  line(text: string, lineNo: number, offset: number): void;
}

export interface LineSplitterOptions {
  file?: string;
  /** Largest accepted line, in UTF-16 code units of decoded text (default 64 MiB). */
  maxLineLength?: number;
}

const LF = 10;
const CR = 13;

/**
 * Incremental line splitter. Feed `push(chunk)` any number of times, then `end()`.
 * Works on bytes: line ends are found in the raw chunk (0x0A/0x0D never occur inside UTF-8
 * multi-byte sequences), so a multi-byte character cut by a chunk boundary stays in the carried
 * partial line and is decoded whole.
 */
export class LineSplitter {
  private readonly decoder = new TextDecoder('utf-8', { fatal: false });
  private carry: Uint8Array[] = [];
  private carryLength = 0;
  private lineNo = 0;
  private offset = 0; // byte offset of the next unconsumed byte
  private lineStart = 0; // byte offset where the carried line starts
  private pendingCR = false;
  private readonly maxLineLength: number;
  private first = true;

  constructor(
    private readonly sink: LineSink,
    private readonly options: LineSplitterOptions = {},
  ) {
    this.maxLineLength = options.maxLineLength ?? 64 * 1024 * 1024;
  }

  push(chunk: Uint8Array): void {
    let start = 0;
    const n = chunk.length;
    if (this.pendingCR) {
      this.pendingCR = false;
      if (n > 0 && chunk[0] === LF) {
        start = 1;
        this.offset += 1;
        this.lineStart = this.offset;
      }
    }
    let i = start;
    while (i < n) {
      // Find the next LF or CR.
      let j = chunk.indexOf(LF, i);
      const k = chunk.indexOf(CR, i);
      if (k !== -1 && (j === -1 || k < j)) j = k;
      if (j === -1) break;
      this.emit(chunk.subarray(i, j));
      const isCR = chunk[j] === CR;
      let next = j + 1;
      if (isCR) {
        if (next < n) {
          if (chunk[next] === LF) next++;
        } else this.pendingCR = true;
      }
      this.offset += next - i;
      this.lineStart = this.offset;
      i = next;
    }
    if (i < n) {
      const rest = chunk.subarray(i);
      // Copy: the caller may reuse its buffer.
      this.carry.push(rest.slice());
      this.carryLength += rest.length;
      this.offset += rest.length;
      if (this.carryLength > this.maxLineLength * 4) this.tooLong();
    }
  }

  end(): void {
    if (this.carryLength > 0) this.emit(new Uint8Array(0));
    this.carry = [];
    this.carryLength = 0;
  }

  /** Number of lines emitted so far. */
  get lines(): number {
    return this.lineNo;
  }

  private emit(tail: Uint8Array): void {
    let bytes: Uint8Array;
    if (this.carryLength > 0) {
      bytes = new Uint8Array(this.carryLength + tail.length);
      let o = 0;
      for (const c of this.carry) {
        bytes.set(c, o);
        o += c.length;
      }
      bytes.set(tail, o);
      this.carry = [];
      this.carryLength = 0;
    } else bytes = tail;
    let text = this.decoder.decode(bytes);
    if (this.first) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (text.length > this.maxLineLength) this.tooLong();
    this.lineNo++;
    this.sink.line(text, this.lineNo, this.lineStart);
  }

  private tooLong(): never {
    throw new ProfkitError(ErrorCodes.LIMIT, `line ${this.lineNo + 1} is longer than ${this.maxLineLength} characters`, {
      file: this.options.file,
      line: this.lineNo + 1,
      offset: this.lineStart,
      option: 'maxLineLength',
      rule: 'line length limit',
    });
  }
}
