/**
 * Self-contained flame graphs: `flameTree` (the call tree of one sample type, root first) and
 * `renderFlameGraph` (a static SVG, or an HTML page with an embedded vanilla-JS viewer: flame /
 * icicle toggle, search, click-to-zoom, tooltips with values and percentages). Pure string
 * generation: no dependencies, no network access from the output.
 */

import { ErrorCodes, ProfkitError } from '../errors.js';
import { limitError, limitValue, type ReadLimits } from '../limits.js';
import { ReportTextBudget } from '../report-text.js';
import type { Profile } from '../model.js';
import { ProfileIndex, defaultSampleTypeIndex } from '../views.js';
import { formatPercentage, formatValue } from '../ops/format.js';
import { buildStackTable, grown, stackChildren, type StackValues } from '../ops/stack-table.js';
import { CalleeGroups, cutFlameFrames, flameWalkBudget, flameWalkLimitError, locationNameIds, SharedInlineRun, sortChildrenByName, type FlameFrames } from './cut.js';
import { StringKeyedMap } from '../string-keys.js';

export { cutFlameTree, flameCountBudget, flameWalkBudget, locationNameIds, type CutFlameTree, type CutFlameTreeOptions } from './cut.js';

/** One frame of the flame graph: the sum of the samples whose stack goes through it. */
export interface FlameNode {
  name: string;
  /** Sum of the values of the samples through this frame (its width). */
  value: bigint;
  /** Sum of the values of the samples whose leaf is this frame. */
  self: bigint;
  /** Callees, sorted by name (like flamegraph.pl). */
  children: FlameNode[];
}

export interface FlameGraphOptions {
  /** Sample type to draw; default: the profile's default sample type. */
  sampleTypeIndex?: number;
  /** `html` (default): page with the interactive viewer; `svg`: a static SVG image. */
  format?: 'html' | 'svg';
  /** Title shown above the graph (default `Flame graph`). */
  title?: string;
  /** SVG width in pixels (default 1200). */
  width?: number;
  /** SVG: draw the root at the top (icicle) instead of the bottom. */
  icicle?: boolean;
  /**
   * Leave out frames narrower than this fraction of the total (default `DEFAULT_FLAME_MIN_WIDTH`,
   * 0.0001; 0 keeps every frame). The subtitle says how many frames were left out.
   */
  minWidth?: number;
  /**
   * `maxFlameFrames` bounds the frames drawn (see `CutFlameTreeOptions.limits`); `maxReportBytes`
   * (and the longest JS string) the SVG's text, which repeats every drawn frame's name.
   */
  limits?: ReadLimits;
}

function checkType(p: Profile, t: number): BigInt64Array {
  const col = p.samples['.values'][t];
  if (!col) {
    throw new ProfkitError(ErrorCodes.USAGE, `sample type index ${t} is out of range (the profile has ${p.sample_types.type.length} sample types)`, {
      option: 'sampleTypeIndex',
      rule: 'the sample type index must name an existing sample type',
    });
  }
  return col;
}

/**
 * The default of `FlameGraphOptions.minWidth`: frames narrower than 0.01% of the total are left
 * out. One pixel of a 1000-pixel graph is 0.1%, but the HTML viewer zooms: at 0.1% a real
 * profile with a wide fan-out (pprof's `large.cpu`) kept 6 of its 425,052 frames, at 0.01% it keeps
 * 2,838 (a 100 KB page) and the random 200k-sample profile a 97 KB page. Bounds the output: at
 * most 10,000 frames per depth level.
 */
export const DEFAULT_FLAME_MIN_WIDTH = 0.0001;

export interface FlameTreeOptions {
  /** Leave out frames whose value is below this fraction of the total (default 0: keep all). */
  minWidth?: number;
  /** `maxFlameFrames`, `maxFlameDepth` and `maxFlameWalkSteps` bound the tree and its walk (see `BoundedFlameTreeOptions`). */
  limits?: ReadLimits;
}

export interface BoundedFlameTreeOptions {
  /**
   * `maxFlameFrames` bounds the frames of the tree (the root included) and `maxFlameDepth` its
   * levels, as for `renderFlameGraph`: a `PROFKIT_E_LIMIT` error as the frame past either is
   * made (a 1.9 KB pprof asks for 2M frames of one chain: 1,000 entries of a 2,000-line location).
   * `maxFlameWalkSteps` bounds the walk's steps, of the frames left out too (default
   * `flameWalkBudget(p)`): the counts are exact or the call fails, never wrong. Where a stack
   * row has at most one frame left in its location (the same frames cut into 2-line locations)
   * the rows are walked a frame at a time (200 samples through 1,000 such entries: 200M steps).
   */
  limits?: ReadLimits;
}

/** A flame tree with the count of frames `minWidth` left out. */
export interface BoundedFlameTree {
  tree: FlameNode;
  /** Frames of the complete tree (the root included). */
  frames: number;
  /** Frames left out because they (or a caller) were narrower than `minWidth`. */
  elided: number;
  /** Steps of the walk (stack rows moved a frame down, names compared), checked against `maxFlameWalkSteps`. */
  walkSteps: number;
}

/**
 * The call tree of one sample type with the root `all` (the total), inline frames expanded
 * (outermost first). Frames are function names, `0x<address>` for unsymbolized locations, or
 * `[unknown]`. Samples with a value <= 0 are left out (a flame graph cannot draw negative
 * widths; see `diff` for differences).
 */
export function flameTree(p: Profile, sampleTypeIndex: number = defaultSampleTypeIndex(p), options: FlameTreeOptions = {}): FlameNode {
  return boundedFlameTree(p, sampleTypeIndex, options.minWidth ?? 0, { limits: options.limits }).tree;
}

/**
 * `flameTree` without the frames narrower than `minWidth` of the total, in one depth-first walk
 * of the stack table. A frame of the flame graph is a group of "members": (stack row, position
 * of the frame among its location's inline frames, outermost first). The callees of a frame are
 * the members' next inline frames, or, past a location's innermost frame, the first frame of each
 * callee stack, grouped by name (two locations of one function are one frame). The walk groups
 * the callees of one frame at a time with an array indexed by name id (no hashing) and keeps
 * only the members of the frames still to visit: memory follows the stacks pending on the
 * current path, not the whole tree. A frame narrower than `minWidth` is not drawn and neither is
 * anything under it (a callee is never wider than its caller), so its subtree is only counted:
 * the count of frames left out stays exact.
 */
export function boundedFlameTree(p: Profile, sampleTypeIndex: number, minWidth: number, { limits }: BoundedFlameTreeOptions = {}): BoundedFlameTree {
  checkType(p, sampleTypeIndex);
  const maxFrames = limitValue(limits, 'maxFlameFrames');
  const maxDepth = limitValue(limits, 'maxFlameDepth');
  const walkBudget = flameWalkBudget(p, limits);
  const index = new ProfileIndex(p);
  const stacks = buildStackTable(p, index, sampleTypeIndex, (v) => v > 0n);
  // Name ids of the frames of location row r, outermost first: locNameIds[locNameStart[r] ..
  // locNameStart[r + 1]].
  const { names, start: locNameStart, ids: locNameIds } = locationNameIds(p, index);
  const { frame, self } = stacks;
  // Samples without a known frame are the root's own (as wide as they are, drawn as `all`).
  const col = p.samples['.values'][sampleTypeIndex]!;
  let rootSelf = 0n;
  for (let i = 0; i < col.length; i++) if (stacks.sampleStack[i] === -1 && col[i]! > 0n) rootSelf += col[i]!;
  // The stacks' totals over their self values (a copy would cost 8 bytes a stack): a stack's self
  // value is its total minus its callees' totals, computed where a frame is expanded.
  const { firstChild, nextSibling } = stackChildren(stacks);
  const totals = subtreeSumsOverChildren(firstChild, nextSibling, self);
  let rootValue = rootSelf;
  for (let c = firstChild[0]!; c >= 0; c = nextSibling[c]!) rootValue += BigInt(totals[c]!);
  const threshold = minWidth * Number(rootValue);
  const tree: FlameNode = { name: 'all', value: rootValue, self: rootSelf, children: [] };
  // `+` is exact on both representations of the sums (see StackTable).
  const zero = (totals instanceof Float64Array ? 0 : 0n) as number;
  const sums = totals as unknown as ArrayLike<number>;

  // The members of the frames still to visit, a stack: (row, position) pairs; the root's one
  // member is row -1 (its callees are the root stacks). `pending*`: per frame still to visit, where
  // its members start (they end where the next frame's start) and its node (undefined: counted,
  // not drawn).
  let memberRow: Int32Array = new Int32Array(1024);
  let memberPos: Int32Array = new Int32Array(1024);
  memberRow[0] = -1;
  let members = 1;
  const pendingStart: number[] = [0];
  const pendingNode: (FlameNode | undefined)[] = [tree];
  // The level of each pending frame (the root's is 1), for maxFlameDepth.
  const pendingLevel: number[] = [1];
  // The callees of the frame being expanded before they are placed by group: row, position, group.
  let calleeRow: Int32Array = new Int32Array(1024);
  let calleePos: Int32Array = new Int32Array(1024);
  let calleeGroup: Int32Array = new Int32Array(1024);
  const growCallees = () => {
    const n = calleeRow.length + 1;
    [calleeRow, calleePos, calleeGroup] = [grown(calleeRow, n), grown(calleePos, n), grown(calleeGroup, n)];
  };
  const calleeGroups = new CalleeGroups(names.length, zero);
  const { name: groupName, count: groupCount, value: groupValue } = calleeGroups;
  let frames = 1;
  let shown = 1;
  // Stack rows visited by the expansions and the chains followed, and the names compared by
  // sharedInlineRun (maxFlameWalkSteps).
  let walkSteps = 0;
  /** A callee of `node` (at `level`) drawn, its self value 0 until expanded; checks the limits first. */
  const addChild = (node: FlameNode, level: number, name: string, value: bigint): FlameNode => {
    if (shown >= maxFrames) throw limitError('maxFlameFrames', `the frames of one flame tree (${shown + 1} so far, frames narrower than the min width left out)`, maxFrames);
    if (level + 1 > maxDepth) throw limitError('maxFlameDepth', `the levels of one flame tree (a frame at level ${level + 1}: its stack of ${level} frames, inline frames included)`, maxDepth);
    const child: FlameNode = { name, value, self: 0n, children: [] };
    node.children.push(child);
    shown++;
    return child;
  };
  const sharedRun = new SharedInlineRun(locNameStart, locNameIds);
  // The frames of the run of inline frames all members `start..end` share below the frame (see
  // SharedInlineRun; its comparisons charged to the walk), 0 when none.
  const sharedInlineRun = (start: number, end: number): number => {
    sharedRun.begin();
    for (let k = start; k < end; k++) {
      const s = memberRow[k]!;
      if (s < 0) return 0;
      sharedRun.add(frame[s]!, memberPos[k]!);
    }
    const run = sharedRun.length(walkBudget - walkSteps);
    walkSteps += sharedRun.comparisons;
    if (walkSteps > walkBudget) throw flameWalkLimitError('one flame tree', walkSteps, walkBudget);
    return run;
  };
  while (pendingStart.length > 0) {
    const start = pendingStart.pop()!;
    let node = pendingNode.pop();
    let level = pendingLevel.pop()!;
    if (!node && members - start === 1) {
      // A frame left out with one member (most of them: where stacks no longer share callers,
      // frames form chains): follow its chain of single callees, only counting them, and expand
      // the general way only where it forks.
      let s = memberRow[start]!;
      let pos = memberPos[start]!;
      for (;;) {
        // The rest of the location's inline frames at once (a location may have thousands).
        const innermost = locNameStart[frame[s]! + 1]! - locNameStart[frame[s]!]! - 1;
        if (pos < innermost) {
          frames += innermost - pos;
          pos = innermost;
        }
        const c = firstChild[s + 1]!;
        if (c < 0 || nextSibling[c]! >= 0) break;
        s = c;
        pos = 0;
        frames++;
        walkSteps++;
      }
      memberRow[start] = s;
      memberPos[start] = pos;
    }
    const end = members;
    walkSteps += end - start;
    if (walkSteps > walkBudget) throw flameWalkLimitError('one flame tree', walkSteps, walkBudget);
    // The inline frames every member (stack row) has next, of the same names: a chain as wide as
    // this frame, one callee each of every member, made or counted here at once (members + frames,
    // not members × frames: stacks of many callers through a location of thousands of lines, or a
    // deep inline chain at many addresses), the members moved to its last frame.
    const run = sharedInlineRun(start, end);
    if (run > 0) {
      frames += run;
      const runNames = locNameStart[sharedRun.row]! + sharedRun.pos;
      // Only a drawn frame's run is made a frame at a time (maxFlameFrames bounds it): for a frame
      // left out, a loop over the run charged nothing (2 members × 20,000 callers through one
      // 100,000-line location: 2·10⁹ iterations for 100k steps).
      if (node) {
        for (let at = 1; at <= run; at++, level++) node = addChild(node, level, names[locNameIds[runNames + at]!]!, node.value);
      } else level += run;
      for (let k = start; k < end; k++) memberPos[k]! += run;
    }
    // The callees of the members, grouped by name.
    let callees = 0;
    calleeGroups.begin();
    // The frame's self value: its members that are their location's innermost frame, each its
    // stack's total minus its callees' (the root's own is known).
    let selfSum = zero;
    for (let k = start; k < end; k++) {
      const s = memberRow[k]!;
      const pos = memberPos[k]! + 1;
      if (s >= 0 && locNameStart[frame[s]!]! + pos < locNameStart[frame[s]! + 1]!) {
        // The next inline frame of the same location.
        if (callees === calleeRow.length) growCallees();
        calleeRow[callees] = s;
        calleePos[callees++] = pos;
      } else {
        if (s >= 0) selfSum += sums[s]!;
        for (let c = firstChild[s + 1]!; c >= 0; c = nextSibling[c]!) {
          if (callees === calleeRow.length) growCallees();
          calleeRow[callees] = c;
          calleePos[callees++] = 0;
          if (s >= 0) selfSum -= sums[c]!;
        }
      }
    }
    if (node && node !== tree) node.self = BigInt(selfSum);
    for (let k = 0; k < callees; k++) {
      const s = calleeRow[k]!;
      const r = frame[s]!;
      const at = locNameStart[r]! + calleePos[k]!;
      const g = calleeGroups.groupOf(locNameIds[at]!);
      calleeGroup[k] = g;
      if (node) {
        groupValue[g]! += sums[s]!;
      }
    }
    const groups = calleeGroups.size;
    frames += groups;
    // The callees replace the expanded frame's members, one run per group (a counting sort).
    members = start + callees;
    if (members > memberRow.length) [memberRow, memberPos] = [grown(memberRow, members), grown(memberPos, members)];
    let at = start;
    for (let g = 0; g < groups; g++) {
      pendingStart.push(at);
      let child: FlameNode | undefined;
      if (node && Number(groupValue[g]!) >= threshold) child = addChild(node, level, names[groupName[g]!]!, BigInt(groupValue[g]!));
      pendingNode.push(child);
      pendingLevel.push(level + 1);
      const count = groupCount[g]!;
      groupCount[g] = at; // from here on: where the group's next member goes
      at += count;
    }
    for (let k = 0; k < callees; k++) {
      const to = groupCount[calleeGroup[k]!]!++;
      memberRow[to] = calleeRow[k]!;
      memberPos[to] = calleePos[k]!;
    }
  }
  sortChildrenByName(tree);
  return { tree, frames, elided: frames - shown, walkSteps };
}

/**
 * `values` (per stack) replaced by its sums over each stack's subtree, from the child lists: rows
 * are numbered callers first, so a pass in reverse row order sees callees before their callers
 * (no `prefix` column needed). `+` is exact on both representations (see StackTable).
 */
function subtreeSumsOverChildren(firstChild: Int32Array, nextSibling: Int32Array, values: StackValues): StackValues {
  const sums = values as unknown as number[];
  for (let s = sums.length - 1; s >= 0; s--) {
    let sum = sums[s]!;
    for (let c = firstChild[s + 1]!; c >= 0; c = nextSibling[c]!) sum += sums[c]!;
    sums[s] = sum;
  }
  return values;
}

/**
 * The drawn frames to lay out (`cutFlameFrames`' columns, no `FlameNode` per frame: a profile of
 * 600,000 inline lines draws as many frames) with each frame's callees sorted by name.
 */
interface FramesToDraw {
  frames: FlameFrames;
  /** The callees of frame f: `callees[start[f] .. start[f + 1]]`. */
  start: Int32Array;
  callees: Int32Array;
}

/** The frames in depth-first order (callees sorted by name) with their depth and left offset. */
function* layout({ frames, start, callees }: FramesToDraw): Generator<{ frame: number; level: number; offset: bigint }> {
  const stack: { frame: number; level: number; offset: bigint }[] = [{ frame: 0, level: 0, offset: 0n }];
  while (stack.length) {
    const e = stack.pop()!;
    yield e;
    // Callees start at the caller's left edge, in order; pushed in reverse to pop in order.
    const kids: { frame: number; level: number; offset: bigint }[] = [];
    let off = e.offset;
    for (let i = start[e.frame]!; i < start[e.frame + 1]!; i++) {
      const c = callees[i]!;
      kids.push({ frame: c, level: e.level + 1, offset: off });
      off += BigInt(frames.value[c]!);
    }
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
}

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A warm colour derived from the name (stable between runs, like flamegraph.pl's hash mode). */
function colorOf(name: string): string {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  h >>>= 0;
  const r = 205 + (h % 50);
  const g = 80 + ((h >>> 8) % 150);
  const b = (h >>> 16) % 55;
  return `rgb(${r},${g},${b})`;
}

/**
 * The SVG's text in chunks of 16,384 lines (each ending with a newline). `asOneString`: the
 * caller joins the chunks (then the text must also fit the longest JS string).
 */
function* svgChunks(drawn: FramesToDraw, o: { title: string; subtitle: string; width: number; icicle: boolean; unit: string; limits?: ReadLimits }, asOneString: boolean): Generator<string> {
  const frameH = 16;
  const pad = 10;
  const top = 40;
  let depth = 0;
  for (const e of layout(drawn)) depth = Math.max(depth, e.level + 1);
  const height = top + depth * frameH + pad * 2;
  const { frames } = drawn;
  const total = BigInt(frames.value[0]!);
  const scale = total > 0n ? (o.width - 2 * pad) / Number(total) : 0;
  // The lines, joined into one chunk every 16,384 lines: a line held apart costs several times its
  // text (the pieces of its template), and a 600,000-frame graph has 2.4M lines.
  // The SVG repeats every drawn frame's name (about 200 bytes a frame): 4M frames of one
  // location's inline lines passed the longest JS string (a RangeError at the join), so its text
  // is counted as made against maxReportBytes (and, joined, that longest string).
  const budget = new ReportTextBudget('flame graph SVG', o.limits, asOneString);
  let out: string[] = [
    `<?xml version="1.0" standalone="no"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${o.width}" height="${height}" viewBox="0 0 ${o.width} ${height}" font-family="Verdana, sans-serif" font-size="12">`,
    `<rect x="0" y="0" width="${o.width}" height="${height}" fill="#f8f8f8"/>`,
    `<text x="${o.width / 2}" y="20" text-anchor="middle" font-size="16">${escapeXml(o.title)}</text>`,
    `<text x="${o.width / 2}" y="34" text-anchor="middle" font-size="11" fill="#555">${escapeXml(o.subtitle)}</text>`,
  ];
  for (const { frame, level, offset } of layout(drawn)) {
    const n = { name: frames.name(frames.nameId[frame]!), value: BigInt(frames.value[frame]!) };
    const w = Number(n.value) * scale;
    if (w < 0.1) continue;
    const x = pad + Number(offset) * scale;
    const y = o.icicle ? top + level * frameH : height - pad - (level + 1) * frameH;
    const label = `${n.name} (${formatValue(n.value, o.unit)}, ${formatPercentage(n.value, total).trim()})`;
    out.push(`<g class="frame" data-name="${escapeXml(n.name)}" data-value="${n.value}"><title>${escapeXml(label)}</title>`);
    out.push(`<rect x="${x.toFixed(2)}" y="${y}" width="${w.toFixed(2)}" height="${frameH - 1}" fill="${colorOf(n.name)}" rx="2" ry="2"/>`);
    const chars = Math.floor((w - 6) / 7);
    if (chars >= 3) {
      const text = n.name.length <= chars ? n.name : n.name.slice(0, chars - 2) + '..';
      out.push(`<text x="${(x + 3).toFixed(2)}" y="${y + 11.5}">${escapeXml(text)}</text>`);
    }
    out.push('</g>');
    if (out.length >= 16_384) {
      yield budget.take(out.join('\n') + '\n');
      out = [];
    }
  }
  out.push('</svg>');
  yield budget.take(out.join('\n') + '\n');
}

/** The viewer: plain DOM, no dependencies. Frames are absolutely positioned `div.frame`s. */
const VIEWER_JS = String.raw`
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('flame-data').textContent);
  var unit = data.unit;
  // Rebuild the tree from the flat frames (depth-first, parents first): no recursion anywhere,
  // so stacks thousands of frames deep are fine.
  var nodes = [];
  var maxDepth = 0;
  for (var f = 0; f < data.frames.length; f += 4) {
    var p = data.frames[f + 3];
    // A value beyond 2^53 comes as a decimal string: drawn from its Number, printed exact.
    var node = { name: data.names[data.frames[f]], value: Number(data.frames[f + 1]), valueText: String(data.frames[f + 1]),
      self: Number(data.frames[f + 2]), selfText: String(data.frames[f + 2]), kids: [], parent: p < 0 ? null : nodes[p] };
    node.depth = node.parent ? node.parent.depth + 1 : 0;
    if (node.depth + 1 > maxDepth) maxDepth = node.depth + 1;
    if (node.parent) node.parent.kids.push(node);
    nodes.push(node);
  }
  var root = nodes[0];
  var FRAME_H = 18;
  var chart = document.getElementById('chart');
  var tip = document.getElementById('tooltip');
  var search = document.getElementById('search');
  var status = document.getElementById('status');
  var icicle = false;
  var zoomed = root;
  var SCALES = {
    nanoseconds: [[1, 'ns'], [1e3, 'us'], [1e6, 'ms'], [1e9, 's']],
    microseconds: [[1, 'us'], [1e3, 'ms'], [1e6, 's']],
    milliseconds: [[1, 'ms'], [1e3, 's']],
    seconds: [[1, 's']],
    bytes: [[1, 'B'], [1024, 'kB'], [1048576, 'MB'], [1073741824, 'GB'], [1099511627776, 'TB']]
  };
  // v: the value as a Number; exact: its decimal text, printed when the unit is not scaled.
  function fmt(v, exact) {
    var s = SCALES[unit];
    if (!s) return exact + (unit && unit !== 'count' && unit !== 'samples' ? ' ' + unit : '');
    var best = s[0];
    for (var i = 0; i < s.length; i++) if (Math.abs(v) >= s[i][0]) best = s[i];
    return (v / best[0]).toFixed(2).replace(/\.00$/, '') + best[1];
  }
  function pct(v, t) { return t ? (100 * v / t).toFixed(2) + '%' : '0%'; }
  function escapeHtml(s) { return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'); }
  function pathTo(n) { var p = []; while (n) { p.push(n); n = n.parent; } return p.reverse(); }
  var re = null;
  function render() {
    chart.textContent = '';
    var width = chart.clientWidth || 1000;
    var ancestors = pathTo(zoomed);
    var levels = maxDepth;
    chart.style.height = (levels * FRAME_H) + 'px';
    var frag = document.createDocumentFragment();
    var matched = BigInt(0);
    function place(start, x0, w0, level0) {
      var todo = [[start, x0, w0, level0]];
      while (todo.length) {
        var t = todo.pop(), n = t[0], x = t[1], w = t[2], level = t[3];
        if (w < 0.5) continue;
        var d = document.createElement('div');
        d.className = 'frame';
        // Search matches count once: not again inside a matching caller.
        var hit = re !== null && re.test(n.name);
        if (hit) {
          d.className += ' match';
          var a = n.parent, inside = false;
          while (a && a !== zoomed.parent) { if (re.test(a.name)) { inside = true; break; } a = a.parent; }
          if (!inside) matched += BigInt(n.valueText);
        }
        d.style.left = x + 'px';
        d.style.width = Math.max(w - 1, 0.5) + 'px';
        d.style.top = (icicle ? level * FRAME_H : (levels - level - 1) * FRAME_H) + 'px';
        if (!hit) d.style.background = color(n.name);
        d.setAttribute('data-name', n.name);
        d.setAttribute('data-value', n.valueText);
        if (w > 30) d.textContent = n.name;
        d.__node = n;
        frag.appendChild(d);
        var kids = [], cx = x;
        for (var i = 0; i < n.kids.length; i++) {
          var kw = w * n.kids[i].value / (n.value || 1);
          kids.push([n.kids[i], cx, kw, level + 1]);
          cx += kw;
        }
        while (kids.length) todo.push(kids.pop());
      }
    }
    // Ancestors of the zoomed frame span the whole width, dimmed.
    for (var a = 0; a < ancestors.length - 1; a++) place0(ancestors[a], a);
    function place0(n, level) {
      var d = document.createElement('div');
      d.className = 'frame dim';
      d.style.left = '0px';
      d.style.width = (width - 1) + 'px';
      d.style.top = (icicle ? level * FRAME_H : (levels - level - 1) * FRAME_H) + 'px';
      d.setAttribute('data-name', n.name);
      d.setAttribute('data-value', n.valueText);
      d.textContent = n.name;
      d.__node = n;
      frag.appendChild(d);
    }
    place(zoomed, 0, width, ancestors.length - 1);
    chart.appendChild(frag);
    status.textContent = (zoomed === root ? '' : 'zoomed to ' + zoomed.name + ' \u2014 ') +
      (re ? 'search matches ' + fmt(Number(matched), String(matched)) + ' (' + pct(Number(matched), root.value) + ' of total)' : 'total ' + fmt(root.value, root.valueText));
  }
  function color(name) {
    var h = 2166136261;
    for (var i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
    h >>>= 0;
    return 'rgb(' + (205 + h % 50) + ',' + (80 + (h >>> 8) % 150) + ',' + ((h >>> 16) % 55) + ')';
  }
  chart.addEventListener('click', function (e) {
    var n = e.target.__node;
    if (!n) return;
    zoomed = n;
    render();
  });
  chart.addEventListener('mousemove', function (e) {
    var n = e.target.__node;
    if (!n) { tip.style.display = 'none'; return; }
    tip.innerHTML = '<b>' + escapeHtml(n.name) + '</b><br>' + fmt(n.value, n.valueText) + ' (' + pct(n.value, root.value) + ' of total' +
      (zoomed !== root ? ', ' + pct(n.value, zoomed.value) + ' of zoom' : '') + ')<br>self ' + fmt(n.self, n.selfText) + ' (' + pct(n.self, root.value) + ')';
    tip.style.display = 'block';
    var x = e.pageX + 12, y = e.pageY + 12;
    if (x + tip.offsetWidth > window.innerWidth - 4) x = e.pageX - tip.offsetWidth - 12;
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  });
  chart.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  document.getElementById('reset').addEventListener('click', function () { zoomed = root; render(); });
  document.getElementById('toggle').addEventListener('click', function () {
    icicle = !icicle;
    this.textContent = icicle ? 'Flame' : 'Icicle';
    render();
  });
  search.addEventListener('input', function () {
    var v = search.value;
    try { re = v ? new RegExp(v) : null; search.className = ''; } catch (err) { re = null; search.className = 'bad'; }
    render();
  });
  window.addEventListener('resize', render);
  window.flame = { root: root, render: render, zoom: function (n) { zoomed = n; render(); }, setIcicle: function (b) { icicle = b; render(); } };
  render();
})();
`;

/** `v` as a JSON number when a double holds it exactly, else as its decimal string. */
function exactJsonValue(v: bigint): number | string {
  return v >= -MAX_EXACT_DOUBLE && v <= MAX_EXACT_DOUBLE ? Number(v) : String(v);
}
const MAX_EXACT_DOUBLE = BigInt(Number.MAX_SAFE_INTEGER);

/** The HTML page's text in chunks: the page up to the frames, the frames 4,096 at a time, the rest. */
function* htmlChunks(drawn: FramesToDraw, o: { title: string; subtitle: string; unit: string }): Generator<string> {
  // Flat encoding (no nesting, names shared): frames in depth-first order, 4 numbers each:
  // name index, value, self, parent frame index (-1 for the root). A value beyond 2^53 (which a
  // JSON number would round) is a decimal string instead.
  const drawnFrames = drawn.frames;
  // The names come before the frames in the JSON: a first walk numbers them in order of first use
  // and keeps each frame's (4 bytes a frame), the second writes the frames.
  const names = new StringKeyedMap<number>();
  const nameList: string[] = [];
  const nameIndex = new Int32Array(drawnFrames.count);
  for (const { frame } of layout(drawn)) {
    const name = drawnFrames.name(drawnFrames.nameId[frame]!);
    let k = names.get(name);
    if (k === undefined) names.set(name, (k = nameList.push(name) - 1));
    nameIndex[frame] = k;
  }
  // `<` is escaped so that no frame name can close the script element (the frames are numbers).
  const head = JSON.stringify({ version: 1, unit: o.unit, names: nameList }).replace(/</g, '\\u003c');
  yield `${htmlPageStart(o)}${head.slice(0, -1)},"frames":[`;
  // The frames' JSON text is written a frame at a time (what JSON.stringify writes for the array
  // of their numbers, without the array: 2.4M numbers for 600,000 frames), 4,096 frames a chunk.
  let chunk: string[] = [];
  let separator = '';
  // Where each drawn frame stands in the output (callers come first).
  const index = new Int32Array(drawnFrames.count);
  let at = 0;
  for (const { frame } of layout(drawn)) {
    index[frame] = at++;
    const parent = drawnFrames.parent[frame]!;
    const value = JSON.stringify(exactJsonValue(BigInt(drawnFrames.value[frame]!)));
    const self = JSON.stringify(exactJsonValue(BigInt(drawnFrames.self[frame]!)));
    chunk.push(`${nameIndex[frame]!},${value},${self},${parent < 0 ? -1 : index[parent]!}`);
    if (chunk.length === 4096) {
      yield separator + chunk.join(',');
      [chunk, separator] = [[], ','];
    }
  }
  if (chunk.length > 0) yield separator + chunk.join(',');
  yield `]}</script>
<script>${VIEWER_JS}</script>
</body>
</html>
`;
}

/** The HTML page up to the text of the embedded JSON data. */
function htmlPageStart(o: { title: string; subtitle: string }): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeXml(o.title)}</title>
<style>
body { font: 13px Verdana, sans-serif; margin: 12px; background: #f8f8f8; color: #222; }
h1 { font-size: 18px; margin: 0 0 2px; }
.sub { color: #555; margin-bottom: 8px; }
.bar { display: flex; gap: 8px; align-items: center; margin-bottom: 8px; }
.bar input { width: 260px; padding: 3px 6px; }
.bar input.bad { background: #fdd; }
#status { color: #444; }
#chart { position: relative; width: 100%; overflow: hidden; }
.frame { position: absolute; height: 17px; line-height: 17px; font-size: 11px; padding: 0 3px; box-sizing: border-box;
  overflow: hidden; white-space: nowrap; text-overflow: ellipsis; border-radius: 2px; cursor: pointer; }
.frame:hover { outline: 1px solid #333; }
.frame.dim { background: #ddd !important; color: #666; }
.frame.match { background: #d36ef0; }
#tooltip { position: absolute; display: none; background: #fff; border: 1px solid #888; padding: 4px 8px; font-size: 12px;
  pointer-events: none; box-shadow: 2px 2px 4px rgba(0,0,0,.2); max-width: 600px; word-break: break-all; }
</style>
</head>
<body>
<h1>${escapeXml(o.title)}</h1>
<div class="sub">${escapeXml(o.subtitle)}</div>
<div class="bar">
<button id="toggle" type="button">Icicle</button>
<button id="reset" type="button">Reset zoom</button>
<input id="search" type="search" placeholder="Search (regular expression)">
<span id="status"></span>
</div>
<div id="chart"></div>
<div id="tooltip"></div>
<script type="application/json" id="flame-data">`;
}

/**
 * A flame graph of one sample type as a self-contained document: `html` embeds the data and a
 * small viewer (flame/icicle toggle, regular-expression search, click to zoom, tooltips with
 * value and percentage of the total); `svg` is a static image with one `<g class="frame">` per
 * frame (a `<title>` tooltip each), frames narrower than 0.1 px left out. Either way frames
 * narrower than `minWidth` of the total are left out, so the output stays small for any input.
 * The frames and the count of those left out are `boundedFlameTree`'s, walked from the samples
 * (`cutFlameTree` with `countEveryFrame`): no stack table, whose rows outweighed the profile itself
 * on profiles whose stacks share little.
 */
export function renderFlameGraph(p: Profile, options: FlameGraphOptions = {}): string {
  return [...flameGraphChunks(p, options, true)].join('');
}

/**
 * `renderFlameGraph`'s text in chunks (the SVG 16,384 lines at a time, the HTML's frames 4,096 at a
 * time), made as they are taken, so that a writer holds one chunk, not the document: a graph of
 * 2M frames is a 437 MB SVG. The frames are cut (and `maxFlameFrames` checked) when this is
 * called; `maxReportBytes` is counted as the SVG's chunks are made (a `PROFKIT_E_LIMIT` error
 * from the iteration).
 */
export function renderFlameGraphChunks(p: Profile, options: FlameGraphOptions = {}): Iterable<string> {
  return flameGraphChunks(p, options, false);
}

function flameGraphChunks(p: Profile, options: FlameGraphOptions, asOneString: boolean): Generator<string> {
  const t = options.sampleTypeIndex ?? defaultSampleTypeIndex(p);
  checkType(p, t);
  const minWidth = options.minWidth ?? DEFAULT_FLAME_MIN_WIDTH;
  const { frames: drawnFrames, allFrames: frames, elided, countStopped } = cutFlameFrames(p, t, minWidth, { countEveryFrame: true, limits: options.limits });
  const drawn: FramesToDraw = { frames: drawnFrames, ...drawnFrames.sortedCallees() };
  const total = BigInt(drawnFrames.value[0]!);
  const type = p.sample_types.type[t]!;
  const unit = p.sample_types.unit[t]!;
  const title = options.title ?? 'Flame graph';
  let subtitle = `${type}/${unit}, total ${formatValue(total, unit)}`;
  // Past its work budget the count stops (a subtitle never fails or slows a drawing): lower bounds.
  const atLeast = countStopped ? 'at least ' : '';
  if (elided > 0) subtitle += `; ${atLeast}${elided} of ${atLeast}${frames} frames narrower than ${+(minWidth * 100).toPrecision(6)}% of the total left out (min width)`;
  if ((options.format ?? 'html') === 'svg') return svgChunks(drawn, { title, subtitle, width: options.width ?? 1200, icicle: options.icicle ?? false, unit, limits: options.limits }, asOneString);
  return htmlChunks(drawn, { title, subtitle, unit });
}
