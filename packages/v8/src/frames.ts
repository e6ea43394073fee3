/**
 * V8 call frames ↔ profkit functions and locations, shared by both formats' readers and writers.
 *
 * - V8's `lineNumber`/`columnNumber` are 0-based and -1 when unknown; profkit's lines and columns
 *   are 1-based and 0 when unknown. So a V8 position p becomes p + 1 (and -1 becomes 0), and back.
 * - A call frame names a function and where the function starts, not the line running: it
 *   becomes a function (`name`, `filename` = the script URL, `start_line`) and a location at the
 *   same line and column. The lines running are the `.cpuprofile`'s `positionTicks`.
 * - An empty `functionName` is shown as `(anonymous)`, as DevTools does; written back as `""`.
 * - The pseudo frames `(program)`, `(idle)`, `(garbage collector)` stay frames of their own (DevTools
 *   lists them as top-level entries); `(root)` is the tree's root and not a frame.
 */

import { StringKeyedMap, limitValue, type ProfileBuilder, type ReadLimits } from '@profkit/core';
import { ANONYMOUS_NAME, type V8CallFrame } from './format.js';
import { integerAt, isObject, objectAt, schemaError, stringAt, type JsonSource } from './json.js';

/**
 * Checks a JSON `callFrame` and returns it typed. `at` is its JSON path, or a function making it
 * (the heap reader's paths cost a walk up the tree, so they are made only for an error).
 */
export function readCallFrame(src: JsonSource, v: unknown, at: string | (() => string), limits: ReadLimits | undefined): V8CallFrame {
  const path = () => (typeof at === 'string' ? at : at());
  const o = isObject(v) ? v : objectAt(src, v, path());
  const position = (key: 'lineNumber' | 'columnNumber') => {
    const x = o[key];
    if (x === undefined) return -1;
    return typeof x === 'number' && Number.isSafeInteger(x) && x >= -1 ? x : integerAt(src, x, `${path()}.${key}`, -1);
  };
  const text = (key: 'functionName' | 'url') => {
    const x = o[key] ?? '';
    return typeof x === 'string' && x.length <= maxString(limits) ? x : stringAt(src, x, `${path()}.${key}`, limits);
  };
  const scriptId = o.scriptId;
  if (scriptId !== undefined && typeof scriptId !== 'string' && typeof scriptId !== 'number') {
    throw schemaError(src, `${path()}.scriptId`, 'expected a string', 'callFrame.scriptId is a string');
  }
  return {
    functionName: text('functionName'),
    scriptId: scriptId === undefined ? '0' : String(scriptId),
    url: text('url'),
    lineNumber: position('lineNumber'),
    columnNumber: position('columnNumber'),
  };
}

function maxString(limits: ReadLimits | undefined): number {
  return limitValue(limits, 'maxStringLength');
}

/** A V8 0-based position (-1 = unknown) as a profkit 1-based one (0 = unknown). */
export function oneBased(v8Position: number): number {
  return v8Position < 0 ? 0 : v8Position + 1;
}

/** A profkit 1-based position (0 = unknown) as a V8 0-based one (-1 = unknown). */
export function zeroBased(position: number): number {
  return position > 0 ? position - 1 : -1;
}

export function displayName(functionName: string): string {
  return functionName === '' ? ANONYMOUS_NAME : functionName;
}

/**
 * Interns a call frame's function and location; returns the location id. Call frames are keyed
 * by their text so that the many nodes of one function share one function and one location.
 */
export class CallFrameTable {
  // Keyed through StringKeyedMap: names and URLs (data: URLs) can be longer than V8 hashes.
  private readonly ids = new StringKeyedMap<number>();
  /** The script id of each location, in location order (for the `call_frames` extension table). */
  readonly locationIds: number[] = [];
  readonly scriptIds: string[] = [];

  constructor(private readonly builder: ProfileBuilder) {}

  locationOf(cf: V8CallFrame): number {
    // One flat string: a template literal builds a tree of cons strings, several times larger as a Map key.
    const key = [cf.functionName, cf.url, cf.lineNumber, cf.columnNumber].join('\u0000');
    let id = this.ids.get(key);
    if (id === undefined) {
      const line = oneBased(cf.lineNumber);
      const name = displayName(cf.functionName);
      const functionId = this.builder.internFunction({ name, filename: cf.url, startLine: line });
      id = this.builder.internLocation({ functionId, line, column: oneBased(cf.columnNumber) });
      this.ids.set(key, id);
      this.locationIds.push(id);
      this.scriptIds.push(cf.scriptId);
    }
    return id;
  }

  /** The `call_frames` extension table: V8's script id of each location (kept for writing back). */
  table(): { location_id: Uint32Array; script_id: string[] } {
    return { location_id: Uint32Array.from(this.locationIds), script_id: this.scriptIds.slice() };
  }
}
