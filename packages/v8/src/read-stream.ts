/**
 * `.cpuprofile` read from a stream of chunks, in memory of the order of the profile rather than
 * of its text: `samples` and `timeDeltas` (nearly all of a large profile) go straight from the
 * tokenizer into `Int32Array`/`Float64Array`s; of the `nodes`, only the fields the reader uses are
 * built (`id`, `parent`, `children`, `hitCount`, `positionTicks` and the `callFrame`'s five fields;
 * one `callFrame` object and one string per distinct value, shared by the nodes), other keys are
 * skipped unbuilt. The result is then checked and converted by the same code as the whole-input
 * reader's (`cpuProfileToProfile`), so both readers give the same profile and errors.
 */

import { JsonTokenizer, StringKeyedMap, checkLimit, limitValue, tokenizeChunks, type JsonScalar, type JsonSink, type ReadLimits } from '@profkit/core';
import { NumberColumn } from './columns.js';
import { PrunedValueBuilder, SCALAR, arrayShape, objectShape, type JsonShape } from './json-pruned.js';
import { describe, schemaError, type JsonSource } from './json.js';
import { cpuProfileToProfile, type CpuProfileReadOptions, type CpuProfileReadResult } from './read.js';

/** The top-level arrays read as numbers only. */
const NUMBER_COLUMNS = new Set(['samples', 'timeDeltas']);
/** The fields of a call frame `readCallFrame` reads. */
export const CALL_FRAME_SHAPE = objectShape({ functionName: SCALAR, scriptId: SCALAR, url: SCALAR, lineNumber: SCALAR, columnNumber: SCALAR }, true);

/** The fields of a node `cpuProfileToProfile` reads (`deoptReason` and any other key are skipped). */
const NODE_SHAPE = objectShape({
  id: SCALAR,
  callFrame: CALL_FRAME_SHAPE,
  children: arrayShape(SCALAR),
  parent: SCALAR,
  hitCount: SCALAR,
  positionTicks: arrayShape(objectShape({ line: SCALAR, ticks: SCALAR })),
});

/** The other top-level fields `cpuProfileToProfile` reads, with what is kept of them; any other field is skipped, not built. */
const KEPT_FIELDS = new Map<string, JsonShape>([
  ['nodes', arrayShape(NODE_SHAPE)],
  ['startTime', SCALAR],
  ['endTime', SCALAR],
]);

/** Keeps the top-level object of a `.cpuprofile`, its number columns as typed arrays. */
class CpuProfileSink implements JsonSink {
  readonly top: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  /** 0 before the top-level object, 1 inside it, 2 after it. */
  private level = 0;
  private currentKey = '';
  private builder: PrunedValueBuilder | undefined;
  private column: NumberColumn | undefined;
  /** Containers open in a skipped field's value (0 when not skipping). */
  private skipDepth = 0;
  private nodeCount = 0;

  private readonly maxSamples: number;
  private readonly maxNodes: number;

  constructor(
    private readonly src: JsonSource,
    private readonly limits: ReadLimits | undefined,
  ) {
    this.maxSamples = limitValue(limits, 'maxSamples');
    this.maxNodes = limitValue(limits, 'maxTableEntries');
  }

  startObject(): void {
    if (this.skipping(1)) return;
    if (this.builder) this.countNode().startObject();
    else if (this.column) this.notANumber('an object');
    else if (this.level === 0) this.level = 1;
    else this.startValue().startObject();
    this.finishValue();
  }
  endObject(): void {
    if (this.skipping(-1)) return;
    if (this.builder) this.builder.endObject();
    else this.level = 2;
    this.finishValue();
  }
  startArray(): void {
    if (this.skipping(1)) return;
    if (this.builder) this.countNode().startArray();
    else if (this.column) this.notANumber('an array');
    else if (this.level === 0) this.notAnObject('an array');
    else if (NUMBER_COLUMNS.has(this.currentKey)) this.column = new NumberColumn();
    else this.startValue().startArray();
    this.finishValue();
  }
  endArray(): void {
    if (this.skipping(-1)) return;
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
    if (this.skipping(0)) return;
    if (this.builder) this.countNode().value(v);
    else if (this.column) {
      if (typeof v !== 'number') this.notANumber(describe(v));
      this.column.push(v);
      // The limit is checked as the column grows, before its memory is spent (timeDeltas has one per sample).
      if (this.column.length > this.maxSamples) {
        checkLimit(this.limits, 'maxSamples', this.column.length, this.currentKey, { file: this.src.file, path: this.currentKey });
      }
    } else if (this.level === 0) this.notAnObject(describe(v));
    else this.startValue().value(v);
    this.finishValue();
  }

  /** One copy of each string and call frame of the nodes (a profile's nodes repeat few functions). */
  // Keyed through StringKeyedMap: names and URLs can be longer than V8 hashes (see core's string-keys.ts).
  private readonly strings = new StringKeyedMap<string>();
  private readonly callFrames = new StringKeyedMap<Record<string, unknown>>();

  private startValue(): PrunedValueBuilder {
    // `samples` or `timeDeltas` that is not an array is kept as a scalar (a container as a stand-in) for the converter's error.
    this.builder = new PrunedValueBuilder(KEPT_FIELDS.get(this.currentKey) ?? SCALAR, this.strings, this.callFrames);
    this.nodeCount = 0;
    return this.builder;
  }

  /**
   * True while inside a top-level field the reader does not use (its value is never built, however
   * large); `change` is +1 for a container opening, -1 for one closing, 0 for a scalar.
   */
  private skipping(change: number): boolean {
    if (this.skipDepth > 0) {
      this.skipDepth += change;
      return true;
    }
    if (this.level !== 1 || this.builder || this.column || change < 0) return false;
    if (KEPT_FIELDS.has(this.currentKey) || NUMBER_COLUMNS.has(this.currentKey)) return false;
    this.skipDepth = change;
    return true;
  }

  /** The builder, after counting an element of `nodes` against `maxTableEntries` as the array grows. */
  private countNode(): PrunedValueBuilder {
    const builder = this.builder!;
    if (this.currentKey === 'nodes' && builder.depth === 1 && ++this.nodeCount > this.maxNodes) {
      checkLimit(this.limits, 'maxTableEntries', this.nodeCount, 'nodes', { file: this.src.file, path: 'nodes' });
    }
    return builder;
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
  await tokenizeChunks(new JsonTokenizer(sink, src), chunks, src, options);
  return cpuProfileToProfile(sink.top, options);
}
