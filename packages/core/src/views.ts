/**
 * Row views and lookups over the columnar tables: what user code reads when it wants "the
 * sample", "the location", "the frames of this stack" rather than columns.
 */

import type { Profile, ValueType } from './model.js';

/** Maps ids to row indices for one id column; dense ids use an array, sparse ones a Map. */
export class IdIndex {
  private readonly dense: Int32Array | undefined;
  private readonly sparse: Map<number, number> | undefined;
  /** Ids that occur more than once (an invalid profile); the first row wins in lookups. */
  readonly duplicates: number[] = [];

  constructor(ids: ArrayLike<number>) {
    let max = 0;
    for (let i = 0; i < ids.length; i++) if (ids[i]! > max) max = ids[i]!;
    if (max <= ids.length * 4 + 1024) {
      const dense = new Int32Array(max + 1).fill(-1);
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!;
        if (dense[id] !== -1) this.duplicates.push(id);
        else dense[id] = i;
      }
      this.dense = dense;
    } else {
      const sparse = new Map<number, number>();
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!;
        if (sparse.has(id)) this.duplicates.push(id);
        else sparse.set(id, i);
      }
      this.sparse = sparse;
    }
  }

  /**
   * The id → row array (-1 = absent) when the ids are dense (at most 4 × the rows + 1024), else
   * `undefined`: for loops over millions of ids, which read it directly instead of calling `get`.
   */
  get denseRows(): Int32Array | undefined {
    return this.dense;
  }

  /** Row index of `id`, or -1. */
  get(id: number): number {
    if (this.dense) return id >= 0 && id < this.dense.length ? this.dense[id]! : -1;
    return this.sparse!.get(id) ?? -1;
  }
}

/** Lazily built id→row lookups of a profile. Build once per profile, reuse for many lookups. */
export class ProfileIndex {
  private loc?: IdIndex;
  private fn?: IdIndex;
  private map?: IdIndex;
  constructor(readonly profile: Profile) {}
  get locations(): IdIndex {
    return (this.loc ??= new IdIndex(this.profile.locations.location_id));
  }
  get functions(): IdIndex {
    return (this.fn ??= new IdIndex(this.profile.functions.function_id));
  }
  get mappings(): IdIndex {
    return (this.map ??= new IdIndex(this.profile['.mappings'].mapping_id));
  }
}

/** One frame of a resolved stack: a function at a source position (or a bare address). */
export interface Frame {
  /** Function name; for an unsymbolized location the address in hex (`0x1234`), or `''`. */
  name: string;
  systemName: string;
  filename: string;
  line: number;
  column: number;
  startLine: number;
  address: bigint;
  mappingId: number;
  locationId: number;
  /** True for frames that were inlined into the next (outer) frame of the same location. */
  inlined: boolean;
  /** False when the location has no function (unsymbolized). */
  symbolized: boolean;
}

/** A sample as a plain object. */
export interface SampleRow {
  index: number;
  /** One value per sample type. */
  values: bigint[];
  /** Location ids, innermost first. */
  locationIds: number[];
  labels: LabelRow[];
}

export interface LabelRow {
  key: string;
  str?: string;
  num?: bigint;
  unit?: string;
}

export interface LocationRow {
  locationId: number;
  mappingId: number;
  address: bigint;
  isFolded: boolean;
  /** The location's lines, innermost first (pprof `Location.line` order). */
  lines: { functionId: number; line: number; column: number }[];
}

export interface FunctionRow {
  functionId: number;
  name: string;
  systemName: string;
  filename: string;
  startLine: number;
}

export interface MappingRow {
  mappingId: number;
  memoryStart: bigint;
  memoryLimit: bigint;
  fileOffset: bigint;
  filename: string;
  buildId: string;
  hasFunctions: boolean;
  hasFilenames: boolean;
  hasLineNumbers: boolean;
  hasInlineFrames: boolean;
}

/** The location ids of sample `i`, innermost first (a view, no copy). */
export function stackOf(p: Profile, i: number): Uint32Array {
  const { offsets, location_id } = p.samples.locations;
  return location_id.subarray(offsets[i]!, offsets[i + 1]!);
}

export function sampleRow(p: Profile, i: number): SampleRow {
  return {
    index: i,
    values: p.samples['.values'].map((c) => c[i]!),
    locationIds: Array.from(stackOf(p, i)),
    labels: labelsOf(p, i),
  };
}

export function labelsOf(p: Profile, i: number): LabelRow[] {
  const offsets = p.samples['.label_offsets'];
  if (!offsets) return [];
  const t = p['.labels'];
  const out: LabelRow[] = [];
  for (let j = offsets[i]!; j < offsets[i + 1]!; j++) {
    if (t.is_num[j]) out.push(t.num_unit[j] ? { key: t.key[j]!, num: t.num[j]!, unit: t.num_unit[j]! } : { key: t.key[j]!, num: t.num[j]! });
    else out.push({ key: t.key[j]!, str: t.str[j]! });
  }
  return out;
}

export function* sampleRows(p: Profile): Generator<SampleRow> {
  const n = p.samples.value.length;
  for (let i = 0; i < n; i++) yield sampleRow(p, i);
}

export function locationRow(p: Profile, row: number): LocationRow {
  const l = p.locations;
  const lines: LocationRow['lines'] = [];
  if (l.function_id[row] !== 0) lines.push({ functionId: l.function_id[row]!, line: l.line[row]!, column: l['.column'][row]! });
  const inl = p['.inline_lines'];
  for (let j = l['.inline_offsets'][row]!; j < l['.inline_offsets'][row + 1]!; j++) {
    lines.push({ functionId: inl.function_id[j]!, line: inl.line[j]!, column: inl.column[j]! });
  }
  return {
    locationId: l.location_id[row]!,
    mappingId: l['.mapping_id'][row]!,
    address: l['.address'][row]!,
    isFolded: l['.is_folded'][row] === 1,
    lines,
  };
}

export function* locationRows(p: Profile): Generator<LocationRow> {
  for (let i = 0; i < p.locations.location_id.length; i++) yield locationRow(p, i);
}

export function functionRow(p: Profile, row: number): FunctionRow {
  const f = p.functions;
  return {
    functionId: f.function_id[row]!,
    name: f.name[row]!,
    systemName: f.system_name[row]!,
    filename: f.filename[row]!,
    startLine: f.start_line[row]!,
  };
}

export function* functionRows(p: Profile): Generator<FunctionRow> {
  for (let i = 0; i < p.functions.function_id.length; i++) yield functionRow(p, i);
}

export function mappingRow(p: Profile, row: number): MappingRow {
  const m = p['.mappings'];
  return {
    mappingId: m.mapping_id[row]!,
    memoryStart: m.memory_start[row]!,
    memoryLimit: m.memory_limit[row]!,
    fileOffset: m.file_offset[row]!,
    filename: m.filename[row]!,
    buildId: m.build_id[row]!,
    hasFunctions: m.has_functions[row] === 1,
    hasFilenames: m.has_filenames[row] === 1,
    hasLineNumbers: m.has_line_numbers[row] === 1,
    hasInlineFrames: m.has_inline_frames[row] === 1,
  };
}

export function* mappingRows(p: Profile): Generator<MappingRow> {
  for (let i = 0; i < p['.mappings'].mapping_id.length; i++) yield mappingRow(p, i);
}

/**
 * The frames of one location, innermost first: its innermost line, then the lines it was
 * inlined into. An unsymbolized location yields one frame named by its address.
 */
export function locationFrames(p: Profile, index: ProfileIndex, locationRowIndex: number): Frame[] {
  const l = p.locations;
  const f = p.functions;
  const r = locationRowIndex;
  const address = l['.address'][r]!;
  const mappingId = l['.mapping_id'][r]!;
  const locationId = l.location_id[r]!;
  const frames: Frame[] = [];
  const push = (functionId: number, line: number, column: number, inlined: boolean) => {
    const fr = index.functions.get(functionId);
    frames.push({
      name: fr >= 0 ? f.name[fr]! : '',
      systemName: fr >= 0 ? f.system_name[fr]! : '',
      filename: fr >= 0 ? f.filename[fr]! : '',
      startLine: fr >= 0 ? f.start_line[fr]! : 0,
      line,
      column,
      address,
      mappingId,
      locationId,
      inlined,
      symbolized: fr >= 0,
    });
  };
  const inl = p['.inline_lines'];
  const b = l['.inline_offsets'][r]!;
  const e = l['.inline_offsets'][r + 1]!;
  if (l.function_id[r] !== 0) push(l.function_id[r]!, l.line[r]!, l['.column'][r]!, e > b);
  for (let j = b; j < e; j++) push(inl.function_id[j]!, inl.line[j]!, inl.column[j]!, j < e - 1);
  if (frames.length === 0) {
    frames.push({
      name: address !== 0n ? '0x' + address.toString(16) : '',
      systemName: '',
      filename: '',
      line: 0,
      column: 0,
      startLine: 0,
      address,
      mappingId,
      locationId,
      inlined: false,
      symbolized: false,
    });
  }
  return frames;
}

/**
 * Resolves sample `i`'s stack to frames (function name, file, line), innermost first, with
 * inline frames expanded. Pass a shared `ProfileIndex` when resolving many samples.
 */
export function resolveStack(p: Profile, i: number, index: ProfileIndex = new ProfileIndex(p)): Frame[] {
  const out: Frame[] = [];
  for (const id of stackOf(p, i)) {
    const r = index.locations.get(id);
    if (r < 0) continue;
    for (const fr of locationFrames(p, index, r)) out.push(fr);
  }
  return out;
}

/** The sample types as objects. */
export function sampleTypes(p: Profile): ValueType[] {
  return p.sample_types.type.map((type, i) => ({ type, unit: p.sample_types.unit[i]! }));
}

/**
 * Index of the default sample type: `default_sample_type` if it names one, else the last
 * (pprof's rule). -1 when there are no sample types.
 */
export function defaultSampleTypeIndex(p: Profile): number {
  const d = p['.profile'].default_sample_type;
  if (d) {
    const i = p.sample_types.type.indexOf(d);
    if (i >= 0) return i;
  }
  return p.sample_types.type.length - 1;
}

/**
 * Finds a sample type by name (`type` or `type/unit`), accepting `inuse_X` for a type named `X`
 * as pprof does; -1 if none.
 */
export function findSampleType(p: Profile, name: string): number {
  const { type, unit } = p.sample_types;
  for (let i = 0; i < type.length; i++) if (type[i] === name || `${type[i]}/${unit[i]}` === name) return i;
  if (name.startsWith('inuse_')) return type.indexOf(name.slice('inuse_'.length));
  if (/^\d+$/.test(name) && Number(name) < type.length) return Number(name);
  return -1;
}

/** Sum of one sample type's values. */
export function totalValue(p: Profile, sampleTypeIndex: number): bigint {
  const c = p.samples['.values'][sampleTypeIndex];
  if (!c) return 0n;
  let s = 0n;
  for (let i = 0; i < c.length; i++) s += c[i]!;
  return s;
}
