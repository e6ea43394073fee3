/**
 * The text reports of a difference (`go tool pprof -top/-tree/-peek -diff_base BASE NEW`)
 * computed from the two profiles' stack tables, without merging the profiles.
 *
 * Why: `diff` (diff.ts) builds a third profile (the base relabelled, negated and merged in),
 * which costs more than reading both inputs, and holds three profiles at once. The reports only
 * need per-stack sums, so each profile is reduced on its own to its report stack table
 * (`reportStacks`: the per-stack filters and `-mean` applied as for one profile) with its frames'
 * nodes in one node table shared by both sides: a node is what the report prints (function name,
 * file, line… at the report's granularity), so a frame of the base lands on the node of the same
 * meaning in the new profile whatever the ids. The base's sums are negated, and the call graph
 * walks both tables and adds the results (`GraphInput.others`): every sum of the graph is a sum
 * over samples, so the numbers are those of the merged profile, and calls first reached in the new
 * profile come first, as in the merged profile (its samples first). The report total is pprof's
 * (the sum of |value| over the base samples). A side is reduced as soon as it is read and the
 * profile dropped, and its table walked once then and kept in a fifth of its size (`summedSide`);
 * the report walks tables cut to the stacks of the shown nodes (`prunedSource`). The peak holds
 * one profile, its table and the other side's reduced table.
 *
 * Not covered (`diffReportUnsupported` names them; callers merge instead): `-base` (samples that
 * cancel out change the total), the tag frames and tag filters (they read the merged labels),
 * `-relative_percentages`, `-addresses` (merging rebases addresses), `-mean` with `-normalize`,
 * and inputs whose values make the merged total differ from the sums of the sides (negative
 * values, samples already labelled `pprof::base`).
 */

import { ErrorCodes, ProfkitError } from '../errors.js';
import type { Profile } from '../model.js';
import { ProfileIndex, defaultSampleTypeIndex } from '../views.js';
import { DIFF_BASE_LABEL } from './diff.js';
import { abs, mappingIdentity } from './internal.js';
import { checkCompatible, combineFacts } from './merge.js';
import { meanOf } from './mean.js';
import {
  checkSampleType,
  flattenLocationNodes,
  newNodeNames,
  ratioOf,
  reportStacks,
  type CallGraphOptions,
  type GraphInput,
  type NodeNames,
  type PreparedReport,
  type ProfileHeader,
  type ReportFilters,
  type ReportInput,
  type ReportStacks,
  buildNodes,
  trimmedCallGraph,
  type ReportGraphSource,
} from './report.js';
import type { ReportGranularity } from './granularity.js';
import { given } from './report-filters.js';
import { hasStackFilters } from './stack-filters.js';
import { scaleValue } from './scale.js';
import { RowSums, childLists, sparseSelf, stackChildren, type ChildLists, type StackValues } from './stack-table.js';

export interface DiffReportOptions extends ReportFilters {
  /** The sample type reported (both profiles have the same sample types). */
  sampleTypeIndex: number;
  by?: ReportGranularity;
  inline?: boolean;
  /**
   * pprof `-normalize`: the new profile scaled to the base's total first, sample by sample (each
   * rounded). pprof's driver has merged the samples of the file by then: give `addNew` the new
   * profile merged (`merge([p])`, before drop_frames) to get its numbers.
   */
  normalize?: boolean;
  /**
   * `sampleTypeIndex` is the new profile's default sample type (none was asked for): the merged
   * profile's default (the base's when the new one names none) must then be the same.
   */
  sampleTypeDefaulted?: boolean;
  /**
   * The reports will not be trimmed (`peek`: every node shown): the tables are then kept whole and
   * walked by each pass of the report, as cutting them to the shown nodes would keep every stack.
   */
  untrimmed?: boolean;
}

/** Why `options` cannot be reported without merging (undefined: they can). */
export function diffReportUnsupported(options: Omit<DiffReportOptions, 'sampleTypeIndex'>): string | undefined {
  if ((options.tagRoot ?? []).some((k) => k !== '') || (options.tagLeaf ?? []).some((k) => k !== '')) return 'tag frames read the labels of the merged profile';
  if (given(options.tagFocus) || given(options.tagIgnore)) return 'tag filters read the labels of the merged profile';
  if (options.relativePercentages) return 'relative percentages take the total of the filtered merged profile';
  if (options.by === 'address') return 'merging rebases addresses';
  if (options.mean && options.normalize) return '-normalize scales the divisor too';
  return undefined;
}

/** One profile of a diff reduced to what its reports read (see the module comment). */
interface DiffSide {
  /** Node ids of every location row (`flattenLocationNodes`). */
  locations: Locations;
  /**
   * The whole stack table (and the divisor's sums), kept with -mean (its reports walk the whole
   * tables) and for NEW with -normalize (its sums are scaled once BASE is read).
   */
  whole?: Pick<ReportStacks, 'stacks' | 'divisor'>;
  /** Otherwise the side summed as soon as it is read, its whole table dropped (`summedSide`). */
  summed?: SummedSide;
  /** Sum of |value| and sum of the divisor (with -mean) over all samples of the sample type. */
  absTotal: bigint;
  divisorTotal: bigint;
  /** Signed sum of the values (pprof `-normalize` scales by the ratio of these). */
  sum: bigint;
  hasNegative: boolean;
  /** The values (kept for `-normalize` only: the new profile's samples are scaled one by one, as pprof scales them). */
  values?: BigInt64Array;
  /** What merging, the header and the compatibility check read of the profile. */
  shell: Pick<Profile, '.profile' | 'sample_types'> & { '.mappings': ProfileHeader['.mappings'] };
}

/**
 * Builds the report input of NEW minus BASE side by side: `addNew(profile)`, then
 * `addBase(profile)` (each profile can be dropped once added), then `input()` for `topReport` /
 * `treeReport`. `addNew` / `addBase` return why the pair needs merging instead (undefined: fine).
 */
export class DiffReportBuilder {
  private readonly nodes: NodeNames = newNodeNames();
  private next: DiffSide | undefined;
  private base: DiffSide | undefined;
  private readonly graphOptions: CallGraphOptions;
  /** The file of each mapping identity seen so far (pprof Merge's key: build id or file, size, offset). */
  private readonly mappingFiles = new Map<string, string>();

  constructor(private readonly options: DiffReportOptions) {
    const why = diffReportUnsupported(options);
    if (why !== undefined) throw new ProfkitError(ErrorCodes.USAGE, `this diff report needs the merged profile: ${why}`, { rule: 'diffReportUnsupported(options) is undefined' });
    this.graphOptions = {
      sampleTypeIndex: options.sampleTypeIndex,
      by: options.by,
      inline: options.inline,
      meanDivisorIndex: options.mean ? 0 : undefined,
      stackFilters: hasStackFilters(options) ? options : undefined,
    };
  }

  /** Reduces the new profile; a reason when the pair must be merged instead. */
  addNew(p: Profile): string | undefined {
    checkSampleType(p, this.options.sampleTypeIndex);
    const offsets = p.samples['.label_offsets'];
    if (offsets && offsets[offsets.length - 1]! > 0 && p['.labels'].key.includes(DIFF_BASE_LABEL)) return `samples of the new profile are labelled ${DIFF_BASE_LABEL}`;
    const clash = this.mappingClash(p);
    if (clash !== undefined) return clash;
    this.next = this.side(p, this.options.normalize === true, false);
    return undefined;
  }

  /** Reduces the base profile (after `addNew`); a reason when the pair must be merged instead. */
  addBase(p: Profile): string | undefined {
    const next = this.next;
    if (!next) throw new Error('DiffReportBuilder: addNew first');
    checkCompatible(next.shell as Profile, p, 'the profile and its diff base');
    // The merged profile's default sample type is the new one's, else the base's.
    const merged = { '.profile': { default_sample_type: next.shell['.profile'].default_sample_type || p['.profile'].default_sample_type }, sample_types: p.sample_types } as Profile;
    if (this.options.sampleTypeDefaulted && defaultSampleTypeIndex(merged) !== this.options.sampleTypeIndex) return 'the merged profile defaults to another sample type';
    const clash = this.mappingClash(p);
    if (clash !== undefined) return clash;
    // BASE is subtracted: its sums negated (`side`).
    const base = this.side(p, false, true);
    // The merged total sums |value| per merged sample: the sides' sums of |value| only when every value has one sign.
    if (base.hasNegative) return 'the base profile has negative values';
    // Merging drops the samples that cancel out (and -normalize those it rounds to 0): a stack of
    // only those would still be walked here, its calls shown with weight 0.
    if (next.hasNegative) return 'the new profile has negative values';
    if (next.values) {
      const ratio = normalizeRatio(next, base);
      for (const v of next.values) if (v !== 0n && scaleValue(v, ratio) === 0n) return '-normalize rounds samples of the new profile to 0';
    }
    this.base = base;
    return undefined;
  }

  /**
   * Merging makes mappings of one identity one mapping, named by the first one's file, which
   * unsymbolized frames print: a mapping named otherwise than an earlier one of its identity
   * (e.g. the same build in another directory) would make nodes of its own here.
   */
  private mappingClash(p: Profile): string | undefined {
    const m = p['.mappings'];
    for (let r = 0; r < m.mapping_id.length; r++) {
      const identity = mappingIdentity(p, r);
      const file = this.mappingFiles.get(identity);
      if (file === undefined) this.mappingFiles.set(identity, m.filename[r]!);
      else if (file !== m.filename[r]) return `mappings ${JSON.stringify(file)} and ${JSON.stringify(m.filename[r])} are merged into one`;
    }
    return undefined;
  }

  private side(p: Profile, keepValues: boolean, negated: boolean): DiffSide {
    const t = this.options.sampleTypeIndex;
    const col = p.samples['.values'][t]!;
    const div = this.options.mean ? p.samples['.values'][0] : undefined;
    let absTotal = 0n;
    let sum = 0n;
    let divisorTotal = 0n;
    let hasNegative = false;
    for (let i = 0; i < col.length; i++) {
      const v = col[i]!;
      sum += v;
      if (v < 0n) hasNegative = true;
      absTotal += abs(v);
    }
    if (div) for (let i = 0; i < div.length; i++) divisorTotal += div[i]!;
    const m = p['.mappings'];
    const first = m.mapping_id.length > 0 ? 1 : 0;
    const { locNodes, stacks, divisor } = reportStacks(p, new ProfileIndex(p), t, this.graphOptions, this.nodes);
    const locations = flattenLocationNodes(locNodes);
    const keepWhole = this.options.mean === true || this.options.untrimmed === true || keepValues;
    if (keepWhole && negated) {
      negate(stacks.self);
      if (divisor) negate(divisor.self);
    }
    return {
      locations,
      ...(keepWhole ? { whole: { stacks, ...(divisor ? { divisor } : {}) } } : { summed: summedSide({ nNodes: this.nodes.names.length, ...locations, stacks }, negated) }),
      absTotal,
      divisorTotal,
      sum,
      hasNegative,
      ...(keepValues ? { values: col } : {}),
      shell: {
        '.profile': p['.profile'],
        sample_types: p.sample_types,
        '.mappings': { mapping_id: m.mapping_id.slice(0, first), filename: m.filename.slice(0, first), build_id: m.build_id.slice(0, first) },
      },
    };
  }

  /** The report input of NEW minus BASE (after `addNew` and `addBase`). */
  input(): ReportInput {
    const next = this.next;
    const base = this.base;
    if (!next || !base) throw new Error('DiffReportBuilder: addNew and addBase first');
    const t = this.options.sampleTypeIndex;
    // pprof -normalize: NEW's samples scaled by sum(BASE)/sum(NEW), each rounded (pprof ScaleN).
    const ratio = this.options.normalize ? normalizeRatio(next, base) : 1;
    let nextSelf = next.whole?.stacks.self;
    let nextAbsTotal = next.absTotal;
    if (ratio !== 1) ({ self: nextSelf, absTotal: nextAbsTotal } = scaledSums(next, ratio));
    // pprof computeTotal: the base samples' total (they carry pprof::base=true), or everything's when it is 0.
    const meanOn = this.options.mean === true;
    // With -mean the divisor's sums would need the same cut: the whole tables then.
    const walkWhole = meanOn || this.options.untrimmed === true;
    const total = base.absTotal > 0n ? meanOf(base.absTotal, meanOn ? -base.divisorTotal : 0n) : meanOf(nextAbsTotal + base.absTotal, meanOn ? next.divisorTotal - base.divisorTotal : 0n);
    const header: ProfileHeader = {
      sample_types: next.shell.sample_types,
      '.mappings': next.shell['.mappings'].mapping_id.length > 0 ? next.shell['.mappings'] : base.shell['.mappings'],
      '.profile': combineFacts([next.shell, base.shell] as Profile[]),
    };
    const nodes = this.nodes;
    const wholeInput = (side: DiffSide, self = side.whole!.stacks.self): GraphInput => ({
      nNodes: nodes.names.length,
      ...side.locations,
      stacks: { ...side.whole!.stacks, self },
      ...(side.whole!.divisor ? { divisor: side.whole!.divisor } : {}),
    });
    // BASE's samples after NEW's, as merging orders them; its sums were negated by `side` (whole
    // tables) or `summedSide`.
    let summed: SummedSide[] | undefined;
    const summedSides = () => (summed ??= [next.summed ?? summedSide(wholeInput(next, nextSelf), false), base.summed ?? summedSide(wholeInput(base), false)]);
    const unit = next.shell.sample_types.unit[t]!;
    const source = { t, unit, names: nodes.names, infos: nodes.infos, total: () => total };
    const wholeSource = (): ReportGraphSource => ({ ...source, g: { ...wholeInput(next, nextSelf), others: [wholeInput(base)] } });
    const options = this.options;
    return {
      kind: 'report-input',
      defaultSampleTypeIndex: t,
      prepare(reportType: number, reportOptions: ReportFilters): PreparedReport {
        if (reportType !== t || diffReportUnsupported({ ...reportOptions, by: options.by, normalize: options.normalize }) !== undefined || !!reportOptions.mean !== meanOn) {
          throw new ProfkitError(ErrorCodes.USAGE, 'a diff report input is reported with the sample type and options it was built for', { rule: 'DiffReportBuilder options match the report options' });
        }
        return {
          total,
          ratio: ratioOf(reportOptions),
          meanDivisorIndex: meanOn ? 0 : undefined,
          typeName: meanOn ? 'mean_' + next.shell.sample_types.type[t]! : undefined,
          stackFilters: hasStackFilters(reportOptions) ? reportOptions : undefined,
          graphSource: (graphOptions) => (walkWhole ? wholeSource() : prunedSource(source, summedSides(), graphOptions)),
          header,
        };
      },
    };
  }
}

/** The new side's per-stack sums and total of |value| with every sample scaled by `ratio` (pprof `ScaleN`). */
function scaledSums(side: DiffSide, ratio: number): { self: StackValues; absTotal: bigint } {
  const col = side.values!;
  const { sampleStack, length } = side.whole!.stacks;
  const scaled = new BigInt64Array(col.length);
  let absTotal = 0n;
  for (let i = 0; i < col.length; i++) {
    scaled[i] = scaleValue(col[i]!, ratio);
    absTotal += abs(scaled[i]!);
  }
  const sums = new RowSums(absTotal <= 2n ** 53n, length);
  for (let i = 0; i < col.length; i++) if (sampleStack[i]! >= 0) sums.add(sampleStack[i]!, scaled[i]!);
  return { self: sums.finish(length), absTotal };
}

/** pprof `Normalize`'s ratio: sum(BASE) / sum(NEW), 0 when NEW sums to 0. */
function normalizeRatio(next: DiffSide, base: DiffSide): number {
  return next.sum === 0n ? 0 : Number(base.sum) / Number(next.sum);
}

/** `values` negated in place (exact in either representation). */
function negate(values: StackValues): void {
  const v = values as unknown as number[];
  for (let i = 0; i < v.length; i++) v[i] = -v[i]!;
}

/**
 * The graph source of a report of NEW minus BASE that walks each side's whole stack table once
 * instead of once per pass of the report.
 *
 * Why: on profiles whose stacks share little each table has about one row per frame (millions),
 * and the report walks every table twice (flat and cum of every node to pick the shown nodes,
 * then again for the calls between them). The second walk only needs the stacks that hold a
 * shown node and their callers: every other subtree adds to those stacks' totals only (its
 * frames hold no shown node, so it has no call into one and no flat of one). So: one walk per
 * side for every node's flat and cum (`exact`); the shown nodes picked from those sums by the
 * report's own trimming (`trimmedCallGraph` of a graph that has exactly those sums); each table
 * cut to the stacks above a frame of a shown node, every cut subtree replaced by one row of its
 * total and no frame; and a small table of corrections that makes every node's flat and cum
 * those of the whole tables again, for the report's first pass (which then picks the same nodes).
 * Rows keep their order, so calls are first reached in the same order.
 */
function prunedSource(source: Omit<ReportGraphSource, 'g'>, sides: SummedSide[], options: CallGraphOptions): ReportGraphSource {
  const nodeCount = source.names.length;
  // One node more, never shown: the corrections add to it and take it away again (see `correctionInput`).
  const names = [...source.names, ''];
  const infos = [...source.infos, ''];
  const exact = sumOfSides(sides, nodeCount + 1);
  const shownNames = new Set(trimmedCallGraph({ ...source, names, infos, g: correctionInput(exact.flat, exact.cum) }, options, true).nodes.map((n) => n.name));
  // By name: a superset of the shown nodes when names repeat, which the cut allows.
  const shown = new Uint8Array(nodeCount + 1);
  for (let n = 0; n < nodeCount; n++) if (shownNames.has(names[n]!)) shown[n] = 1;
  // A side whose cut would keep most rows (e.g. `peek`, never trimmed) is walked whole: the cut
  // would save nothing, and its sums are then known without a walk.
  const walked = sides.map((side) => {
    const cut = pruneStacks(side, nodeCount + 1, shown);
    return cut ? { g: cut, sums: buildNodes(cut, undefined) } : { g: wholeStacks(side, nodeCount + 1), sums: side };
  });
  const left = sumOfSides(
    walked.map((w) => w.sums),
    nodeCount + 1,
  );
  const corrections = correctionInput(
    exact.flat.map((v, n) => v - left.flat[n]!),
    exact.cum.map((v, n) => v - left.cum[n]!),
  );
  return { ...source, names, infos, g: { ...walked[0]!.g, others: [...walked.slice(1).map((w) => w.g), corrections] } };
}

/** A side's stacks as the cut reads them: each row's caller and frame, and the rows that have values of their own. */
interface CuttableStacks {
  length: number;
  callers: CallerColumn;
  frame: Int32Array;
  valueRows: Int32Array;
  /** The values of `valueRows`, doubles when the table sums in doubles. */
  values: StackValues;
}

/** One side of a diff walked once: every node's flat and cum over its samples, and its stacks for the cut. */
interface SummedSide {
  locations: Locations;
  /** Per node id (nodes added by the other side later have none). */
  flat: bigint[];
  cum: bigint[];
  stacks: CuttableStacks;
}

type Locations = Pick<GraphInput, 'locNodeOffsets' | 'locNodeIds'>;

/**
 * Walks a side's whole table once (`buildNodes`: flat and cum of every node, negated for BASE)
 * and keeps of it what the cut reads: the callers in a byte a row, the frames, and the values of
 * the few stacks that have some (about 5 of the table's 25 bytes a row), held while the other
 * profile is read. Read from the table's child lists and sparse sums, so that neither its
 * `prefix` nor its dense `self` column is made.
 */
function summedSide(g: GraphInput, negated: boolean): SummedSide {
  let { flat, cum } = buildNodes(g, undefined);
  const { length, frame } = g.stacks;
  const { bits, sums } = sparseSelf(g.stacks);
  const valueRows = new Int32Array(sums.length);
  for (let w = 0, k = 0; w < bits.length; w++) {
    for (let word = bits[w]!; word !== 0; word &= word - 1) valueRows[k++] = w * 32 + (31 - Math.clz32(word & -word));
  }
  // The table is dropped after this: its sums can be negated in place.
  if (negated) {
    flat = flat.map((v) => -v);
    cum = cum.map((v) => -v);
    negate(sums);
  }
  return {
    locations: { locNodeOffsets: g.locNodeOffsets, locNodeIds: g.locNodeIds },
    flat,
    cum,
    stacks: { length, callers: new CallerColumn(stackChildren(g.stacks), length), frame, valueRows, values: sums },
  };
}

/**
 * The caller of every row (a stack table's `prefix`) in about a byte a row: a stack's frames are
 * interned one after another, so most rows' caller is a few rows before them. A row keeps how
 * many rows back its caller is (1 to 254; 0 for a root frame), or `FAR` with the caller listed aside.
 */
class CallerColumn {
  private static readonly FAR = 255;
  private readonly back: Uint8Array;
  /** The rows marked `FAR`, ascending, and their callers. */
  private readonly farRows: Int32Array;
  private readonly farCallers: Int32Array;

  constructor({ firstChild, nextSibling }: ChildLists, length: number) {
    const FAR = CallerColumn.FAR;
    const back = new Uint8Array(length);
    let far = 0;
    for (let p = -1; p < length; p++) {
      for (let c = firstChild[p + 1]!; c !== -1; c = nextSibling[c]!) {
        const rows = p < 0 ? 0 : c - p;
        back[c] = rows < FAR ? rows : FAR;
        if (rows >= FAR) far++;
      }
    }
    this.back = back;
    this.farRows = new Int32Array(far);
    this.farCallers = new Int32Array(far);
    for (let s = 0, k = 0; s < length; s++) if (back[s] === FAR) this.farRows[k++] = s;
    for (let p = 0; p < length; p++) {
      for (let c = firstChild[p + 1]!; c !== -1; c = nextSibling[c]!) if (back[c] === FAR) this.farCallers[this.farIndex(c)] = p;
    }
  }

  /** The caller of row `s`, -1 for a root frame. */
  of(s: number): number {
    const back = this.back[s]!;
    if (back === 0) return -1;
    return back !== CallerColumn.FAR ? s - back : this.farCallers[this.farIndex(s)]!;
  }

  private farIndex(s: number): number {
    let lo = 0;
    let hi = this.farRows.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.farRows[mid]! < s) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** Flat and cum per node of sides (or graphs) over the first `nNodes` nodes, added up. */
function sumOfSides(sides: Pick<SummedSide, 'flat' | 'cum'>[], nNodes: number): { flat: bigint[]; cum: bigint[] } {
  const flat = new Array<bigint>(nNodes).fill(0n);
  const cum = new Array<bigint>(nNodes).fill(0n);
  for (const side of sides) {
    for (let n = 0; n < side.flat.length; n++) {
      flat[n]! += side.flat[n]!;
      cum[n]! += side.cum[n]!;
    }
  }
  return { flat, cum };
}

/** The graph input of a summed side's whole table again (`summedSide` in reverse). */
function wholeStacks(side: SummedSide, nNodes: number): GraphInput {
  const { length, callers, frame, valueRows } = side.stacks;
  const prefix = new Int32Array(length);
  for (let s = 0; s < length; s++) prefix[s] = callers.of(s);
  const exactInDoubles = side.stacks.values instanceof Float64Array;
  const values = side.stacks.values as unknown as number[];
  const self = (exactInDoubles ? new Float64Array(length) : new Array<bigint>(length).fill(0n)) as unknown as number[];
  for (let k = 0; k < valueRows.length; k++) self[valueRows[k]!] = values[k]!;
  return {
    nNodes,
    ...side.locations,
    stacks: { length, prefix, frame, self: self as unknown as StackValues, sampleStack: new Int32Array(0), children: childLists(prefix) },
  };
}

/**
 * The graph input of `side` with only the stacks that hold a frame of a `shown` node and their
 * callers; below each kept stack, one row without frame (an added location of no node) carries
 * the total of its cut callees. That row's value counts as flat of the stack's innermost node,
 * which the corrections take back (`prunedSource`). Undefined when that would keep more than
 * half of the rows.
 */
function pruneStacks(side: SummedSide, nNodes: number, shown: Uint8Array): GraphInput | undefined {
  const { locNodeOffsets, locNodeIds } = side.locations;
  const { length, callers, frame, valueRows } = side.stacks;
  const locations = locNodeOffsets.length - 1;
  const holdsShown = new Uint8Array(locations);
  for (let r = 0; r < locations; r++) {
    for (let k = locNodeOffsets[r]!; k < locNodeOffsets[r + 1]!; k++) {
      if (shown[locNodeIds[k]!]) {
        holdsShown[r] = 1;
        break;
      }
    }
  }
  // Callees have larger row numbers than their callers: one backward pass marks the callers.
  const needed = new Uint8Array(length);
  for (let s = length - 1; s >= 0; s--) {
    if (!needed[s] && !holdsShown[frame[s]!]) continue;
    needed[s] = 1;
    const caller = callers.of(s);
    if (caller >= 0) needed[caller] = 1;
  }
  // The same arithmetic on doubles or bigints (as `negate`).
  const exactInDoubles = side.stacks.values instanceof Float64Array;
  const values = side.stacks.values as unknown as number[];
  const zero = (exactInDoubles ? 0 : 0n) as number;
  const newValues = (n: number) => (exactInDoubles ? new Float64Array(n) : new Array<bigint>(n).fill(0n)) as unknown as number[];
  // The old row of each kept row, ascending (new numbers keep the order of the rows).
  let keptRows = 0;
  for (let s = 0; s < length; s++) keptRows += needed[s]!;
  if (keptRows > length / 2) return undefined;
  const oldRow = new Int32Array(keptRows);
  for (let s = 0, r = 0; s < length; s++) if (needed[s]) oldRow[r++] = s;
  const newRowOf = (old: number): number => {
    let lo = 0;
    let hi = keptRows - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (oldRow[mid]! < old) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  // What each kept row's cut callees hold: a cut stack's value goes to its nearest kept caller
  // (up the prefixes, as many steps as frames; few stacks have values of their own).
  const cutTotal = newValues(keptRows);
  for (let k = 0; k < valueRows.length; k++) {
    const s = valueRows[k]!;
    if (needed[s]) continue;
    let caller = callers.of(s);
    while (caller >= 0 && !needed[caller]) caller = callers.of(caller);
    if (caller >= 0) cutTotal[newRowOf(caller)]! += values[k]!;
  }
  let cutRows = 0;
  for (let k = 0; k < keptRows; k++) if (cutTotal[k] !== zero) cutRows++;
  const rows = keptRows + cutRows;
  const newPrefix = new Int32Array(rows);
  const newFrame = new Int32Array(rows);
  const self = newValues(rows);
  for (let k = 0; k < valueRows.length; k++) if (needed[valueRows[k]!]) self[newRowOf(valueRows[k]!)] = values[k]!;
  for (let k = 0; k < keptRows; k++) {
    const s = oldRow[k]!;
    const caller = callers.of(s);
    newPrefix[k] = caller >= 0 ? newRowOf(caller) : -1;
    newFrame[k] = frame[s]!;
  }
  // Below each kept row with cut callees, one row of no frame with their total.
  const noFrame = locations;
  for (let k = 0, r = keptRows; k < keptRows; k++) {
    if (cutTotal[k] === zero) continue;
    newPrefix[r] = k;
    newFrame[r] = noFrame;
    self[r++] = cutTotal[k]!;
  }
  const offsets = new Uint32Array(locations + 2);
  offsets.set(locNodeOffsets);
  offsets[locations + 1] = offsets[locations]!;
  return {
    nNodes,
    locNodeOffsets: offsets,
    locNodeIds,
    stacks: { length: rows, prefix: newPrefix, frame: newFrame, self: self as unknown as StackValues, sampleStack: new Int32Array(0) },
  };
}

/**
 * A table whose walk gives node n flat `flat[n]` and cum `cum[n]` and no call, whatever nodes a
 * pass keeps: per node a root stack of its value of its own, and below it a stack of the last
 * node (never shown, `prunedSource`) with the rest of its cum; one root stack of that node takes
 * those back. Frame r is the location of node r alone.
 */
function correctionInput(flat: bigint[], cum: bigint[]): GraphInput {
  const nNodes = flat.length;
  const hidden = nNodes - 1;
  const prefix: number[] = [];
  const frame: number[] = [];
  const values: bigint[] = [];
  const row = (caller: number, node: number, value: bigint): number => {
    prefix.push(caller);
    frame.push(node);
    values.push(value);
    return prefix.length - 1;
  };
  let taken = 0n;
  for (let n = 0; n < hidden; n++) {
    const rest = cum[n]! - flat[n]!;
    if (flat[n] === 0n && rest === 0n) continue;
    const own = row(-1, n, flat[n]!);
    if (rest !== 0n) row(own, hidden, rest);
    taken += rest;
  }
  if (taken !== 0n) row(-1, hidden, -taken);
  let absSum = 0n;
  for (const v of values) absSum += abs(v);
  const self: StackValues = absSum <= 2n ** 53n ? Float64Array.from(values, Number) : values;
  const locNodeOffsets = new Uint32Array(nNodes + 1);
  for (let r = 0; r <= nNodes; r++) locNodeOffsets[r] = r;
  const locNodeIds = new Int32Array(nNodes);
  for (let r = 0; r < nNodes; r++) locNodeIds[r] = r;
  return { nNodes, locNodeOffsets, locNodeIds, stacks: { length: prefix.length, prefix: Int32Array.from(prefix), frame: Int32Array.from(frame), self, sampleStack: new Int32Array(0) } };
}
