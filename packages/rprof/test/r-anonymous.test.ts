/**
 * Issue 15 item 12, with real R and real pprof: R's `<Anonymous>` frames (calls of functions that
 * are not symbols) must read as `<Anonymous>` in `go tool pprof` after `profkit convert`, keep no
 * borrowed file, and come back unchanged through pprof. Skips (with a message) when Rscript, go
 * or the built @profkit/pprof is missing.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry, type Adapter, type Profile } from '@profkit/core/node';
import { haveGoPprof, haveTool } from '@profkit/test-utils';
import rprofAdapter, { readRprofBytes, summarizeRprof, writeRprofText } from '../src/index.js';
import { stacks } from './helpers.js';

const hasR = haveTool('Rscript', 'r-base-core', 'rprof <Anonymous> interop');
const hasGo = hasR && haveGoPprof('rprof <Anonymous> interop');

// Anonymous functions called three ways from a sourced file (so that they have srcrefs), and one
// parsed without srcrefs (like the functions of installed packages).
const WORK = `busy <- function(k) { s <- 0; for (j in seq_len(k)) s <- s + j %% 7; s }
nosrc <- eval(parse(text = "function(k) (function(m) busy(m))(k)", keep.source = FALSE))
run <- function(n) {
  y <- (function(m) busy(m))(40000)
  z <- do.call(function(i) busy(i), list(40000))
  w <- Map(function(i) busy(4000), seq_len(n))
  v <- nosrc(40000)
  y + z + length(w) + v
}
`;
const PROFILE = `source(file.path(dirname(out <- commandArgs(TRUE)[[1]]), "work.R"), keep.source = TRUE)
Rprof(out, interval = 0.002, line.profiling = TRUE)
t0 <- proc.time()[[3]]
while (proc.time()[[3]] - t0 < 0.5) run(10)
Rprof(NULL)
`;

async function bytesOf(data: Uint8Array | AsyncIterable<Uint8Array>): Promise<Buffer> {
  if (data instanceof Uint8Array) return Buffer.from(data);
  const chunks: Uint8Array[] = [];
  for await (const c of data) chunks.push(c);
  return Buffer.concat(chunks);
}

describe.skipIf(!hasR)('real R: <Anonymous> frames through pprof', () => {
  const dir = hasR ? mkdtempSync(join(tmpdir(), 'profkit-rprof-anon-')) : '';
  const out = join(dir, 'anon.out');
  const pb = join(dir, 'anon.pb.gz');
  let profile: Profile;
  let pprofAdapter: Adapter | undefined;

  beforeAll(async () => {
    writeFileSync(join(dir, 'work.R'), WORK);
    writeFileSync(join(dir, 'profile.R'), PROFILE);
    const r = spawnSync('Rscript', ['--vanilla', join(dir, 'profile.R'), out], { encoding: 'utf8', timeout: 120_000 });
    if (r.status !== 0) throw new Error(`Rscript failed: ${r.stderr}`);
    profile = readRprofBytes(readFileSync(out), { fileName: out }).profile;
    try {
      pprofAdapter = ((await import('@profkit/pprof' as string)) as { default?: Adapter }).default;
    } catch {
      console.warn('skipping the pprof leg: @profkit/pprof is not built in this workspace');
    }
    if (pprofAdapter) writeFileSync(pb, await bytesOf((await createRegistry([rprofAdapter, pprofAdapter]).serialize(profile, { format: 'pprof' })).data));
  }, 180_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('R wrote <Anonymous> frames, with and without srcrefs; those without have no file', () => {
    const frames = stacks(profile).flat().filter((f) => f.startsWith('<Anonymous>@'));
    expect(frames.filter((f) => /work\.R:[456]$/.test(f)).length).toBeGreaterThan(0);
    // The one in nosrc has no srcref (line 0): it must not carry work.R borrowed from the others.
    expect(frames.filter((f) => f.endsWith(':0')).length).toBeGreaterThan(0);
    expect(frames.filter((f) => f.endsWith(':0') && f !== '<Anonymous>@:0')).toEqual([]);
  });

  it('go tool pprof -top shows <Anonymous> with R’s total, and no <unknown>', (ctx) => {
    if (!pprofAdapter) ctx.skip('@profkit/pprof is not built in this workspace');
    if (!hasGo) ctx.skip('go tool pprof not available (install golang-go)');
    const r = spawnSync('go', ['tool', 'pprof', '-top', '-nodefraction=0', '-nodecount=100000', '-sample_index=samples', pb], { encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    const rows = new Map<string, number>();
    for (const line of r.stdout.split('\n')) {
      const m = /^\s*\d+\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.+)$/.exec(line);
      if (m) rows.set(m[2]!, (rows.get(m[2]!) ?? 0) + Number(m[1]));
    }
    expect([...rows.keys()].filter((k) => k === '<unknown>' || k === '')).toEqual([]);
    const total = summarizeRprof(profile).byFunction.get('<Anonymous>')!.total;
    expect(Number(total)).toBeGreaterThan(0);
    expect(rows.get('<Anonymous>')).toBe(Number(total));
  });

  it('Rprof -> pprof -> profile -> Rprof keeps every frame, <Anonymous> included', async (ctx) => {
    if (!pprofAdapter) ctx.skip('@profkit/pprof is not built in this workspace');
    const back = await createRegistry([rprofAdapter, pprofAdapter!]).read(readFileSync(pb), { fileName: pb });
    expect(back.profile.functions.name).toEqual(profile.functions.name);
    expect(back.profile.functions.system_name).toEqual(profile.functions.system_name);
    expect(stacks(back.profile)).toEqual(stacks(profile));
    const again = readRprofBytes(new TextEncoder().encode((await writeRprofText(back.profile)).text)).profile;
    expect(stacks(again)).toEqual(stacks(profile));
  });
});
