/**
 * The text reports of a difference (`go tool pprof -top/-tree/-peek -diff_base BASE NEW`)
 * computed from the two profiles side by side, without merging the profiles.
 *
 * Why: `diff` (diff.ts) builds a third profile (the base relabelled, negated and merged in),
 * which costs more than reading both inputs, and holds three profiles at once. The reports only
 * need sums over samples, so each profile is reduced on its own, as soon as it is read, to its
 * samples' frames and values (`SideSamples`: the per-stack filters applied as for one profile)
 * with its frames' nodes in one node table shared by both sides: a node is what the report
 * prints (function name, file, line… at the report's granularity), so a frame of the base lands
 * on the node of the same meaning in the new profile whatever the ids. The base's sums are
 * negated, and the call graph walks both sides' stack tables and adds the results
 * (`GraphInput.others`): every sum of the graph is a sum over samples, so the numbers are those
 * of the merged profile, and calls first reached in the new profile come first, as in the merged
 * profile (its samples first). The report total is pprof's (the sum of |value| over the base
 * samples). Every node's flat and cum come straight from the samples, and the report walks stack
 * tables of only the frames of the shown nodes (`prunedSource`). The peak holds one profile and
 * the samples of the other.
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
  nodeTable,
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
  trimmedCallGraph,
  type ReportGraphSource,
} from './report.js';
import type { ReportGranularity } from './granularity.js';
import { given } from './report-filters.js';
import { hasStackFilters } from './stack-filters.js';
import { topInlineMarkers, type MarkerSide } from './inline-markers.js';
import { scaleValue } from './scale.js';
import { PrefixTreeBuilder, RowSums, type StackTable, type StackValues } from './stack-table.js';

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
   * The reports will not be trimmed (`peek`: every node shown): each pass of the report then walks
   * the sides' whole stack tables, as cutting them to the shown nodes would keep every stack.
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
  /** With -mean: the whole stack table and the divisor's sums (BASE's negated), which every pass of its reports walks. */
  whole?: Pick<ReportStacks, 'stacks' | 'divisor'>;
  /** Otherwise the samples (NEW's values scaled once BASE is read, with -normalize). */
  samples?: SideSamples;
  /** BASE: its sums count negated. */
  negated: boolean;
  /** Sum of |value| and sum of the divisor (with -mean) over all samples of the sample type. */
  absTotal: bigint;
  divisorTotal: bigint;
  /** Signed sum of the values (pprof `-normalize` scales by the ratio of these). */
  sum: bigint;
  hasNegative: boolean;
  /** What merging, the header and the compatibility check read of the profile. */
  shell: Pick<Profile, '.profile' | 'sample_types'> & { '.mappings': ProfileHeader['.mappings'] };
}

/**
 * The samples of one side: sample i's frames (leaf first) are `frames[offsets[i] .. offsets[i + 1]]`,
 * each an index into the side's `locations`, none for a sample the filters drop (its value still
 * counts in the report total). A frame of no node (an id that names no location) is no frame,
 * and a sample of value 0 no sample, as in a stack table. Either a copy, the per-stack filters
 * applied, of the samples whose value is not 0 (frames as location rows, in 2 bytes when there
 * are few locations), or the profile's own columns (frames as location ids).
 */
interface SideSamples {
  offsets: Uint32Array;
  frames: Uint16Array | Int32Array | Uint32Array;
  values: BigInt64Array;
  /** `values` as doubles when their magnitudes sum to less than 2^53 and `side` has read them so (`summedValues`). */
  doubles?: Float64Array;
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
    this.next = this.side(p, false);
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
    // BASE is subtracted: its sums negated.
    const base = this.side(p, true);
    // The merged total sums |value| per merged sample: the sides' sums of |value| only when every value has one sign.
    if (base.hasNegative) return 'the base profile has negative values';
    // Merging drops the samples that cancel out (and -normalize those it rounds to 0): a stack of
    // only those would still be walked here, its calls shown with weight 0.
    if (next.hasNegative) return 'the new profile has negative values';
    if (this.options.normalize) {
      // pprof -normalize: NEW's samples scaled by sum(BASE)/sum(NEW), each rounded (pprof ScaleN).
      const ratio = normalizeRatio(next, base);
      const values = next.samples!.values;
      for (const v of values) if (scaleValue(v, ratio) === 0n) return '-normalize rounds samples of the new profile to 0';
      if (ratio !== 1) {
        let absTotal = 0n;
        for (let i = 0; i < values.length; i++) absTotal += abs((values[i] = scaleValue(values[i]!, ratio)));
        next.absTotal = absTotal;
        next.samples!.doubles = undefined;
      }
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

  private side(p: Profile, negated: boolean): DiffSide {
    const t = this.options.sampleTypeIndex;
    const col = p.samples['.values'][t]!;
    const div = this.options.mean ? p.samples['.values'][0] : undefined;
    let absTotal = 0n;
    let sum = 0n;
    let divisorTotal = 0n;
    let hasNegative = false;
    const doubles = new Int64Words(col).exactDoubles();
    if (doubles) {
      // Every partial sum is exact (the magnitudes sum to less than 2^53).
      let [signed, magnitudes] = [0, 0];
      for (let i = 0; i < doubles.length; i++) {
        const v = doubles[i]!;
        signed += v;
        if (v < 0) hasNegative = true;
        magnitudes += Math.abs(v);
      }
      [sum, absTotal] = [BigInt(signed), BigInt(magnitudes)];
    } else {
      for (let i = 0; i < col.length; i++) {
        const v = col[i]!;
        sum += v;
        if (v < 0n) hasNegative = true;
        absTotal += abs(v);
      }
    }
    if (div) for (let i = 0; i < div.length; i++) divisorTotal += div[i]!;
    const m = p['.mappings'];
    const first = m.mapping_id.length > 0 ? 1 : 0;
    const totals = {
      negated,
      absTotal,
      divisorTotal,
      sum,
      hasNegative,
      shell: {
        '.profile': p['.profile'],
        sample_types: p.sample_types,
        '.mappings': { mapping_id: m.mapping_id.slice(0, first), filename: m.filename.slice(0, first), build_id: m.build_id.slice(0, first) },
      },
    };
    const index = new ProfileIndex(p);
    if (!this.options.mean) return { ...this.sideSamples(p, index, negated, doubles), ...totals };
    const { locNodes, stacks, divisor } = reportStacks(p, index, t, this.graphOptions, this.nodes);
    if (negated) {
      negate(stacks.self);
      if (divisor) negate(divisor.self);
    }
    return { locations: flattenLocationNodes(locNodes), whole: { stacks, ...(divisor ? { divisor } : {}) }, ...totals };
  }

  /**
   * The nodes of `p`'s locations and its `SideSamples`: the frames of its stack column or, with
   * per-stack filters, of its filtered stack table (each sample's row and its callers). BASE (read
   * last: its profile is not held while another is read) keeps the profile's own columns when its
   * location ids are dense (and every id of the samples within them), its nodes then listed by
   * location id: no copy at the peak.
   */
  private sideSamples(p: Profile, index: ProfileIndex, last: boolean, doubles: Float64Array | undefined): { locations: Locations; samples: SideSamples } {
    const t = this.options.sampleTypeIndex;
    const col = p.samples['.values'][t]!;
    const stackColumn = p.samples.locations;
    const denseRows = index.locations.denseRows;
    if (last && denseRows && !this.graphOptions.stackFilters && maxOf(stackColumn.location_id) < denseRows.length) {
      const { locNodes } = this.nodeTable(p, index);
      const byId = Array.from(denseRows, (r) => (r >= 0 ? locNodes[r]! : []));
      return { locations: flattenLocationNodes(byId), samples: { offsets: stackColumn.offsets, frames: stackColumn.location_id, values: col, doubles } };
    }
    const { offsets: stackOffsets, location_id: locationIds } = stackColumn;
    // The samples kept, and their frames.
    const colWords = new Int64Words(col);
    let kept = 0;
    let frameCount = 0;
    for (let i = 0; i < col.length; i++) {
      if (colWords.isZero(i)) continue;
      kept++;
      frameCount += stackOffsets[i + 1]! - stackOffsets[i]!;
    }
    const values = new BigInt64Array(kept);
    const valueWords = new Int64Words(values);
    const keptDoubles = doubles && new Float64Array(kept);
    const offsets = new Uint32Array(kept + 1);
    if (this.graphOptions.stackFilters) {
      const { locNodes, stacks } = reportStacks(p, index, t, this.graphOptions, this.nodes);
      const { prefix, sampleStack } = stacks;
      const depth = new Int32Array(stacks.length);
      for (let s = 0; s < stacks.length; s++) depth[s] = prefix[s]! < 0 ? 1 : depth[prefix[s]!]! + 1;
      for (let i = 0, k = 0; i < col.length; i++) {
        if (colWords.isZero(i)) continue;
        colWords.copy(i, valueWords, k);
        if (keptDoubles) keptDoubles[k] = doubles![i]!;
        offsets[k + 1] = offsets[k]! + (sampleStack[i]! >= 0 ? depth[sampleStack[i]!]! : 0);
        k++;
      }
      const frames = new Int32Array(offsets[kept]!);
      for (let i = 0, k = 0; i < col.length; i++) {
        if (colWords.isZero(i)) continue;
        let f = offsets[k++]!;
        for (let s = sampleStack[i]!; s >= 0; s = prefix[s]!) frames[f++] = stacks.frame[s]!;
      }
      return { locations: flattenLocationNodes(locNodes), samples: { offsets, frames, values, doubles: keptDoubles } };
    }
    const { locNodes } = this.nodeTable(p, index);
    const frames = locNodes.length <= 2 ** 16 ? new Uint16Array(frameCount) : new Int32Array(frameCount);
    // Location ids that name no location are left out, as the stack tables leave them out.
    let f = 0;
    for (let i = 0, k = 0; i < col.length; i++) {
      if (colWords.isZero(i)) continue;
      for (let j = stackOffsets[i]!, end = stackOffsets[i + 1]!; j < end; j++) {
        const id = locationIds[j]!;
        const r = denseRows ? (id < denseRows.length ? denseRows[id]! : -1) : index.locations.get(id);
        if (r >= 0) frames[f++] = r;
      }
      colWords.copy(i, valueWords, k);
      if (keptDoubles) keptDoubles[k] = doubles![i]!;
      offsets[++k] = f;
    }
    return { locations: flattenLocationNodes(locNodes), samples: { offsets, frames: f === frameCount ? frames : frames.slice(0, f), values, doubles: keptDoubles } };
  }

  /** The nodes of `p`'s locations (by location row), added to the nodes of the diff (as `reportStacks` adds them). */
  private nodeTable(p: Profile, index: ProfileIndex) {
    const { by = 'function', inline = true, columns = false } = this.graphOptions;
    return nodeTable(p, by, inline, columns, index, undefined, this.nodes);
  }

  /** The report input of NEW minus BASE (after `addNew` and `addBase`). */
  input(): ReportInput {
    const next = this.next;
    const base = this.base;
    if (!next || !base) throw new Error('DiffReportBuilder: addNew and addBase first');
    const t = this.options.sampleTypeIndex;
    // pprof computeTotal: the base samples' total (they carry pprof::base=true), or everything's when it is 0.
    const meanOn = this.options.mean === true;
    const total = base.absTotal > 0n ? meanOf(base.absTotal, meanOn ? -base.divisorTotal : 0n) : meanOf(next.absTotal + base.absTotal, meanOn ? next.divisorTotal - base.divisorTotal : 0n);
    const header: ProfileHeader = {
      sample_types: next.shell.sample_types,
      '.mappings': next.shell['.mappings'].mapping_id.length > 0 ? next.shell['.mappings'] : base.shell['.mappings'],
      '.profile': combineFacts([next.shell, base.shell] as Profile[]),
    };
    const nodes = this.nodes;
    const unit = next.shell.sample_types.unit[t]!;
    const source = { t, unit, names: nodes.names, infos: nodes.infos, total: () => total };
    // BASE's samples after NEW's, as merging orders them.
    const wholeSource = (): ReportGraphSource => {
      // -mean: the tables `side` kept (the divisor's sums would need the same cut as the values').
      const input = (side: DiffSide): GraphInput => ({ nNodes: nodes.names.length, ...side.locations, stacks: side.whole!.stacks, ...(side.whole!.divisor ? { divisor: side.whole!.divisor } : {}) });
      if (meanOn) return { ...source, g: { ...input(next), others: [input(base)] } };
      const [nextTable, baseTable] = [next, base].map((side) => sideStackTable(side, summedValues(side), nodes.names.length));
      return { ...source, g: { ...nextTable!, others: [baseTable!] } };
    };
    const walkWhole = meanOn || this.options.untrimmed === true;
    const options = this.options;
    // The nodes and the filtered frames are the sides' as built: a report of another granularity,
    // -noinlines or per-stack filter would print them under its own options' header.
    const otherOptions = () => new ProfkitError(ErrorCodes.USAGE, 'a diff report input is reported with the sample type and options it was built for', { rule: 'DiffReportBuilder options match the report options' });
    return {
      kind: 'report-input',
      defaultSampleTypeIndex: t,
      prepare(reportType: number, reportOptions: ReportFilters): PreparedReport {
        if (reportType !== t || diffReportUnsupported({ ...reportOptions, by: options.by, normalize: options.normalize }) !== undefined || !!reportOptions.mean !== meanOn || !sameSideFilters(options, reportOptions)) {
          throw otherOptions();
        }
        return {
          total,
          ratio: ratioOf(reportOptions),
          meanDivisorIndex: meanOn ? 0 : undefined,
          typeName: meanOn ? 'mean_' + next.shell.sample_types.type[t]! : undefined,
          stackFilters: hasStackFilters(reportOptions) ? reportOptions : undefined,
          graphSource: (graphOptions, allCalls = true) => {
            if ((graphOptions.by ?? 'function') !== (options.by ?? 'function') || (graphOptions.inline ?? true) !== (options.inline ?? true)) throw otherOptions();
            if (meanOn) return wholeSource();
            // -top reads its calls only for the inline markers: those come from the samples.
            if (!allCalls) return markersSource(source, [next, base]);
            return walkWhole ? wholeSource() : prunedSource(source, [next, base], graphOptions);
          },
          header,
        };
      },
    };
  }
}

/** The per-stack filters `side` applies as it reads a profile (the tag filters are never taken: `diffReportUnsupported`). */
const SIDE_FILTERS = ['focus', 'ignore', 'hide', 'show', 'showFrom', 'pruneFrom'] as const;

/** Whether `a` and `b` filter the stacks alike (patterns equal as given, a RegExp by its text). */
function sameSideFilters(a: ReportFilters, b: ReportFilters): boolean {
  const key = (v: ReportFilters[(typeof SIDE_FILTERS)[number]]) => (!given(v) ? undefined : v instanceof RegExp ? String(v) : v);
  return SIDE_FILTERS.every((k) => key(a[k]) === key(b[k]));
}

/** The largest of `ids` (0 when empty). */
function maxOf(ids: Uint32Array): number {
  let max = 0;
  for (let k = 0; k < ids.length; k++) if (ids[k]! > max) max = ids[k]!;
  return max;
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

/** Sums of |value| up to this are exact in doubles, and so is every partial sum. */
const EXACT_IN_DOUBLES = 2n ** 53n;

/** What a location is to the cut (`sideStackTable`): no frame (no node), a frame of no shown node, a frame of a shown node. */
const NO_NODE = 0;
const NODE = 1;
const SHOWN = 2;

/**
 * The graph source of a report of NEW minus BASE that walks only the stacks of the nodes it shows.
 *
 * Why: on profiles whose stacks share little each side's stack table has about one row per frame
 * (millions), and the report walks every table twice (flat and cum of every node to pick the
 * shown nodes, then again for the calls between them). Neither walk needs every stack: every
 * node's flat and cum are sums over the samples (`sampleNodeSums`, no table), which the source
 * hands to the report (`nodeSums`: its trimming picks the shown nodes from them without a walk),
 * and the calls between shown nodes only need the frames of shown nodes in each stack, and
 * whether other frames lie between two of them (the call is then residual, or, when every node is
 * kept, no call): the frames above the outermost one and below the innermost one hold no such
 * call. So: the shown nodes are picked from the exact sums by the report's own trimming
 * (`trimmedCallGraph` of a source with those sums and no stacks), and each side's table is made
 * of its samples' frames of shown nodes, each run of other frames between two of them one frame
 * (`sideStackTable`): on 200,000 random stacks, 1,600 rows instead of 257,000. Rows are made in
 * sample order, so calls are first reached in the same order as in the whole tables.
 */
function prunedSource(source: Omit<ReportGraphSource, 'g'>, sides: DiffSide[], options: CallGraphOptions): ReportGraphSource {
  const nodeCount = source.names.length;
  const values = sides.map(summedValues);
  const nodeSums = nodeSumsOf(sides, values, nodeCount);
  // No stacks and no calls to collect (allCalls false, no inlined frame): the trimming alone.
  const trimmed = trimmedCallGraph({ ...source, g: noStacks(nodeCount), nodeSums }, options, false);
  const shownNames = new Set(trimmed.nodes.map((n) => n.name));
  // Nothing trimmed (no node below the node fraction, none past -nodecount): pprof does not
  // rebuild its graph, and prints the calls between shown nodes and nodes not shown too.
  const callsOffGraph = trimmed.droppedNodes === 0 && trimmed.origCount === trimmed.nodes.length;
  // By name: a superset of the shown nodes when names repeat, which the cut allows.
  const shown = new Uint8Array(nodeCount);
  for (let n = 0; n < nodeCount; n++) if (shownNames.has(source.names[n]!)) shown[n] = 1;
  const [first, ...others] = sides.map((side, i) => sideStackTable(side, values[i]!, nodeCount, shown, callsOffGraph));
  return { ...source, nodeSums, g: { ...first!, others } };
}

/**
 * The graph source of `-top` of NEW minus BASE: every node's flat and cum summed from the samples,
 * and the inline markers of the shown nodes from the samples too (inline-markers.ts), no stack
 * table: on profiles whose stacks share little, showing most nodes (`--node-fraction 0`, `diff`
 * without `-n`) made the cut tables whole and the calls into inlined nodes nearly every call.
 */
function markersSource(source: Omit<ReportGraphSource, 'g'>, sides: DiffSide[]): ReportGraphSource {
  const nodeCount = source.names.length;
  const values = sides.map(summedValues);
  // Every field named, in one order: the walk's loop then reads objects of one shape.
  const markerSides: MarkerSide[] = sides.map((side, i) => ({
    offsets: side.samples!.offsets,
    frames: side.samples!.frames,
    values: side.samples!.values,
    doubles: values[i]!.zero === 0 ? (values[i]!.values as Float64Array) : undefined,
    absTotal: side.absTotal,
    negated: side.negated,
    locNodeOffsets: side.locations.locNodeOffsets,
    locNodeIds: side.locations.locNodeIds,
  }));
  return {
    ...source,
    g: noStacks(nodeCount),
    nodeSums: nodeSumsOf(sides, values, nodeCount),
    inlineMarkers: (kept, shown, edgeCutoff) => topInlineMarkers(markerSides, nodeCount, kept, shown, edgeCutoff),
  };
}

/** A graph input of `nNodes` nodes and no stacks (a report's trimming from given `nodeSums` alone). */
function noStacks(nNodes: number): GraphInput {
  return {
    nNodes,
    locNodeOffsets: new Uint32Array(1),
    locNodeIds: new Int32Array(0),
    stacks: { length: 0, prefix: new Int32Array(0), frame: new Int32Array(0), self: new Float64Array(0), sampleStack: new Int32Array(0) },
  };
}

/** Every node's flat and cum over the samples of both sides. */
function nodeSumsOf(sides: DiffSide[], values: SummedValues[], nNodes: number): { flat: bigint[]; cum: bigint[] } {
  return sumOfSides(
    sides.map((side, i) => sampleNodeSums(side, values[i]!, nNodes)),
    nNodes,
  );
}

type Locations = Pick<GraphInput, 'locNodeOffsets' | 'locNodeIds'>;

/**
 * The values of a side's samples as its sums add them: in doubles when every sum is exact in
 * them (most profiles), read once (each read of a BigInt64Array makes a bigint: a few of them
 * per sample in the passes below made most of their garbage), else the bigints.
 */
interface SummedValues {
  values: Float64Array | BigInt64Array;
  zero: number | bigint;
}

function summedValues(side: DiffSide): SummedValues {
  const { values } = side.samples!;
  // The doubles `side` read the values as, when it kept them (read again otherwise: -normalize scales them).
  const doubles = side.absTotal < EXACT_IN_DOUBLES ? (side.samples!.doubles ?? new Int64Words(values).exactDoubles()) : undefined;
  return doubles ? { values: doubles, zero: 0 } : { values, zero: 0n };
}

/** The index of the low half of a 64-bit element in an Int32Array over it: 0 on little-endian platforms. */
const LOW_WORD = new Int32Array(new BigInt64Array([1n]).buffer)[0] === 1 ? 0 : 1;

/**
 * A BigInt64Array read through its 32-bit halves. Why: each read of a BigInt64Array element makes
 * a bigint, and the few such reads per sample (zero tests, copies, sums) made most of a diff's
 * own garbage.
 */
class Int64Words {
  private readonly words: Int32Array;

  constructor(private readonly column: BigInt64Array) {
    this.words = new Int32Array(column.buffer, column.byteOffset, column.length * 2);
  }

  isZero(i: number): boolean {
    return (this.words[2 * i]! | this.words[2 * i + 1]!) === 0;
  }

  /** Element `i` copied to element `k` of `to`. */
  copy(i: number, to: Int64Words, k: number): void {
    to.words[2 * k] = this.words[2 * i]!;
    to.words[2 * k + 1] = this.words[2 * i + 1]!;
  }

  /**
   * The column as doubles when their magnitudes sum to less than 2^53 (then every value and
   * every partial sum is exact in doubles), else undefined.
   */
  exactDoubles(): Float64Array | undefined {
    const { words, column } = this;
    const out = new Float64Array(column.length);
    let magnitudes = 0;
    for (let i = 0; i < column.length; i++) {
      const high = words[2 * i + 1 - LOW_WORD]!;
      // |value| < 2^53 exactly when the high half is in [-2^21, 2^21).
      if (high < -0x200000 || high >= 0x200000) return undefined;
      const v = high * 0x1_0000_0000 + (words[2 * i + LOW_WORD]! >>> 0);
      magnitudes += Math.abs(v);
      out[i] = v;
    }
    // A sum past 2^53 rounds to 2^53 at least: "< 2^53" is never wrong.
    return magnitudes < 2 ** 53 ? out : undefined;
  }
}

/**
 * Flat and cum of every node over a side's samples, as a walk of its whole stack table sums them
 * (`buildNodes` of all nodes): a sample adds its value to the cum of every node of its frames
 * once (pprof's rule for recursion), and to the flat of the innermost node of its leaf frame.
 * Negated for BASE.
 */
function sampleNodeSums(side: DiffSide, summed: SummedValues, nNodes: number): { flat: bigint[]; cum: bigint[] } {
  // The same arithmetic on doubles or bigints (as `negate`).
  const column = () => (summed.zero === 0 ? new Float64Array(nNodes) : new Array<bigint>(nNodes).fill(0n)) as unknown as number[];
  const [flat, cum] = [column(), column()];
  addNodeSums(side.samples!, summed.values as unknown as number[], side.locations, flat, cum);
  const exact = (sums: number[]) => {
    const out = new Array<bigint>(nNodes);
    for (let n = 0; n < nNodes; n++) out[n] = side.negated ? -BigInt(sums[n]!) : BigInt(sums[n]!);
    return out;
  };
  return { flat: exact(flat), cum: exact(cum) };
}

/**
 * Adds each sample's value to the flat of the innermost node of its leaf frame (the first frame
 * that has a node) and to the cum of every node of its frames, once per sample (`countedBy`: the
 * last sample that counted a node), in one pass over the frames (the cost of the diff report on
 * profiles whose stacks share little: 10 million nodes of frames at 200,000 samples). Bounds and
 * frames are read into locals: the stores could alias typed arrays, which would make the compiled
 * loop read them again.
 */
function addNodeSums({ offsets, frames }: SideSamples, values: number[], { locNodeOffsets, locNodeIds }: Locations, flat: number[], cum: number[]): void {
  const countedBy = new Int32Array(cum.length).fill(-1);
  for (let i = 0; i + 1 < offsets.length; i++) {
    const v = values[i]!;
    let leaf = true;
    for (let k = offsets[i]!, end = offsets[i + 1]!; k < end; k++) {
      const r = frames[k]!;
      const last = locNodeOffsets[r + 1]!;
      let j = locNodeOffsets[r]!;
      if (leaf && j < last) {
        flat[locNodeIds[j]!] += v;
        leaf = false;
      }
      for (; j < last; j++) {
        const n = locNodeIds[j]!;
        if (countedBy[n] !== i) {
          countedBy[n] = i;
          cum[n] += v;
        }
      }
    }
  }
}

/** Flat and cum per node of sides (or graphs) over the first `nNodes` nodes, added up. */
function sumOfSides(sides: { flat: bigint[]; cum: bigint[] }[], nNodes: number): { flat: bigint[]; cum: bigint[] } {
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

/**
 * The graph input of a side's samples (sums negated for BASE): their stack table, rows interned
 * in sample order root first as `buildStackTable` interns them. With `shown`, each stack is cut
 * to the calls between shown nodes: its frames that hold a `shown` node are kept, each run of
 * other frames between two of them becomes its first frame (a frame of no shown node: the call
 * across the run stays residual, as the walk marks a call across nodes it does not keep), and the
 * frames above the outermost and below the innermost kept frame are left out (they hold no call
 * between shown nodes); the sample's value sits on its innermost kept frame, and stacks without
 * such a frame are left out. With `callsOffGraph` (the report prints the calls between shown nodes
 * and the others: `prunedSource`) the frames next to shown frames stay too: each run's last frame,
 * and the frames just above the outermost and just below the innermost kept frame (the sample's
 * value then sits on the latter). The walk of the cut tables then gives the calls of shown nodes
 * with the sums, flags and order of the whole tables' walk; its flat and cum of the nodes are not
 * those, and the report takes every node's flat and cum from `prunedSource`'s `nodeSums` instead.
 */
function sideStackTable(side: DiffSide, summed: SummedValues, nNodes: number, shown?: Uint8Array, callsOffGraph = false): GraphInput {
  const { offsets, frames } = side.samples!;
  // The same arithmetic on doubles or bigints (as `negate`).
  const values = summed.values as unknown as number[];
  const zero = summed.zero as number;
  const { locNodeOffsets, locNodeIds } = side.locations;
  const locations = locNodeOffsets.length - 1;
  // Per location: NO_NODE, NODE, or SHOWN when one of its nodes is shown (every frame of a node without `shown`).
  const kind = new Uint8Array(locations);
  for (let r = 0; r < locations; r++) {
    if (locNodeOffsets[r + 1]! > locNodeOffsets[r]!) kind[r] = shown ? NODE : SHOWN;
    if (shown) for (let k = locNodeOffsets[r]!; k < locNodeOffsets[r + 1]!; k++) if (shown[locNodeIds[k]!]) kind[r] = SHOWN;
  }
  // The samples with a frame of a shown node (few, with the cut), and a bound on the rows to size
  // the table once: the frames each sample interns below (sized by every frame, the cut's columns
  // zeroed ~100 MB for a few thousand rows).
  const samples = offsets.length - 1;
  const withShown = new Uint8Array(samples);
  let maxRows = 0;
  for (let i = 0; i < samples; i++) {
    let interned = 0;
    // Frames of no shown node since the last shown one (or the root).
    let others = 0;
    for (let k = offsets[i + 1]! - 1, from = offsets[i]!; k >= from; k--) {
      const c = kind[frames[k]!]!;
      if (c === SHOWN) {
        interned += 1 + (interned === 0 ? (callsOffGraph && others > 0 ? 1 : 0) : Math.min(others, callsOffGraph ? 2 : 1));
        others = 0;
      } else if (c === NODE) others++;
    }
    if (callsOffGraph && interned > 0 && others > 0) interned++;
    withShown[i] = interned > 0 ? 1 : 0;
    maxRows += interned;
  }
  const tree = new PrefixTreeBuilder(maxRows);
  const sums = new RowSums(summed.zero === 0, maxRows);
  for (let i = 0; i < samples; i++) {
    if (!withShown[i] || values[i] === zero) continue;
    let s = -1;
    // The first and the last frame of the run of frames of no shown node since the last kept
    // frame (runFrame only after a kept frame; -1: none).
    let runFrame = -1;
    let lastOther = -1;
    for (let k = offsets[i + 1]! - 1, from = offsets[i]!; k >= from; k--) {
      const frame = frames[k]!;
      const c = kind[frame]!;
      if (c === SHOWN) {
        if (runFrame >= 0) {
          s = tree.intern(s, runFrame);
          if (callsOffGraph && lastOther !== runFrame) s = tree.intern(s, lastOther);
        } else if (callsOffGraph && s < 0 && lastOther >= 0) s = tree.intern(s, lastOther);
        runFrame = lastOther = -1;
        s = tree.intern(s, frame);
      } else if (c === NODE) {
        if (s >= 0 && runFrame < 0) runFrame = frame;
        lastOther = frame;
      }
    }
    if (callsOffGraph && runFrame >= 0) s = tree.intern(s, runFrame);
    if (s >= 0) sums.add(s, values[i]!);
  }
  const rows = tree.length;
  const self = sums.finish(rows);
  if (side.negated) negate(self);
  const built = tree.finish();
  const stacks: StackTable = {
    length: rows,
    get prefix() {
      return built.prefix;
    },
    frame: built.frame,
    self,
    sampleStack: new Int32Array(0),
    children: built.children,
  };
  return { nNodes, locNodeOffsets, locNodeIds, stacks };
}
