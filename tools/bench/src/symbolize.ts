/**
 * Symbolization benchmark (issue 6):
 *
 *   node tools/bench/dist/symbolize.js [--functions 4000] [--addresses 100000]
 *        [--tools llvm-symbolizer,addr2line,nm,llvm-symbolizer-unbatched,addr2line-unbatched]
 *
 * Generates a C file with many functions, compiles it once (gcc -g -O1, PIE), builds a profile
 * with `--addresses` distinct addresses spread over the functions' code (runtime addresses in a
 * PIE mapping), and times `symbolize()` with each tool: llvm-symbolizer (JSON, inlining),
 * addr2line (-aif, sentinel protocol) and nm (names only). One process per binary, batched
 * requests; the `-unbatched` runs send one address per round trip, for comparison. Prints one JSON line per run; docs/performance.md ("Symbolization") quotes them.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ProfileBuilder } from '@profkit/core/node';
import { symbolize, type SymbolizeOptions } from '@profkit/symbolize';
import { seededRandom as rng } from '@profkit/test-utils';

const { values } = parseArgs({
  options: {
    functions: { type: 'string', default: '4000' },
    addresses: { type: 'string', default: '100000' },
    tools: { type: 'string', default: 'llvm-symbolizer,addr2line,nm' },
    keep: { type: 'boolean', default: false },
  },
});
const nFunctions = Number(values.functions);
const nAddresses = Number(values.addresses);


function generate(n: number): string {
  const out = ['#include <stdio.h>', 'volatile unsigned long sink;', 'static inline __attribute__((always_inline)) unsigned long mix(unsigned long x) { return (x ^ (x >> 13)) * 0x9e3779b1UL; }'];
  for (let i = 0; i < n; i++) {
    out.push(
      `__attribute__((noinline)) unsigned long f${i}(unsigned long a, unsigned long b) {`,
      `  unsigned long s = a * ${i + 3}UL + b;`,
      `  for (unsigned long k = 0; k < (a & 7); k++) s += mix(s + k) ^ (b << (k & 15));`,
      `  if (s & ${1 << i % 16}UL) s = mix(s) + f${Math.max(0, i - 1)}(b, s & 3);`,
      `  return s + ${i}UL;`,
      `}`,
    );
  }
  out.push('int main(int argc, char **argv) {', '  unsigned long s = argc;');
  for (let i = 0; i < n; i += Math.max(1, Math.floor(n / 64))) out.push(`  s += f${i}(s, ${i});`);
  out.push('  sink = s; printf("%lu\\n", s); return 0;', '}');
  return out.join('\n') + '\n';
}

function sh(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const have = (t: string) => spawnSync('sh', ['-c', `command -v ${t}`]).status === 0;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'profkit-bench-symbolize-'));
  try {
    const src = join(dir, 'many.c');
    const bin = join(dir, 'many');
    writeFileSync(src, generate(nFunctions));
    let t = performance.now();
    sh('gcc', ['-g', '-O1', '-fPIE', '-pie', '-o', bin, src]);
    const compileMs = performance.now() - t;

    // Function ranges from nm, then distinct addresses spread over them.
    const fns: { addr: bigint; size: bigint }[] = [];
    for (const l of sh('nm', ['-S', '--defined-only', bin]).split('\n')) {
      const m = /^([0-9a-f]+) ([0-9a-f]+) [Tt] f\d+$/.exec(l);
      if (m) fns.push({ addr: BigInt('0x' + m[1]), size: BigInt('0x' + m[2]) });
    }
    const codeBytes = fns.reduce((s, f) => s + Number(f.size), 0);
    if (codeBytes < nAddresses) throw new Error(`only ${codeBytes} bytes of code for ${nAddresses} distinct addresses: raise --functions`);
    const r = rng(42);
    const picked = new Set<bigint>();
    while (picked.size < nAddresses) {
      const f = fns[Math.floor(r() * fns.length)]!;
      picked.add(f.addr + BigInt(Math.floor(r() * Number(f.size))));
    }
    const segs = sh('readelf', ['-lW', bin]).split('\n').filter((l) => /^\s*LOAD/.test(l) && / R E /.test(l));
    const m = /LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x[0-9a-f]+\s+0x([0-9a-f]+)/.exec(segs[0]!)!;
    const [off, vaddr, memsz] = [BigInt('0x' + m[1]), BigInt('0x' + m[2]), BigInt('0x' + m[3])];
    const bias = 0x555555554000n;
    const page = (v: bigint) => v & ~0xfffn;
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const mapping = b.internMapping({ memoryStart: bias + page(vaddr), memoryLimit: bias + ((vaddr + memsz + 0xfffn) & ~0xfffn), fileOffset: page(off), filename: bin });
    const ids: number[] = [];
    for (const a of picked) ids.push(b.internLocation({ address: a + bias, mappingId: mapping }));
    for (let i = 0; i < ids.length; i += 32) b.addSample(ids.slice(i, i + 32), [1]);
    const profile = b.build();
    console.log(JSON.stringify({ bench: 'symbolize-setup', functions: fns.length, codeBytes, addresses: picked.size, compileMs: Math.round(compileMs) }));

    const runs: [string, SymbolizeOptions, string][] = [
      ['llvm-symbolizer', { tool: 'llvm-symbolizer' }, 'llvm-symbolizer'],
      ['addr2line', { tool: 'addr2line' }, 'addr2line'],
      ['nm', { mode: 'names' }, 'nm'],
      // One address per round trip, as google/pprof asks its tools: what batching saves.
      ['llvm-symbolizer-unbatched', { tool: 'llvm-symbolizer', batchSize: 1 }, 'llvm-symbolizer'],
      ['addr2line-unbatched', { tool: 'addr2line', batchSize: 1 }, 'addr2line'],
    ];
    for (const [name, opts, exe] of runs) {
      if (!String(values.tools).split(',').includes(name)) continue;
      if (!have(exe)) {
        console.log(JSON.stringify({ bench: 'symbolize', tool: name, skipped: `${exe} not installed` }));
        continue;
      }
      t = performance.now();
      const res = await symbolize(profile, { ...opts, searchPath: [], timeoutMs: 120_000 });
      const ms = performance.now() - t;
      const rep = res.reports[0]!;
      console.log(
        JSON.stringify({
          bench: 'symbolize',
          run: name,
          tool: rep.tool ?? name,
          status: rep.status,
          addresses: rep.addresses,
          symbolized: rep.symbolized,
          functions: res.profile.functions.function_id.length,
          inlineLines: res.profile['.inline_lines'].function_id.length,
          seconds: +(ms / 1000).toFixed(2),
          addressesPerSecond: Math.round(rep.addresses / (ms / 1000)),
        }),
      );
    }
  } finally {
    if (!values.keep) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
