/**
 * The flame graph on a canvas: draws a `FlameLayout` as a flame graph (root at the bottom) or an
 * icicle (root at the top), zoomed to one frame (its callers drawn full width above/below it),
 * with frames matching the search drawn highlighted, and, for a diff, each frame coloured by
 * how its value changed against the base (red = grew, blue = shrank). One pass over the frames
 * per draw; frames narrower than half a pixel are skipped.
 */

import { compileViewPattern, cutNameMatcher, literalOf, searchedLength } from './patterns.js';
import type { FlameLayout } from './protocol.js';

export const ROW_HEIGHT = 18;
const FONT = '12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
const SEARCH_COLOR = '#d633e0';

/** A warm colour derived from the name, stable between runs (flamegraph.pl's hash mode). */
export function warmColor(name: string): string {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
  const a = (h >>> 0) % 1000 / 1000;
  const b = ((h >>> 10) >>> 0) % 1000 / 1000;
  return `rgb(${205 + Math.round(50 * a)},${Math.round(80 + 150 * b)},${Math.round(55 * a)})`;
}

/**
 * The diff colour of a frame: the change relative to the larger of the two values, from white
 * (unchanged) to full red (new, or grew to many times the base) or full blue (shrank to nothing).
 */
export function diffColor(value: number, base: number): string {
  const delta = value - base;
  const scale = Math.max(Math.abs(value), Math.abs(base));
  const r = scale === 0 ? 0 : Math.min(1, Math.abs(delta) / scale);
  const fade = Math.round(235 - 200 * r);
  return delta > 0 ? `rgb(245,${fade},${fade})` : delta < 0 ? `rgb(${fade},${fade},245)` : 'rgb(235,235,235)';
}

export interface FlameDrawOptions {
  icicle: boolean;
  /** The zoomed frame (0 = the root). */
  zoom: number;
  /** Frames to highlight, or undefined for no search. */
  matches?: Uint8Array;
}

/** The parent of each frame of a preorder layout (-1 for the root). */
export function parentsOf(layout: FlameLayout): Int32Array {
  const n = layout.depth.length;
  const parent = new Int32Array(n).fill(-1);
  const open: number[] = [];
  for (let i = 0; i < n; i++) {
    const d = layout.depth[i]!;
    open.length = d;
    parent[i] = d > 0 ? open[d - 1]! : -1;
    open.push(i);
  }
  return parent;
}

/** The call path of frame `i` as names, the root (`all`) left out: how the URL names a zoom. */
export function pathOf(layout: FlameLayout, parent: Int32Array, i: number): string[] {
  const path: string[] = [];
  for (let f = i; f > 0; f = parent[f]!) path.push(layout.names[layout.nameIndex[f]!]!);
  return path.reverse();
}

/** The frame at `path` (see `pathOf`), or 0 (the root) when the layout has no such frame. */
export function frameAtPath(layout: FlameLayout, path: readonly string[]): number {
  let at = 0;
  const n = layout.depth.length;
  for (let k = 0; k < path.length; k++) {
    // The children of `at` follow it in preorder at depth k + 1, until the depth drops back.
    let found = -1;
    for (let i = at + 1; i < n && layout.depth[i]! > k; i++) {
      if (layout.depth[i] === k + 1 && layout.names[layout.nameIndex[i]!] === path[k]) {
        found = i;
        break;
      }
    }
    if (found < 0) return 0;
    at = found;
  }
  return at;
}

/**
 * The frames whose name matches `pattern` (a regular expression in pprof's syntax, matched in
 * linear time: see patterns.ts); undefined for ''. A bad pattern throws `PROFKIT_E_USAGE`, one
 * past the page's caps `PROFKIT_E_LIMIT`. All at once: the page uses `searchMatchesInSlices`.
 */
export function searchMatches(layout: FlameLayout, pattern: string): Uint8Array | undefined {
  const search = matchNames(layout, pattern);
  for (let step = search.next(); ; step = search.next()) if (step.done) return step.value;
}

/** What `searchMatchesInSlices` needs of its caller; `yieldToPage` is a test's seam. */
export interface SearchSlicing {
  /** Aborted when a newer search (or a new layout) replaces this one: the search stops, its promise rejects. */
  signal: AbortSignal;
  /** Milliseconds of matching before the page gets its thread back (after the name that passes it). */
  sliceMs?: number;
  /** Resolves when the page has handled what waited (input, paint): a macrotask by default. */
  yieldToPage?: () => Promise<void>;
}

/** A macrotask later: events and rendering queued meanwhile run first (a resolved promise would not let them). */
function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(undefined);
  });
}

/**
 * `searchMatches` on the page's thread without holding it: the names are matched a slice at a
 * time (`sliceMs`), the page handling its events between slices. A name can cost ~30 ms against
 * a crafted pattern (`MAX_SEARCH_STEPS`), and a flame graph has thousands, so matching them all
 * at once froze the tab for seconds. When `signal` is aborted
 * (the search was typed further) the search stops at the next slice and rejects with the
 * signal's reason: an older search never shows over a newer one.
 */
export async function searchMatchesInSlices(layout: FlameLayout, pattern: string, slicing: SearchSlicing): Promise<Uint8Array | undefined> {
  const { signal, sliceMs = 8, yieldToPage = nextTask } = slicing;
  const search = matchNames(layout, pattern);
  let sliceStart = performance.now();
  for (;;) {
    signal.throwIfAborted();
    const step = search.next();
    if (step.done) return step.value;
    if (performance.now() - sliceStart >= sliceMs) {
      await yieldToPage();
      sliceStart = performance.now();
    }
  }
}

/**
 * Matches the names one at a time (a step after each), then returns the frames whose name
 * matched. Each name is matched in its first `searchedLength` characters (a plain text, whole;
 * a match must end before the cut, `cutNameMatcher`):
 * the slices are cut between names, so one match must be short too (a crafted pattern within
 * the caps over one 20,000-character name held the page 2.4 s).
 */
function* matchNames(layout: FlameLayout, pattern: string): Generator<void, Uint8Array | undefined> {
  if (pattern === '') return undefined;
  const re = compileViewPattern(pattern, 'search');
  const text = literalOf(pattern);
  // A name read in part is matched with `cutNameMatcher`, whose program (a few instructions more) bounds what is read.
  const cutRe = text === undefined ? cutNameMatcher(pattern) : undefined;
  const program = cutRe ? Math.max(re.programSize(), cutRe.programSize()) : 0;
  const matches =
    text !== undefined
      ? (name: string) => name.includes(text)
      : (name: string) => {
          const searched = searchedLength(name, program);
          return searched === name.length ? re.test(name) : cutRe!.test(name.slice(0, searched));
        };
  const nameMatches = new Uint8Array(layout.names.length);
  for (let k = 0; k < layout.names.length; k++) {
    if (matches(layout.names[k]!)) nameMatches[k] = 1;
    yield;
  }
  const m = new Uint8Array(layout.depth.length);
  for (let i = 0; i < m.length; i++) m[i] = nameMatches[layout.nameIndex[i]!]!;
  return m;
}

/** The value of the matched frames, each sample counted once (matches inside a match are not added). */
export function matchedTotal(layout: FlameLayout, matches: Uint8Array): number {
  let total = 0;
  for (let i = 0; i < matches.length; i++) {
    if (!matches[i]) continue;
    total += layout.value[i]!;
    const d = layout.depth[i]!;
    while (i + 1 < matches.length && layout.depth[i + 1]! > d) i++;
  }
  return total;
}

/** The height in CSS pixels the graph needs. */
export function flameHeight(layout: FlameLayout): number {
  return (layout.maxDepth + 1) * ROW_HEIGHT;
}

/** Where frame `i` is drawn (CSS pixels), or undefined when it is outside the zoom or too narrow. */
function frameBox(layout: FlameLayout, i: number, o: FlameDrawOptions, width: number, height: number): { x: number; y: number; w: number } | undefined {
  const z = o.zoom;
  const zStart = layout.start[z]!;
  const zValue = layout.value[z]!;
  const depth = layout.depth[i]!;
  const start = layout.start[i]!;
  const value = layout.value[i]!;
  let x: number;
  let w: number;
  if (depth < layout.depth[z]!) {
    // A caller of the zoomed frame is drawn across the whole width; other frames that shallow are not shown.
    if (start > zStart || start + value < zStart + zValue) return undefined;
    x = 0;
    w = width;
  } else {
    if (start + value <= zStart || start >= zStart + zValue || zValue <= 0) return undefined;
    x = ((start - zStart) / zValue) * width;
    w = (value / zValue) * width;
  }
  if (w < 0.5) return undefined;
  const y = o.icicle ? depth * ROW_HEIGHT : height - (depth + 1) * ROW_HEIGHT;
  return { x, y, w };
}

/** Draws the graph on `canvas`, sized to `width` CSS pixels. */
export function drawFlame(canvas: HTMLCanvasElement, layout: FlameLayout, o: FlameDrawOptions, width: number): void {
  const height = flameHeight(layout);
  const ratio = globalThis.devicePixelRatio || 1;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const g = canvas.getContext('2d');
  if (!g) return;
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, width, height);
  g.font = FONT;
  g.textBaseline = 'middle';
  const charWidth = g.measureText('m').width || 7;
  for (let i = 0; i < layout.depth.length; i++) {
    const box = frameBox(layout, i, o, width, height);
    if (!box) continue;
    const name = layout.names[layout.nameIndex[i]!]!;
    g.fillStyle = o.matches?.[i] ? SEARCH_COLOR : layout.base ? diffColor(layout.value[i]!, layout.base[i]!) : warmColor(name);
    g.fillRect(box.x, box.y, Math.max(box.w - 1, 0.5), ROW_HEIGHT - 1);
    if (box.w > 3 * charWidth) {
      const fit = Math.floor((box.w - 6) / charWidth);
      g.fillStyle = '#111';
      g.fillText(name.length <= fit ? name : name.slice(0, Math.max(fit - 1, 1)) + '…', box.x + 3, box.y + ROW_HEIGHT / 2);
    }
  }
}

/** The frame drawn at (x, y) (CSS pixels in the canvas), or -1. */
export function frameAt(layout: FlameLayout, o: FlameDrawOptions, width: number, x: number, y: number): number {
  const height = flameHeight(layout);
  const depth = o.icicle ? Math.floor(y / ROW_HEIGHT) : Math.floor((height - y) / ROW_HEIGHT);
  for (let i = 0; i < layout.depth.length; i++) {
    if (layout.depth[i] !== depth) continue;
    const box = frameBox(layout, i, o, width, height);
    if (box && x >= box.x && x < box.x + box.w) return i;
  }
  return -1;
}
