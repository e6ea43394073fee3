/**
 * A profile's stacks as a V8 call tree, for both writers: every distinct root-first path of call
 * frames is one node, so samples with the same stack share a node (as V8's own trees do).
 *
 * Frames come from locations with inline frames expanded (V8 has no inlining: an inlined call
 * becomes a call). A frame's V8 position is where its function starts: the function's
 * `start_line` when known, else the location's line; the location's column belongs to that
 * position only when the two lines agree. A location line inside the function (from pprof, say)
 * is the running line: the CPU writer turns it into `positionTicks`.
 */

import { ProfileIndex, StringKeyedMap, locationFrames, type Profile, type Warning } from '@profkit/core';
import { ADAPTER_NAME, ANONYMOUS_NAME, ROOT_NAME, type V8CallFrame } from './format.js';
import { zeroBased } from './frames.js';

export interface TreeFrame {
  callFrame: V8CallFrame;
  /** 1-based line running inside the function, when the location says so (0 = none). */
  runningLine: number;
}

/** A call tree: node 0 is `(root)`; `parent[0]` is -1. */
export class CallTree {
  readonly frames: TreeFrame[] = [];
  readonly parent: number[] = [-1];
  readonly frameOf: number[] = [-1];
  // Keyed through StringKeyedMap: names and URLs can be longer than V8 hashes.
  private readonly frameIds = new StringKeyedMap<number>();
  /** Per node: frame → child node. Numeric keys: a string key per frame of every sample cost 1/3 of a write. */
  private readonly childIds: Map<number, number>[] = [new Map()];

  /** The node under `parent` for `frame`, added on first use. */
  child(parent: number, frame: number): number {
    const kids = this.childIds[parent]!;
    let id = kids.get(frame);
    if (id === undefined) {
      id = this.parent.length;
      this.parent.push(parent);
      this.frameOf.push(frame);
      this.childIds.push(new Map());
      kids.set(frame, id);
    }
    return id;
  }

  frameIndex(f: TreeFrame): number {
    const cf = f.callFrame;
    const key = `${cf.functionName}\u0000${cf.url}\u0000${cf.lineNumber}\u0000${cf.columnNumber}\u0000${cf.scriptId}\u0000${f.runningLine}`;
    let id = this.frameIds.get(key);
    if (id === undefined) {
      id = this.frames.length;
      this.frames.push(f);
      this.frameIds.set(key, id);
    }
    return id;
  }

  get size(): number {
    return this.parent.length;
  }

  /** Children lists and a depth-first pre-order (V8's own node order), from the parent links. */
  preorder(): { order: number[]; children: number[][] } {
    const children: number[][] = this.parent.map(() => []);
    for (let v = 1; v < this.parent.length; v++) children[this.parent[v]!]!.push(v);
    const order: number[] = [];
    const todo = [0];
    while (todo.length > 0) {
      const v = todo.pop()!;
      order.push(v);
      const c = children[v]!;
      for (let k = c.length - 1; k >= 0; k--) todo.push(c[k]!);
    }
    return { order, children };
  }
}

export const ROOT_CALL_FRAME: V8CallFrame = { functionName: ROOT_NAME, scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 };

/**
 * Builds the call tree of `profile` and returns the leaf node of every sample. The script id of
 * a frame is the one the `.cpuprofile`/`.heapprofile` reader kept (`call_frames` table), else one
 * per script URL.
 */
export function buildCallTree(profile: Profile): { tree: CallTree; leafOfSample: Uint32Array; warnings: Warning[] } {
  const warnings: Warning[] = [];
  const index = new ProfileIndex(profile);
  const tree = new CallTree();
  const scripts = new ScriptIds(profile);
  // Frames of each location row, root first (outermost inline caller first).
  const framesOfRow = new Map<number, number[]>();
  let inlined = 0;
  const rowFrames = (row: number): number[] => {
    let fr = framesOfRow.get(row);
    if (fr === undefined) {
      const frames = locationFrames(profile, index, row);
      if (frames.length > 1) inlined++;
      fr = [];
      for (let k = frames.length - 1; k >= 0; k--) {
        const f = frames[k]!;
        const start = f.startLine > 0 ? f.startLine : f.line;
        const sameLine = f.line === 0 || f.line === start;
        const callFrame: V8CallFrame = {
          functionName: f.name === ANONYMOUS_NAME ? '' : f.name,
          scriptId: scripts.idOf(f.locationId, f.filename, k === 0),
          url: f.filename,
          lineNumber: zeroBased(start),
          columnNumber: sameLine ? zeroBased(f.column) : start > 0 ? 0 : -1,
        };
        fr.push(tree.frameIndex({ callFrame, runningLine: sameLine ? 0 : f.line }));
      }
      framesOfRow.set(row, fr);
    }
    return fr;
  };
  const s = profile.samples;
  const n = s.value.length;
  const leafOfSample = new Uint32Array(n);
  const offsets = s.locations.offsets;
  const ids = s.locations.location_id;
  for (let i = 0; i < n; i++) {
    let node = 0;
    for (let k = offsets[i + 1]! - 1; k >= offsets[i]!; k--) {
      const row = index.locations.get(ids[k]!);
      if (row < 0) continue;
      for (const frame of rowFrames(row)) node = tree.child(node, frame);
    }
    leafOfSample[i] = node;
  }
  if (inlined > 0) {
    warnings.push({
      code: 'PROFKIT_W_V8_INLINE_FRAMES',
      message: `${inlined} location(s) have inlined frames: V8 profiles have no inlining, so they are written as calls`,
      detail: { locations: inlined },
    });
  }
  if (profile['.mappings'].mapping_id.length > 0 || profile.locations['.address'].some((a) => a !== 0n)) {
    warnings.push({ code: 'PROFKIT_W_V8_ADDRESSES', message: 'V8 profiles have no mappings or addresses: they were not written', detail: {} });
  }
  if (profile['.labels'].key.length > 0) {
    warnings.push({ code: 'PROFKIT_W_V8_LABELS', message: 'V8 profiles have no sample labels: they were not written', detail: { labels: profile['.labels'].key.length } });
  }
  return { tree, leafOfSample, warnings };
}

/**
 * Script ids for written call frames: the ones a V8 reader kept per location (table
 * `.extensions.v8.tables.call_frames`), else one number per script URL ('0' for none), above
 * any kept id so the two never collide.
 */
class ScriptIds {
  private readonly kept = new Map<number, string>();
  private readonly byUrl = new Map<string, string>();
  private next = 1;

  constructor(profile: Profile) {
    const t = profile['.extensions']?.[ADAPTER_NAME]?.tables?.call_frames;
    const loc = t?.location_id;
    const sid = t?.script_id;
    if (loc instanceof Uint32Array && Array.isArray(sid) && sid.length === loc.length) {
      for (let i = 0; i < loc.length; i++) {
        const id = String(sid[i]);
        this.kept.set(loc[i]!, id);
        const num = Number(id);
        if (Number.isSafeInteger(num) && num >= this.next) this.next = num + 1;
      }
    }
  }

  idOf(locationId: number, url: string, innermost: boolean): string {
    const kept = innermost ? this.kept.get(locationId) : undefined;
    if (kept !== undefined) {
      if (url !== '' && !this.byUrl.has(url)) this.byUrl.set(url, kept);
      return kept;
    }
    if (url === '') return '0';
    let id = this.byUrl.get(url);
    if (id === undefined) {
      id = String(this.next++);
      this.byUrl.set(url, id);
    }
    return id;
  }
}
