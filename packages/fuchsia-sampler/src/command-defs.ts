/**
 * The CLI subcommands this adapter contributes. Definitions only: the implementation is loaded
 * on first use (keeps CLI start-up cheap), through `#node-commands` (package.json `imports`:
 * `commands-lazy.ts`, which loads `commands.ts`, on Node; `commands-unavailable.ts` elsewhere).
 */

import type { AdapterCommand, CommandOption } from '@profkit/core';
import { profilesCommand, replayCommand, serveCommand } from '#node-commands';

/** Options of both `serve` and `profiles`. */
const SAMPLING_RATE: CommandOption = { type: 'string', description: 'Poisson sampling rate in bytes (default 131072)', valueName: 'BYTES' };
const PEAK: CommandOption = { type: 'boolean', description: 'add peak_allocated_objects/space sample types' };
const EXTENSION: CommandOption = { type: 'string', description: 'file name ending (default .pb.gz)', valueName: 'EXT' };
const OUT: CommandOption = { type: 'string', description: 'directory for the profiles', valueName: 'DIR' };

export const commands: AdapterCommand[] = [
  {
    name: 'fuchsia-sampler serve',
    summary: 'collect fuchsia.memory.sampler streams from clients and write partial/final heap profiles',
    usage: [
      'profkit fuchsia-sampler serve --listen 127.0.0.1:PORT|unix:PATH --out DIR [options]',
      '',
      'Each client sends a recording stream (the .fsrec header, then framed channel messages and',
      'socket datagrams). Profiles are written to DIR as <process>_partial_<iteration>.pb.gz and',
      '<process>_final_<k>.pb.gz (gzipped pprof), on partial triggers, client disconnect and SIGTERM.',
      'Clients beyond --max-clients are refused; a client idle for --idle-timeout seconds (or without',
      'its stream header 10 s after connecting) is disconnected, so idle connections cannot hold the',
      'slots. Each connection gets one reply line before it is closed: "ok: ..." once its final',
      'profile is written, "refused: ..." or "error: ...". A non-loopback --listen address is served',
      'with a warning: anyone who can reach it can send records.',
      '',
      'With --json, stdout has two documents (JSON lines) of schema profkit.fuchsia-sampler.serve/1:',
      '"event": "listening" with the bound address, then "event": "stopped" with the summary.',
      '',
      'Examples:',
      '  $ profkit fuchsia-sampler serve --listen 127.0.0.1:7070 --out profiles --max-connections 1',
      '  listening 127.0.0.1:7070',
      '  stopped (1 connections served): 1 connections, 4 events, 1 profiles written, 0 errors',
      '  (stderr: fuchsia-sampler: wrote final profile profiles/test_process_final_0.pb.gz, ...)',
      '  $ profkit fuchsia-sampler serve --listen 127.0.0.1:7071 --out profiles-json --max-connections 1 --json',
      '  {"schema":"profkit.fuchsia-sampler.serve/1","event":"listening","address":"127.0.0.1:7071"}',
      '  {"schema":"profkit.fuchsia-sampler.serve/1","event":"stopped","address":"127.0.0.1:7071","reason":"1 connections served","connections":1,"refused":0,"events":4,"files":["profiles-json/test_process_final_0.pb.gz"],"errors":[]}',
    ].join('\n'),
    options: {
      listen: { type: 'string', description: 'address to listen on: HOST:PORT or unix:PATH', valueName: 'ADDR' },
      out: OUT,
      raw: { type: 'boolean', description: 'write raw sampled values (default: unsampled with the Poisson weight)' },
      'sampling-rate': SAMPLING_RATE,
      'partial-threshold': { type: 'string', description: 'distinct freed stacks that trigger a partial profile (default 1000, 0 = never)', valueName: 'N' },
      'partial-interval': { type: 'string', description: 'seconds between partial profiles (default 43200, 0 = never)', valueName: 'S' },
      'max-clients': { type: 'string', description: 'concurrent clients (default 10)', valueName: 'N' },
      'max-connections': { type: 'string', description: 'stop after N client connections ended', valueName: 'N' },
      timeout: { type: 'string', description: 'stop after S seconds', valueName: 'S' },
      'idle-timeout': { type: 'string', description: 'disconnect a client that sends nothing for S seconds (default 60, 0 = never); its final profile is written', valueName: 'S' },
      peak: PEAK,
      'max-live': { type: 'string', description: 'live allocations kept per client before its events are ignored (default 1000000)', valueName: 'N' },
      'max-stacks': { type: 'string', description: 'distinct stacks kept per client (default 100000)', valueName: 'N' },
      format: { type: 'string', description: 'profile format of the written files (default: by extension, pprof .pb.gz)', valueName: 'FMT' },
      extension: EXTENSION,
    },
    run: serveCommand,
  },
  {
    name: 'fuchsia-sampler replay',
    summary: 'send a recording (.fsrec or .fsrec.jsonl) to a running collector',
    usage: [
      'profkit fuchsia-sampler replay RECORDING --to 127.0.0.1:PORT|unix:PATH [--generation 1|2|3]',
      '',
      'Examples:',
      '  $ profkit fuchsia-sampler replay run.fsrec --to 127.0.0.1:7070',
      '  sent 4 records to 127.0.0.1:7070',
      '  $ profkit fuchsia-sampler replay run.fsrec --to 127.0.0.1:7071 --json',
      '  {"schema":"profkit.fuchsia-sampler.replay/1","recording":"run.fsrec","to":"127.0.0.1:7071","records":4}',
      '  $ profkit fuchsia-sampler replay run.fsrec --to 127.0.0.1:1     # nothing listens: exit 5',
      '  profkit: collector connection failed: connect ECONNREFUSED 127.0.0.1:1 [PROFKIT_E_NETWORK]',
      '  $ profkit fuchsia-sampler replay run.fsrec --to 127.0.0.1:7072  # all --max-clients slots taken: exit 5',
      '  profkit: 127.0.0.1:7072 refused the connection: 1 clients connected (the limit, option maxClients, CLI --max-clients) [PROFKIT_E_NETWORK]',
      '',
      'Success means the collector acknowledged the stream after writing its final profile.',
    ].join('\n'),
    options: {
      to: { type: 'string', description: 'collector address', valueName: 'ADDR' },
      generation: { type: 'string', description: 'protocol generation for JSONL calls (default 2)', valueName: 'G' },
    },
    run: replayCommand,
  },
  {
    name: 'fuchsia-sampler profiles',
    summary: 'replay a recording offline and write every partial profile and the final one into a directory',
    usage: [
      'profkit fuchsia-sampler profiles RECORDING --out DIR [--raw] [--partial-threshold N]',
      '',
      'Writes the same files the collector would: <process>_partial_<iteration>.pb.gz, <process>_final_0.pb.gz.',
      '',
      'Examples:',
      '  $ profkit fuchsia-sampler profiles run.fsrec --out offline',
      '  offline/test_process_final_0.pb.gz',
      '  $ profkit fuchsia-sampler profiles run.fsrec --out offline2 --json',
      '  {"schema":"profkit.fuchsia-sampler.profiles/1","recording":"run.fsrec","out":"offline2","files":["offline2/test_process_final_0.pb.gz"],"warnings":[{"code":"PROFKIT_W_PPROF_EXTENSIONS_DROPPED","message":"format extensions (fuchsia-sampler) have no place in profile.proto and were not written"}]}',
    ].join('\n'),
    options: {
      out: OUT,
      raw: { type: 'boolean', description: 'raw sampled values' },
      'sampling-rate': SAMPLING_RATE,
      'partial-threshold': { type: 'string', description: 'distinct freed stacks that trigger a partial profile (default 1000)', valueName: 'N' },
      peak: PEAK,
      extension: EXTENSION,
    },
    run: profilesCommand,
  },
];
