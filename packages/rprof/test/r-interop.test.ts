/**
 * Interop with real R: profile R code with Rprof() in every mode, read it, compare R's own
 * summaryRprof() numbers with ours (computed from the model), write the profile back and have
 * summaryRprof() read our file, and carry the profile through pprof via the registry.
 * Skips (with a message) when Rscript is not installed (`apt-get install r-base-core`).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertValid, createRegistry, type Adapter, type Profile } from '@profkit/core/node';
import rprofAdapter, { readRprofBytes, summarizeRprof, writeRprofText, type RprofSummary } from '../src/index.js';
import { rDir, stacks } from './helpers.js';

const hasR = spawnSync('Rscript', ['--version'], { encoding: 'utf8' }).status === 0;
if (!hasR) console.warn('skipping R interop tests: Rscript not found (install r-base-core)');

const MODES = ['plain', 'line', 'memory', 'gc', 'filter', 'append', 'all'] as const;
type Mode = (typeof MODES)[number];
const lineModes = new Set<Mode>(['line', 'filter', 'append', 'all']);
const memoryModes = new Set<Mode>(['memory', 'all']);
const gcModes = new Set<Mode>(['gc', 'all']);

function rscript(args: string[]): void {
  const r = spawnSync('Rscript', ['--vanilla', ...args], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`Rscript ${args.join(' ')} failed: ${r.stderr}`);
}

/** Minimal CSV reader for write.csv output (quoted strings with doubled quotes, numbers, NA). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      let s = '';
      i++;
      for (;;) {
        if (text[i] === '"' && text[i + 1] === '"') {
          s += '"';
          i += 2;
        } else if (text[i] === '"') {
          i++;
          break;
        } else s += text[i++];
      }
      row.push(s);
    } else {
      let j = i;
      while (j < text.length && text[j] !== ',' && text[j] !== '\n') j++;
      row.push(text.slice(i, j));
      i = j;
    }
    if (text[i] === ',') i++;
    else if (text[i] === '\n') {
      rows.push(row);
      row = [];
      i++;
    }
  }
  return rows;
}

interface RTable {
  interval: number;
  samples: number;
  rows: Map<string, { self: number; total: number; mem: number | undefined }>;
}

/** R's table in samples (times ÷ interval); function names lose R's surrounding quotes. */
function readRTable(path: string): RTable {
  const rows = parseCsv(readFileSync(path, 'utf8')).slice(1);
  const iv = rows.find((r) => r[0] === '__interval__')!;
  const interval = Number(iv[1]);
  const out: RTable = { interval, samples: Math.round(Number(iv[2]) / interval), rows: new Map() };
  for (const [key, self, total, mem] of rows) {
    if (key === '__interval__') continue;
    const k = key!.startsWith('"') && key!.endsWith('"') ? key!.slice(1, -1) : key!;
    out.rows.set(k, { self: Math.round(Number(self) / interval), total: Math.round(Number(total) / interval), mem: mem === 'NA' ? undefined : Number(mem) });
  }
  return out;
}

function ours(s: RprofSummary, view: 'hide' | 'show' | 'memory'): Map<string, { self: number; total: number; mem: number }> {
  const m = view === 'show' ? s.byLine : s.byFunction;
  const out = new Map<string, { self: number; total: number; mem: number }>();
  for (const [k, e] of m) out.set(k, { self: Number(e.self), total: Number(e.total), mem: Number(e.memory) / 1048576 });
  return out;
}

const dir = hasR ? mkdtempSync(join(tmpdir(), 'profkit-rprof-r-')) : '';
const outFile = (mode: Mode) => join(dir, `${mode}.out`);
const oursFile = (mode: Mode) => join(dir, `${mode}.ours.out`);
const csv = (mode: Mode, which: string, view: string) => join(dir, `${mode}.${which}.${view}.csv`);
const viewsOf = (mode: Mode) => ['hide', ...(lineModes.has(mode) ? ['show'] : []), ...(memoryModes.has(mode) ? ['memory'] : [])] as ('hide' | 'show' | 'memory')[];
const profiles = new Map<Mode, Profile>();

let pprofAdapter: Adapter | undefined;
const VIA_PPROF: Mode[] = ['plain', 'line', 'filter'];
const viaPprof = new Map<Mode, Profile>();
const viaPprofFile = (mode: Mode) => join(dir, `${mode}.viapprof.out`);
const pprofFiles = new Map<Mode, string>();
const hasGo = spawnSync('go', ['version'], { encoding: 'utf8' }).status === 0;
if (hasR && !hasGo) console.warn('skipping the go tool pprof comparison: go not found (install golang-go)');

describe.skipIf(!hasR)('real R: Rprof in every mode', () => {
  beforeAll(async () => {
    for (const mode of MODES) rscript([join(rDir, 'profile.R'), mode, outFile(mode), '0.6']);
    for (const mode of MODES) {
      const { profile, warnings } = readRprofBytes(readFileSync(outFile(mode)), { fileName: outFile(mode) });
      expect(warnings).toEqual([]);
      profiles.set(mode, profile);
      writeFileSync(oursFile(mode), (await writeRprofText(profile)).text);
    }
    try {
      const mod = (await import('@profkit/pprof' as string)) as { default?: Adapter };
      pprofAdapter = mod.default;
    } catch {
      console.warn('skipping the pprof leg: @profkit/pprof is not built in this workspace');
    }
    const args: string[] = [];
    for (const mode of MODES) for (const view of viewsOf(mode)) args.push(outFile(mode), view, csv(mode, 'r', view), oursFile(mode), view, csv(mode, 'ours', view));
    if (pprofAdapter) {
      // Rprof -> pprof -> profile -> Rprof, then R reads the result (no extension data survives pprof).
      const registry = createRegistry([rprofAdapter, pprofAdapter]);
      for (const mode of MODES) {
        const out = await registry.serialize(profiles.get(mode)!, { format: 'pprof' });
        const bytes: Uint8Array[] = [];
        if (out.data instanceof Uint8Array) bytes.push(out.data);
        else for await (const c of out.data) bytes.push(c);
        writeFileSync(join(dir, `${mode}.pb.gz`), Buffer.concat(bytes));
        pprofFiles.set(mode, join(dir, `${mode}.pb.gz`));
      }
      for (const mode of VIA_PPROF) {
        const out = await registry.serialize(profiles.get(mode)!, { format: 'pprof' });
        const chunks: Uint8Array[] = [];
        if (out.data instanceof Uint8Array) chunks.push(out.data);
        else for await (const c of out.data) chunks.push(c);
        const back = await registry.read(Buffer.concat(chunks), { fileName: `${mode}.pb.gz` });
        viaPprof.set(mode, back.profile);
        const { text, warnings } = await writeRprofText(back.profile);
        expect(warnings).toEqual([]);
        writeFileSync(viaPprofFile(mode), text);
        for (const view of viewsOf(mode)) args.push(viaPprofFile(mode), view, csv(mode, 'viapprof', view));
      }
    }
    rscript([join(rDir, 'summary.R'), ...args]);
  }, 180_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const mode of MODES) {
    describe(mode, () => {
      it('reads to a valid profile with the header flags of the mode', () => {
        const p = profiles.get(mode)!;
        assertValid(p);
        const runs = p['.extensions'].rprof!.facts!.runs as { memory_profiling: boolean; gc_profiling: boolean; line_profiling: boolean; interval_us: number }[];
        expect(runs).toHaveLength(mode === 'append' ? 2 : 1);
        for (const r of runs) {
          expect(r.interval_us).toBe(5000);
          expect(r.line_profiling).toBe(lineModes.has(mode));
          expect(r.memory_profiling).toBe(memoryModes.has(mode));
          expect(r.gc_profiling).toBe(gcModes.has(mode));
        }
        expect(p.sample_types.type).toEqual(memoryModes.has(mode) ? ['samples', 'time', 'memory'] : ['samples', 'time']);
        const names = new Set(p.functions.name);
        for (const f of ['outer_work', 'middle', 'leaf_sum']) expect(names.has(f)).toBe(true);
        expect(names.has('<GC>')).toBe(false);
        const gc = p['.extensions'].rprof!.samples!.gc as Uint8Array | undefined;
        if (gcModes.has(mode)) expect(gc!.some((g) => g === 1)).toBe(true);
        else expect(gc).toBeUndefined();
        if (lineModes.has(mode)) {
          const i = p.functions.name.indexOf('middle');
          expect(p.functions.filename[i]).toMatch(/work\.R$/);
        }
      });

      for (const view of viewsOf(mode)) {
        it(`summaryRprof(${view === 'show' ? 'lines = "show"' : view === 'memory' ? 'memory = "both"' : ''}) numbers equal ours from the model`, () => {
          const r = readRTable(csv(mode, 'r', view));
          const mine = ours(summarizeRprof(profiles.get(mode)!), view);
          const rKeys = new Map(r.rows);
          let rSamples = r.samples;
          if (mode === 'append') {
            // R's summaryRprof reads the second header as a sample (R package issue #9 has the
            // same root): drop the entries it makes of it. They are keys of their own (`NA#line`,
            // `NA#profiling:`, `NA#sample.interval=5000` with lines = "show", `<no location>`
            // otherwise), each with total 1 and the header's self on the first, so every other
            // key's self and total are R's exactly, per function and per line alike.
            for (const [k, v] of rKeys) {
              if (!mine.has(k) && (k === '<no location>' || k.startsWith('NA#')) && v.total === 1) rKeys.delete(k);
            }
            rSamples -= 1;
          }
          expect(Number(summarizeRprof(profiles.get(mode)!).samples)).toBe(rSamples);
          expect(rKeys.size).toBeGreaterThan(3);
          expect([...mine.keys()].sort()).toEqual([...rKeys.keys()].sort());
          for (const [k, v] of rKeys) {
            const m = mine.get(k)!;
            expect([k, m.self]).toEqual([k, v.self]);
            expect([k, m.total]).toEqual([k, v.total]);
            if (view === 'memory') expect(Math.abs(m.mem - v.mem!)).toBeLessThanOrEqual(0.051);
          }
          if (view === 'memory') expect([...mine.values()].some((v) => v.mem > 0.5)).toBe(true);
        });
        it(`summaryRprof(${view}) reads our written file to the same table`, () => {
          expect(readFileSync(csv(mode, 'ours', view), 'utf8')).toBe(readFileSync(csv(mode, 'r', view), 'utf8'));
        });
        if (VIA_PPROF.includes(mode)) {
          it(`summaryRprof(${view}) reads the file we write after a trip through pprof to the same table`, (ctx) => {
            if (!pprofAdapter) ctx.skip('@profkit/pprof is not built in this workspace');
            expect(readFileSync(csv(mode, 'viapprof', view), 'utf8')).toBe(readFileSync(csv(mode, 'r', view), 'utf8'));
          });
        }
      }

      it('converts to pprof and back (via the registry) with the same stacks and totals', async (ctx) => {
        if (!pprofAdapter) ctx.skip('@profkit/pprof is not built in this workspace');
        const registry = createRegistry([rprofAdapter, pprofAdapter]);
        const p = profiles.get(mode)!;
        const out = await registry.serialize(p, { format: 'pprof' });
        const chunks: Uint8Array[] = [];
        if (out.data instanceof Uint8Array) chunks.push(out.data);
        else for await (const c of out.data) chunks.push(c);
        const back = await registry.read(Buffer.concat(chunks), { fileName: `${mode}.pb.gz` });
        expect(back.format).toBe('pprof');
        expect(stacks(back.profile)).toEqual(stacks(p));
        expect(back.profile.sample_types).toEqual(p.sample_types);
        expect(back.profile['.profile'].period).toBe(p['.profile'].period);
        const a = summarizeRprof(p).byFunction;
        const b = summarizeRprof(back.profile).byFunction;
        for (const [k, v] of b) expect([k, v.total, v.memory]).toEqual([k, a.get(k)!.total, a.get(k)!.memory]);
      });

      it('go tool pprof -top shows the same milliseconds per function as summaryRprof', (ctx) => {
        if (!pprofAdapter) ctx.skip('@profkit/pprof is not built in this workspace');
        if (!hasGo) ctx.skip('go not found (install golang-go)');
        const pb = pprofFiles.get(mode)!;
        const r = spawnSync('go', ['tool', 'pprof', '-top', '-nodefraction=0', '-edgefraction=0', '-nodecount=100000', '-unit=ms', '-sample_index=time', pb], { encoding: 'utf8', timeout: 120_000 });
        expect(r.status, r.stderr).toBe(0);
        const go = new Map<string, { flat: number; cum: number }>();
        for (const line of r.stdout.split('\n')) {
          const m = /^\s*([\d.]+)(?:ms)?\s+[\d.]+%\s+[\d.]+%\s+([\d.]+)(?:ms)?\s+[\d.]+%\s+(.+)$/.exec(line);
          if (!m) continue;
          const e = go.get(m[3]!) ?? { flat: 0, cum: 0 };
          go.set(m[3]!, { flat: e.flat + Number(m[1]), cum: e.cum + Number(m[2]) });
        }
        const interval = 5;
        const mine = summarizeRprof(profiles.get(mode)!).byFunction;
        // `<GC>` is a sample flag, not a function; `<Anonymous>` must show as such (issue 15).
        const names = [...mine.keys()].filter((k) => k !== '<GC>');
        expect(names.length).toBeGreaterThan(3);
        for (const k of names) {
          const g = go.get(k);
          expect([k, g?.cum]).toEqual([k, Number(mine.get(k)!.total) * interval]);
          // pprof has no GC flag: GC samples count as self of the innermost function.
          if (!gcModes.has(mode)) expect([k, g?.flat]).toEqual([k, Number(mine.get(k)!.self) * interval]);
        }
      });
    });
  }
});
