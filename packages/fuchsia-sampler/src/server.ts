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
 * profiles are being written (back-pressure instead of an unbounded queue). Idle clients are
 * disconnected (`idleTimeoutMs`, default 60 s; the stream header must come within
 * `handshakeTimeoutMs`, default 10 s), so connections that say nothing cannot hold the
 * `maxClients` slots forever.
 *
 * Replies: the stream is one-way, except for one line the collector sends back before it closes
 * a connection, so that a client can tell a stream that was taken from one that was not:
 * `ok: …` once the client has half-closed and its final profile is written, `refused: …` for a
 * client beyond `maxClients` (or while stopping), `error: …` when it ends a client (malformed
 * input, idle, collector stopping, a write that failed). See `formatReply`/`parseReply`.
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
  /** Disconnect a client that sends nothing for this long (default 60 s; 0 = never). */
  idleTimeoutMs?: number;
  /** Disconnect a client whose 16-byte stream header has not arrived this long after it connected (default 10 s; 0 = never). */
  handshakeTimeoutMs?: number;
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

/** Default `idleTimeoutMs`: long enough for a quiet process between allocations, short enough that idle sockets do not lock clients out for long. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/** Default `handshakeTimeoutMs`: a real client sends its stream header right after connecting. */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;
/** How long a connection that was answered `refused`/`error` may stay open for the client to read the reply. */
const REPLY_LINGER_MS = 2_000;
/** Connections kept lingering at most; beyond this (a connection flood) refused sockets are dropped without a reply. */
const MAX_LINGERING = 64;
/** Longest reply line a client accepts, in bytes (the collector's are at most `MAX_REPLY_CHARS` UTF-16 units: at most 3 bytes each). */
export const MAX_REPLY_BYTES = 4096;
const MAX_REPLY_CHARS = 1000;

export type CollectorReplyStatus = 'ok' | 'refused' | 'error';

/** The one line the collector sends before closing a connection: `<status>: <message>\n`. */
export function formatReply(status: CollectorReplyStatus, message: string): string {
  const line = `${status}: ${message.replace(/[\r\n]+/g, ' ')}`;
  return `${line.length > MAX_REPLY_CHARS ? line.slice(0, MAX_REPLY_CHARS - 1) + '…' : line}\n`;
}

/** Parses a reply line (without its newline); undefined when it is not one. */
export function parseReply(line: string): { status: CollectorReplyStatus; message: string } | undefined {
  const m = /^(ok|refused|error): ?(.*)$/s.exec(line);
  return m ? { status: m[1] as CollectorReplyStatus, message: m[2]! } : undefined;
}

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

  /** Serializes writes; resolves when this profile is on disk (to the error message when writing failed). */
  const emit = (p: EmittedProfile): Promise<string | undefined> => {
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
        return undefined;
      } catch (e) {
        const msg = `writing ${path} failed: ${isProfkitError(e) ? e.describe() : (e as Error).message}`;
        summary.errors.push(msg);
        log(msg);
        return msg;
      }
    });
    writeChain = job.then(() => {});
    return job;
  };

  /**
   * Sends the reply line and closes our side; what the client still sends is read and discarded
   * (so it is not blocked writing before it reads the reply), and the connection is cut after
   * `REPLY_LINGER_MS` if the client does not close it.
   */
  const lingering = new Set<Socket>();
  const replyAndClose = (socket: Socket, status: CollectorReplyStatus, message: string): void => {
    if (socket.destroyed) return;
    if (status !== 'ok' && lingering.size >= MAX_LINGERING) {
      socket.destroy();
      return;
    }
    lingering.add(socket);
    const timer = setTimeout(() => socket.destroy(), REPLY_LINGER_MS);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
      lingering.delete(socket);
    });
    socket.on('error', () => {}); // a reset while answering is the client's business
    socket.setTimeout(0);
    socket.resume();
    socket.end(formatReply(status, message));
  };

  class Client {
    readonly session: Session;
    readonly reader: RecordReader;
    private pending = 0;
    private finished = false;
    private handshakeTimer: NodeJS.Timeout | undefined;
    private readonly idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    readonly id: number;

    constructor(readonly socket: Socket) {
      this.id = ++summary.connections;
      const file = `client#${this.id}`;
      log(`${file} connected${socket.remoteAddress ? ` from ${formatAddress({ kind: 'tcp', host: socket.remoteAddress, port: socket.remotePort })}` : ''}`);
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
      socket.on('end', () => this.finish('client closed the connection', true));
      socket.on('close', () => this.finish('connection closed'));
      socket.on('error', (e) => this.finish(`socket error: ${e.message}`));
      if (this.idleMs > 0) socket.setTimeout(this.idleMs, () => this.fail(`idle for ${this.idleMs} ms (option idleTimeoutMs, CLI --idle-timeout)`));
      const handshakeMs = options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
      if (handshakeMs > 0) {
        this.handshakeTimer = setTimeout(() => {
          if (!this.reader.headerRead) this.fail(`no stream header within ${handshakeMs} ms of connecting (option handshakeTimeoutMs)`);
        }, Math.min(handshakeMs, 0x7fff_ffff));
        this.handshakeTimer.unref();
      }
    }

    private track(p: Promise<unknown>): void {
      this.pending++;
      this.socket.pause();
      // Not idle while we hold it back: the idle clock restarts when reading resumes.
      this.socket.setTimeout(0);
      void p.then(() => {
        if (--this.pending === 0 && !this.finished) {
          this.socket.resume();
          if (this.idleMs > 0) this.socket.setTimeout(this.idleMs);
        }
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

    /** Ends this client because of bad input (or idleness): the others are unaffected. */
    fail(message: string): void {
      if (this.finished) return;
      const msg = `client#${this.id}: ${message}`;
      summary.errors.push(msg);
      log(msg);
      this.finish('error');
      replyAndClose(this.socket, 'error', message);
    }

    /**
     * Ends the session and writes its final profile. `clientEnded`: the client half-closed the
     * connection (a finished stream), so it is answered once the profile is on disk.
     */
    finish(reason: string, clientEnded = false): void {
      if (this.finished) return;
      this.finished = true;
      clearTimeout(this.handshakeTimer);
      this.socket.setTimeout(0);
      clients.delete(this);
      let dropped: string | undefined;
      if (reason !== 'error' && this.reader.buffered > 0) {
        dropped = `disconnected inside a record (${this.reader.buffered} bytes dropped)`;
        const msg = `client#${this.id}: ${dropped}`;
        summary.errors.push(msg);
        log(msg);
      }
      summary.events += this.session.sampler.events;
      const events = this.session.sampler.events;
      log(`client#${this.id} ${reason}: ${events} events, process ${JSON.stringify(this.session.sampler.processName)}`);
      const p = emit(this.session.finish());
      void p.then((writeError) => {
        if (clientEnded) {
          const problem = dropped ?? writeError;
          if (problem) replyAndClose(this.socket, 'error', problem);
          else replyAndClose(this.socket, 'ok', `${events} events, final profile written`);
        }
        ended++;
        if (options.maxConnections && ended >= options.maxConnections) void stop(`${ended} connections served`);
      });
      finalWrites.push(p);
    }
  }

  const finalWrites: Promise<unknown>[] = [];
  // allowHalfOpen: a client half-closes when its stream is complete and then waits for the reply.
  const server: Server = createServer({ pauseOnConnect: false, allowHalfOpen: true }, (socket) => {
    if (stopping || clients.size >= (options.maxClients ?? 10)) {
      summary.refused++;
      const why = stopping ? 'the collector is stopping' : `${clients.size} clients connected (the limit, option maxClients, CLI --max-clients)`;
      log(`refused a client (${why})`);
      replyAndClose(socket, 'refused', why);
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
      replyAndClose(c.socket, 'error', `the collector stopped (${reason}) before the stream ended; its final profile is being written`);
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
  // A timer holds at most 2^31-1 ms (~24.8 days); a longer one would fire at once.
  if (options.timeoutMs) timer = setTimeout(() => void stop(`timeout after ${options.timeoutMs} ms`), Math.min(options.timeoutMs, 0x7fff_ffff));
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
