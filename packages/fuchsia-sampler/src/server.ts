/**
 * The live collector: accepts clients on a TCP address or a unix socket, each speaking our
 * framed stream (recording header, then records: channel messages and socket datagrams), runs one
 * session per client and writes partial and final profiles into a directory, as Fuchsia's
 * memory_sampler does (names `<process>_partial_<iteration>` and `<process>_final_<k>`, made
 * unique, with the encoder's extension, gzipped pprof by default).
 *
 * Robustness: per-client memory is bounded (one record of at most `maxRecordBytes` buffered,
 * live allocations / stacks / frames / segments bounded: past a bound, events are consumed and
 * ignored, as upstream disables recording); a malformed message ends that client only (its final
 * profile is still written); profile writes are serialized and the client is paused while its
 * profiles are being written (back-pressure instead of an unbounded queue).
 */

import { createServer, type Server, type Socket } from 'node:net';
import { existsSync, mkdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { isProfkitError, type Profile } from '@profkit/core';
import { RecordReader, DEFAULT_MAX_RECORD_BYTES } from './recording.js';
import { Session, type EmittedProfile, type SessionOptions } from './session.js';

export interface ListenAddress {
  kind: 'tcp' | 'unix';
  host?: string;
  port?: number;
  path?: string;
}

/** Parses `HOST:PORT`, `[IPv6]:PORT` or `unix:PATH`. */
export function parseAddress(s: string): ListenAddress {
  if (s.startsWith('unix:')) {
    const path = s.slice(5);
    if (!path) throw new RangeError('unix: address without a path');
    return { kind: 'unix', path };
  }
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(s);
  if (!m) throw new RangeError(`address ${JSON.stringify(s)} is not HOST:PORT or unix:PATH`);
  const port = Number(m[2]);
  if (port > 65535) throw new RangeError(`port ${port} out of range`);
  return { kind: 'tcp', host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

export function formatAddress(a: ListenAddress): string {
  return a.kind === 'unix' ? `unix:${a.path}` : `${a.host!.includes(':') ? `[${a.host}]` : a.host}:${a.port}`;
}

export interface CollectorOptions extends Omit<SessionOptions, 'onProfile' | 'file' | 'missingField'> {
  /** `127.0.0.1:PORT` (0 = any free port) or `unix:PATH`. */
  listen: string;
  /** Directory for the profiles (created if missing). */
  outDir: string;
  /** Encodes and writes one profile (e.g. the registry's pprof writer). */
  writeProfile: (profile: Profile, path: string) => Promise<unknown>;
  /** File name ending, default `.pb.gz`. */
  extension?: string;
  /** Concurrent clients (upstream: 10). Extra clients are refused. */
  maxClients?: number;
  /** Stop after this many client connections have ended (0 = no limit). */
  maxConnections?: number;
  /** Stop after this many milliseconds (0 = no limit). */
  timeoutMs?: number;
  /** Disconnect a client idle this long (0 = never). */
  idleTimeoutMs?: number;
  maxRecordBytes?: number;
  /** Log lines (connections, errors, files written). */
  log?: (line: string) => void;
  /** Aborting it stops the collector (final profiles of open clients are written). */
  signal?: AbortSignal;
}

export interface CollectorSummary {
  connections: number;
  refused: number;
  events: number;
  files: string[];
  errors: string[];
  reason: string;
}

export interface Collector {
  /** The bound address (the real port when 0 was asked). */
  address: string;
  /** Resolves when the collector has stopped and every profile is written. */
  done: Promise<CollectorSummary>;
  /** Stops: refuses new clients, ends open ones (writing their final profiles). */
  close(reason?: string): Promise<CollectorSummary>;
  /** Live numbers: connected clients and events processed so far (ended and connected clients). */
  stats(): { clients: number; events: number; files: number };
}

/** Per-client defaults: generous but finite. */
export const DEFAULT_CLIENT_LIMITS = {
  maxLiveAllocations: 1_000_000,
  maxStacks: 100_000,
  maxFrames: 4_000_000,
  maxModuleSegments: 10_000,
};

function sanitize(name: string): string {
  const s = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
  return s === '' ? 'unknown' : s;
}

export async function startCollector(options: CollectorOptions): Promise<Collector> {
  const addr = parseAddress(options.listen);
  const log = options.log ?? (() => {});
  const ext = options.extension ?? '.pb.gz';
  mkdirSync(options.outDir, { recursive: true });
  const summary: CollectorSummary = { connections: 0, refused: 0, events: 0, files: [], errors: [], reason: '' };
  const used = new Set<string>();
  const finals = new Map<string, number>();
  const clients = new Set<Client>();
  let ended = 0;
  let stopping = false;
  let writeChain: Promise<void> = Promise.resolve();

  const uniqueName = (base: string): string => {
    let name = base + ext;
    for (let k = 2; used.has(name) || existsSync(join(options.outDir, name)); k++) name = `${base}-${k}${ext}`;
    used.add(name);
    return name;
  };

  /** Serializes writes; resolves when this profile is on disk. */
  const emit = (p: EmittedProfile): Promise<void> => {
    const proc = sanitize(p.processName);
    let base: string;
    if (p.kind === 'final') {
      const k = finals.get(proc) ?? 0;
      finals.set(proc, k + 1);
      base = `${proc}_final_${k}`;
    } else {
      base = `${proc}_partial_${p.iteration}`;
    }
    const name = uniqueName(base);
    const path = join(options.outDir, name);
    const job = writeChain.then(async () => {
      try {
        await options.writeProfile(p.profile, path);
        summary.files.push(path);
        log(`wrote ${p.kind} profile ${path}`);
      } catch (e) {
        const msg = `writing ${path} failed: ${isProfkitError(e) ? e.describe() : (e as Error).message}`;
        summary.errors.push(msg);
        log(msg);
      }
    });
    writeChain = job;
    return job;
  };

  class Client {
    readonly session: Session;
    readonly reader: RecordReader;
    private pending = 0;
    private finished = false;
    readonly id: number;

    constructor(readonly socket: Socket) {
      this.id = ++summary.connections;
      const file = `client#${this.id}`;
      this.reader = new RecordReader(file, { maxRecordBytes: options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES });
      this.session = new Session({
        ...options,
        maxLiveAllocations: options.maxLiveAllocations ?? DEFAULT_CLIENT_LIMITS.maxLiveAllocations,
        maxStacks: options.maxStacks ?? DEFAULT_CLIENT_LIMITS.maxStacks,
        maxFrames: options.maxFrames ?? DEFAULT_CLIENT_LIMITS.maxFrames,
        maxModuleSegments: options.maxModuleSegments ?? DEFAULT_CLIENT_LIMITS.maxModuleSegments,
        file,
        missingField: 'fatal',
        onProfile: (p) => {
          if (p.kind === 'partial') this.track(emit(p));
        },
      });
      socket.on('data', (chunk: Buffer) => this.onData(chunk));
      socket.on('end', () => this.finish('client closed the connection'));
      socket.on('close', () => this.finish('connection closed'));
      socket.on('error', (e) => this.finish(`socket error: ${e.message}`));
      if (options.idleTimeoutMs) {
        socket.setTimeout(options.idleTimeoutMs, () => this.fail(`idle for ${options.idleTimeoutMs} ms`));
      }
    }

    private track(p: Promise<void>): void {
      this.pending++;
      this.socket.pause();
      void p.then(() => {
        if (--this.pending === 0 && !this.finished) this.socket.resume();
      });
    }

    private onData(chunk: Buffer): void {
      if (this.finished) return;
      try {
        const recs = this.reader.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        for (const r of recs) {
          this.session.handleRecord(r);
        }
      } catch (e) {
        this.fail(isProfkitError(e) ? `${e.code}: ${e.describe()}` : String(e));
      }
    }

    /** Ends this client because of bad input: the others are unaffected. */
    fail(message: string): void {
      const msg = `client#${this.id}: ${message}`;
      summary.errors.push(msg);
      log(msg);
      this.finish('error');
      this.socket.destroy();
    }

    finish(reason: string): void {
      if (this.finished) return;
      this.finished = true;
      clients.delete(this);
      if (reason !== 'error' && this.reader.buffered > 0) {
        const msg = `client#${this.id}: disconnected inside a record (${this.reader.buffered} bytes dropped)`;
        summary.errors.push(msg);
        log(msg);
      }
      summary.events += this.session.sampler.events;
      log(`client#${this.id} ${reason}: ${this.session.sampler.events} events, process ${JSON.stringify(this.session.sampler.processName)}`);
      const p = emit(this.session.finish());
      void p.then(() => {
        ended++;
        if (options.maxConnections && ended >= options.maxConnections) void stop(`${ended} connections served`);
      });
      finalWrites.push(p);
    }
  }

  const finalWrites: Promise<void>[] = [];
  const server: Server = createServer({ pauseOnConnect: false }, (socket) => {
    if (stopping || clients.size >= (options.maxClients ?? 10)) {
      summary.refused++;
      log(`refused a client (${stopping ? 'stopping' : `${clients.size} clients connected`})`);
      socket.destroy();
      return;
    }
    clients.add(new Client(socket));
  });

  let resolveDone!: (s: CollectorSummary) => void;
  const done = new Promise<CollectorSummary>((r) => (resolveDone = r));
  let timer: NodeJS.Timeout | undefined;

  const stop = async (reason: string): Promise<CollectorSummary> => {
    if (stopping) return done;
    stopping = true;
    summary.reason = reason;
    if (timer) clearTimeout(timer);
    log(`stopping: ${reason}`);
    const closed = new Promise<void>((r) => server.close(() => r()));
    for (const c of [...clients]) {
      c.finish(`collector stopping (${reason})`);
      c.socket.destroy();
    }
    await closed;
    await Promise.all(finalWrites);
    await writeChain;
    if (addr.kind === 'unix') {
      try {
        unlinkSync(addr.path!);
      } catch {
        /* already gone */
      }
    }
    resolveDone(summary);
    return summary;
  };

  if (addr.kind === 'unix' && existsSync(addr.path!)) {
    throw new RangeError(`unix socket path ${addr.path} already exists`);
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (addr.kind === 'unix') server.listen(addr.path, () => resolve());
    else server.listen(addr.port, addr.host, () => resolve());
  });
  server.on('error', (e) => {
    summary.errors.push(`server error: ${e.message}`);
    void stop(`server error: ${e.message}`);
  });
  let bound = options.listen;
  const a = server.address();
  if (a && typeof a === 'object') bound = formatAddress({ kind: 'tcp', host: a.address, port: a.port });
  log(`listening on ${bound}`);
  if (options.timeoutMs) timer = setTimeout(() => void stop(`timeout after ${options.timeoutMs} ms`), options.timeoutMs);
  if (options.signal) {
    if (options.signal.aborted) void stop('aborted');
    else options.signal.addEventListener('abort', () => void stop('signal'), { once: true });
  }
  const stats = () => {
    let events = summary.events;
    for (const c of clients) events += c.session.sampler.events;
    return { clients: clients.size, events, files: summary.files.length };
  };
  return { address: bound, done, close: (reason = 'closed') => stop(reason), stats };
}
