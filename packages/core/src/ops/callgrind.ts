/**
 * `go tool pprof -callgrind`: the call graph at address granularity in the callgrind format
 * (`callgrind_annotate`, KCachegrind), as pprof's `printCallgrind` writes it: one cost line per
 * node (address, line, flat value) grouped under `ob=`/`fl=`/`fn=`, and per call a `cfl=`/`cfn=`
 * and `calls=` line with the call's weight. Names are compressed (`(N) name` the first time,
 * `(N)` after), addresses relative to the previous node when shorter.
 */

import type { Profile } from '../model.js';
import { scaleMeasurement } from './format.js';
import { compareGoStrings } from './internal.js';
import { byAbsDescending, goGraph, printableName, sortGoNodes, type GoGraphNode } from './pprof-graph.js';
import { outputUnitFor } from './report.js';
import { StringKeyedMap, StringKeys } from '../string-keys.js';

export interface CallgrindOptions {
  /** The sample type reported (pprof `-sample_index`); default the profile's default type. */
  sampleTypeIndex?: number;
  /** Order the nodes by cumulative value (pprof `-cum`). */
  cum?: boolean;
  /** The report total (default: of `loaded`; pprof takes it before -focus and the other filters). */
  total?: bigint;
}

/** pprof `callgrindName`: `(N) name` for a new name, `(N)` for a known one, '' for none. */
function compressedName(names: StringKeyedMap<number>, name: string): string {
  if (name === '') return '';
  const id = names.get(name);
  if (id !== undefined) return `(${id})`;
  names.set(name, names.size + 1);
  return `(${names.size}) ${name}`;
}

const UINT64 = 2n ** 64n;

/** pprof `callgrindAddress`: `*` for the previous address, `+N`/`-N` when shorter than `0x…`. */
function compressedAddress(previous: bigint | undefined, address: bigint): string {
  const absolute = '0x' + address.toString(16);
  if (previous === undefined) return absolute;
  if (previous === address) return '*';
  // Go: int64(curr - prev), the uint64 difference read as signed.
  let diff = (address - previous + UINT64) % UINT64;
  if (diff >= UINT64 / 2n) diff -= UINT64;
  const relative = (diff >= 0n ? '+' : '') + diff.toString();
  return relative.length < absolute.length ? relative : absolute;
}

/**
 * pprof `getDisambiguatedNames`: callgrind merges functions of equal file and name, so nodes of
 * different functions (other binaries, start lines) with the same file and name get ` [i/n]`.
 */
function disambiguatedNames(nodes: GoGraphNode[]): Map<GoGraphNode, string> {
  const functionsOf = new Map<string, Map<string, number>>();
  const names = new StringKeys();
  const keyOf = (n: GoGraphNode) => JSON.stringify([names.of(n.info.file), names.of(n.info.name)]);
  for (const n of nodes) {
    let fns = functionsOf.get(keyOf(n));
    if (!fns) functionsOf.set(keyOf(n), (fns = new Map()));
    if (!fns.has(n.functionKey)) fns.set(n.functionKey, fns.size);
  }
  return new Map(
    nodes.map((n) => {
      const fns = functionsOf.get(keyOf(n))!;
      return [n, fns.size > 1 ? `${n.info.name} [${fns.get(n.functionKey)! + 1}/${fns.size}]` : n.info.name];
    }),
  );
}

/** `go tool pprof -callgrind` of a `goPprofLoad` result. */
export function callgrindReport(loaded: Profile, options: CallgrindOptions = {}): string {
  const g = goGraph(loaded, { sampleTypeIndex: options.sampleTypeIndex, granularity: 'addresses', objNames: true, calls: true, total: options.total });
  const order = sortGoNodes(g.nodes.slice(), options.cum);
  const position = new Map(g.nodes.map((n, i) => [n, i]));
  // Callgrind values are integers: no scaling up for fractions (pprof's exception for callgrind).
  const outputUnit = outputUnitFor(g.nodes, g.total, g.unit, false);
  const scaled = (v: bigint) => BigInt(Math.trunc(scaleMeasurement(Number(v), g.unit, outputUnit)[0]));
  // Numbered in the order of the report, as pprof numbers them.
  const calleeNames = disambiguatedNames(order);
  const outCalls = g.nodes.map(() => [] as { dst: number; weight: bigint }[]);
  for (const c of g.calls) outCalls[c.src]!.push({ dst: c.dst, weight: c.weight });
  const names = g.nodes.map((n) => printableName(n.info));
  // Names and files can be long (see StringKeyedMap).
  const objfiles = new StringKeyedMap<number>();
  const files = new StringKeyedMap<number>();
  const functions = new StringKeyedMap<number>();
  const sampleType = loaded.sample_types.type[g.sampleTypeIndex] ?? '';
  const out: string[] = ['positions: instr line\n', `events: ${sampleType}(${outputUnit})\n`];
  let previous: GoGraphNode | undefined;
  for (const n of order) {
    const i = n.info;
    if (!previous || i.objfile !== previous.info.objfile || i.file !== previous.info.file || i.name !== previous.info.name) {
      out.push(`\nob=${compressedName(objfiles, i.objfile)}\nfl=${compressedName(files, i.file)}\nfn=${compressedName(functions, i.name)}\n`);
    }
    out.push(`${compressedAddress(previous?.info.address, i.address)} ${i.lineno} ${scaled(n.flat)}\n`);
    // pprof's edge order: |weight| descending, then caller and callee printable names.
    const calls = outCalls[position.get(n)!]!.sort(
      (a, b) => (a.weight !== b.weight ? byAbsDescending(a.weight, b.weight) : compareGoStrings(names[a.dst]!, names[b.dst]!)),
    );
    for (const c of calls) {
      const callee = g.nodes[c.dst]!;
      out.push(`cfl=${compressedName(files, callee.info.file)}\ncfn=${compressedName(functions, calleeNames.get(callee)!)}\n`);
      // pprof gives the callee's address relative to the previous node's, not this one's.
      out.push(`calls=0 ${compressedAddress(previous?.info.address, callee.info.address)} ${callee.info.lineno}\n* * ${scaled(c.weight)}\n`);
    }
    previous = n;
  }
  return out.join('');
}
