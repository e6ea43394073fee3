/**
 * `ProfileBuilder`: the readable way for adapters and user code to produce a profile. It interns
 * strings-keyed functions, locations and mappings (the same function/location asked for twice
 * gets the same id), assigns ids in order of first appearance (deterministic, locale-free), and
 * stores everything in growable columns so building millions of samples stays cheap.
 */

import {
  GrowableBigInt64,
  GrowableBigUint64,
  GrowableFloat64,
  GrowableUint32,
  GrowableUint8,
  MAX_ID,
  checkId,
  checkLine,
  toInt64,
  toUint64,
} from './columns.js';
import { emptyFacts } from './create.js';
import { ErrorCodes, ProfkitError } from './errors.js';
import {
  DATA_FORMAT_VERSION,
  type Column,
  type FormatExtension,
  type Profile,
  type ProfileFacts,
  type ValueType,
} from './model.js';
import { StringKeys } from './string-keys.js';
import { seededWord } from './ops/stack-hash.js';

export interface FunctionInput {
  name: string;
  /** Defaults to `name`. */
  systemName?: string;
  filename?: string;
  startLine?: number | bigint;
}

export interface LineInput {
  functionId: number;
  line?: number | bigint;
  column?: number | bigint;
}

export interface LocationInput {
  /** The innermost line's function; 0 or absent = none (unsymbolized). */
  functionId?: number;
  line?: number | bigint;
  column?: number | bigint;
  address?: number | bigint;
  mappingId?: number;
  isFolded?: boolean;
  /** Further lines, the callers the innermost line was inlined into (innermost to outermost). */
  inlinedInto?: LineInput[];
}

/** Lines of a location beyond the first, as columns: line k is `functionId[k]`, `line[k]`, `column[k]`. */
export interface InlineLinesInput {
  length: number;
  functionId: ArrayLike<number>;
  line: ArrayLike<number>;
  column: ArrayLike<number>;
}

/** A location's own fields as the builder stores them (checked). */
interface LocationFields {
  functionId: number;
  line: number;
  column: number;
  address: bigint;
  mappingId: number;
  folded: number;
}

export interface MappingInput {
  memoryStart?: number | bigint;
  memoryLimit?: number | bigint;
  fileOffset?: number | bigint;
  filename?: string;
  buildId?: string;
  hasFunctions?: boolean;
  hasFilenames?: boolean;
  hasLineNumbers?: boolean;
  hasInlineFrames?: boolean;
}

export type LabelInput =
  | { key: string; str: string }
  | { key: string; num: number | bigint; unit?: string };

export interface ProfileBuilderOptions {
  sampleTypes: ValueType[];
  facts?: Partial<ProfileFacts>;
}

/** Separator unlikely to occur in names; used only for interning keys. */
const SEP = '\u0000';

export class ProfileBuilder {
  readonly sampleTypes: ValueType[];
  facts: ProfileFacts;
  readonly extensions: Record<string, FormatExtension> = {};

  /** Short map keys for long strings (names, files, inline-line lists): see StringKeys. */
  private readonly stringKeys = new StringKeys();
  private readonly functionKeys = new Map<string, number>();
  private readonly fnId = new GrowableUint32();
  private readonly fnName: string[] = [];
  private readonly fnSystemName: string[] = [];
  private readonly fnFilename: string[] = [];
  private readonly fnStartLine = new GrowableFloat64();

  /** Location ids by `locationHash` (a number, or the ids sharing one). */
  private readonly locationsByHash = new Map<number, number | number[]>();
  private readonly locationSeed = (Math.random() * 0x1_0000_0000) >>> 0;
  private readonly locId = new GrowableUint32();
  private readonly locFunctionId = new GrowableUint32();
  private readonly locLine = new GrowableFloat64();
  private readonly locColumn = new GrowableFloat64();
  private readonly locAddress = new GrowableBigUint64();
  private readonly locMappingId = new GrowableUint32();
  private readonly locFolded = new GrowableUint8();
  private readonly locInlineOffsets = new GrowableUint32();
  private readonly inlFunctionId = new GrowableUint32();
  private readonly inlLine = new GrowableFloat64();
  private readonly inlColumn = new GrowableFloat64();

  private readonly mappingKeys = new Map<string, number>();
  private readonly mapId = new GrowableUint32();
  private readonly mapStart = new GrowableBigUint64();
  private readonly mapLimit = new GrowableBigUint64();
  private readonly mapOffset = new GrowableBigUint64();
  private readonly mapFilename: string[] = [];
  private readonly mapBuildId: string[] = [];
  private readonly mapFlags = [new GrowableUint8(), new GrowableUint8(), new GrowableUint8(), new GrowableUint8()] as const;

  private readonly stackOffsets = new GrowableUint32(1024);
  private readonly stackIds = new GrowableUint32(4096);
  private readonly values: GrowableBigInt64[];
  private readonly labelOffsets = new GrowableUint32(1024);
  private anyLabels = false;
  private readonly labKey: string[] = [];
  private readonly labStr: string[] = [];
  private readonly labNum = new GrowableBigInt64();
  private readonly labUnit: string[] = [];
  private readonly labIsNum = new GrowableUint8();
  private readonly sampleExtColumns = new Map<string, { ext: string; column: string; data: (number | bigint | string)[] }>();

  constructor(options: ProfileBuilderOptions) {
    this.sampleTypes = options.sampleTypes.map((t) => ({ type: t.type, unit: t.unit }));
    this.facts = { ...emptyFacts(), ...(options.facts ?? {}) };
    this.values = this.sampleTypes.map(() => new GrowableBigInt64(1024));
    this.stackOffsets.push(0);
    this.labelOffsets.push(0);
    this.locInlineOffsets.push(0);
  }

  /** Number of samples added so far. */
  get sampleCount(): number {
    return this.stackOffsets.length - 1;
  }

  /** Returns the id of the function with these attributes, adding it on first use. */
  internFunction(f: FunctionInput): number {
    const systemName = f.systemName ?? f.name;
    const filename = f.filename ?? '';
    const startLine = f.startLine === undefined ? 0 : checkLine(f.startLine, 'start_line');
    // Each part keyed on its own: a long name shared by many functions is hashed in O(1).
    const key = this.stringKeys.of(f.name) + SEP + this.stringKeys.of(systemName) + SEP + this.stringKeys.of(filename) + SEP + startLine;
    let id = this.functionKeys.get(key);
    if (id === undefined) {
      id = this.fnId.length + 1;
      if (id > MAX_ID) throw new ProfkitError(ErrorCodes.LIMIT, 'more than 2^32-1 functions');
      this.functionKeys.set(key, id);
      this.fnId.push(id);
      this.fnName.push(f.name);
      this.fnSystemName.push(systemName);
      this.fnFilename.push(filename);
      this.fnStartLine.push(startLine);
    }
    return id;
  }

  /** Returns the id of the location with these attributes, adding it on first use. */
  internLocation(l: LocationInput): number {
    return this.internLocationOf(l, () => {
      if (l.inlinedInto) for (const x of l.inlinedInto) this.pushInlineLine(x.functionId, x.line ?? 0, x.column ?? 0);
    });
  }

  /**
   * `internLocation` with the lines beyond the first given as columns (`inlined.functionId[k]`,
   * `.line[k]`, `.column[k]` for k < `inlined.length`, innermost to outermost): for operations that
   * copy locations of many inline lines, with no object per line.
   */
  internLocationColumns(l: Omit<LocationInput, 'inlinedInto'>, inlined: InlineLinesInput): number {
    return this.internLocationOf(l, () => {
      for (let k = 0; k < inlined.length; k++) this.pushInlineLine(inlined.functionId[k]!, inlined.line[k]!, inlined.column[k]!);
    });
  }

  /** Adds a location without interning (for formats whose locations are distinct by identity). */
  addLocation(l: LocationInput): number {
    const fields = this.locationFields(l);
    const start = this.inlFunctionId.length;
    try {
      if (l.inlinedInto) for (const x of l.inlinedInto) this.pushInlineLine(x.functionId, x.line ?? 0, x.column ?? 0);
    } catch (e) {
      this.dropInlineLines(start);
      throw e;
    }
    return this.addLocationRow(fields);
  }

  /** A location's own fields, checked. */
  private locationFields(l: Omit<LocationInput, 'inlinedInto'>): LocationFields {
    return {
      functionId: checkId(l.functionId ?? 0, 'function_id', true),
      line: l.line === undefined ? 0 : checkLine(l.line),
      column: l.column === undefined ? 0 : checkLine(l.column, 'column'),
      address: l.address === undefined ? 0n : toUint64(l.address, 'address'),
      mappingId: checkId(l.mappingId ?? 0, 'mapping_id', true),
      folded: l.isFolded ? 1 : 0,
    };
  }

  private pushInlineLine(functionId: number, line: number | bigint, column: number | bigint): void {
    this.inlFunctionId.push(checkId(functionId, 'function_id'));
    this.inlLine.push(checkLine(line));
    this.inlColumn.push(checkLine(column, 'column'));
  }

  /** Forgets the inline lines pushed from row `start` on (of a location found already, or refused). */
  private dropInlineLines(start: number): void {
    this.inlFunctionId.length = start;
    this.inlLine.length = start;
    this.inlColumn.length = start;
  }

  /**
   * Interns a location whose inline lines `pushLines` appends to the inline columns: kept there for
   * a new location, dropped again for one already added. Locations are found by a hash of their
   * numbers and compared with the columns, not keyed by a string of their lines: such a key was
   * kept for every location, ~15 bytes per inline line (135 MB for 9M lines).
   */
  private internLocationOf(l: Omit<LocationInput, 'inlinedInto'>, pushLines: () => void): number {
    const fields = this.locationFields(l);
    const start = this.inlFunctionId.length;
    try {
      pushLines();
    } catch (e) {
      this.dropInlineLines(start);
      throw e;
    }
    const end = this.inlFunctionId.length;
    const hash = this.locationHash(fields, start, end);
    const hit = this.locationsByHash.get(hash);
    if (hit !== undefined) {
      for (const id of typeof hit === 'number' ? [hit] : hit) {
        if (this.sameLocation(id - 1, fields, start, end)) {
          this.dropInlineLines(start);
          return id;
        }
      }
    }
    const id = this.addLocationRow(fields);
    if (hit === undefined) this.locationsByHash.set(hash, id);
    else if (typeof hit === 'number') this.locationsByHash.set(hash, [hit, id]);
    else hit.push(id);
    return id;
  }

  /**
   * A seeded hash of a location's fields and of its inline lines in rows `start..end` (a hostile
   * input cannot choose collisions): each word mixed with the seed first, as xor and odd
   * multiplications alone carry a difference in bit 31 unchanged (two lines 2^31 apart in each of
   * two inline lines: one hash whatever the seed; 16,000 such locations took 15 s).
   */
  private locationHash(f: LocationFields, start: number, end: number): number {
    let h = this.locationSeed;
    const seed = this.locationSeed;
    const mix = (v: number) => {
      h = Math.imul(h ^ seededWord(v >>> 0, seed), 0x01000193);
      h = Math.imul(h ^ seededWord(Math.floor(v / 0x1_0000_0000), seed), 0x85ebca6b);
    };
    mix(f.functionId);
    mix(f.line);
    mix(f.column);
    mix(Number(BigInt.asUintN(32, f.address)));
    mix(Number(f.address >> 32n));
    mix(f.mappingId);
    mix(f.folded);
    mix(end - start);
    const fns = this.inlFunctionId;
    const lines = this.inlLine;
    const columns = this.inlColumn;
    for (let j = start; j < end; j++) {
      mix(fns.get(j));
      mix(lines.get(j));
      mix(columns.get(j));
    }
    return h ^ (h >>> 16);
  }

  /** Whether location row `row` has these fields and the inline lines of rows `start..end`. */
  private sameLocation(row: number, f: LocationFields, start: number, end: number): boolean {
    if (this.locFunctionId.get(row) !== f.functionId || this.locLine.get(row) !== f.line || this.locColumn.get(row) !== f.column) return false;
    if (this.locAddress.get(row) !== f.address || this.locMappingId.get(row) !== f.mappingId || this.locFolded.get(row) !== f.folded) return false;
    const from = this.locInlineOffsets.get(row);
    if (this.locInlineOffsets.get(row + 1) - from !== end - start) return false;
    for (let k = 0; k < end - start; k++) {
      const j = from + k;
      const i = start + k;
      if (this.inlFunctionId.get(j) !== this.inlFunctionId.get(i) || this.inlLine.get(j) !== this.inlLine.get(i) || this.inlColumn.get(j) !== this.inlColumn.get(i)) return false;
    }
    return true;
  }

  /** Adds a location row whose inline lines are the ones pushed since the last row. */
  private addLocationRow(f: LocationFields): number {
    const id = this.locId.length + 1;
    if (id > MAX_ID) throw new ProfkitError(ErrorCodes.LIMIT, 'more than 2^32-1 locations');
    this.locId.push(id);
    this.locFunctionId.push(f.functionId);
    this.locLine.push(f.line);
    this.locColumn.push(f.column);
    this.locAddress.push(f.address);
    this.locMappingId.push(f.mappingId);
    this.locFolded.push(f.folded);
    this.locInlineOffsets.push(this.inlFunctionId.length);
    return id;
  }

  /** Returns the id of the mapping with these attributes, adding it on first use. */
  internMapping(m: MappingInput): number {
    const start = toUint64(m.memoryStart ?? 0n, 'memory_start');
    const limit = toUint64(m.memoryLimit ?? 0n, 'memory_limit');
    const offset = toUint64(m.fileOffset ?? 0n, 'file_offset');
    const flags = [m.hasFunctions, m.hasFilenames, m.hasLineNumbers, m.hasInlineFrames].map((b) => (b ? 1 : 0));
    const key = [start, limit, offset, this.stringKeys.of(m.filename ?? ''), this.stringKeys.of(m.buildId ?? ''), ...flags].join(SEP);
    let id = this.mappingKeys.get(key);
    if (id === undefined) {
      id = this.mapId.length + 1;
      this.mappingKeys.set(key, id);
      this.mapId.push(id);
      this.mapStart.push(start);
      this.mapLimit.push(limit);
      this.mapOffset.push(offset);
      this.mapFilename.push(m.filename ?? '');
      this.mapBuildId.push(m.buildId ?? '');
      flags.forEach((f, i) => this.mapFlags[i]!.push(f));
    }
    return id;
  }

  /**
   * Adds one sample: its stack (location ids, innermost first), one value per sample type, and
   * optional labels.
   */
  addSample(locationIds: ArrayLike<number>, values: ArrayLike<number | bigint>, labels?: LabelInput[]): void {
    if (values.length !== this.values.length) {
      throw new ProfkitError(ErrorCodes.USAGE, `sample has ${values.length} values but the profile has ${this.values.length} sample types`);
    }
    for (let i = 0; i < values.length; i++) this.values[i]!.push(toInt64(values[i]!));
    this.stackIds.pushAll(locationIds);
    this.stackOffsets.push(this.stackIds.length);
    if (labels && labels.length > 0) {
      this.anyLabels = true;
      for (const l of labels) {
        this.labKey.push(l.key);
        if ('str' in l) {
          this.labStr.push(l.str);
          this.labNum.push(0n);
          this.labUnit.push('');
          this.labIsNum.push(0);
        } else {
          this.labStr.push('');
          this.labNum.push(toInt64(l.num, 'label number'));
          this.labUnit.push(l.unit ?? '');
          this.labIsNum.push(1);
        }
      }
    }
    this.labelOffsets.push(this.labKey.length);
  }

  /**
   * Sets a format-specific per-sample column value for the sample added last. The column is
   * padded with `fill` for samples that never set it.
   */
  setSampleExtension(ext: string, column: string, value: number | bigint | string, fill: number | bigint | string = 0): void {
    const k = ext + SEP + column;
    let entry = this.sampleExtColumns.get(k);
    if (!entry) {
      entry = { ext, column, data: [] };
      this.sampleExtColumns.set(k, entry);
    }
    const i = this.sampleCount - 1;
    if (i < 0) throw new ProfkitError(ErrorCodes.USAGE, 'setSampleExtension before any sample');
    while (entry.data.length < i) entry.data.push(fill);
    entry.data[i] = value;
  }

  /** Returns (creating) the format extension named `name`. */
  extension(name: string): FormatExtension {
    return (this.extensions[name] ??= {});
  }

  build(): Profile {
    const n = this.sampleCount;
    const values = this.values.map((v) => v.finish());
    const extensions: Record<string, FormatExtension> = { ...this.extensions };
    for (const { ext, column, data } of this.sampleExtColumns.values()) {
      const e = (extensions[ext] = { ...(extensions[ext] ?? {}) });
      e.samples = { ...(e.samples ?? {}), [column]: toColumn(data, n) };
    }
    const profile: Profile = {
      meta: { key: ['version'], value: [DATA_FORMAT_VERSION] },
      sample_types: { type: this.sampleTypes.map((t) => t.type), unit: this.sampleTypes.map((t) => t.unit) },
      samples: {
        value: values[0] ?? new BigInt64Array(n === 0 ? 0 : 0),
        locations: { offsets: this.stackOffsets.finish(), location_id: this.stackIds.finish() },
        '.values': values,
      },
      locations: {
        location_id: this.locId.finish(),
        function_id: this.locFunctionId.finish(),
        line: this.locLine.finish(),
        '.column': this.locColumn.finish(),
        '.address': this.locAddress.finish(),
        '.mapping_id': this.locMappingId.finish(),
        '.is_folded': this.locFolded.finish(),
        '.inline_offsets': this.locInlineOffsets.finish(),
      },
      functions: {
        function_id: this.fnId.finish(),
        name: this.fnName.slice(),
        system_name: this.fnSystemName.slice(),
        filename: this.fnFilename.slice(),
        start_line: this.fnStartLine.finish(),
      },
      '.inline_lines': {
        function_id: this.inlFunctionId.finish(),
        line: this.inlLine.finish(),
        column: this.inlColumn.finish(),
      },
      '.mappings': {
        mapping_id: this.mapId.finish(),
        memory_start: this.mapStart.finish(),
        memory_limit: this.mapLimit.finish(),
        file_offset: this.mapOffset.finish(),
        filename: this.mapFilename.slice(),
        build_id: this.mapBuildId.slice(),
        has_functions: this.mapFlags[0].finish(),
        has_filenames: this.mapFlags[1].finish(),
        has_line_numbers: this.mapFlags[2].finish(),
        has_inline_frames: this.mapFlags[3].finish(),
      },
      '.labels': {
        key: this.labKey.slice(),
        str: this.labStr.slice(),
        num: this.labNum.finish(),
        num_unit: this.labUnit.slice(),
        is_num: this.labIsNum.finish(),
      },
      '.profile': { ...this.facts, comments: this.facts.comments.slice() },
      '.extensions': extensions,
    };
    if (this.anyLabels) profile.samples['.label_offsets'] = this.labelOffsets.finish();
    return profile;
  }
}

function toColumn(data: (number | bigint | string)[], n: number): Column {
  const first = data.find((x) => x !== undefined);
  if (typeof first === 'string') {
    const out: string[] = new Array(n).fill('');
    data.forEach((v, i) => (out[i] = String(v)));
    return out;
  }
  if (typeof first === 'bigint') {
    const out = new BigInt64Array(n);
    data.forEach((v, i) => (out[i] = BigInt(v as bigint)));
    return out;
  }
  const out = new Float64Array(n);
  data.forEach((v, i) => (out[i] = Number(v)));
  return out;
}
