/** Implementations of the adapter's CLI subcommands (see command-defs.ts). */

import { existsSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCodes, ProfkitError, ioError, isLoopbackHost, isProfkitError, type CommandContext, type Warning } from '@profkit/core';
import { replayRecording } from './codec.js';
import { replayTo } from './client.js';
import { parseAddress, startCollector, type CollectorOptions, type CollectorSummary } from './server.js';

// Errors are thrown as `ProfkitError`s (USAGE for bad arguments, IO, NETWORK, TIMEOUT, the
// format's own codes): the CLI prints the one-line message with its code and chooses the exit
// code (docs/cli.md, "Exit codes"). `--json` documents follow docs/cli.md ("JSON output"): one
// object per line with `"schema": "profkit.fuchsia-sampler.<command>/1"`.

function usage(command: string, message: string): ProfkitError {
  return new ProfkitError(ErrorCodes.USAGE, `fuchsia-sampler ${command}: ${message}`, { rule: `usage of profkit fuchsia-sampler ${command}` });
}

function num(ctx: CommandContext, command: string, key: string, min: number): number | undefined {
  const v = ctx.values[key];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || v.trim() === '' || !Number.isFinite(n) || n < min) throw usage(command, `--${key} must be a number >= ${min}, got ${JSON.stringify(v)}`);
  return n;
}

function str(ctx: CommandContext, command: string, key: string): string | undefined {
  const v = ctx.values[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v === '') throw usage(command, `--${key} needs a value`);
  return v;
}

/** Bad addresses (RangeError from the address parser) are usage errors; socket errors are network errors. */
function addressError(e: unknown, command: string, address: string): unknown {
  if (isProfkitError(e)) return e;
  if (e instanceof RangeError) return usage(command, e.message);
  const errno = (e as NodeJS.ErrnoException).code;
  if (errno) return new ProfkitError(ErrorCodes.NETWORK, `cannot listen on ${address}: ${(e as Error).message}`, { address, errno, rule: 'the address can be bound' }, { cause: e });
  return e;
}

async function readRecording(file: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(file));
  } catch (e) {
    throw ioError(e, file, 'reading');
  }
}

function document(ctx: CommandContext, command: string, body: Record<string, unknown>): void {
  ctx.stdout.write(JSON.stringify({ schema: `profkit.fuchsia-sampler.${command}/1`, ...body }) + '\n');
}

function jsonWarnings(ws: Warning[]): { code: string; message: string }[] {
  return ws.map((w) => ({ code: w.code, message: w.message }));
}

function summaryJson(s: CollectorSummary): Record<string, unknown> {
  return { reason: s.reason, connections: s.connections, refused: s.refused, events: s.events, files: s.files, errors: s.errors };
}

/** A collector reachable from other machines accepts anyone's records (the gperftools `serve` command warns the same way). */
function exposureWarnings(listen: string, out: string): Warning[] {
  const a = parseAddress(listen);
  if (a.kind !== 'tcp' || isLoopbackHost(a.host!)) return [];
  return [
    {
      code: 'PROFKIT_W_NON_LOOPBACK_LISTEN',
      message: `listening on the non-loopback address ${a.host!.includes(':') ? `[${a.host}]` : a.host}: anyone who can reach it can send records to this collector and fill ${out} with profiles`,
      detail: { address: listen, rule: 'listen on loopback (127.0.0.1, ::1) or a unix socket unless other machines must connect' },
    },
  ];
}

export async function serveCommand(ctx: CommandContext): Promise<number> {
  const C = 'serve';
  if (ctx.positionals.length > 0) throw usage(C, `takes no arguments, got ${ctx.positionals.map((x) => JSON.stringify(x)).join(' ')}`);
  const listen = str(ctx, C, 'listen');
  const out = str(ctx, C, 'out');
  if (!listen || !out) throw usage(C, 'needs --listen ADDR and --out DIR');
  const format = str(ctx, C, 'format');
  const interval = num(ctx, C, 'partial-interval', 0);
  const timeout = num(ctx, C, 'timeout', 0);
  const idle = num(ctx, C, 'idle-timeout', 0);
  const log = (line: string) => {
    if (!ctx.quiet && !ctx.json) ctx.stderr.write(`fuchsia-sampler: ${line}\n`);
  };
  // SIGTERM/SIGINT (ctx.signal) stops the collector, which then writes the final profiles of the
  // clients still connected: those writes must not be aborted by that same signal.
  const writesSignal = new AbortController().signal;
  const options: CollectorOptions = {
    listen,
    outDir: out,
    writeProfile: (p, path) => ctx.writeProfile(p, path, { ...(format ? { format } : {}), signal: writesSignal }),
    extension: str(ctx, C, 'extension'),
    unsample: !ctx.values.raw,
    samplingRate: num(ctx, C, 'sampling-rate', 1),
    peak: !!ctx.values.peak,
    partialThreshold: num(ctx, C, 'partial-threshold', 0),
    partialIntervalMs: interval === undefined ? undefined : interval * 1000,
    maxClients: num(ctx, C, 'max-clients', 1),
    maxLiveAllocations: num(ctx, C, 'max-live', 1),
    maxStacks: num(ctx, C, 'max-stacks', 1),
    maxConnections: num(ctx, C, 'max-connections', 0),
    timeoutMs: timeout === undefined ? undefined : timeout * 1000,
    idleTimeoutMs: idle === undefined ? undefined : idle * 1000,
    signal: ctx.signal,
    log,
  };
  try {
    mkdirSync(out, { recursive: true });
  } catch (e) {
    throw ioError(e, out, 'creating the directory');
  }
  let collector;
  try {
    collector = await startCollector(options);
  } catch (e) {
    throw addressError(e, C, listen);
  }
  const warnings = exposureWarnings(listen, out);
  // Machine-readable: the bound address on stdout first (port 0 → the real port); with --json
  // two documents (JSON lines): "event": "listening", then "event": "stopped" with the summary.
  if (ctx.json) document(ctx, C, { event: 'listening', address: collector.address, ...(warnings.length ? { warnings: jsonWarnings(warnings) } : {}) });
  else {
    for (const w of warnings) if (!ctx.quiet) ctx.stderr.write(`warning: ${w.message}\n`);
    ctx.stdout.write(`listening ${collector.address}\n`);
  }
  const s = await collector.done;
  if (ctx.json) document(ctx, C, { event: 'stopped', address: collector.address, ...summaryJson(s) });
  else ctx.stdout.write(`stopped (${s.reason}): ${s.connections} connections, ${s.events} events, ${s.files.length} profiles written, ${s.errors.length} errors\n`);
  return 0;
}

export async function replayCommand(ctx: CommandContext): Promise<number> {
  const C = 'replay';
  const file = ctx.positionals[0];
  const to = str(ctx, C, 'to');
  if (!file || !to || ctx.positionals.length > 1) throw usage(C, 'needs one RECORDING and --to ADDR');
  const g = num(ctx, C, 'generation', 1);
  if (g !== undefined && g !== 1 && g !== 2 && g !== 3) throw usage(C, '--generation must be 1, 2 or 3');
  const bytes = await readRecording(file);
  let r: { records: number };
  try {
    r = await replayTo(bytes, to, { generation: g as 1 | 2 | 3 | undefined, file });
  } catch (e) {
    if (e instanceof RangeError) throw usage(C, e.message);
    throw e;
  }
  if (ctx.json) document(ctx, C, { recording: file, to, records: r.records });
  else if (!ctx.quiet) ctx.stdout.write(`sent ${r.records} records to ${to}\n`);
  return 0;
}

export async function profilesCommand(ctx: CommandContext): Promise<number> {
  const C = 'profiles';
  const file = ctx.positionals[0];
  const out = str(ctx, C, 'out');
  if (!file || !out || ctx.positionals.length > 1) throw usage(C, 'needs one RECORDING and --out DIR');
  const ext = str(ctx, C, 'extension') ?? '.pb.gz';
  const samplingRate = num(ctx, C, 'sampling-rate', 1);
  const partialThreshold = num(ctx, C, 'partial-threshold', 0);
  const bytes = await readRecording(file);
  let res: ReturnType<typeof replayRecording>;
  try {
    res = replayRecording(bytes, { file, unsample: !ctx.values.raw, samplingRate, peak: !!ctx.values.peak, partialThreshold, partialIntervalMs: 0 });
  } catch (e) {
    if (e instanceof RangeError) throw usage(C, e.message);
    throw e;
  }
  try {
    mkdirSync(out, { recursive: true });
  } catch (e) {
    throw ioError(e, out, 'creating the directory');
  }
  const bar = ctx.progress(`writing profiles of ${file}`, res.profiles.length);
  const warnings: Warning[] = [...res.warnings];
  const written: string[] = [];
  let finals = 0;
  for (const p of res.profiles) {
    const proc = p.processName.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_') || 'unknown';
    const base = p.kind === 'final' ? `${proc}_final_${finals++}` : `${proc}_partial_${p.iteration}`;
    let name = base + ext;
    for (let k = 2; existsSync(join(out, name)); k++) name = `${base}-${k}${ext}`;
    const path = join(out, name);
    const ws = await ctx.writeProfile(p.profile, path);
    for (const w of ws) if (!ctx.quiet && !ctx.json) ctx.stderr.write(`profkit: warning: ${w.message} [${w.code}]\n`);
    warnings.push(...ws);
    written.push(path);
    bar.update(written.length);
  }
  bar.done();
  for (const w of res.warnings) if (!ctx.quiet && !ctx.json) ctx.stderr.write(`profkit: warning: ${w.message} [${w.code}]\n`);
  if (ctx.json) document(ctx, C, { recording: file, out, files: written, warnings: jsonWarnings(warnings) });
  else if (!ctx.quiet) for (const w of written) ctx.stdout.write(`${w}\n`);
  return 0;
}
