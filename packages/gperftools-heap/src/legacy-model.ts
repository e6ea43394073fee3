/**
 * The object model the legacy parsers build, shaped like google/pprof's Go `Profile` so that the
 * parsing steps (location interning, mapping massage, id renumbering, frame heuristics) can be
 * implemented as google/pprof implements them and produce the same ids. `toProfile` turns it
 * into profkit's columnar model at the end.
 */

import { createProfile, limitError, type FormatExtension, type Profile, type ValueType } from '@profkit/core';

export interface LMapping {
  id: number;
  start: bigint;
  limit: bigint;
  offset: bigint;
  file: string;
  buildId: string;
}

export interface LFunction {
  id: number;
  name: string;
  systemName: string;
  filename: string;
}

export interface LLocation {
  id: number;
  address: bigint;
  mapping: LMapping | undefined;
  /** At most one line (legacy formats have no inline information). */
  line: { fn: LFunction; line: number } | undefined;
}

export interface LSample {
  values: bigint[];
  locs: LLocation[];
  /** Numeric label `bytes` (heap profiles: the average object size). */
  bytes?: bigint;
}

export interface LProfile {
  sampleTypes: ValueType[];
  /** `undefined` = no period type; `{type:'',unit:''}` = an empty one (Java heap). */
  periodType: ValueType | undefined;
  period: bigint;
  durationNanos: bigint;
  samples: LSample[];
  locations: LLocation[];
  functions: LFunction[];
  mappings: LMapping[];
  dropFrames: string;
  keepFrames: string;
}

export function newLProfile(sampleTypes: ValueType[], periodType: ValueType | undefined, period: bigint): LProfile {
  return { sampleTypes, periodType, period, durationNanos: 0n, samples: [], locations: [], functions: [], mappings: [], dropFrames: '', keepFrames: '' };
}

/**
 * Throws the `maxTableEntries` limit error when a table of `size` distinct locations is to get
 * another: the text parsers intern one per distinct address, and a Map holds at most 2^24 entries
 * while `maxTotalFrames` allows more frames (a 150 MB text of distinct addresses).
 */
export function checkLocationCount(size: number, maxTableEntries: number | undefined, line: number | undefined): void {
  if (maxTableEntries !== undefined && size >= maxTableEntries) {
    throw limitError('maxTableEntries', `more than ${maxTableEntries} distinct addresses`, maxTableEntries, line === undefined ? {} : { line });
  }
}

/** Interns locations by (already adjusted) address, as every legacy parser does. */
export class LocationTable {
  readonly byAddress = new Map<bigint, LLocation>();
  constructor(
    private readonly p: LProfile,
    private readonly maxTableEntries?: number,
  ) {}
  get(address: bigint, line?: number): LLocation {
    let loc = this.byAddress.get(address);
    if (!loc) {
      checkLocationCount(this.byAddress.size, this.maxTableEntries, line);
      loc = { id: 0, address, mapping: undefined, line: undefined };
      this.byAddress.set(address, loc);
      this.p.locations.push(loc);
    }
    return loc;
  }
}

/**
 * Interns locations of formats that decrement every frame (heap, contention, Go counts) straight
 * from the `0x…` text, keyed by the normalized hex string: no BigInt per frame, one per location.
 */
export class HexLocationTable {
  private readonly byHex = new Map<string, LLocation>();
  constructor(
    private readonly p: LProfile,
    private readonly maxTableEntries?: number,
  ) {}
  /** The location of `addr - 1` for the `0x…` token `tok` (on `line`); undefined if it exceeds 64 bits. */
  getDecremented(tok: string, line?: number): LLocation | undefined {
    let i = 2;
    while (i < tok.length - 1 && tok.charCodeAt(i) === 48) i++;
    const key = i === 2 ? tok : tok.slice(i);
    let loc = this.byHex.get(key);
    if (!loc) {
      if (tok.length - i > 16) return undefined;
      checkLocationCount(this.byHex.size, this.maxTableEntries, line);
      loc = { id: 0, address: dec(BigInt(i === 2 ? tok : '0x' + key)), mapping: undefined, line: undefined };
      this.byHex.set(key, loc);
      this.p.locations.push(loc);
    }
    return loc;
  }
}

const UINT64_MASK = (1n << 64n) - 1n;

/** `addr - 1` with Go's uint64 wrap-around. */
export function dec(addr: bigint): bigint {
  return (addr - 1n) & UINT64_MASK;
}

/** google/pprof `remapLocationIDs`: keep only locations used by samples, numbered by first use. */
export function remapLocationIDs(p: LProfile): void {
  const seen = new Set<LLocation>();
  const locs: LLocation[] = [];
  for (const s of p.samples) {
    for (const l of s.locs) {
      if (seen.has(l)) continue;
      l.id = locs.length + 1;
      locs.push(l);
      seen.add(l);
    }
  }
  p.locations = locs;
}

/** google/pprof `remapFunctionIDs`: functions numbered by first use from locations. */
export function remapFunctionIDs(p: LProfile): void {
  const seen = new Set<LFunction>();
  const fns: LFunction[] = [];
  for (const l of p.locations) {
    const fn = l.line?.fn;
    if (!fn || seen.has(fn)) continue;
    fn.id = fns.length + 1;
    fns.push(fn);
    seen.add(fn);
  }
  p.functions = fns;
}

/** Rebuilds one Go-style profile as profkit's columnar model. */
export function toProfile(p: LProfile, extension: FormatExtension, adapterName: string): Profile {
  const nLoc = p.locations.length;
  const locId = new Uint32Array(nLoc);
  const locFn = new Uint32Array(nLoc);
  const locLine = new Float64Array(nLoc);
  const locAddr = new BigUint64Array(nLoc);
  const locMap = new Uint32Array(nLoc);
  p.locations.forEach((l, i) => {
    locId[i] = l.id;
    locFn[i] = l.line ? l.line.fn.id : 0;
    locLine[i] = l.line ? l.line.line : 0;
    locAddr[i] = l.address;
    locMap[i] = l.mapping ? l.mapping.id : 0;
  });

  const nFn = p.functions.length;
  const functions = {
    function_id: Uint32Array.from(p.functions, (f) => f.id),
    name: p.functions.map((f) => f.name),
    system_name: p.functions.map((f) => f.systemName),
    filename: p.functions.map((f) => f.filename),
    start_line: new Float64Array(nFn),
  };

  const nMap = p.mappings.length;
  const mappings = {
    mapping_id: Uint32Array.from(p.mappings, (m) => m.id),
    memory_start: BigUint64Array.from(p.mappings, (m) => m.start),
    memory_limit: BigUint64Array.from(p.mappings, (m) => m.limit),
    file_offset: BigUint64Array.from(p.mappings, (m) => m.offset),
    filename: p.mappings.map((m) => m.file),
    build_id: p.mappings.map((m) => m.buildId),
    has_functions: new Uint8Array(nMap),
    has_filenames: new Uint8Array(nMap),
    has_line_numbers: new Uint8Array(nMap),
    has_inline_frames: new Uint8Array(nMap),
  };

  const nS = p.samples.length;
  const nT = p.sampleTypes.length;
  const values = Array.from({ length: nT }, () => new BigInt64Array(nS));
  const offsets = new Uint32Array(nS + 1);
  let total = 0;
  for (const s of p.samples) total += s.locs.length;
  const ids = new Uint32Array(total);
  let k = 0;
  const anyBytes = p.samples.some((s) => s.bytes !== undefined);
  const labelOffsets = anyBytes ? new Uint32Array(nS + 1) : undefined;
  const labelNums: bigint[] = [];
  p.samples.forEach((s, i) => {
    for (let t = 0; t < nT; t++) values[t]![i] = BigInt.asIntN(64, s.values[t]!);
    for (const l of s.locs) ids[k++] = l.id;
    offsets[i + 1] = k;
    if (labelOffsets) {
      if (s.bytes !== undefined) labelNums.push(s.bytes);
      labelOffsets[i + 1] = labelNums.length;
    }
  });
  const nL = labelNums.length;
  const profile = createProfile({
    sample_types: { type: p.sampleTypes.map((t) => t.type), unit: p.sampleTypes.map((t) => t.unit) },
    samples: {
      value: values[0] ?? new BigInt64Array(0),
      locations: { offsets, location_id: ids },
      '.values': values,
      ...(labelOffsets ? { '.label_offsets': labelOffsets } : {}),
    },
    locations: { location_id: locId, function_id: locFn, line: locLine, '.address': locAddr, '.mapping_id': locMap },
    functions,
    '.mappings': mappings,
    '.labels': {
      key: new Array<string>(nL).fill('bytes'),
      str: new Array<string>(nL).fill(''),
      num: BigInt64Array.from(labelNums),
      num_unit: new Array<string>(nL).fill(''),
      is_num: new Uint8Array(nL).fill(1),
    },
    '.profile': {
      ...(p.periodType ? { period_type: { ...p.periodType } } : {}),
      period: p.period,
      duration_nanos: p.durationNanos,
      drop_frames: p.dropFrames,
      keep_frames: p.keepFrames,
    },
    '.extensions': { [adapterName]: extension },
  });
  return profile;
}
