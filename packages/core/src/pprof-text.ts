/**
 * The text reports of `go tool pprof` that print the samples themselves rather than a call graph:
 * `-raw` (`Profile.String()` of the loaded profile), `-traces` (`printTraces`) and `-tags`
 * (`printTags`), byte for byte, from the profile as `go tool pprof` loads it (`goPprofLoad`).
 *
 * Documented differences (the tests normalise nothing else): `Time:` headers are printed in UTC
 * (pprof prints the local zone; equal under `TZ=UTC`); profkit does not symbolize on load (pprof
 * does when it finds the binaries: compare with `-symbolize=none`, or symbolize first with
 * `profkit convert --symbolize`); pprof's search for binaries in `$PPROF_BINARY_PATH` (which
 * renames mappings) is not done.
 */

import type { Profile } from './model.js';
import { pprofDumpText } from './dump.js';
import { compact } from './ops/compact.js';
import { applyDropFrames } from './ops/prune.js';
import { numLabelUnits } from './ops/filter.js';
import { given, withoutEmptyStacks, type ReportFilterOptions } from './ops/report-filters.js';
import { filtersKeepingLocations } from './ops/raw-filters.js';
import { formatPercentage, formatValue, goFormatF, scaleMeasurement } from './ops/format.js';
import { abs, compareGoStrings } from './ops/internal.js';
import { ProfileIndex, defaultSampleTypeIndex } from './views.js';
import { StringKeyedMap } from './string-keys.js';
import { checkSampleType, nodeTable, prepareReport, profileLabels, reportValue, type ReportFilters } from './ops/report.js';
import type { ReportGranularity } from './ops/granularity.js';
import { meanOf } from './ops/mean.js';
import type { Warning } from './errors.js';
import { ReportTextBudget, type ReportLimits } from './report-text.js';
import { limitError, limitValue, type ReadLimits } from './limits.js';

/**
 * `go tool pprof`'s `locateBinaries` fallback: a profile without mappings gets one empty mapping
 * (id 1) that every location refers to.
 */
function withPlaceholderMapping(p: Profile): Profile {
  if (p['.mappings'].mapping_id.length > 0) return p;
  const one = () => new BigUint64Array(1);
  return {
    ...p,
    '.mappings': {
      mapping_id: Uint32Array.of(1),
      memory_start: one(),
      memory_limit: one(),
      file_offset: one(),
      filename: [''],
      build_id: [''],
      has_functions: new Uint8Array(1),
      has_filenames: new Uint8Array(1),
      has_line_numbers: new Uint8Array(1),
      has_inline_frames: new Uint8Array(1),
    },
    locations: { ...p.locations, '.mapping_id': new Uint32Array(p.locations.location_id.length).fill(1) },
  };
}

/**
 * Whether Go's `url.Parse(s)` succeeds with a scheme (`IsAbs`): a scheme `[A-Za-z][A-Za-z0-9+.-]*:`
 * and nothing Go rejects after it (control characters, a `%` not followed by two hex digits).
 */
function isAbsoluteGoURL(s: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(s)) return false;
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(s)) return false;
  return !/%(?![0-9A-Fa-f]{2})/.test(s);
}

/** `go tool pprof`'s `unsourceMappings`: mappings without a build id lose a file name that is a URL. */
function withoutURLMappingFiles(p: Profile): Profile {
  const m = p['.mappings'];
  if (!m.filename.some((f, r) => m.build_id[r] === '' && isAbsoluteGoURL(f))) return p;
  return { ...p, '.mappings': { ...m, filename: m.filename.map((f, r) => (m.build_id[r] === '' && isAbsoluteGoURL(f) ? '' : f)) } };
}

/**
 * `p` with a period type: every profile `go tool pprof` holds has one (its proto decoder makes an
 * empty one when the file has none, `postDecode`; every legacy parser sets one), so `-raw` prints
 * `PeriodType: ` with an empty type and unit where the model has none.
 */
function withGoPeriodType(p: Profile): Profile {
  if (p['.profile'].period_type) return p;
  return { ...p, '.profile': { ...p['.profile'], period_type: { type: '', unit: '' } } };
}

/**
 * The name readers give a function whose name is empty (the model has none): pprof's reports
 * treat such a function as nameless (`[binary]` / `<unknown>` in traces, "" in raw).
 */
export const EMPTY_NAME_PLACEHOLDER = '<?>';

export interface GoPprofLoaded {
  /** The profile as `go tool pprof` holds it after loading. */
  profile: Profile;
  /** An invalid `drop_frames`/`keep_frames` (the frames are then not pruned, as in pprof). */
  warnings: Warning[];
}

/**
 * The profile as `go tool pprof FILE` holds it before any report: an empty mapping when it has
 * none (`locateBinaries`), merged with itself (`Merge`: all-zero samples dropped, equal samples
 * summed, ids renumbered in first-use order), `drop_frames`/`keep_frames` applied
 * (`RemoveUninteresting`), mapping files that are URLs cleared (`unsourceMappings`), and an empty
 * period type when it has none (Go's decoder).
 */
export async function goPprofLoad(p: Profile, limits?: Pick<ReadLimits, 'maxTableEntries'>): Promise<GoPprofLoaded> {
  checkLoadTables(p, limits);
  const merged = compact(withPlaceholderMapping(p));
  const pruned = await applyDropFrames(merged);
  return { profile: withGoPeriodType(withoutURLMappingFiles(pruned.profile)), warnings: pruned.warnings };
}

/**
 * Bytes of `compact`'s working memory per table entry (location, line, function, mapping, label),
 * measured: it copies the lines column by column (20 bytes each, in growing columns that double,
 * then trimmed). A pprof of 3,000 locations of 3,000 inline lines (9M lines, 67 MB) holds 450 MB
 * of typed arrays there (882 MB of heap while every line was read as an object and keyed as text).
 */
const LOAD_BYTES_PER_TABLE_ENTRY = 60;

/**
 * Checks, before `goPprofLoad` merges `p`, that its tables fit `maxTableEntries`: the merge copies
 * every location line (about `LOAD_BYTES_PER_TABLE_ENTRY` bytes each), so the limit bounds its
 * memory (600 MB at the default) whatever reader or builder made the profile. The pprof reader
 * counts the same entries and more (its string table), so a pprof it read alone passes (with
 * `--base`, the entries of both profiles, merged before the load, count together).
 */
function checkLoadTables(p: Profile, limits: Pick<ReadLimits, 'maxTableEntries'> | undefined): void {
  const max = limitValue(limits, 'maxTableEntries');
  const l = p.locations;
  let entries = l.location_id.length + p['.inline_lines'].function_id.length + p.functions.function_id.length + p['.mappings'].mapping_id.length + p['.labels'].key.length;
  for (let r = 0; r < l.function_id.length; r++) if (l.function_id[r] !== 0) entries++;
  if (entries > max) {
    throw limitError('maxTableEntries', `the profile's locations, lines, functions, mappings and labels (${entries} entries, about ${LOAD_BYTES_PER_TABLE_ENTRY} bytes each while loaded as go tool pprof does)`, max, { rule: 'table entries loaded' });
  }
}

export interface RawReportOptions {
  /** Print `file:line:column` (current google/pprof) instead of `file:line` (Go 1.19's `go tool pprof`). Default false. */
  columns?: boolean;
  /** pprof's filters (-focus … -prune_from), applied as pprof does: every location keeps its id and row (see `filtersKeepingLocations`). */
  filters?: ReportFilterOptions;
  /** `maxReportBytes` bounds the text. */
  limits?: ReportLimits;
}

/**
 * `go tool pprof -raw`: `Profile.String()` of the loaded profile (see `goPprofLoad`) after pprof's
 * filters, bounded by `limits.maxReportBytes` (a location prints its function's name once per
 * line, so many lines naming one long function are far more text than the profile).
 */
export function rawReport(loaded: Profile, options: RawReportOptions = {}): string {
  return [...rawPieces(loaded, options, new ReportTextBudget('raw', options.limits, true))].join('');
}

/** `rawReport`'s text in pieces, made as iterated (for a report written as it is made). */
export function rawReportText(loaded: Profile, options: RawReportOptions = {}): Generator<string> {
  return rawPieces(loaded, options, new ReportTextBudget('raw', options.limits, false));
}

function* rawPieces(loaded: Profile, options: RawReportOptions, budget: ReportTextBudget): Generator<string> {
  const p = withRawFilters(loaded, options.filters ?? {});
  for (const piece of pprofDumpText(p, { columns: options.columns ?? false, emptyNamePlaceholder: EMPTY_NAME_PLACEHOLDER, budget })) yield budget.take(piece);
}

/**
 * `filtersKeepingLocations(loaded, filters)`, or `loaded` itself when that prints the same: no
 * filter given and no sample without a stack (the only ones pprof drops then). The filters copy
 * the location columns and read every line as an object (1.5 GB for 9M lines), needlessly
 * when there is nothing to filter.
 */
function withRawFilters(loaded: Profile, filters: ReportFilterOptions): Profile {
  const { offsets } = loaded.samples.locations;
  let everySampleHasAStack = true;
  for (let i = 0; i + 1 < offsets.length; i++) if (offsets[i] === offsets[i + 1]) everySampleHasAStack = false;
  const anyFilter = Object.values(filters).some(given);
  return anyFilter || !everySampleHasAStack ? filtersKeepingLocations(loaded, filters) : loaded;
}

export interface SampleReportOptions extends ReportFilters {
  /** The sample type reported (pprof `-sample_index`); default the profile's default type. */
  sampleTypeIndex?: number;
  /** `traces`: the frames' granularity (pprof `-granularity`; default `function`). */
  by?: ReportGranularity;
  /** `traces`: false prints only each location's outermost line (pprof `-noinlines`). */
  inline?: boolean;
  /** `traces`: `maxReportBytes` bounds the text (and the samples of `--json`); see `ReportTextBudget`. */
  limits?: ReportLimits;
}

/** Go's `%Ns` (pads by runes). */
function padRunes(s: string, width: number): string {
  const n = [...s].length;
  return n >= width ? s : ' '.repeat(width - n) + s;
}

/** A sample's labels grouped by key, values in order: string and numeric separately. */
function sampleLabels(p: Profile, i: number): { str: Map<string, string[]>; num: Map<string, bigint[]> } {
  const str = new Map<string, string[]>();
  const num = new Map<string, bigint[]>();
  const offsets = p.samples['.label_offsets'];
  if (!offsets) return { str, num };
  const t = p['.labels'];
  for (let j = offsets[i]!; j < offsets[i + 1]!; j++) {
    const key = t.key[j]!;
    if (t.is_num[j]) {
      const v = num.get(key);
      if (v) v.push(t.num[j]!);
      else num.set(key, [t.num[j]!]);
    } else {
      const v = str.get(key);
      if (v) v.push(t.str[j]!);
      else str.set(key, [t.str[j]!]);
    }
  }
  return { str, num };
}

function sampleTypeOf(p: Profile, options: SampleReportOptions): number {
  const t = options.sampleTypeIndex ?? defaultSampleTypeIndex(p);
  checkSampleType(p, t);
  return t;
}

export interface TraceFrame {
  /** The function name (pprof `functions` granularity), or `[binary]` / `<unknown>` without one. */
  name: string;
  /** Inlined into the next frame (same location). */
  inline: boolean;
}

export interface TraceSample {
  /** The sample's value of the reported sample type. */
  value: bigint;
  /** String labels: key, values. */
  labels: [string, string[]][];
  /** Numeric labels: key, values, and the key's unit (pprof's `NumLabelUnits`). */
  numLabels: [string, bigint[], string][];
  /** Innermost first. */
  frames: TraceFrame[];
}

export interface TracesReport {
  /** pprof's header lines (`File:`, `Type:`, `Time:`, `Duration:`). */
  header: string[];
  sampleTypeIndex: number;
  unit: string;
  /** The samples with a stack, in profile order. */
  samples: TraceSample[];
  /** The report as `go tool pprof -traces` prints it. */
  text: string;
}

/** `tracesReportStream`'s result: the report made as it is read, one sample at a time. */
export interface TracesReportStream {
  /** pprof's header lines (`File:`, `Type:`, `Time:`, `Duration:`). */
  header: string[];
  sampleTypeIndex: number;
  unit: string;
  /**
   * The samples with a stack, in profile order, made as iterated. Their text is counted against
   * `limits.maxReportBytes` as in `text()`, so a `--json` report is bounded like the text.
   */
  samples(): Generator<TraceSample>;
  /** The report's text in pieces (the header, each sample's labels and each of its frames, the closing separator). */
  text(): Generator<string>;
}

const TRACES_SEPARATOR = '-----------+-------------------------------------------------------';

/**
 * One piece of the traces text: the header, a sample's separator and labels, one of its frames,
 * or the end; `sample` is set on the empty piece after a sample's last frame.
 */
type TracesPiece = { text: string; sample?: TraceSample };

/**
 * `go tool pprof -traces` (`printTraces`, default `functions` granularity): the header lines,
 * then every sample with a stack, its labels and its frames innermost first (inlined frames
 * marked), between separator lines. `loaded` is a `goPprofLoad` result.
 *
 * Made one sample at a time as it is iterated: a sample prints every inline frame of each of its
 * locations, so the text can be far larger than the profile (2,000 samples over one location of
 * 2,000 inline lines, a 40 KB profile, are 1 GB of text); it is counted against
 * `limits.maxReportBytes`, frame by frame.
 */
export function tracesReportStream(loaded: Profile, options: SampleReportOptions = {}): TracesReportStream {
  const traces = tracesPieces(loaded, options);
  const budget = () => new ReportTextBudget('traces', options.limits, false);
  return {
    header: traces.header,
    sampleTypeIndex: traces.sampleTypeIndex,
    unit: traces.unit,
    *samples() {
      for (const piece of traces.pieces(budget())) if (piece.sample) yield piece.sample;
    },
    *text() {
      for (const piece of traces.pieces(budget(), false)) yield piece.text;
    },
  };
}

/**
 * `tracesReportStream` held whole: the samples, and the text as one string (bounded by
 * `limits.maxReportBytes` and by the longest string JavaScript makes).
 */
export function tracesReport(loaded: Profile, options: SampleReportOptions = {}): TracesReport {
  const traces = tracesPieces(loaded, options);
  const samples: TraceSample[] = [];
  const text: string[] = [];
  for (const piece of traces.pieces(new ReportTextBudget('traces', options.limits, true))) {
    if (piece.sample) samples.push(piece.sample);
    text.push(piece.text);
  }
  return { header: traces.header, sampleTypeIndex: traces.sampleTypeIndex, unit: traces.unit, samples, text: text.join('') };
}

/** The traces report's header, and its pieces made on demand, each counted by `budget`. */
function tracesPieces(loaded: Profile, options: SampleReportOptions) {
  const t = sampleTypeOf(loaded, options);
  // pprof computes the total before dropping samples with an empty stack.
  const prepared = prepareReport(loaded, t, options);
  const p = withoutEmptyStacks(prepared.profile);
  const unit = p.sample_types.unit[t] ?? '';
  const outputUnit = options.outputUnit ?? 'minimum';
  const header = profileLabels(p, t, prepared.total, outputUnit, prepared);
  const index = new ProfileIndex(p);
  // Each location's frames, innermost first, as pprof's graph nodes print them at the granularity:
  // its nodes' names, all but the outermost inline (made as printed, not an object per line).
  const { locNodes, names } = nodeTable(p, options.by ?? 'function', options.inline ?? true, false, index);
  const units = numLabelUnits(p);
  const values = p.samples['.values'][t]!;
  const divisors = prepared.meanDivisorIndex === undefined ? undefined : p.samples['.values'][prepared.meanDivisorIndex]!;
  const { offsets, location_id } = p.samples.locations;
  /** `withFrames` false: the text alone is wanted, the samples' `frames` stay empty. */
  function* pieces(budget: ReportTextBudget, withFrames = true): Generator<TracesPiece> {
    yield { text: budget.take(header.join('\n') + '\n') };
    for (let i = 0; i < values.length; i++) {
      const labels = sampleLabels(p, i);
      // The string values are printed whole: many labels can share one long value.
      let printed = 0;
      for (const vs of labels.str.values()) for (const v of vs) printed += v.length;
      budget.reserve(printed);
      const sample: TraceSample = {
        // pprof -mean: each sample's value over its count
        value: divisors ? meanOf(values[i]!, divisors[i]!) : values[i]!,
        labels: [...labels.str],
        numLabels: [...labels.num].map(([k, vs]) => [k, vs, units.get(k) ?? k]),
        frames: [],
      };
      yield {
        text:
          budget.take(TRACES_SEPARATOR + '\n') +
          budget.take(sample.labels.map(([k, vs]) => `${padRunes(k, 10)}:  ${vs.join(' ')}\n`).sort(compareGoStrings).join('')) +
          budget.take(sample.numLabels.map(([k, vs, u]) => `${padRunes(k, 10)}:  ${vs.map((v) => formatValue(v, u, 'auto')).join(' ')}\n`).sort(compareGoStrings).join('')),
      };
      const valueColumn = padRunes(reportValue(sample.value, unit, outputUnit, prepared.ratio), 10);
      let first = true;
      for (let k = offsets[i]!; k < offsets[i + 1]!; k++) {
        const r = index.locations.get(location_id[k]!);
        if (r < 0) continue;
        // A piece and a count per frame: one location can hold more inline lines than the limit
        // allows, and a sample's frames can be more text than is worth holding at once.
        const nodes = locNodes[r]!;
        for (let j = 0; j < nodes.length; j++) {
          const name = names[nodes[j]!]!;
          const inline = j !== nodes.length - 1;
          yield { text: budget.take(`${first ? valueColumn : '          '}   ${name}${inline ? ' (inline)' : ''}\n`) };
          first = false;
          if (withFrames) sample.frames.push({ name, inline });
        }
      }
      yield { text: '', sample };
    }
    yield { text: budget.take(TRACES_SEPARATOR + '\n') };
  }
  return { header, sampleTypeIndex: t, unit, pieces };
}

/**
 * Go's `text/tabwriter` with `minwidth 0, tabwidth 0, padding 1, padchar ' ', AlignRight`: cells
 * end at tabs, a column's width is its widest cell in a block of consecutive lines that have that
 * column, plus 1; text is right-aligned in its cell; a line's last cell is not in a column.
 */
function alignRight(text: string): string {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const cells = lines.map((l) => l.split('\t'));
  const width = (s: string) => [...s].length;
  const out: string[] = new Array(cells.length);
  const widths: number[] = [];
  const write = (from: number, to: number) => {
    for (let l = from; l < to; l++) {
      out[l] = cells[l]!.map((c, j) => (j < widths.length && j < cells[l]!.length - 1 ? ' '.repeat(widths[j]! - width(c)) + c : c)).join('');
    }
  };
  const format = (line0: number, line1: number) => {
    const column = widths.length;
    let l = line0;
    while (l < line1) {
      if (column >= cells[l]!.length - 1) {
        l++;
        continue;
      }
      write(line0, l);
      const begin = l;
      let w = 0;
      for (; l < line1 && column < cells[l]!.length - 1; l++) w = Math.max(w, width(cells[l]![column]!) + 1);
      widths.push(w);
      format(begin, l);
      widths.pop();
      line0 = l;
    }
    write(line0, line1);
  };
  format(0, cells.length);
  return out.map((l) => l + '\n').join('');
}

export interface TagValue {
  /** The label value (numeric values scaled as pprof prints them, e.g. `512kB`). */
  value: string;
  /** The sum of the reported sample type over the samples with this value. */
  amount: bigint;
}

export interface TagKey {
  key: string;
  total: bigint;
  /** Largest amount first, then by value. */
  values: TagValue[];
}

export interface TagsReport {
  sampleTypeIndex: number;
  unit: string;
  /** Sorted by key. */
  keys: TagKey[];
  /** The report as `go tool pprof -tags` prints it. */
  text: string;
}

/**
 * `go tool pprof -tags` (`printTags`): per label key (sorted), the total of the reported sample
 * type over the samples carrying it, then each value (numeric values scaled like pprof) with its
 * share, largest first. `loaded` is a `goPprofLoad` result.
 */
export function tagsReport(loaded: Profile, options: SampleReportOptions = {}): TagsReport {
  const t = sampleTypeOf(loaded, options);
  // The filters and label frames apply; pprof's tags sum plain values (no -mean, no -divide_by).
  const p = withoutEmptyStacks(prepareReport(loaded, t, options).profile);
  const unit = p.sample_types.unit[t] ?? '';
  const outputUnit = options.outputUnit ?? 'minimum';
  const units = numLabelUnits(p);
  const values = p.samples['.values'][t]!;
  // Keys and values are the input's strings: keyed through StringKeyedMap (a Map hashes a string
  // longer than 16,383 units by its length alone, so many long values of one length were one chain).
  const tagMap = new StringKeyedMap<{ key: string; values: StringKeyedMap<TagValue> }>();
  const add = (key: string, value: string, v: bigint) => {
    let m = tagMap.get(key);
    if (!m) tagMap.set(key, (m = { key, values: new StringKeyedMap() }));
    const e = m.values.get(value);
    if (e) e.amount += v;
    else m.values.set(value, { value, amount: v });
  };
  for (let i = 0; i < values.length; i++) {
    const labels = sampleLabels(p, i);
    for (const [k, vs] of labels.str) for (const v of vs) add(k, v, values[i]!);
    for (const [k, vs] of labels.num) for (const v of vs) add(k, formatValue(v, units.get(k) ?? k, outputUnit), values[i]!);
  }
  const keys: TagKey[] = [...tagMap.values()].sort((a, b) => compareGoStrings(a.key, b.key)).map(({ key, values: byValue }) => {
    const tagValues = [...byValue.values()];
    let total = 0n;
    for (const v of tagValues) total += v.amount;
    tagValues.sort((a, b) => (abs(a.amount) !== abs(b.amount) ? (abs(a.amount) > abs(b.amount) ? -1 : 1) : compareGoStrings(a.value, b.value)));
    return { key, total, values: tagValues };
  });
  const scaled = (v: bigint) => {
    const [f, u] = scaleMeasurement(Number(v), unit, outputUnit);
    return goFormatF(f, 1) + u;
  };
  let text = '';
  for (const k of keys) {
    text += `${k.key}:\t Total ${scaled(k.total)}\n`;
    for (const v of k.values) {
      text += k.total > 0n ? ` \t${scaled(v.amount)} (${formatPercentage(v.amount, k.total)}):\t ${v.value}\n` : ` \t${scaled(v.amount)}:\t ${v.value}\n`;
    }
    text += '\n';
  }
  return { sampleTypeIndex: t, unit, keys, text: alignRight(text) };
}
