/**
 * The answers of the example queries computed from the in-memory model (resolved stacks), to
 * check the SQL against: independent of the relational export.
 */
import { ProfileIndex, findSampleType, resolveStack, type Profile } from '@profkit/core/node';

export type Row = Record<string, unknown>;

function add(m: Map<string, bigint>, k: string, v: bigint): void {
  m.set(k, (m.get(k) ?? 0n) + v);
}

function symbolizedFrames(p: Profile, i: number, index: ProfileIndex): string[] {
  return resolveStack(p, i, index)
    .filter((f) => f.symbolized)
    .map((f) => f.name);
}

function sorted(m: Map<string, bigint>, limit?: number): [string, bigint][] {
  const rows = [...m.entries()].sort((a, b) => (a[1] === b[1] ? (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0) : a[1] > b[1] ? -1 : 1));
  return limit === undefined ? rows : rows.slice(0, limit);
}

export function selfByFunction(p: Profile, sampleType: string): Map<string, bigint> {
  const t = findSampleType(p, sampleType);
  const index = new ProfileIndex(p);
  const m = new Map<string, bigint>();
  for (let i = 0; i < p.samples.value.length; i++) {
    // The leaf frame only counts when the leaf location is symbolized.
    const frames = resolveStack(p, i, index);
    if (frames.length > 0 && frames[0]!.symbolized) add(m, frames[0]!.name, p.samples['.values'][t]![i]!);
  }
  return m;
}

export function modelTopSelf(p: Profile, sampleType: string): [string, bigint][] {
  return sorted(selfByFunction(p, sampleType), 20);
}

export function modelTopTotal(p: Profile, sampleType: string): [string, bigint][] {
  const t = findSampleType(p, sampleType);
  const index = new ProfileIndex(p);
  const m = new Map<string, bigint>();
  for (let i = 0; i < p.samples.value.length; i++) {
    for (const name of new Set(symbolizedFrames(p, i, index))) add(m, name, p.samples['.values'][t]![i]!);
  }
  return sorted(m, 20);
}

export function modelCallers(p: Profile, sampleType: string, fn: string): [string, bigint][] {
  const t = findSampleType(p, sampleType);
  const index = new ProfileIndex(p);
  const m = new Map<string, bigint>();
  for (let i = 0; i < p.samples.value.length; i++) {
    const names = symbolizedFrames(p, i, index);
    const callers = new Set<string>();
    for (let d = 0; d + 1 < names.length; d++) if (names[d] === fn) callers.add(names[d + 1]!);
    for (const c of callers) add(m, c, p.samples['.values'][t]![i]!);
  }
  return sorted(m);
}

export function modelDiff(base: Profile, cur: Profile, sampleType: string): [string, bigint, bigint, bigint][] {
  const a = selfByFunction(base, sampleType);
  const b = selfByFunction(cur, sampleType);
  const names = new Set([...a.keys(), ...b.keys()]);
  const rows = [...names].map((n) => [n, a.get(n) ?? 0n, b.get(n) ?? 0n, (b.get(n) ?? 0n) - (a.get(n) ?? 0n)] as [string, bigint, bigint, bigint]);
  const abs = (x: bigint) => (x < 0n ? -x : x);
  return rows.sort((x, y) => (abs(x[3]) === abs(y[3]) ? (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0) : abs(x[3]) > abs(y[3]) ? -1 : 1));
}

/** Normalizes engine rows (numbers, bigints, strings) to [name, bigint...] tuples. */
export function tuples(rows: Row[]): unknown[][] {
  return rows.map((r) => Object.values(r).map((v) => (typeof v === 'number' ? BigInt(v) : typeof v === 'string' && /^-?\d+$/.test(v) ? BigInt(v) : v)));
}
