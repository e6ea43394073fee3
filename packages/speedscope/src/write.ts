/**
 * Profile → speedscope JSON (schema 0.7).
 *
 * - A profile this adapter read (its `.extensions.speedscope` facts and columns are intact) is
 *   written back as it was: the same profiles, types, units, start/end values, name, exporter and
 *   activeProfileIndex; sampled profiles with their samples in order; evented profiles as the
 *   O/C events that open and close frames where consecutive stretches differ. (Frames of equal
 *   name/file/line/col share one entry of `shared.frames`, and a frame closed and reopened at the
 *   same instant comes back as one stretch: speedscope draws both the same.)
 * - Any other profile: one sampled profile per sample type (or only `sampleType`), the samples
 *   whose value is not 0, in order; warnings say what speedscope has no place for.
 */

import {
  ErrorCodes,
  ProfileIndex,
  ProfkitError,
  StringKeyedMap,
  defaultSampleTypeIndex,
  findSampleType,
  resolveStack,
  type Profile,
  type Warning,
} from '@profkit/core';
import { ADAPTER_NAME, SCHEMA_URL, UNITS, type EventedProfile, type ProfileFacts, type SampledProfile, type SpeedscopeEvent, type SpeedscopeFile, type SpeedscopeFrame, type SpeedscopeUnit } from './format.js';

export interface SpeedscopeWriteOptions {
  /** Write only this sample type (`type`, `type/unit` or index); default: all. */
  sampleType?: string;
  /** The file's `name` (default: the one read, else none). */
  name?: string;
  /** The `exporter` field (default: the one read, else `profkit`). */
  exporter?: string;
}

/** Frames of the profile's stacks as `shared.frames` entries, root first per sample. */
class FrameTable {
  readonly frames: SpeedscopeFrame[] = [];
  // Keyed through StringKeyedMap: names and files can be longer than V8 hashes (core's string-keys.ts).
  private readonly byKey = new StringKeyedMap<number>();
  private readonly index: ProfileIndex;
  constructor(private readonly p: Profile) {
    this.index = new ProfileIndex(p);
  }
  stack(i: number): number[] {
    const out: number[] = [];
    const frames = resolveStack(this.p, i, this.index);
    for (let k = frames.length - 1; k >= 0; k--) {
      const f = frames[k]!;
      const name = f.name !== '' ? f.name : `0x${f.address.toString(16)}`;
      const key = `${name}\u0000${f.filename}\u0000${f.line}\u0000${f.column}`;
      let id = this.byKey.get(key);
      if (id === undefined) {
        id = this.frames.length;
        const fr: SpeedscopeFrame = { name };
        if (f.filename !== '') fr.file = f.filename;
        if (f.line > 0) fr.line = f.line;
        if (f.column > 0) fr.col = f.column;
        this.frames.push(fr);
        this.byKey.set(key, id);
      }
      out.push(id);
    }
    return out;
  }
}

/** The facts and columns the reader left, when they still describe this profile's samples. */
function readBack(p: Profile): { profiles: ProfileFacts[]; profileOf: ArrayLike<number>; at: ArrayLike<number>; facts: Record<string, unknown> } | undefined {
  const ext = p['.extensions'][ADAPTER_NAME];
  const profiles = ext?.facts?.profiles as unknown as ProfileFacts[] | undefined;
  const profileOf = ext?.samples?.profile as ArrayLike<number> | undefined;
  const at = ext?.samples?.at as ArrayLike<number> | undefined;
  const n = p.samples.value.length;
  if (!Array.isArray(profiles) || profiles.length !== p.sample_types.type.length || !profileOf || !at || profileOf.length !== n || at.length !== n) return undefined;
  return { profiles, profileOf, at, facts: ext!.facts as Record<string, unknown> };
}

function toNumber(v: bigint, scale: number): number {
  return Number(v) / scale;
}

export function writeSpeedscope(p: Profile, options: SpeedscopeWriteOptions = {}): { data: Uint8Array; warnings: Warning[] } {
  const warnings: Warning[] = [];
  const table = new FrameTable(p);
  const back = readBack(p);
  let only = -1;
  if (options.sampleType !== undefined) {
    only = findSampleType(p, options.sampleType);
    if (only < 0) throw new ProfkitError(ErrorCodes.USAGE, `no sample type ${options.sampleType} (have ${p.sample_types.type.map((t, i) => `${t}/${p.sample_types.unit[i]}`).join(', ')})`, { option: 'sampleType' });
  }
  const types = p.sample_types.type.map((_, k) => k).filter((k) => only < 0 || k === only);
  const profiles = types.map((k) => (back ? writeBack(p, k, back.profiles[k]!, back.profileOf, back.at, table) : writeSampled(p, k, table, warnings)));
  const active = only >= 0 ? 0 : back && typeof back.facts.activeProfileIndex === 'number' ? back.facts.activeProfileIndex : Math.max(0, defaultSampleTypeIndex(p));
  const file: SpeedscopeFile = {
    $schema: SCHEMA_URL,
    shared: { frames: table.frames },
    profiles,
    activeProfileIndex: Math.min(active, Math.max(0, profiles.length - 1)),
    exporter: options.exporter ?? (back && typeof back.facts.exporter === 'string' ? back.facts.exporter : 'profkit'),
  };
  const name = options.name ?? (back && typeof back.facts.name === 'string' ? back.facts.name : undefined);
  if (name !== undefined) file.name = name;
  if (!back) warnLosses(p, warnings);
  return { data: new TextEncoder().encode(JSON.stringify(file)), warnings };
}

/** A speedscope profile read by this adapter, given back (see the file's comment). */
function writeBack(p: Profile, k: number, facts: ProfileFacts, profileOf: ArrayLike<number>, at: ArrayLike<number>, table: FrameTable): SampledProfile | EventedProfile {
  const values = p.samples['.values'][k]!;
  const head = { name: facts.name, unit: facts.unit, startValue: facts.startValue, endValue: facts.endValue };
  const mine: number[] = [];
  for (let i = 0; i < values.length; i++) if (profileOf[i] === k) mine.push(i);
  if (facts.type === 'sampled') {
    return { type: 'sampled', ...head, samples: mine.map((i) => table.stack(i)), weights: mine.map((i) => toNumber(values[i]!, facts.scale)) };
  }
  const events: SpeedscopeEvent[] = [];
  let open: number[] = [];
  let end = facts.startValue;
  const closeDownTo = (depth: number, t: number) => {
    for (let d = open.length - 1; d >= depth; d--) events.push({ type: 'C', at: t, frame: open[d]! });
    open = open.slice(0, depth);
  };
  for (const i of mine) {
    const stack = table.stack(i);
    const start = at[i]!;
    // A gap (no frame open) between the previous stretch and this one closes everything first.
    if (start - end > 1e-9 * Math.max(1, Math.abs(start))) closeDownTo(0, end);
    let common = 0;
    while (common < open.length && common < stack.length && open[common] === stack[common]) common++;
    closeDownTo(common, start);
    for (let d = common; d < stack.length; d++) events.push({ type: 'O', at: start, frame: stack[d]! });
    open = stack;
    end = start + toNumber(values[i]!, facts.scale);
  }
  closeDownTo(0, end);
  return { type: 'evented', ...head, events };
}

/** Largest value a JSON double (a speedscope weight) holds exactly. */
const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

const UNIT_OF: Record<string, SpeedscopeUnit> = { count: 'none', samples: 'none' };

/** One sample type of any profile as a sampled speedscope profile. */
function writeSampled(p: Profile, k: number, table: FrameTable, warnings: Warning[]): SampledProfile {
  const type = p.sample_types.type[k]!;
  const unitName = p.sample_types.unit[k]!;
  const unit: SpeedscopeUnit = UNITS.includes(unitName as SpeedscopeUnit) ? (unitName as SpeedscopeUnit) : (UNIT_OF[unitName] ?? 'none');
  if (unit === 'none' && !(unitName in UNIT_OF) && unitName !== 'none') {
    warnings.push({ code: 'PROFKIT_W_SPEEDSCOPE_UNIT', message: `sample type ${type}/${unitName}: speedscope has no unit "${unitName}", written as "none"` });
  }
  const values = p.samples['.values'][k]!;
  const samples: number[][] = [];
  const weights: number[] = [];
  let negative = 0;
  let inexact = 0;
  let total = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v === 0n) continue;
    if (v < 0n) {
      negative++;
      continue;
    }
    samples.push(table.stack(i));
    const weight = Number(v);
    if (v > MAX_EXACT && BigInt(weight) !== v) inexact++;
    weights.push(weight);
    total += weight;
  }
  if (inexact > 0) warnings.push({ code: 'PROFKIT_W_SPEEDSCOPE_PRECISION', message: `sample type ${type}: ${inexact} value(s) above 2^53 written rounded to the nearest double (speedscope weights are JSON doubles)` });
  if (negative > 0) warnings.push({ code: 'PROFKIT_W_SPEEDSCOPE_NEGATIVE', message: `sample type ${type}: ${negative} sample(s) with a negative value not written (speedscope weights are not negative)` });
  return { type: 'sampled', name: type, unit, startValue: 0, endValue: total, samples, weights };
}

function warnLosses(p: Profile, warnings: Warning[]): void {
  if (p['.labels'].key.length > 0) warnings.push({ code: 'PROFKIT_W_SPEEDSCOPE_LABELS', message: `${p['.labels'].key.length} sample label(s) not written (speedscope has no labels)` });
  if (p['.mappings'].mapping_id.length > 0) warnings.push({ code: 'PROFKIT_W_SPEEDSCOPE_MAPPINGS', message: `${p['.mappings'].mapping_id.length} mapping(s) and the locations' addresses not written (speedscope frames have a name, file, line and column only)` });
}
