/**
 * `.heapprofile` read from a stream of chunks. The nested tree (`head`: `{callFrame, selfSize, id,
 * children: […]}`, recursively) becomes rows as its nodes start, the `samples` (`{size, nodeId,
 * ordinal}` each) become columns as they come: only these fields are kept (the call frames as
 * the `.cpuprofile` stream reader keeps them: one object per distinct frame), other keys are
 * skipped unbuilt, and the limits on the tree (`maxTableEntries`, `maxFramesPerStack`) and on the
 * samples (`maxSamples`) are checked as they grow. The rows are then checked and converted by
 * the whole-input reader's code (`heapRowsToProfile`), so both give the same profile and errors.
 */

import { JsonTokenizer, StringKeyedMap, checkLimit, limitValue, tokenizeChunks, type JsonScalar, type JsonSink, type Profile, type Warning } from '@profkit/core';
import {
  addHeapRow,
  addHeapSample,
  emptyHeapRows,
  emptyHeapSamples,
  heapRowsToProfile,
  truncateHeapRows,
  type HeapProfileReadOptions,
  type HeapRows,
  type HeapSampleColumns,
} from './heap.js';
import { PrunedValueBuilder, SCALAR, type JsonShape } from './json-pruned.js';
import { describe, schemaError, type JsonSource } from './json.js';
import { CALL_FRAME_SHAPE } from './read-stream.js';

/** Where the tokenizer is: one entry per open container the sink reads (skipped and built values aside). */
type Frame =
  | { kind: 'top' }
  | { kind: 'node'; row: number; depth: number }
  | { kind: 'children'; row: number; depth: number; count: number }
  | { kind: 'samples'; columns: HeapSampleColumns | undefined }
  | { kind: 'sample'; size: unknown; nodeId: unknown; ordinal: unknown };

/** A value being built whole (a call frame, or a stand-in for a value of the wrong kind), and where it goes when complete. */
interface Building {
  builder: PrunedValueBuilder;
  store: (v: unknown) => void;
}

class HeapProfileSink implements JsonSink {
  readonly rows: HeapRows = emptyHeapRows();
  private readonly frames: Frame[] = [];
  private currentKey = '';
  private building: Building | undefined;
  /** Containers open in a skipped value (0 when not skipping). */
  private skipDepth = 0;
  private started = false;
  // Keyed through StringKeyedMap: names and URLs can be longer than V8 hashes (see core's string-keys.ts).
  private readonly strings = new StringKeyedMap<string>();
  private readonly callFrames = new StringKeyedMap<Record<string, unknown>>();
  private readonly maxSamples: number;

  constructor(
    private readonly src: JsonSource,
    private readonly options: HeapProfileReadOptions,
  ) {
    this.maxSamples = limitValue(options.limits, 'maxSamples');
  }

  startObject(): void {
    this.start(true);
  }
  startArray(): void {
    this.start(false);
  }
  endObject(): void {
    this.end();
  }
  endArray(): void {
    this.end();
  }
  key(name: string): void {
    if (this.building) this.building.builder.key(name);
    else if (this.skipDepth === 0) this.currentKey = name;
  }

  value(v: JsonScalar): void {
    if (this.skipDepth > 0) return;
    if (this.building) return this.forward((b) => b.value(v));
    const frame = this.frames[this.frames.length - 1];
    if (frame === undefined) this.notAnObject(describe(v));
    const place = this.placeOf(frame);
    if (place === undefined) return;
    if (place === 'node') this.nonObjectNode(frame).value(v);
    else if (place === 'children' || place === 'samples' || place === 'sample') this.standIn(place, frame).value(v);
    else this.setField(frame, place, v);
    this.settle();
  }

  private start(isObject: boolean): void {
    if (this.skipDepth > 0) {
      this.skipDepth++;
      return;
    }
    if (this.building) return this.forward((b) => (isObject ? b.startObject() : b.startArray()));
    const frame = this.frames[this.frames.length - 1];
    if (frame === undefined) {
      if (!isObject) this.notAnObject('an array');
      this.frames.push({ kind: 'top' });
      this.started = true;
      return;
    }
    const place = this.placeOf(frame);
    if (place === undefined) {
      this.skipDepth = 1;
      return;
    }
    const builderShape = place === 'callFrame' ? CALL_FRAME_SHAPE : SCALAR;
    if (place === 'node' && isObject) this.frames.push({ kind: 'node', ...this.newNode(frame) });
    else if (place === 'node') this.nonObjectNode(frame).startArray();
    else if (place === 'children' && !isObject) {
      const node = frame as { row: number; depth: number };
      this.frames.push({ kind: 'children', row: node.row, depth: node.depth + 1, count: 0 });
    } else if (place === 'samples' && !isObject) {
      // With the read option selfSize the samples are not read: their elements are skipped.
      const columns = this.options.selfSize ? undefined : emptyHeapSamples();
      this.rows.samples = columns;
      this.frames.push({ kind: 'samples', columns });
    } else if (place === 'sample' && isObject) this.frames.push({ kind: 'sample', size: undefined, nodeId: undefined, ordinal: undefined });
    else if (place === 'children' || place === 'samples' || place === 'sample') {
      const b = this.standIn(place, frame);
      if (isObject) b.startObject();
      else b.startArray();
    } else {
      const b = this.build(builderShape, (v) => this.setField(frame, place, v));
      if (isObject) b.startObject();
      else b.startArray();
    }
  }

  private end(): void {
    if (this.skipDepth > 0) {
      this.skipDepth--;
      return;
    }
    if (this.building) return this.forward((b) => b.endObject());
    const frame = this.frames.pop()!;
    if (frame.kind === 'sample') {
      const columns = (this.frames[this.frames.length - 1] as { columns: HeapSampleColumns | undefined }).columns;
      if (columns) addHeapSample(columns, frame.size, frame.nodeId, frame.ordinal);
    }
  }

  /**
   * What the value starting in `frame` is: a node, a node field, a sample, … or undefined when the
   * reader does not use it (skipped). Counts the elements of arrays as they start.
   */
  private placeOf(frame: Frame): string | undefined {
    switch (frame.kind) {
      case 'top':
        if (this.currentKey === 'head') {
          // A repeated `head`: the last counts, as with JSON.parse.
          truncateHeapRows(this.rows, 0);
          return 'node';
        }
        return this.currentKey === 'samples' ? 'samples' : undefined;
      case 'node':
        if (this.currentKey === 'children') {
          // A repeated `children`: only the last one's nodes stay (the rows after this node's are its descendants).
          truncateHeapRows(this.rows, frame.row + 1);
          this.rows.childrenNotArray.delete(frame.row);
          return 'children';
        }
        return this.currentKey === 'id' || this.currentKey === 'selfSize' || this.currentKey === 'callFrame' ? this.currentKey : undefined;
      case 'children':
        return 'node';
      case 'samples':
        if (frame.columns === undefined) return undefined;
        if (frame.columns.length + 1 > this.maxSamples) checkLimit(this.options.limits, 'maxSamples', frame.columns.length + 1, 'samples', { file: this.src.file, path: 'samples' });
        return 'sample';
      case 'sample':
        return this.currentKey === 'size' || this.currentKey === 'nodeId' || this.currentKey === 'ordinal' ? this.currentKey : undefined;
    }
  }

  /** The row of a node starting in `frame` (the top's `head`, or an element of `children`). */
  private newNode(frame: Frame): { row: number; depth: number } {
    if (frame.kind === 'children') {
      const row = addHeapRow(this.rows, frame.row, frame.count++, frame.depth, this.src, this.options.limits);
      return { row, depth: frame.depth };
    }
    return { row: addHeapRow(this.rows, -1, 0, 0, this.src, this.options.limits), depth: 0 };
  }

  /** A node that is not an object: a row holding the value (a stand-in when it is an array). */
  private nonObjectNode(frame: Frame): PrunedValueBuilder {
    const { row } = this.newNode(frame);
    return this.build(SCALAR, (v) => this.rows.notObject.set(row, v));
  }

  /** `children`, `samples` or an element of `samples` of the wrong kind: kept as a stand-in for the message. */
  private standIn(place: string, frame: Frame): PrunedValueBuilder {
    if (place === 'children') {
      const { row } = frame as { row: number };
      return this.build(SCALAR, (v) => {
        if (v !== null) this.rows.childrenNotArray.set(row, v); // null is no children (`?? []`)
      });
    }
    if (place === 'samples') return this.build(SCALAR, (v) => (this.rows.samples = { notArray: v }));
    const columns = (frame as { columns: HeapSampleColumns }).columns;
    return this.build(SCALAR, (v) => {
      columns.notObject.set(columns.length, v);
      addHeapSample(columns, undefined, undefined, undefined);
    });
  }

  /** A field of a node (`id`, `selfSize`, `callFrame`) or of a sample (`size`, `nodeId`, `ordinal`); a repeated key: the last counts. */
  private setField(frame: Frame, place: string, v: unknown): void {
    if (frame.kind === 'sample') frame[place as 'size' | 'nodeId' | 'ordinal'] = v;
    else {
      const row = (frame as { row: number }).row;
      if (place === 'id') this.rows.id[row] = v;
      else if (place === 'selfSize') this.rows.selfSize[row] = v;
      else this.rows.callFrame[row] = v;
    }
  }

  private build(shape: JsonShape, store: (v: unknown) => void): PrunedValueBuilder {
    const builder = new PrunedValueBuilder(shape, this.strings, this.callFrames);
    this.building = { builder, store };
    return builder;
  }

  /** Passes an event to the value being built, and stores the value once complete. */
  private forward(event: (b: PrunedValueBuilder) => void): void {
    event(this.building!.builder);
    this.settle();
  }

  private settle(): void {
    const building = this.building;
    if (building?.builder.done) {
      this.building = undefined;
      building.store(building.builder.result);
    }
  }

  /** The input ended: a profile without `head` has one row saying so (as the whole-input reader's walk has). */
  finish(): HeapRows {
    if (this.started && this.rows.parent.length === 0) this.missingHead();
    return this.rows;
  }

  private missingHead(): void {
    addHeapRow(this.rows, -1, 0, 0, this.src, this.options.limits);
    this.rows.notObject.set(0, undefined);
  }

  private notAnObject(got: string): never {
    throw schemaError(this.src, '$', `expected an object, got ${got}`, 'structure');
  }
}

/** Reads a `.heapprofile` from chunks (e.g. `ReadInput.chunks()`), checking `maxInputBytes` as they come. */
export async function readHeapProfileChunks(chunks: AsyncIterable<Uint8Array>, options: HeapProfileReadOptions = {}): Promise<{ profile: Profile; warnings: Warning[] }> {
  const src: JsonSource = { file: options.fileName ?? '<input>', format: '.heapprofile' };
  const sink = new HeapProfileSink(src, options);
  // Two JSON levels per level of the tree (a node, its children): deep enough for the deepest
  // tree maxFramesPerStack allows, so that limit is the one reported.
  const maxDepth = Math.min(2 * limitValue(options.limits, 'maxFramesPerStack') + 8, 1 << 26);
  await tokenizeChunks(new JsonTokenizer(sink, src, maxDepth), chunks, src, options);
  return heapRowsToProfile(sink.finish(), options);
}
