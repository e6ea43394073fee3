/**
 * The CLI commands this adapter contributes: `profkit fetch URL` (client) and `profkit serve
 * FILE…` (server). Definitions only, platform-neutral: what they do needs Node (HTTP, files) and
 * is loaded when a command runs, through `#node-commands` (package.json `imports`:
 * `commands-lazy.ts`, which loads `commands.ts`, on Node; `commands-unavailable.ts` elsewhere).
 */

import type { AdapterCommand, Profile } from '@profkit/core';
import { runFetch, runServe } from '#node-commands';
import { ADAPTER_NAME } from '../read.js';
import type { ProfileKind } from './server-types.js';

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
  run: runFetch,
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
  run: runServe,
};


export const remoteCommands: AdapterCommand[] = [fetchCommand, serveCommand];
