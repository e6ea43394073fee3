/**
 * `.cpuprofile` read from a stream of chunks, in memory of the order of the profile rather than
 * of its text: `samples` and `timeDeltas` (nearly all of a large profile) go straight from the
 * tokenizer into `Float64Array`s, the other top-level fields (the `nodes`, the times) are built as
 * `JSON.parse` builds them. The result is then checked and converted by the same code as the
 * whole-input reader's (`cpuProfileToProfile`), so both readers give the same profile and errors.
 */

import { checkLimit, limitValue, type ReadLimits } from '@profkit/core';
import { JsonTokenizer, JsonValueBuilder, type JsonScalar, type JsonSink } from './json-stream.js';
import { describe, schemaError, type JsonSource } from './json.js';
import { cpuProfileToProfile, type CpuProfileReadOptions, type CpuProfileReadResult } from './read.js';

/** The top-level arrays read as numbers only. */
const NUMBER_COLUMNS = new Set(['samples', 'timeDeltas']);

/** A growing array of numbers (doubling, so each number is copied at most once on average). */
class NumberColumn {
  private data = new Float64Array(1024);
  length = 0;

  push(v: number): void {
    if (this.length === this.data.length) {
      const grown = new Float64Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = v;
  }

  /** The numbers, trimmed to their count (a copy: the doubling slack is freed). */
  values(): Float64Array {
    return this.data.slice(0, this.length);
  }
}

/** Keeps the top-level object of a `.cpuprofile`, its number columns as typed arrays. */
class CpuProfileSink implements JsonSink {
  readonly top: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  /** 0 before the top-level object, 1 inside it, 2 after it. */
  private level = 0;
  private currentKey = '';
  private builder: JsonValueBuilder | undefined;
  private column: NumberColumn | undefined;

  private readonly maxSamples: number;

  constructor(
    private readonly src: JsonSource,
    private readonly limits: ReadLimits | undefined,
  ) {
    this.maxSamples = limitValue(limits, 'maxSamples');
  }

  startObject(): void {
    if (this.builder) this.builder.startObject();
    else if (this.column) this.notANumber('an object');
    else if (this.level === 0) this.level = 1;
    else this.startValue().startObject();
    this.finishValue();
  }
  endObject(): void {
    if (this.builder) this.builder.endObject();
    else this.level = 2;
    this.finishValue();
  }
  startArray(): void {
    if (this.builder) this.builder.startArray();
    else if (this.column) this.notANumber('an array');
    else if (this.level === 0) this.notAnObject('an array');
    else if (NUMBER_COLUMNS.has(this.currentKey)) this.column = new NumberColumn();
    else this.startValue().startArray();
    this.finishValue();
  }
  endArray(): void {
    if (this.builder) this.builder.endArray();
    else if (this.column) {
      this.top[this.currentKey] = this.column.values();
      this.column = undefined;
    }
    this.finishValue();
  }
  key(name: string): void {
    if (this.builder) this.builder.key(name);
    else this.currentKey = name;
  }
  value(v: JsonScalar): void {
    if (this.builder) this.builder.value(v);
    else if (this.column) {
      if (typeof v !== 'number') this.notANumber(describe(v));
      this.column.push(v);
      // The limit is checked as the column grows, before its memory is spent.
      if (this.currentKey === 'samples' && this.column.length > this.maxSamples) {
        checkLimit(this.limits, 'maxSamples', this.column.length, 'samples', { file: this.src.file, path: 'samples' });
      }
    } else if (this.level === 0) this.notAnObject(describe(v));
    else this.startValue().value(v);
    this.finishValue();
  }

  private startValue(): JsonValueBuilder {
    this.builder = new JsonValueBuilder();
    return this.builder;
  }

  private finishValue(): void {
    if (this.builder?.done) {
      this.top[this.currentKey] = this.builder.result;
      this.builder = undefined;
    }
  }

  private notAnObject(got: string): never {
    throw schemaError(this.src, '$', `expected an object, got ${got}`, 'structure');
  }

  private notANumber(got: string): never {
    const path = `${this.currentKey}[${this.column!.length}]`;
    throw schemaError(this.src, path, `expected a finite number, got ${got}`, 'numbers are finite');
  }
}

/** Reads a `.cpuprofile` from chunks (e.g. `ReadInput.chunks()`), checking `maxInputBytes` as they come. */
export async function readCpuProfileChunks(chunks: AsyncIterable<Uint8Array>, options: CpuProfileReadOptions = {}): Promise<CpuProfileReadResult> {
  const src: JsonSource = { file: options.fileName ?? '<input>', format: '.cpuprofile' };
  const sink = new CpuProfileSink(src, options.limits);
  const tokenizer = new JsonTokenizer(sink, src);
  const maxInputBytes = limitValue(options.limits, 'maxInputBytes');
  for await (const chunk of chunks) {
    options.signal?.throwIfAborted();
    if (tokenizer.offset + chunk.length > maxInputBytes) {
      checkLimit(options.limits, 'maxInputBytes', tokenizer.offset + chunk.length, 'input bytes', { file: src.file });
    }
    tokenizer.write(chunk);
  }
  tokenizer.end();
  return cpuProfileToProfile(sink.top, options);
}
