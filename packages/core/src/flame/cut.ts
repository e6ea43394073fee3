/**
 * `cutFlameTree`: the frames of the flame graph at least `minWidth` of the total wide, found
 * from the samples without a stack table. `boundedFlameTree` builds the stack table first (one
 * row per distinct caller path and frame) and expands every frame to count those it leaves out;
 * on profiles whose stacks share little the table has nearly a row per frame of every sample (a
 * random 1M-sample profile: 47M rows, 12 s to build, while 48k frames are drawn). Here a frame's
 * members are the samples through it, at their position in the stack; only drawn frames are
 * expanded, so the walk costs the samples times the depth they are drawn to, and memory is a few
 * bytes a sample.
 */

import { ErrorCodes, ProfkitError } from '../errors.js';
import type { Profile } from '../model.js';
import { grown, sumsExactInDoubles } from '../ops/stack-table.js';
import { ProfileIndex } from '../views.js';
import type { FlameNode } from './index.js';
import { StringKeyedMap } from '../string-keys.js';

/** A flame tree cut at a width, and how many frames were cut (the outermost only: their callees are not visited). */
export interface CutFlameTree {
  tree: FlameNode;
  /** Frames narrower than the cut whose caller is drawn (their own callees are not counted). */
  elided: number;
}

/**
 * The frame names of every location row, outermost first: the names of row r are
 * `ids[start[r] .. start[r + 1]]`, indices into `names` (`[unknown]` for a frame without a name).
 * The names `locationFrames` gives, without making its frame objects: each function row's name is
 * looked up once (a 1M-sample profile has 100k functions behind 500k frames of its locations;
 * resolving every frame was half of its flame graph's time).
 */
export function locationNameIds(p: Profile, index: ProfileIndex): { names: string[]; start: Int32Array; ids: Int32Array } {
  const names: string[] = [];
  // Names can be long (see StringKeyedMap).
  const nameIds = new StringKeyedMap<number>();
  const idOf = (name: string): number => {
    let id = nameIds.get(name || '[unknown]');
    if (id === undefined) {
      id = names.length;
      names.push(name || '[unknown]');
      nameIds.set(name || '[unknown]', id);
    }
    return id;
  };
  const fnNames = p.functions.name;
  // Name id of each function row, -1 until first needed.
  const ofFunctionRow = new Int32Array(fnNames.length).fill(-1);
  // As locationFrames: an unknown function id is a frame named ''.
  const ofFunction = (functionId: number): number => {
    const fr = index.functions.get(functionId);
    if (fr < 0) return idOf('');
    if (ofFunctionRow[fr]! < 0) ofFunctionRow[fr] = idOf(fnNames[fr]!);
    return ofFunctionRow[fr]!;
  };
  const l = p.locations;
  const inl = p['.inline_lines'];
  const nLocations = l.location_id.length;
  const start = new Int32Array(nLocations + 1);
  // A frame per location and per inline line (grown if a profile's inline offsets overlap).
  let ids = new Int32Array(inl.function_id.length + nLocations);
  let n = 0;
  const push = (id: number) => {
    if (n === ids.length) ids = grown(ids, n + 1);
    ids[n++] = id;
  };
  for (let r = 0; r < nLocations; r++) {
    // locationFrames' order is the location's line, then its inline lines; outermost first is the reverse.
    const b = l['.inline_offsets'][r]!;
    for (let j = l['.inline_offsets'][r + 1]! - 1; j >= b; j--) push(ofFunction(inl.function_id[j]!));
    if (l.function_id[r] !== 0) push(ofFunction(l.function_id[r]!));
    if (n === start[r]) {
      const address = l['.address'][r]!;
      push(idOf(address !== 0n ? '0x' + address.toString(16) : ''));
    }
    start[r + 1] = n;
  }
  return { names, start, ids: ids.slice(0, n) };
}

/** `col` as doubles. A loop: `Float64Array.from(col, Number)` calls its mapper per value, 5-10x slower (0.4-0.7 s at 1M samples). */
function doublesOf(col: BigInt64Array): Float64Array {
  const out = new Float64Array(col.length);
  for (let i = 0; i < col.length; i++) out[i] = Number(col[i]!);
  return out;
}

/** Every node's callees in name order (how flame graphs lay them out), without recursion. */
export function sortChildrenByName(tree: FlameNode): void {
  const byName = (x: FlameNode, y: FlameNode) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0);
  const work: FlameNode[] = [tree];
  while (work.length) {
    const n = work.pop()!;
    n.children.sort(byName);
    for (const c of n.children) work.push(c);
  }
}

/**
 * One expansion's callees grouped by name (two locations of one function are one frame), for
 * the flame cut and the levelled flame graph: `begin()` starts an expansion, `groupOf(name)`
 * counts a callee into its group (numbered 0..size-1 by first appearance) and returns it.
 */
export class CalleeGroups {
  /** Per group: its name id, member count and value (bigints or doubles, as `zero`). */
  readonly name: number[] = [];
  readonly count: number[] = [];
  readonly value: number[] = [];
  size = 0;
  // groupOfName[name] is valid while stampOf[name] is the current expansion's stamp.
  private readonly groupOfName: Int32Array;
  private readonly stampOf: Int32Array;
  private stamp = 0;

  constructor(
    nameCount: number,
    private readonly zero: number,
  ) {
    this.groupOfName = new Int32Array(nameCount);
    this.stampOf = new Int32Array(nameCount).fill(-1);
  }

  begin(): void {
    this.stamp++;
    this.size = 0;
  }

  groupOf(name: number): number {
    if (this.stampOf[name] === this.stamp) {
      const g = this.groupOfName[name]!;
      this.count[g]!++;
      return g;
    }
    const g = this.size++;
    this.stampOf[name] = this.stamp;
    this.groupOfName[name] = g;
    this.name[g] = name;
    this.count[g] = 1;
    this.value[g] = this.zero;
    return g;
  }
}

/**
 * The flame tree of sample type `t` (as `flameTree`: root `all`, inline frames expanded
 * outermost first, callees sorted by name, samples with a value <= 0 left out) without the frames
 * narrower than `minWidth` of the total: every drawn frame and value equal to
 * `boundedFlameTree(p, t, minWidth).tree`. A frame left out is not expanded: `elided` counts
 * only the outermost frames left out.
 */
export function cutFlameTree(p: Profile, t: number, minWidth: number): CutFlameTree {
  const col = p.samples['.values'][t];
  if (!col) {
    throw new ProfkitError(ErrorCodes.USAGE, `sample type index ${t} is out of range (the profile has ${p.sample_types.type.length} sample types)`, {
      option: 'sampleTypeIndex',
      rule: 'the sample type index must name an existing sample type',
    });
  }
  const index = new ProfileIndex(p);
  const { names, start: locStart, ids: locIds } = locationNameIds(p, index);
  const { offsets, location_id } = p.samples.locations;
  // Sample values as doubles when every sum is exact in them (sumsExactInDoubles), else the
  // bigints: `+` is exact on either (as in boundedFlameTree).
  const keep = (v: bigint) => v > 0n;
  const exact = sumsExactInDoubles(col, keep);
  const values = (exact ? doublesOf(col) : col) as unknown as ArrayLike<number>;
  const zero = (exact ? 0 : 0n) as number;
  const rowOf = (k: number) => index.locations.get(location_id[k]!);

  // Members of the frames still to visit, a stack of (sample, entry k of its locations, that
  // entry's location row, position among the location's frames). The root's members stand before their sample's outermost
  // location: k = offsets[i + 1], the next frame is the first known location below.
  let memberSample = new Int32Array(1024);
  let memberK = new Int32Array(1024);
  let memberRow = new Int32Array(1024);
  let memberPos = new Int32Array(1024);
  let members = 0;
  const add = (i: number, k: number, pos: number) => {
    if (members === memberSample.length) [memberSample, memberK, memberRow, memberPos] = [grown(memberSample, members + 1), grown(memberK, members + 1), grown(memberRow, members + 1), grown(memberPos, members + 1)];
    memberSample[members] = i;
    memberK[members] = k;
    memberRow[members] = -1;
    memberPos[members++] = pos;
  };
  let rootValue = zero;
  for (let i = 0; i < col.length; i++) {
    if (!keep(col[i]!)) continue;
    add(i, offsets[i + 1]!, 0);
    rootValue += values[i]!;
  }
  const tree: FlameNode = { name: 'all', value: BigInt(rootValue), self: 0n, children: [] };
  const threshold = minWidth * Number(rootValue);

  // The callees of the frame being expanded: sample, k, position, name group.
  let nextSample = new Int32Array(1024);
  let nextK = new Int32Array(1024);
  let nextRow = new Int32Array(1024);
  let nextPos = new Int32Array(1024);
  let nextGroup = new Int32Array(1024);
  const calleeGroups = new CalleeGroups(names.length, zero);
  const { name: groupName, count: groupCount, value: groupValue } = calleeGroups;
  let elided = 0;
  const pendingStart: number[] = [0];
  const pendingNode: FlameNode[] = [tree];
  while (pendingStart.length > 0) {
    const from = pendingStart.pop()!;
    const node = pendingNode.pop()!;
    const end = members;
    let callees = 0;
    let self = zero;
    for (let m = from; m < end; m++) {
      const i = memberSample[m]!;
      let k = memberK[m]!;
      let pos = memberPos[m]! + 1;
      let r = k < offsets[i + 1]! ? memberRow[m]! : -1;
      if (r < 0 || locStart[r]! + pos >= locStart[r + 1]!) {
        // Past the location's innermost frame: the next known location, if any.
        pos = 0;
        for (r = -1; r < 0 && --k >= offsets[i]!; ) r = rowOf(k);
        if (r < 0) {
          self += values[i]!;
          continue;
        }
      }
      if (callees === nextSample.length) {
        const n = callees + 1;
        [nextSample, nextK, nextRow, nextPos, nextGroup] = [grown(nextSample, n), grown(nextK, n), grown(nextRow, n), grown(nextPos, n), grown(nextGroup, n)];
      }
      nextSample[callees] = i;
      nextK[callees] = k;
      nextRow[callees] = r;
      nextPos[callees++] = pos;
    }
    node.self = BigInt(self);
    // The callees grouped by name.
    calleeGroups.begin();
    for (let c = 0; c < callees; c++) {
      const g = calleeGroups.groupOf(locIds[locStart[nextRow[c]!]! + nextPos[c]!]!);
      nextGroup[c] = g;
      groupValue[g]! += values[nextSample[c]!]!;
    }
    const groups = calleeGroups.size;
    // The drawn callees replace the expanded frame's members, one run per group (a counting
    // sort); the members of the callees left out are dropped.
    members = from;
    for (let g = 0; g < groups; g++) {
      if (Number(groupValue[g]!) < threshold) {
        elided++;
        groupCount[g] = -1;
        continue;
      }
      const child: FlameNode = { name: names[groupName[g]!]!, value: BigInt(groupValue[g]!), self: 0n, children: [] };
      node.children.push(child);
      pendingStart.push(members);
      pendingNode.push(child);
      const count = groupCount[g]!;
      groupCount[g] = members; // from here on: where the group's next member goes
      members += count;
    }
    if (members > memberSample.length) [memberSample, memberK, memberRow, memberPos] = [grown(memberSample, members), grown(memberK, members), grown(memberRow, members), grown(memberPos, members)];
    for (let c = 0; c < callees; c++) {
      const g = nextGroup[c]!;
      if (groupCount[g]! < 0) continue;
      const to = groupCount[g]!++;
      memberSample[to] = nextSample[c]!;
      memberK[to] = nextK[c]!;
      memberRow[to] = nextRow[c]!;
      memberPos[to] = nextPos[c]!;
    }
  }
  sortChildrenByName(tree);
  return { tree, elided };
}
