/**
 * Writing a profkit profile as speedscope JSON: one `sampled` speedscope profile per sample type
 * (name = the type, unit = the unit when speedscope knows it, else `none`), all listing the same
 * stacks (ROOT FIRST) so that reading the file back restores one value per type per sample.
 * Information speedscope cannot hold is reported as warnings, never dropped silently.
 */

import {
  ErrorCodes,
  ProfileIndex,
  ProfkitError,
  defaultSampleTypeIndex,
  resolveStack,
  sampleCount,
  type Profile,
  type Warning,
  type WriteResult,
} from '@profkit/core';
import { SPEEDSCOPE_SCHEMA_URL, VALUE_UNITS, type ValueUnit } from './file-format.js';
import { ADAPTER_NAME } from './read.js';

export const EXPORTER = 'profkit-adapter-speedscope@0.1.0';

const SEP = '\u0000';

function speedscopeUnit(unit: string): ValueUnit | undefined {
  if (unit === 'count' || unit === 'samples' || unit === '') return 'none';
  return VALUE_UNITS.includes(unit as ValueUnit) ? (unit as ValueUnit) : undefined;
}

/** Lossy spots of this profile in speedscope, as warnings. */
function lossWarnings(p: Profile, inlined: number): Warning[] {
  const w: Warning[] = [];
  const lost = (what: string) => w.push({ code: 'PROFKIT_W_SPEEDSCOPE_LOSSY', message: `speedscope cannot represent ${what}; not written` });
  if (p['.labels'].key.length) lost(`sample labels (${p['.labels'].key.length})`);
  if (p['.mappings'].mapping_id.length) lost(`mappings (${p['.mappings'].mapping_id.length})`);
  if (p.locations['.address'].some((a) => a !== 0n)) lost('location addresses');
  if (inlined) lost(`which frames were inlined (${inlined} inline frames written as ordinary frames)`);
  const f = p['.profile'];
  if (f.period_type || f.period !== 0n) lost('the sampling period');
  if (f.time_nanos !== 0n) lost('the collection time');
  if (f.duration_nanos !== 0n) lost('the duration');
  if (f.comments.length) lost(`comments (${f.comments.length})`);
  if (f.drop_frames || f.keep_frames) lost('drop/keep frame patterns');
  if (f.doc_url) lost('the documentation URL');
  if (p.functions.system_name.some((s, i) => s !== p.functions.name[i])) lost('system (mangled) function names');
  if (p.functions.start_line.some((x) => x !== 0)) lost('function start lines');
  const others = Object.keys(p['.extensions']).filter((k) => k !== ADAPTER_NAME);
  if (others.length) lost(`format-specific data of ${others.join(', ')}`);
  return w;
}

/** Serializes a profile as speedscope JSON, in chunks (memory stays proportional to one chunk of text). */
export function writeSpeedscope(p: Profile): WriteResult {
  if (p.sample_types.type.length === 0) {
    throw new ProfkitError(ErrorCodes.UNSUPPORTED, 'speedscope files need at least one profile, and this profile has no sample type', { rule: 'one speedscope profile per sample type' });
  }
  const warnings: Warning[] = [];
  const n = sampleCount(p);
  const index = new ProfileIndex(p);
  const frameIds = new Map<string, number>();
  const frames: { name: string; file?: string; line?: number; col?: number }[] = [];
  const stacks: number[][] = new Array(n);
  let inlined = 0;
  for (let i = 0; i < n; i++) {
    const resolved = resolveStack(p, i, index);
    const stack = new Array<number>(resolved.length);
    for (let k = 0; k < resolved.length; k++) {
      const fr = resolved[k]!;
      if (fr.inlined) inlined++;
      const key = fr.name + SEP + fr.filename + SEP + fr.line + SEP + fr.column;
      let id = frameIds.get(key);
      if (id === undefined) {
        id = frames.length;
        frameIds.set(key, id);
        const f: { name: string; file?: string; line?: number; col?: number } = { name: fr.name || '(unknown)' };
        if (fr.filename) f.file = fr.filename;
        if (fr.line) f.line = fr.line;
        if (fr.column) f.col = fr.column;
        frames.push(f);
      }
      stack[resolved.length - 1 - k] = id; // root first
    }
    stacks[i] = stack;
  }
  warnings.push(...lossWarnings(p, inlined));

  let unsafe = 0;
  const profiles = p.sample_types.type.map((type, t) => {
    const unitIn = p.sample_types.unit[t]!;
    let unit = speedscopeUnit(unitIn);
    if (unit === undefined) {
      warnings.push({ code: 'PROFKIT_W_SPEEDSCOPE_UNIT', message: `speedscope has no unit "${unitIn}" (sample type ${type}); written as "none"` });
      unit = 'none';
    }
    const col = p.samples['.values'][t]!;
    const weights = new Array<number>(n);
    let total = 0;
    for (let i = 0; i < n; i++) {
      const v = col[i]!;
      if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) unsafe++;
      weights[i] = Number(v);
      total += weights[i]!;
    }
    return { name: type, unit, total, weights };
  });
  if (unsafe) warnings.push({ code: 'PROFKIT_W_SPEEDSCOPE_PRECISION', message: `${unsafe} value${unsafe > 1 ? 's' : ''} beyond 2^53 lose precision as JSON numbers` });

  const ext = p['.extensions'][ADAPTER_NAME]?.facts ?? {};
  const def = defaultSampleTypeIndex(p);
  const name = typeof ext.name === 'string' ? ext.name : 'profkit';

  function* chunks(): Generator<string> {
    yield `{"$schema":${JSON.stringify(SPEEDSCOPE_SCHEMA_URL)},"exporter":${JSON.stringify(EXPORTER)},"name":${JSON.stringify(name)},"activeProfileIndex":${Math.max(0, def)},`;
    yield `"shared":{"frames":${JSON.stringify(frames)}},"profiles":[`;
    for (let t = 0; t < profiles.length; t++) {
      const pr = profiles[t]!;
      yield `${t ? ',' : ''}{"type":"sampled","name":${JSON.stringify(pr.name)},"unit":"${pr.unit}","startValue":0,"endValue":${pr.total},"samples":[`;
      let buf = '';
      for (let i = 0; i < n; i++) {
        buf += (i ? ',[' : '[') + stacks[i]!.join(',') + ']';
        if (buf.length > 1 << 20) {
          yield buf;
          buf = '';
        }
      }
      yield buf + '],"weights":[';
      buf = '';
      for (let i = 0; i < n; i++) {
        buf += (i ? ',' : '') + String(pr.weights[i]);
        if (buf.length > 1 << 20) {
          yield buf;
          buf = '';
        }
      }
      yield buf + ']}';
    }
    yield ']}\n';
  }

  const encoder = new TextEncoder();
  async function* data(): AsyncGenerator<Uint8Array> {
    for (const s of chunks()) if (s.length) yield encoder.encode(s);
  }
  return { data: data(), warnings };
}
