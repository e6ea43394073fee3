import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProfileIndex, resolveStack, validate, type Frame, type Profile } from '@profkit/core';

export const fixtures = join(import.meta.dirname, 'fixtures');
export const fixture = (name: string): Uint8Array => readFileSync(join(fixtures, name));

export function expectValid(p: Profile): void {
  const v = validate(p);
  if (!v.ok) throw new Error('invalid profile: ' + JSON.stringify(v.problems.slice(0, 3)));
}

/** The labels of sample `i` as `key → value`. */
export function labelsOf(p: Profile, i: number): Record<string, string | bigint> {
  const o = p.samples['.label_offsets'];
  const l = p['.labels'];
  const out: Record<string, string | bigint> = {};
  if (!o) return out;
  for (let k = o[i]!; k < o[i + 1]!; k++) out[l.key[k]!] = l.is_num[k] ? l.num[k]! : l.str[k]!;
  return out;
}

/**
 * The profile collapsed the way FlameGraph's `stackcollapse-perf.pl --pid` collapses the perf
 * script text it was read from (its defaults: the first event only, `comm-pid` as the root frame,
 * `[unknown]` symbols named by their DSO's base name, tidied names), so that the two folded
 * outputs can be compared line for line. `samples`: how many samples to collapse (the script
 * drops a last sample that no blank line ends).
 */
export function collapseLikeStackcollapsePid(p: Profile, samples = p.samples.value.length): Map<string, bigint> {
  const index = new ProfileIndex(p);
  const mappingFile = new Map(Array.from(p['.mappings'].mapping_id, (id, r) => [id, p['.mappings'].filename[r]!]));
  const out = new Map<string, bigint>();
  const values = p.samples['.values'][0]!;
  for (let i = 0; i < samples; i++) {
    if (values[i] === 0n) continue; // a sample of another event
    const labels = labelsOf(p, i);
    const pname = `${String(labels.comm)}-${labels.pid === undefined ? '?' : String(labels.pid)}`.replace(/ /g, '_');
    const names = resolveStack(p, i, index)
      .reverse()
      .map((f) => tidy(frameName(f, mappingFile)));
    const key = [pname, ...names].join(';');
    out.set(key, (out.get(key) ?? 0n) + values[i]!);
  }
  return out;
}

function frameName(f: Frame, mappingFile: Map<number, string>): string {
  if (f.symbolized) return f.name;
  const dso = mappingFile.get(f.mappingId);
  return dso === undefined ? '[unknown]' : `[${dso.replace(/.*\//, '')}]`;
}

/** The script's $tidy_generic (its $tidy_java left no trace in the --pid results of the Java fixture). */
function tidy(name: string): string {
  let f = name.replace(/;/g, ':');
  if (!/\.\(.*\)\./.test(f)) f = f.replace(/\((?!anonymous namespace\)).*/, '');
  f = f.replace(/["']/g, '');
  return f;
}

export function parseFolded(text: string): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const sp = line.lastIndexOf(' ');
    out.set(line.slice(0, sp), BigInt(line.slice(sp + 1)));
  }
  return out;
}
