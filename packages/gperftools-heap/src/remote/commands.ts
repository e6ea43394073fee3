/**
 * What the CLI commands this adapter contributes do (`profkit fetch URL`, the client, and
 * `profkit serve FILE…`, the server), on Node: loaded through `#node-commands` when a command runs
 * (definitions: `command-defs.ts`). Both use only the CLI's format-neutral services.
 */

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ErrorCodes, ProfkitError, parseAllowedRedirectHosts, type AdapterCommand, type CommandContext, type Profile, type Warning } from '@profkit/core';
import { fetchProfile } from './fetch.js';
import { createProfileServer, isLoopbackHost, type ProfileKind } from './server.js';
import { locationsToSymbolize } from './symbolz.js';
import { symbolizeRemoteCounted } from './http.js';
import { ADAPTER_NAME } from '../read.js';
import { profileKindOf } from './command-defs.js';

function str(ctx: CommandContext, key: string): string | undefined {
  const v = ctx.values[key];
  return typeof v === 'string' ? v : undefined;
}

function num(ctx: CommandContext, key: string, integer: boolean): number | undefined {
  const v = str(ctx, key);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < 0) {
    throw new ProfkitError(ErrorCodes.USAGE, `--${key} must be a non-negative ${integer ? 'integer' : 'number'}, got ${v}`, { option: key });
  }
  return n;
}

function warn(ctx: CommandContext, warnings: Warning[]): void {
  if (ctx.quiet) return;
  for (const w of warnings) ctx.stderr.write(`warning: ${w.message} [${w.code}]\n`);
}

function defaultOutputName(url: string, program: string): string {
  const u = new URL(url);
  const service = u.pathname.split('/').filter(Boolean).pop() ?? 'profile';
  const who = program ? basename(program) : u.hostname;
  const ts = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, '');
  return `pprof.${who.replace(/[^A-Za-z0-9_.-]/g, '_')}.${service.replace(/[^A-Za-z0-9_.-]/g, '_')}.${ts}.pb.gz`;
}

/** Locations that still show as bare addresses (nonzero address, no function, symbolizable mapping). */
function unnamedAddresses(p: Profile): number {
  return locationsToSymbolize(p, { force: true }).length;
}

/** Transform warnings that only say the opportunistic local lookup found no binary: summarized instead. */
const NO_LOCAL_BINARY_WARNINGS = new Set(['PROFKIT_W_SYMBOLIZE_MISSING_BINARY', 'PROFKIT_W_SYMBOLIZE_UNSYMBOLIZABLE']);

/**
 * `--symbolize remote`: names from the server's symbol service. What it leaves unnamed (a server
 * without symbols answers `num_symbols: 0`; an unreachable one fails) goes to the `symbolize`
 * transform, when the CLI offers it, which uses local binaries only where they can be found (the
 * mapping's own file, build-id directories, $PPROF_BINARY_PATH); google/pprof likewise tries
 * local binaries before the server. One warning then says what each source named and how many
 * addresses are left.
 */
async function symbolizeRemoteThenLocal(ctx: CommandContext, input: Profile, url: string, allowRedirectHosts: readonly string[] | undefined): Promise<{ profile: Profile; warnings: Warning[] }> {
  const warnings: Warning[] = [];
  let profile = input;
  if (locationsToSymbolize(profile).length === 0) return { profile, warnings };
  let remoteNote: string;
  try {
    const r = await symbolizeRemoteCounted(profile, url, { signal: ctx.signal, allowRedirectHosts });
    profile = r.profile;
    if (r.named === r.asked) return { profile, warnings };
    remoteNote = `the symbol server ${r.symbolUrl} named ${r.named} of ${r.asked} address(es)${r.numSymbols === 0 ? ' (it answered num_symbols: 0: it has no symbols)' : ''}`;
  } catch (e) {
    if (ctx.signal.aborted) throw e;
    warnings.push({ code: 'PROFKIT_W_REMOTE_SYMBOLIZE', message: `remote symbolization failed: ${e instanceof ProfkitError ? e.message : String(e)}` });
    remoteNote = 'remote symbolization failed';
  }
  const before = unnamedAddresses(profile);
  let localNote = 'local symbolization is not available in this CLI';
  if (ctx.transform) {
    try {
      const r = await ctx.transform('symbolize', profile, {});
      profile = r.profile;
      warnings.push(...r.warnings.filter((w) => !NO_LOCAL_BINARY_WARNINGS.has(w.code)));
      localNote = `local binaries named ${before - unnamedAddresses(profile)}`;
    } catch (e) {
      if (ctx.signal.aborted) throw e;
      localNote = `local symbolization failed: ${e instanceof ProfkitError ? e.message : String(e)}`;
    }
  }
  const left = unnamedAddresses(profile);
  warnings.push({
    code: 'PROFKIT_W_REMOTE_UNSYMBOLIZED',
    message: `${remoteNote}; ${localNote}; ${left} address(es) left without a name${left > 0 ? ' (give the binaries with --symbolize local --binary PATH --search-path DIRS)' : ''}`,
    detail: { url, left },
  });
  return { profile, warnings };
}

/** `profkit fetch`: see `fetchCommand` in command-defs.ts. */
export async function runFetch(ctx: CommandContext): Promise<number> {
  const url = ctx.positionals[0];
  if (!url || ctx.positionals.length > 1) throw new ProfkitError(ErrorCodes.USAGE, 'fetch takes exactly one URL', { rule: 'profkit fetch URL' });
  const symbolize = str(ctx, 'symbolize') ?? 'remote';
  if (symbolize !== 'remote' && symbolize !== 'local' && symbolize !== 'none') {
    throw new ProfkitError(ErrorCodes.USAGE, `--symbolize must be remote, local or none, got ${symbolize}`, { option: 'symbolize' });
  }
  for (const k of ['binary', 'search-path']) {
    if (str(ctx, k) !== undefined && symbolize !== 'local') throw new ProfkitError(ErrorCodes.USAGE, `--${k} needs --symbolize local`, { option: k });
  }
  if (symbolize === 'local' && !ctx.transform) {
    throw new ProfkitError(ErrorCodes.UNSUPPORTED, 'this profkit CLI cannot apply transforms (needed by --symbolize local): upgrade @profkit/cli', { option: 'symbolize', rule: 'CommandContext.transform' });
  }
  const allowHostsText = str(ctx, 'allow-redirect-host');
  const allowRedirectHosts = allowHostsText === undefined ? undefined : parseAllowedRedirectHosts(allowHostsText);
  let bar: ReturnType<CommandContext['progress']> | undefined;
  const result = await fetchProfile(url, {
    allowRedirectHosts,
    seconds: num(ctx, 'seconds', true),
    timeoutSeconds: num(ctx, 'timeout', false),
    signal: ctx.signal,
    onWait: (elapsed, expected) => {
      bar ??= ctx.progress(`profiling for ${expected} s`, expected);
      bar.update(Math.floor(elapsed), expected);
    },
    onBytes: () => {
      bar?.done();
      bar = undefined;
    },
    decode: async (bytes, fileName) => ctx.readProfileBytes(bytes, { fileName }),
  });
  bar?.done();
  let profile = result.profile!;
  const warnings = [...result.warnings];
  if (symbolize === 'remote') {
    const r = await symbolizeRemoteThenLocal(ctx, profile, result.plan.url, allowRedirectHosts);
    profile = r.profile;
    warnings.push(...r.warnings);
  }
  const out = str(ctx, 'output') ?? defaultOutputName(result.plan.url, result.program);
  if (symbolize === 'local') {
    try {
      const r = await ctx.transform!('symbolize', profile, { binary: str(ctx, 'binary'), 'search-path': str(ctx, 'search-path') });
      profile = r.profile;
      warnings.push(...r.warnings);
    } catch (e) {
      if (ctx.signal.aborted) throw e;
      // Keep what was fetched (it may have taken minutes), then report the failure.
      await ctx.writeProfile(profile, out, { format: str(ctx, 'format') });
      if (!ctx.quiet) ctx.stderr.write(`fetched ${result.bytes.length} bytes from ${result.plan.url}; wrote ${out} without local symbols\n`);
      throw e;
    }
  }
  warnings.push(...(await ctx.writeProfile(profile, out, { format: str(ctx, 'format') })));
  warn(ctx, warnings);
  if (!ctx.quiet) ctx.stderr.write(`fetched ${result.bytes.length} bytes from ${result.plan.url}${result.program ? ` (program ${result.program})` : ''}; wrote ${out}\n`);
  if (ctx.json) ctx.stdout.write(JSON.stringify({ schema: 'profkit.fetch/1', url: result.plan.url, bytes: result.bytes.length, program: result.program, output: out }) + '\n');
  return 0;
}

/** `profkit serve`: see `serveCommand` in command-defs.ts. */
export async function runServe(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length === 0) throw new ProfkitError(ErrorCodes.USAGE, 'serve needs at least one profile file', { rule: 'profkit serve FILE...' });
  const port = num(ctx, 'port', true);
  if (port !== undefined && port > 65535) throw new ProfkitError(ErrorCodes.USAGE, `--port must be at most 65535, got ${port}`, { option: 'port' });
  const byKind = new Map<ProfileKind, { file: string; profile: Profile }>();
  const all: Profile[] = [];
  for (const file of ctx.positionals) {
    const r = await ctx.readProfile(file);
    warn(ctx, r.warnings);
    const kind = profileKindOf(r.profile);
    if (!kind) throw new ProfkitError(ErrorCodes.UNSUPPORTED, `${file}: no route serves a profile with sample types ${r.profile.sample_types.type.join(', ')}`, { file, rule: 'heap, growth, CPU or contention profile' });
    if (byKind.has(kind)) throw new ProfkitError(ErrorCodes.USAGE, `${file} and ${byKind.get(kind)!.file} are both ${kind} profiles; serve one per route`, { file, rule: 'one profile per route' });
    byKind.set(kind, { file, profile: r.profile });
    all.push(r.profile);
  }
  const hostGiven = str(ctx, 'host');
  const host = hostGiven ?? '127.0.0.1';
  if (!isLoopbackHost(host) && !ctx.quiet) ctx.stderr.write(`warning: serving on the non-loopback address ${host}: anyone who can reach it can read these profiles\n`);
  const tmp = await mkdtemp(join(tmpdir(), 'profkit-serve-'));
  let seq = 0;
  // The server calls this once per profile and serves the bytes from memory afterwards.
  const encodePprof = async (p: Profile): Promise<Uint8Array> => {
    const path = join(tmp, `p${++seq}.pb.gz`);
    try {
      await ctx.writeProfile(p, path, { format: 'pprof' });
      return await readFile(path);
    } finally {
      await rm(path, { force: true });
    }
  };
  const server = await createProfileServer({
    host,
    port: port ?? 0,
    allowNonLoopback: hostGiven !== undefined,
    // pprof shows the first line of /pprof/cmdline as the program name; the file's directory
    // is nobody's business.
    program: str(ctx, 'program') ?? basename(ctx.positionals[0]!),
    profiles: (req) => byKind.get(req.kind)?.profile,
    symbolProfiles: all,
    encodePprof,
    onRequest: ctx.verbose ? (i) => ctx.stderr.write(`${i.method} ${i.path} ${i.status} ${i.ms} ms\n`) : undefined,
  });
  const routes = [...byKind.entries()].map(([k, v]) => `  ${server.url}/pprof/${k} <- ${v.file}`).join('\n');
  ctx.stdout.write(`serving on ${server.url}\n${routes}\n`);
  try {
    await new Promise<void>((ok) => {
      if (ctx.signal.aborted) ok();
      else ctx.signal.addEventListener('abort', () => ok(), { once: true });
    });
  } finally {
    await server.close();
    await rm(tmp, { recursive: true, force: true });
  }
  if (!ctx.quiet) ctx.stderr.write('server stopped\n');
  return 0;
}
