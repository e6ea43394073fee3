/**
 * An incremental JSON tokenizer: bytes go in chunk by chunk (`write`, then `end`), events come out
 * to a `JsonSink` (objects, arrays, keys, scalar values). No part of the input is kept beyond the
 * token being read, so a reader can keep only what it needs (the V8 `.cpuprofile` stream reader keeps
 * `samples` and `timeDeltas` as typed arrays and builds only the small values as objects). It lives
 * in core so that every JSON adapter (V8, speedscope) can stream without importing another's internals.
 *
 * It accepts exactly what `JSON.parse` accepts (RFC 8259), and gives the same values:
 * - strings are decoded as the whole-input reader decodes them (invalid UTF-8 becomes U+FFFD, a
 *   leading U+FEFF inside a string is kept), escapes through `JSON.parse` of the one string;
 * - numbers through `Number()` after checking JSON's number grammar (an integer of at most 15
 *   digits is summed from its digits, the common case, and exact);
 * - a token may be split anywhere between chunks, including inside a UTF-8 sequence or an escape.
 *
 * Errors are `ProfkitError`s naming the byte offset: `PROFKIT_E_PARSE` for bad syntax,
 * `PROFKIT_E_TRUNCATED` when the input ends inside the value, `PROFKIT_E_EMPTY_INPUT` for none.
 * Nesting deeper than `maxDepth` is refused (the containers are kept on an explicit stack, not the
 * call stack, so the limit bounds memory, not recursion).
 */

import { latin1String } from '#native';
import { ErrorCodes, ProfkitError } from './errors.js';
import { MAX_JSON_BYTES, type JsonSource } from './json-fields.js';
import { checkLimit, limitValue, type ReadLimits } from './limits.js';

export type JsonScalar = string | number | boolean | null;

/** Receives the tokens in document order. */
export interface JsonSink {
  startObject(): void;
  endObject(): void;
  startArray(): void;
  endArray(): void;
  /** A key of the object being read; its value's events follow. */
  key(name: string): void;
  value(v: JsonScalar): void;
}

/** Deeper than any profile format nests; a guard against `[[[[…` holding a stack entry per byte. */
export const DEFAULT_MAX_JSON_DEPTH = 1000;

// What the next non-whitespace byte may be.
const enum Expect {
  Value, // a value (the top level, after ':' or after ',' in an array)
  ValueOrEnd, // right after '['
  KeyOrEnd, // right after '{'
  Key, // after ',' in an object
  Colon,
  CommaOrEnd,
  Done, // after the top-level value: only whitespace
}

// The token being read when a chunk ended inside it.
const enum Pending {
  None,
  String,
  Number,
  Literal,
}

const OBJECT = 1;
const ARRAY = 2;

// Marked pure so that a bundle not using the tokenizer drops it (e.g. core + pprof in the browser).
const utf8 = /* @__PURE__ */ new TextDecoder('utf-8', { ignoreBOM: true });
/** Strings up to this many bytes, all ASCII, are made from their bytes without the decoder. */
const SHORT_STRING = 32;
/** RFC 8259's number grammar (`Number()` alone would accept `0x1`, `.5`, `Infinity`, …). */
const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isNumberByte(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

export class JsonTokenizer {
  private expect = Expect.Value;
  /** OBJECT or ARRAY per open container. */
  private readonly containers: Uint8Array;
  private depth = 0;
  /** Bytes before the current chunk: offsets in errors are of the whole input. */
  private base = 0;
  private seenAnything = false;

  private pending = Pending.None;
  private pendingStart = 0;
  /**
   * Raw bytes of a string (between the quotes, escapes undecoded) or number split across chunks,
   * in one buffer grown by doubling: an array of the pieces cost ~250 bytes per 1-byte chunk.
   */
  private partial = new Uint8Array(0);
  private partialLength = 0;
  private stringEscaped = false;
  private stringHasEscape = false;
  private stringIsKey = false;
  /** The text so far of a literal split across chunks (at most 5 letters). */
  private tokenText = '';

  constructor(
    private readonly sink: JsonSink,
    private readonly src: JsonSource,
    maxDepth = DEFAULT_MAX_JSON_DEPTH,
  ) {
    this.containers = new Uint8Array(maxDepth);
  }

  /** Bytes consumed so far. */
  get offset(): number {
    return this.base;
  }

  write(chunk: Uint8Array): void {
    const n = chunk.length;
    let i = 0;
    if (this.pending !== Pending.None) i = this.resume(chunk, 0);
    while (i < n) {
      const c = chunk[i]!;
      if (isWhitespace(c)) {
        i++;
        continue;
      }
      this.seenAnything = true;
      i = this.token(chunk, i, c);
    }
    this.base += n;
  }

  /** The input ended: finishes a number or literal at the very end, and checks the value is complete. */
  end(): void {
    if (this.pending === Pending.Number) this.finishWord(this.takePartialText(), this.pendingStart);
    if (this.pending === Pending.Literal) this.finishWord(this.tokenText, this.pendingStart);
    if (this.pending === Pending.String) this.truncated('the end of the string');
    if (!this.seenAnything) throw new ProfkitError(ErrorCodes.EMPTY_INPUT, 'the input is empty', { file: this.src.file, rule: this.rule() });
    if (this.expect !== Expect.Done) this.truncated(this.expected());
  }

  /** Reads the token starting with byte `c` at `i`; returns where the next one may start. */
  private token(chunk: Uint8Array, i: number, c: number): number {
    switch (this.expect) {
      case Expect.Value:
      case Expect.ValueOrEnd:
        if (c === 0x5d /* ] */ && this.expect === Expect.ValueOrEnd) return this.close(ARRAY, i);
        return this.valueStart(chunk, i, c);
      case Expect.KeyOrEnd:
      case Expect.Key:
        if (c === 0x7d /* } */ && this.expect === Expect.KeyOrEnd) return this.close(OBJECT, i);
        if (c !== 0x22) this.syntax(i, this.expected());
        this.stringIsKey = true;
        return this.string(chunk, i + 1, this.base + i);
      case Expect.Colon:
        if (c !== 0x3a) this.syntax(i, "':'");
        this.expect = Expect.Value;
        return i + 1;
      case Expect.CommaOrEnd: {
        const inside = this.containers[this.depth - 1]!;
        if (c === 0x2c /* , */) {
          this.expect = inside === OBJECT ? Expect.Key : Expect.Value;
          return i + 1;
        }
        if ((c === 0x7d && inside === OBJECT) || (c === 0x5d && inside === ARRAY)) return this.close(inside, i);
        return this.syntax(i, this.expected());
      }
      case Expect.Done:
        return this.syntax(i, 'the end of the input after the JSON value');
    }
  }

  private valueStart(chunk: Uint8Array, i: number, c: number): number {
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (this.depth === this.containers.length) {
        throw new ProfkitError(ErrorCodes.PARSE, `JSON nested deeper than ${this.containers.length} levels at byte ${this.base + i}`, {
          file: this.src.file,
          offset: this.base + i,
          rule: `${this.rule()}: nesting depth at most ${this.containers.length}`,
        });
      }
      const kind = c === 0x7b ? OBJECT : ARRAY;
      this.containers[this.depth++] = kind;
      this.expect = kind === OBJECT ? Expect.KeyOrEnd : Expect.ValueOrEnd;
      if (kind === OBJECT) this.sink.startObject();
      else this.sink.startArray();
      return i + 1;
    }
    if (c === 0x22) {
      this.stringIsKey = false;
      return this.string(chunk, i + 1, this.base + i);
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number(chunk, i);
    if (c === 0x74 || c === 0x66 || c === 0x6e) return this.literal(chunk, i, i);
    return this.syntax(i, 'a value');
  }

  private close(kind: number, i: number): number {
    this.depth--;
    if (kind === OBJECT) this.sink.endObject();
    else this.sink.endArray();
    this.afterValue();
    return i + 1;
  }

  private afterValue(): void {
    this.expect = this.depth === 0 ? Expect.Done : Expect.CommaOrEnd;
  }

  /** Continues the token a previous chunk ended in. */
  private resume(chunk: Uint8Array, i: number): number {
    if (this.pending === Pending.String) return this.string(chunk, i, this.pendingStart);
    if (this.pending === Pending.Number) return this.number(chunk, i);
    return this.literal(chunk, i, this.pendingStart - this.base);
  }

  /** A string's bytes from `from` (after the opening quote, or where the last chunk ended). */
  private string(chunk: Uint8Array, from: number, start: number): number {
    const n = chunk.length;
    let escaped = this.stringEscaped;
    let ascii = true;
    let j = from;
    for (; j < n; j++) {
      const c = chunk[j]!;
      if (escaped) escaped = false;
      else if (c === 0x22) break;
      else if (c === 0x5c) {
        escaped = true;
        this.stringHasEscape = true;
      } else if (c < 0x20) this.syntax(j, 'no control character in a string (they are written escaped)');
      else if (c >= 0x80) ascii = false;
    }
    if (j === n) {
      // The chunk ends inside the string: its bytes are copied, the chunk may be reused.
      if (this.partialLength + n - from > MAX_JSON_BYTES) this.tooLong(start, 'string');
      this.appendPartial(chunk.subarray(from, n));
      this.stringEscaped = escaped;
      this.pending = Pending.String;
      this.pendingStart = start;
      return n;
    }
    let text: string;
    if (ascii && this.partialLength === 0 && j - from <= SHORT_STRING) {
      // A short ASCII string within the chunk (keys, speedscope's "O"/"C", most names): its bytes
      // are its characters, and a decoder call would cost more than the string (it was half the
      // time of reading a speedscope file of events).
      text = '';
      for (let k = from; k < j; k++) text += String.fromCharCode(chunk[k]!);
    } else {
      let bytes = chunk.subarray(from, j);
      if (this.partialLength > 0) {
        this.appendPartial(bytes);
        bytes = this.partial.subarray(0, this.partialLength);
      }
      text = utf8.decode(bytes);
      this.releasePartial();
    }
    if (this.stringHasEscape) {
      try {
        text = JSON.parse(`"${text}"`) as string;
      } catch {
        this.syntax(start - this.base, 'valid escapes in the string (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)');
      }
    }
    this.stringEscaped = false;
    this.stringHasEscape = false;
    this.pending = Pending.None;
    if (this.stringIsKey) {
      this.sink.key(text);
      this.expect = Expect.Colon;
    } else {
      this.sink.value(text);
      this.afterValue();
    }
    return j + 1;
  }

  private number(chunk: Uint8Array, from: number): number {
    const n = chunk.length;
    let j = from;
    while (j < n && isNumberByte(chunk[j]!)) j++;
    if (j === n) {
      // Perhaps more digits in the next chunk (or the input ends here: `end` finishes it).
      if (this.pending !== Pending.Number) this.pendingStart = this.base + from;
      if (this.partialLength + n - from > MAX_JSON_BYTES) this.tooLong(this.pendingStart, 'number');
      this.appendPartial(chunk.subarray(from, n));
      this.pending = Pending.Number;
      return n;
    }
    if (this.pending === Pending.Number) {
      this.appendPartial(chunk.subarray(from, j));
      this.finishWord(this.takePartialText(), this.pendingStart);
    }
    else this.sink.value(this.wholeNumber(chunk, from, j));
    this.afterValue();
    return j;
  }

  private appendPartial(bytes: Uint8Array): void {
    const needed = this.partialLength + bytes.length;
    if (needed > this.partial.length) {
      const grown = new Uint8Array(Math.max(needed, this.partial.length * 2, 256));
      grown.set(this.partial.subarray(0, this.partialLength));
      this.partial = grown;
    }
    this.partial.set(bytes, this.partialLength);
    this.partialLength = needed;
  }

  /** Empties the buffer of a split token (freeing it when large: one long string should not be held to the end). */
  private releasePartial(): void {
    this.partialLength = 0;
    if (this.partial.length > 65536) this.partial = new Uint8Array(0);
  }

  /** The split number's text, the buffer emptied. */
  private takePartialText(): string {
    const text = latin1String(this.partial.subarray(0, this.partialLength));
    this.releasePartial();
    return text;
  }

  /** A number lying within one chunk: digits summed when that is exact, else as any number. */
  private wholeNumber(chunk: Uint8Array, from: number, end: number): number {
    const negative = chunk[from] === 0x2d;
    const digits = negative ? from + 1 : from;
    const length = end - digits;
    if (length > 0 && length <= 15 && (chunk[digits] !== 0x30 || length === 1)) {
      let v = 0;
      let k = digits;
      for (; k < end; k++) {
        const c = chunk[k]!;
        if (c < 0x30 || c > 0x39) break;
        v = v * 10 + (c - 0x30);
      }
      if (k === end) return negative ? -v : v;
    }
    return this.numberFromText(latin1String(chunk.subarray(from, end)), this.base + from);
  }

  private numberFromText(text: string, offset: number): number {
    if (!JSON_NUMBER.test(text)) this.syntax(offset - this.base, `a JSON number, not ${JSON.stringify(text)}`);
    return Number(text);
  }

  private literal(chunk: Uint8Array, from: number, start: number): number {
    const n = chunk.length;
    let j = from;
    while (j < n && chunk[j]! >= 0x61 && chunk[j]! <= 0x7a) j++;
    if (this.pending !== Pending.Literal) this.pendingStart = this.base + start;
    // `false` is the longest literal: a longer run of letters is an error however it goes on.
    if (this.tokenText.length + j - from > 5) this.syntax(this.pendingStart - this.base, "a value (true, false or null)");
    this.tokenText += latin1String(chunk.subarray(from, j));
    if (j === n) {
      this.pending = Pending.Literal;
      return n;
    }
    this.finishWord(this.tokenText, this.pendingStart);
    this.afterValue();
    return j;
  }

  /** Ends a number or literal that was split across chunks (or ran to the end of the input). */
  private finishWord(text: string, offset: number): void {
    const wasNumber = this.pending === Pending.Number;
    this.pending = Pending.None;
    this.tokenText = '';
    if (wasNumber) this.sink.value(this.numberFromText(text, offset));
    else if (text === 'true') this.sink.value(true);
    else if (text === 'false') this.sink.value(false);
    else if (text === 'null') this.sink.value(null);
    else this.syntax(offset - this.base, `a value, not ${JSON.stringify(text)}`);
    this.afterValue();
  }

  private expected(): string {
    switch (this.expect) {
      case Expect.KeyOrEnd:
        return "a key or '}'";
      case Expect.Key:
        return 'a key (a string)';
      case Expect.Colon:
        return "':'";
      case Expect.CommaOrEnd:
        return this.containers[this.depth - 1] === OBJECT ? "',' or '}'" : "',' or ']'";
      case Expect.ValueOrEnd:
        return "a value or ']'";
      default:
        return 'a value';
    }
  }

  private rule(): string {
    return `${this.src.format} files are JSON`;
  }

  /** `i` is an index in the current chunk. */
  private syntax(i: number, expected: string): never {
    const offset = this.base + i;
    throw new ProfkitError(ErrorCodes.PARSE, `not valid JSON: expected ${expected} at byte ${offset}`, { file: this.src.file, offset, rule: this.rule() });
  }

  /** A token no JavaScript string can hold (the whole-input reader could not read the file at all). */
  private tooLong(offset: number, what: string): never {
    throw new ProfkitError(ErrorCodes.PARSE, `a ${what} at byte ${offset} longer than ${MAX_JSON_BYTES} bytes`, {
      file: this.src.file,
      offset,
      rule: `${this.rule()}: a ${what} fits a JavaScript string`,
    });
  }

  private truncated(expected: string): never {
    throw new ProfkitError(ErrorCodes.TRUNCATED, `the JSON ends early (expected ${expected})`, { file: this.src.file, offset: this.base, rule: this.rule() });
  }
}

/** A sink that builds the value as `JSON.parse` would (for the parts of a document a reader keeps whole). */
export class JsonValueBuilder implements JsonSink {
  private readonly stack: (Record<string, unknown> | unknown[])[] = [];
  private readonly keys: string[] = [];
  private pendingKey = '';
  result: unknown = undefined;
  /** True once the value (scalar or container) is complete. */
  done = false;

  /** Containers open (0 before the value and once it is complete). */
  get depth(): number {
    return this.stack.length;
  }

  startObject(): void {
    this.open({});
  }
  startArray(): void {
    this.open([]);
  }
  endObject(): void {
    this.closeContainer();
  }
  endArray(): void {
    this.closeContainer();
  }
  key(name: string): void {
    this.pendingKey = name;
  }
  value(v: JsonScalar): void {
    this.add(v);
  }

  private open(container: Record<string, unknown> | unknown[]): void {
    this.keys.push(this.pendingKey);
    this.stack.push(container);
  }

  private closeContainer(): void {
    const container = this.stack.pop()!;
    this.pendingKey = this.keys.pop()!;
    this.add(container);
  }

  private add(v: unknown): void {
    const parent = this.stack[this.stack.length - 1];
    if (parent === undefined) {
      this.result = v;
      this.done = true;
    } else if (Array.isArray(parent)) parent.push(v);
    // An own property even for `__proto__`, as JSON.parse makes it (an assignment would set the prototype).
    else Object.defineProperty(parent, this.pendingKey, { value: v, writable: true, enumerable: true, configurable: true });
  }
}

/**
 * Feeds a stream of chunks (e.g. `ReadInput.chunks()`) to a tokenizer and ends it, checking
 * `maxInputBytes` before each chunk is taken (so a stream's limit fires while it is read) and the
 * signal between chunks: the loop every streaming JSON reader runs.
 */
export async function tokenizeChunks(
  tokenizer: JsonTokenizer,
  chunks: AsyncIterable<Uint8Array>,
  src: JsonSource,
  options: { limits?: ReadLimits; signal?: { throwIfAborted(): void } },
): Promise<void> {
  const maxInputBytes = limitValue(options.limits, 'maxInputBytes');
  for await (const chunk of chunks) {
    options.signal?.throwIfAborted();
    if (tokenizer.offset + chunk.length > maxInputBytes) {
      checkLimit(options.limits, 'maxInputBytes', tokenizer.offset + chunk.length, 'input bytes', { file: src.file });
    }
    tokenizer.write(chunk);
  }
  tokenizer.end();
}
