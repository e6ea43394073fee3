/**
 * The CLI commands this adapter contributes: `profkit fetch URL` (client) and
 * `profkit serve FILE…` (server). Both use only the CLI's format-neutral services.
 */

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ErrorCodes, ProfkitError, parseAllowedRedirectHosts, type AdapterCommand, type CommandContext, type Profile, type Warning } from '@profkit/core';
import { fetchProfile } from './client.js';
import { createProfileServer, isLoopbackHost, type ProfileKind } from './server.js';
import { locationsToSymbolize, symbolizeRemoteCounted } from './symbolz.js';
import { ADAPTER_NAME } from '../read.js';

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

export const fetchCommand: AdapterCommand = {
  name: 'fetch',
  summary: 'fetch a profile from a pprof server (gperftools /pprof/* or Go /debug/pprof/*)',
  usage: [
    'profkit fetch URL [--seconds N] [--timeout T] [-o FILE] [--format FORMAT] [--symbolize remote|local|none]',
    '                  [--binary PATH] [--search-path DIRS] [--allow-redirect-host HOSTS]',
    '',
    'URL: http(s)://host:port[/prefix]/pprof/{heap,growth,profile,contention} or .../debug/pprof/NAME;',
    'a URL without a path fetches /pprof/profile. CPU profiles wait --seconds (default 30).',
    'The timeout defaults to 1.5 x the duration, or 60 s when there is none.',
    '--symbolize remote (default) asks the server for names; local runs the symbolize transform',
    '(@profkit/symbolize) with --binary/--search-path; none keeps the addresses. What the server',
    'cannot name (e.g. it answers num_symbols: 0) is looked up in local binaries, with a warning.',
    'Redirects (at most 10, http(s) only) must stay on the URL\'s host unless --allow-redirect-host.',
    '',
    'Examples:',
    '  profkit fetch localhost:8080/pprof/heap -o server.heap',
    '  profkit fetch http://127.0.0.1:6060/debug/pprof/profile --seconds 5 -o cpu.pb.gz',
    '  profkit fetch localhost:8080/pprof/profile --symbolize local --binary ./server -o cpu.pb.gz',
  ].join('\n'),
  options: {
    seconds: { type: 'string', valueName: 'N', description: 'profiling duration for CPU-like pages (sets the seconds parameter)' },
    timeout: { type: 'string', valueName: 'T', description: 'timeout in seconds (default 1.5 x duration, else 60)' },
    output: { type: 'string', short: 'o', valueName: 'FILE', description: 'where to write (format by extension; default pprof.<program>.<service>.<time>.pb.gz)' },
    symbolize: { type: 'string', valueName: 'MODE', description: 'remote (default): ask the server for names of unsymbolized addresses; local: symbolize with local binaries (needs @profkit/symbolize); none' },
    binary: { type: 'string', valueName: 'PATH', description: 'with --symbolize local: the main binary of the profiled program' },
    'search-path': { type: 'string', valueName: 'DIRS', description: 'with --symbolize local: directories to search for binaries, separated by ":"' },
    format: { type: 'string', valueName: 'FORMAT', description: 'output format id (default: by the extension of FILE)' },
    'allow-redirect-host': {
      type: 'string',
      valueName: 'HOSTS',
      description: 'hosts (host or host:port, comma-separated; * = any) that redirects of the profile and symbol URLs may lead to; default: only the URL\'s own host',
    },
  },
  async run(ctx) {
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
  },
};

/** Classifies a stored profile by the route that serves it. */
export function profileKindOf(p: Profile): ProfileKind | undefined {
  const types = p.sample_types.type;
  const facts = p['.extensions'][ADAPTER_NAME]?.facts;
  if (types.includes('contentions') && types.includes('delay')) return 'contention';
  if (types.includes('inuse_space') || types.includes('space') || types.includes('alloc_space')) {
    const k = facts?.heap_kind;
    return k === 'growth' || k === 'growthz' ? 'growth' : 'heap';
  }
  if (types.includes('samples') || types.some((t, i) => t === 'cpu' && p.sample_types.unit[i] === 'nanoseconds')) return 'profile';
  return undefined;
}

export const serveCommand: AdapterCommand = {
  name: 'serve',
  summary: 'serve stored profiles over the pprof remote protocol (for pprof clients and profkit fetch)',
  usage: [
    'profkit serve FILE... [--port P] [--host 127.0.0.1] [--program NAME]',
    '',
    'Each file is served on the route its content fits: heap (/pprof/heap), growth (/pprof/growth),',
    'CPU (/pprof/profile) or contention (/pprof/contention); /pprof/symbol resolves their addresses;',
    '/debug/pprof/{heap,allocs,profile,mutex,block} answer gzipped profile.proto (needs @profkit/pprof).',
    'Listens on 127.0.0.1 unless --host is given explicitly. Stops on SIGINT/SIGTERM.',
    '',
    'Example:',
    '  profkit serve app.heap app.cpu --port 8080 &  go tool pprof -raw http://127.0.0.1:8080/pprof/heap',
  ].join('\n'),
  options: {
    port: { type: 'string', short: 'p', valueName: 'P', description: 'TCP port (default 0: a free port, printed)' },
    host: { type: 'string', valueName: 'HOST', description: 'address to listen on (default 127.0.0.1; a non-loopback one is served with a warning)' },
    program: { type: 'string', valueName: 'NAME', description: 'program name answered by /pprof/cmdline (default: the first file\'s name without its directory)' },
  },
  async run(ctx) {
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
  },
};

export const remoteCommands: AdapterCommand[] = [fetchCommand, serveCommand];
