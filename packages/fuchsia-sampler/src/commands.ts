/** Implementations of the adapter's CLI subcommands (see command-defs.ts). */

import { existsSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isProfkitError, type CommandContext } from '@profkit/core';
import { replayRecording } from './codec.js';
import { replayTo } from './client.js';
import { startCollector } from './server.js';

class UsageError extends Error {}

function num(ctx: CommandContext, key: string, min: number): number | undefined {
  const v = ctx.values[key];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || !Number.isFinite(n) || n < min) throw new UsageError(`--${key} must be a number >= ${min}, got ${JSON.stringify(v)}`);
  return n;
}

function str(ctx: CommandContext, key: string): string | undefined {
  const v = ctx.values[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${key} needs a value`);
  return v;
}

function report(ctx: CommandContext, e: unknown): number {
  if (e instanceof UsageError) {
    ctx.stderr.write(`profkit: ${e.message}\n`);
    return 2;
  }
  if (isProfkitError(e)) {
    ctx.stderr.write(`profkit: ${e.code}: ${e.describe()}\n`);
    return e.code === 'PROFKIT_E_NETWORK' || e.code === 'PROFKIT_E_TIMEOUT' ? 4 : e.code === 'PROFKIT_E_IO' ? 3 : 1;
  }
  ctx.stderr.write(`profkit: ${(e as Error).message}\n`);
  return (e as NodeJS.ErrnoException).code ? 3 : 1;
}

export async function serveCommand(ctx: CommandContext): Promise<number> {
  try {
    const listen = str(ctx, 'listen');
    const out = str(ctx, 'out');
    if (!listen || !out) throw new UsageError('fuchsia-sampler serve needs --listen ADDR and --out DIR');
    const format = str(ctx, 'format');
    const interval = num(ctx, 'partial-interval', 0);
    const timeout = num(ctx, 'timeout', 0);
    const log = (line: string) => {
      if (!ctx.quiet && !ctx.json) ctx.stderr.write(`fuchsia-sampler: ${line}\n`);
    };
    let collector;
    try {
      collector = await startCollector({
        listen,
        outDir: out,
        writeProfile: (p, path) => ctx.writeProfile(p, path, format ? { format } : undefined),
        extension: str(ctx, 'extension'),
        unsample: !ctx.values.raw,
        samplingRate: num(ctx, 'sampling-rate', 1),
        peak: !!ctx.values.peak,
        partialThreshold: num(ctx, 'partial-threshold', 0),
        partialIntervalMs: interval === undefined ? undefined : interval * 1000,
        maxClients: num(ctx, 'max-clients', 1),
        maxLiveAllocations: num(ctx, 'max-live', 1),
        maxStacks: num(ctx, 'max-stacks', 1),
        maxConnections: num(ctx, 'max-connections', 0),
        timeoutMs: timeout === undefined ? undefined : timeout * 1000,
        signal: ctx.signal,
        log,
      });
    } catch (e) {
      if (e instanceof RangeError) throw new UsageError(e.message);
      throw e;
    }
    // Machine-readable: the bound address on stdout first (port 0 → the real port).
    if (ctx.json) ctx.stdout.write(JSON.stringify({ listening: collector.address }) + '\n');
    else ctx.stdout.write(`listening ${collector.address}\n`);
    const s = await collector.done;
    if (ctx.json) ctx.stdout.write(JSON.stringify(s) + '\n');
    else ctx.stdout.write(`stopped (${s.reason}): ${s.connections} connections, ${s.events} events, ${s.files.length} profiles written, ${s.errors.length} errors\n`);
    return 0;
  } catch (e) {
    return report(ctx, e);
  }
}

export async function replayCommand(ctx: CommandContext): Promise<number> {
  try {
    const file = ctx.positionals[0];
    const to = str(ctx, 'to');
    if (!file || !to || ctx.positionals.length > 1) throw new UsageError('fuchsia-sampler replay needs one RECORDING and --to ADDR');
    const g = num(ctx, 'generation', 1);
    if (g !== undefined && g !== 1 && g !== 2 && g !== 3) throw new UsageError('--generation must be 1, 2 or 3');
    const bytes = new Uint8Array(await readFile(file));
    try {
      const r = await replayTo(bytes, to, { generation: g as 1 | 2 | 3 | undefined, file });
      if (ctx.json) ctx.stdout.write(JSON.stringify({ records: r.records, to }) + '\n');
      else if (!ctx.quiet) ctx.stdout.write(`sent ${r.records} records to ${to}\n`);
    } catch (e) {
      if (e instanceof RangeError) throw new UsageError(e.message);
      throw e;
    }
    return 0;
  } catch (e) {
    return report(ctx, e);
  }
}

export async function profilesCommand(ctx: CommandContext): Promise<number> {
  try {
    const file = ctx.positionals[0];
    const out = str(ctx, 'out');
    if (!file || !out || ctx.positionals.length > 1) throw new UsageError('fuchsia-sampler profiles needs one RECORDING and --out DIR');
    const ext = str(ctx, 'extension') ?? '.pb.gz';
    const bytes = new Uint8Array(await readFile(file));
    const res = replayRecording(bytes, {
      file,
      unsample: !ctx.values.raw,
      samplingRate: num(ctx, 'sampling-rate', 1),
      peak: !!ctx.values.peak,
      partialThreshold: num(ctx, 'partial-threshold', 0),
      partialIntervalMs: 0,
    });
    mkdirSync(out, { recursive: true });
    const written: string[] = [];
    let finals = 0;
    for (const p of res.profiles) {
      const proc = p.processName.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_') || 'unknown';
      const base = p.kind === 'final' ? `${proc}_final_${finals++}` : `${proc}_partial_${p.iteration}`;
      let name = base + ext;
      for (let k = 2; existsSync(join(out, name)); k++) name = `${base}-${k}${ext}`;
      const path = join(out, name);
      const warnings = await ctx.writeProfile(p.profile, path);
      for (const w of warnings) if (!ctx.quiet) ctx.stderr.write(`profkit: warning: ${w.message}\n`);
      written.push(path);
    }
    for (const w of res.warnings) if (!ctx.quiet && !ctx.json) ctx.stderr.write(`profkit: warning: ${w.message}\n`);
    if (ctx.json) ctx.stdout.write(JSON.stringify({ files: written, warnings: res.warnings.length }) + '\n');
    else if (!ctx.quiet) for (const w of written) ctx.stdout.write(`${w}\n`);
    return 0;
  } catch (e) {
    return report(ctx, e);
  }
}
