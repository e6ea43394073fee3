/**
 * `.heapprofile` (V8 sampling heap profile, `node --heap-prof`, DevTools "Allocation sampling")
 * read and write.
 *
 * - One profkit sample per V8 sample (a sampled allocation still alive when the profile was
 *   taken), with the sample types `objects`/`count` (1) and `space`/`bytes` (its `size`), the
 *   types pprof-nodejs uses for heap profiles. V8 does not scale samples up: the values are the
 *   sampled bytes, as DevTools shows them.
 * - Its stack is the walk from its node (`nodeId`) up to `(root)`; its `ordinal` (allocation
 *   order) is kept in the per-sample column `.extensions.v8.samples.ordinal`.
 * - A profile without `samples` (older producers) has only each node's `selfSize`: each node
 *   with bytes becomes one sample of 0 objects and `selfSize` bytes, with a warning; the read
 *   option `selfSize` does that for any profile (the numbers DevTools shows).
 * - Node.js's files have a few samples naming nodes missing from the tree, and nodes whose
 *   `selfSize` differs from their samples' sum (live objects counted at two moments): the
 *   former are dropped, both with a warning.
 */

import { ErrorCodes, ProfileBuilder, ProfkitError, READ_LIMITS, checkLimit, limitValue, type Profile, type ReadLimits, type Warning, type WriteResult } from '@profkit/core';
import { CallFrameTable, readCallFrame } from './frames.js';
import { ADAPTER_NAME, ROOT_NAME } from './format.js';
import { JsonChunks, callFrameJson } from './json-out.js';
import { arrayAt, integerAt, isObject, numberAt, objectAt, parseInputJson, schemaError, type JsonSource } from './json.js';
import { ROOT_CALL_FRAME, buildCallTree } from './stacks.js';
import { bytesTypeIndex, countTypeIndex } from './values.js';
import { ValueColumn } from './columns.js';

export interface HeapProfileReadOptions {
  fileName?: string;
  /**
   * Read each node's `selfSize` (the numbers DevTools shows) instead of the samples: one sample
   * of 0 objects and `selfSize` bytes per node. Default false: one sample per sampled allocation.
   */
  selfSize?: boolean;
  limits?: ReadLimits;
  signal?: AbortSignal;
}

export const HEAP_SAMPLE_TYPES = [
  { type: 'objects', unit: 'count' },
  { type: 'space', unit: 'bytes' },
];

export function readHeapProfileBytes(bytes: Uint8Array, options: HeapProfileReadOptions = {}): { profile: Profile; warnings: Warning[] } {
  const src: JsonSource = { file: options.fileName ?? '<input>', format: '.heapprofile' };
  return heapProfileToProfile(parseInputJson(bytes, src, options.limits), options);
}

/**
 * A `.heapprofile` as read, before its values are checked: the nested tree's nodes as rows in
 * preorder (the order a node starts in the text) and the samples as columns, each field as the
 * JSON had it. Made from parsed JSON (`heapRowsFromJson`) or from a stream of tokens
 * (`readHeapProfileChunks`); both then go through `heapRowsToProfile`, which checks and converts,
 * so the two readers give the same profile and errors. Of the text only the fields read are kept.
 */
export interface HeapRows {
  /** Row of each node's parent (-1 for `head`), and its index in the parent's `children`. */
  parent: number[];
  childPos: number[];
  id: unknown[];
  callFrame: unknown[];
  selfSize: unknown[];
  /** Rows whose JSON value is not an object: the value (or a stand-in of its kind). */
  notObject: Map<number, unknown>;
  /** Rows whose `children` is there but not an array: the value (or a stand-in of its kind). */
  childrenNotArray: Map<number, unknown>;
  /** Undefined when the profile has no `samples` (or they are not read: option `selfSize`); the value when it is not an array. */
  samples: HeapSampleColumns | undefined | { notArray: unknown };
}

/** The fields of each element of `samples` (`notObject`: the elements that are not objects). */
export interface HeapSampleColumns {
  length: number;
  size: ValueColumn;
  nodeId: ValueColumn;
  ordinal: ValueColumn;
  notObject: Map<number, unknown>;
}

export function emptyHeapRows(): HeapRows {
  return { parent: [], childPos: [], id: [], callFrame: [], selfSize: [], notObject: new Map(), childrenNotArray: new Map(), samples: undefined };
}

export function emptyHeapSamples(): HeapSampleColumns {
  return { length: 0, size: new ValueColumn(), nodeId: new ValueColumn(), ordinal: new ValueColumn(), notObject: new Map() };
}

/**
 * Adds a node row (a node starts) and checks the tree's limits as it grows: `maxTableEntries`
 * nodes, `maxFramesPerStack` deep. Returns the row.
 */
export function addHeapRow(rows: HeapRows, parent: number, childPos: number, depth: number, src: JsonSource, limits: ReadLimits | undefined): number {
  const v = rows.parent.length;
  rows.parent.push(parent);
  rows.childPos.push(childPos);
  rows.id.push(undefined);
  rows.callFrame.push(undefined);
  rows.selfSize.push(undefined);
  // A row dropped by truncateHeapRows may have left its entries: they are not this node's.
  rows.notObject.delete(v);
  rows.childrenNotArray.delete(v);
  if (v + 1 > limitValue(limits, 'maxTableEntries')) checkLimit(limits, 'maxTableEntries', v + 1, 'nodes', { file: src.file });
  if (depth > limitValue(limits, 'maxFramesPerStack')) checkLimit(limits, 'maxFramesPerStack', depth, 'depth of the node tree', { file: src.file, path: heapNodePath(rows, v) });
  return v;
}

/**
 * Drops the rows from `length` on (a repeated `children` or `head` key: the last one counts, as in
 * JSON.parse). Their entries in `notObject` and `childrenNotArray` stay until `addHeapRow` makes
 * that row again (only rows below the row count are read): walking the maps here made a file
 * repeating `"children":[{}]` after many bad nodes quadratic (1.8 MB: 32 s).
 */
export function truncateHeapRows(rows: HeapRows, length: number): void {
  for (const column of [rows.parent, rows.childPos, rows.id, rows.callFrame, rows.selfSize]) column.length = length;
}

/** The JSON path of a row (a walk up the tree: made only for messages). */
function heapNodePath(rows: HeapRows, v: number): string {
  const parts: string[] = [];
  for (; v > 0; v = rows.parent[v]!) parts.push(`.children[${rows.childPos[v]}]`);
  return 'head' + parts.reverse().join('');
}

/** The rows of a parsed `.heapprofile` (its tree walked without recursion: it may be deep). */
export function heapRowsFromJson(top: Record<string, unknown>, src: JsonSource, options: HeapProfileReadOptions): HeapRows {
  const rows = emptyHeapRows();
  const depthOf: number[] = [];
  const todo: { json: unknown; parent: number; pos: number }[] = [{ json: top.head, parent: -1, pos: 0 }];
  while (todo.length > 0) {
    const { json: o, parent: p, pos } = todo.pop()!;
    const depth = p < 0 ? 0 : depthOf[p]! + 1;
    const v = addHeapRow(rows, p, pos, depth, src, options.limits);
    depthOf.push(depth);
    if (!isObject(o)) {
      rows.notObject.set(v, o);
      continue;
    }
    rows.id[v] = o.id;
    rows.callFrame[v] = o.callFrame;
    rows.selfSize[v] = o.selfSize;
    const children = o.children;
    if (children === undefined || children === null) continue; // none, as `?? []` read it
    if (!Array.isArray(children)) rows.childrenNotArray.set(v, children);
    else for (let j = children.length - 1; j >= 0; j--) todo.push({ json: children[j], parent: v, pos: j });
  }
  // `samples` that is not an array is refused even when the read option `selfSize` leaves it unread.
  if (top.samples !== undefined && !Array.isArray(top.samples)) rows.samples = { notArray: top.samples };
  else if (top.samples !== undefined && !options.selfSize) {
    const samples = emptyHeapSamples();
    (top.samples as unknown[]).forEach((s, i) => {
      if (isObject(s)) addHeapSample(samples, s.size, s.nodeId, s.ordinal);
      else {
        samples.notObject.set(i, s);
        addHeapSample(samples, undefined, undefined, undefined);
      }
    });
    rows.samples = samples;
  }
  return rows;
}

export function addHeapSample(samples: HeapSampleColumns, size: unknown, nodeId: unknown, ordinal: unknown): void {
  samples.size.push(size);
  samples.nodeId.push(nodeId);
  samples.ordinal.push(ordinal);
  samples.length++;
}

/** Converts a parsed `.heapprofile` object (checked field by field) into a profile. */
export function heapProfileToProfile(json: unknown, options: HeapProfileReadOptions = {}): { profile: Profile; warnings: Warning[] } {
  const src: JsonSource = { file: options.fileName ?? '<input>', format: '.heapprofile' };
  return heapRowsToProfile(heapRowsFromJson(objectAt(src, json, '$'), src, options), options);
}

/** Checks the rows' values (in the order of the text) and converts them into a profile. */
export function heapRowsToProfile(rows: HeapRows, options: HeapProfileReadOptions = {}): { profile: Profile; warnings: Warning[] } {
  const src: JsonSource = { file: options.fileName ?? '<input>', format: '.heapprofile' };
  const limits = options.limits;
  const warnings: Warning[] = [];
  const builder = new ProfileBuilder({ sampleTypes: HEAP_SAMPLE_TYPES });
  const frames = new CallFrameTable(builder);

  const { parent } = rows;
  const nodeCount = parent.length;
  const location = new Uint32Array(nodeCount);
  const selfSize: number[] = new Array<number>(nodeCount);
  const idToNode = new Map<number, number>();
  // Paths (a walk up the tree) are made only for errors: making one per node is quadratic.
  const pathOf = (v: number) => heapNodePath(rows, v);
  let rootIsFrame = false;
  for (let v = 0; v < nodeCount; v++) {
    if (rows.notObject.has(v)) objectAt(src, rows.notObject.get(v), pathOf(v));
    const rawId = rows.id[v];
    const id = isWhole(rawId) ? rawId : integerAt(src, rawId, `${pathOf(v)}.id`, 0);
    if (idToNode.has(id)) throw schemaError(src, `${pathOf(v)}.id`, `node id ${id} is also the id of ${pathOf(idToNode.get(id)!)}`, 'node ids are unique');
    idToNode.set(id, v);
    const cf = readCallFrame(src, rows.callFrame[v], () => `${pathOf(v)}.callFrame`, limits);
    if (v === 0) rootIsFrame = cf.functionName !== ROOT_NAME;
    location[v] = v === 0 && !rootIsFrame ? 0 : frames.locationOf(cf);
    const size = rows.selfSize[v] ?? 0;
    selfSize[v] = isWhole(size) ? size : integerAt(src, size, `${pathOf(v)}.selfSize`, 0);
    if (rows.childrenNotArray.has(v)) arrayAt(src, rows.childrenNotArray.get(v), `${pathOf(v)}.children`);
  }

  const stack: number[] = [];
  const stackOf = (v: number): number[] => {
    stack.length = 0;
    for (; v > 0; v = parent[v]!) stack.push(location[v]!);
    if (rootIsFrame) stack.push(location[0]!);
    return stack;
  };
  if (rows.samples !== undefined && 'notArray' in rows.samples) arrayAt(src, rows.samples.notArray, 'samples');
  const samples = rows.samples as HeapSampleColumns | undefined;
  const ordinals: number[] = [];
  const sampledBytes = new Float64Array(nodeCount);
  let totalFrames = 0;
  const maxFrames = limitValue(limits, 'maxTotalFrames');
  let orphans = 0;
  let orphanBytes = 0;
  if (samples && samples.length > 0 && !options.selfSize) {
    checkLimit(limits, 'maxSamples', samples.length, 'samples', { file: src.file, path: 'samples' });
    for (let i = 0; i < samples.length; i++) {
      if ((i & 0xffff) === 0xffff) options.signal?.throwIfAborted();
      const path = `samples[${i}]`;
      if (samples.notObject.has(i)) objectAt(src, samples.notObject.get(i), path);
      const size = integerAt(src, samples.size.at(i), `${path}.size`, 0);
      const v = idToNode.get(integerAt(src, samples.nodeId.at(i), `${path}.nodeId`, 0));
      if (v === undefined) {
        // Node.js writes these: a few samples of a node the tree no longer has (seen on
        // Node 20 with --heap-prof: 6 of 10627 samples). They have no stack to go on.
        orphans++;
        orphanBytes += size;
        continue;
      }
      const rawOrdinal = samples.ordinal.at(i);
      const ordinal = rawOrdinal === undefined ? i + 1 : numberAt(src, rawOrdinal, `${path}.ordinal`);
      const st = stackOf(v);
      totalFrames += st.length;
      if (totalFrames > maxFrames) checkLimit(limits, 'maxTotalFrames', totalFrames, 'frames of all samples', { file: src.file, path });
      builder.addSample(st, [1n, BigInt(size)]);
      ordinals.push(ordinal);
      sampledBytes[v]! += size;
    }
    if (orphans > 0) {
      warnings.push({
        code: 'PROFKIT_W_V8_ORPHAN_SAMPLES',
        message: `${orphans} sample(s) (${orphanBytes} bytes) name a node the tree does not have, and were dropped`,
        detail: { file: src.file, samples: orphans, bytes: orphanBytes },
      });
    }
    let differ = 0;
    for (let v = 0; v < nodeCount; v++) if (sampledBytes[v] !== selfSize[v]) differ++;
    if (differ > 0) {
      warnings.push({
        code: 'PROFKIT_W_V8_SELF_SIZE',
        message: `${differ} node(s) have a selfSize other than the sum of their samples' sizes; the samples were used (read option selfSize=true reads the selfSize DevTools shows)`,
        detail: { file: src.file, nodes: differ },
      });
    }
  } else {
    let nodesWithBytes = 0;
    for (let v = 0; v < nodeCount; v++) {
      if (selfSize[v]! === 0) continue;
      const st = stackOf(v);
      totalFrames += st.length;
      if (totalFrames > maxFrames) checkLimit(limits, 'maxTotalFrames', totalFrames, 'frames of all samples', { file: src.file, path: pathOf(v) });
      builder.addSample(st, [0n, BigInt(selfSize[v]!)]);
      ordinals.push(0);
      nodesWithBytes++;
    }
    if (nodesWithBytes > 0 && !options.selfSize) {
      warnings.push({
        code: 'PROFKIT_W_V8_NO_HEAP_SAMPLES',
        message: `the profile has no samples: the selfSize of ${nodesWithBytes} node(s) became one sample each (objects unknown: 0)`,
        detail: { file: src.file, nodes: nodesWithBytes },
      });
    }
  }
  const ext = builder.extension(ADAPTER_NAME);
  ext.facts = { format: 'heapprofile' };
  ext.samples = { ordinal: Float64Array.from(ordinals) };
  ext.tables = { call_frames: frames.table() };
  builder.facts.default_sample_type = 'space';
  return { profile: builder.build(), warnings };
}

export interface HeapProfileWriteOptions {
  streaming?: boolean;
  signal?: AbortSignal;
}

/**
 * profkit profile → `.heapprofile`: each sample with bytes > 0 in the bytes sample type (`space`,
 * else the default or first type in bytes) becomes one V8 sample of that size at its stack's node;
 * each node's `selfSize` is the sum of its samples. Ordinals are the kept ones, else 1, 2, 3….
 */
function isWhole(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

export function writeHeapProfile(profile: Profile, options: HeapProfileWriteOptions = {}): WriteResult {
  const bytesIdx = bytesTypeIndex(profile);
  if (bytesIdx < 0) {
    throw new ProfkitError(ErrorCodes.UNSUPPORTED, `a .heapprofile needs a sample type in bytes; this profile has ${profile.sample_types.type.map((t, i) => `${t}/${profile.sample_types.unit[i]}`).join(', ') || 'none'}`, {
      rule: '.heapprofile samples are sizes in bytes',
    });
  }
  const { tree, leafOfSample, warnings } = buildCallTree(profile);
  const n = leafOfSample.length;
  const bytes = profile.samples['.values'][bytesIdx]!;
  const countIdx = countTypeIndex(profile);
  const keptOrdinal = profile['.extensions']?.[ADAPTER_NAME]?.samples?.ordinal;
  const ordinal = keptOrdinal instanceof Float64Array && keptOrdinal.length === n ? keptOrdinal : undefined;
  // Sums of 64-bit sizes, kept exact (a Float64Array rounds above 2^53).
  const selfSize = new Array<bigint>(tree.size).fill(0n);
  const { order, children } = tree.preorder();
  const idOf = new Uint32Array(tree.size);
  order.forEach((v, k) => (idOf[v] = k + 1));
  const out = new JsonChunks();
  const sampleParts: string[] = [];
  let skipped = 0;
  let notOne = 0;
  if (n > READ_LIMITS.maxSamples) checkLimit(undefined, 'maxSamples', n, 'samples to write');
  for (let i = 0; i < n; i++) {
    const size = bytes[i]!;
    if (size <= 0n) {
      skipped++;
      continue;
    }
    if (countIdx >= 0 && countIdx !== bytesIdx && profile.samples['.values'][countIdx]![i] !== 1n) notOne++;
    selfSize[leafOfSample[i]!]! += size;
    sampleParts.push(`{"size":${size},"nodeId":${idOf[leafOfSample[i]!]},"ordinal":${ordinal ? ordinal[i] : i + 1}}`);
  }
  // Nested nodes, written without recursion: "close" entries end a node's children list.
  out.push('{"head":');
  const todo: number[] = [0];
  const CLOSE = -1;
  let first = true;
  while (todo.length > 0) {
    const v = todo.pop()!;
    if (v === CLOSE) {
      out.push(']}');
      first = false;
      continue;
    }
    options.signal?.throwIfAborted();
    const cf = v === 0 ? ROOT_CALL_FRAME : tree.frames[tree.frameOf[v]!]!.callFrame;
    out.push(`${first ? '' : ','}{"callFrame":${callFrameJson(cf)},"selfSize":${selfSize[v]},"id":${idOf[v]},"children":[`);
    first = true;
    todo.push(CLOSE);
    const c = children[v]!;
    for (let k = c.length - 1; k >= 0; k--) todo.push(c[k]!);
  }
  out.push(',"samples":[');
  for (let k = 0; k < sampleParts.length; k += 4096) out.push((k ? ',' : '') + sampleParts.slice(k, k + 4096).join(','));
  out.push(']}');
  if (skipped > 0) warnings.push({ code: 'PROFKIT_W_V8_NEGATIVE_VALUES', message: `${skipped} sample(s) with ${profile.sample_types.type[bytesIdx]} ≤ 0 bytes were not written`, detail: { samples: skipped } });
  if (notOne > 0) {
    warnings.push({
      code: 'PROFKIT_W_V8_SAMPLE_COUNTS',
      message: `${notOne} sample(s) count other than 1 object: each is written as one V8 sample of its bytes`,
      detail: { samples: notOne },
    });
  }
  const dropped = profile.sample_types.type.filter((_, i) => i !== bytesIdx && i !== countIdx);
  if (dropped.length > 0) warnings.push({ code: 'PROFKIT_W_V8_SAMPLE_TYPES', message: `a .heapprofile holds sampled bytes only: ${dropped.join(', ')} not written`, detail: { sampleTypes: dropped } });
  return { data: out.result(options.streaming), warnings };
}
