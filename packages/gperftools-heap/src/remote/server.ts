/**
 * A pprof remote-protocol server: serves profiles (stored or produced live by a callback) in the
 * formats gperftools servers return (`/pprof/heap`, `/pprof/growth`, `/pprof/profile`,
 * `/pprof/contention`, `/pprof/cmdline`, `/pprof/symbol`), and Go's `/debug/pprof/*` routes as
 * gzipped profile.proto when a pprof encoder is supplied. Any path prefix is accepted.
 *
 * Bounded: loopback only unless `allowNonLoopback`, request bodies up to `maxBodyBytes` (413),
 * at most `maxConcurrent` requests being worked on (503), at most `maxDeliveries` answers being
 * sent (clients that stop reading are cut after `responseTimeoutMs` without progress, or sooner
 * when newer answers need their place), header and request timeouts. Every answer is encoded
 * once per profile and served from memory afterwards.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { ErrorCodes, ProfkitError, isLoopbackHost, stackOf, ProfileIndex, type Profile, type Warning } from '@profkit/core';
import { formatMappedLibraries, locationAddresses, writeCpuProfile, writeHeapText } from '../write.js';
import { SymbolTable } from './symbolz.js';
import { writeContentionText } from '../contention.js';

export { writeContentionText };

import type { ProfileKind, ProfileServerOptions } from './server-types.js';

export type { ProfileKind, ProfileRequest, ProfileCallback, ProfileServerOptions } from './server-types.js';

export interface ProfileServer {
  server: Server;
  /** `http://host:port` of the listening server. */
  url: string;
  address(): { host: string; port: number };
  /** Stops accepting, ends in-flight requests (their signals abort), resolves when closed. */
  close(): Promise<void>;
}

/** True for `localhost`, 127.0.0.0/8 and ::1 (shared with the other adapters' servers through core). */
export { isLoopbackHost };

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const ROUTES: Record<string, ProfileKind> = {
  heap: 'heap',
  growth: 'growth',
  profile: 'profile',
  contention: 'contention',
};
const GO_ROUTES: Record<string, ProfileKind> = {
  heap: 'heap',
  allocs: 'heap',
  profile: 'profile',
  mutex: 'contention',
  block: 'contention',
  contention: 'contention',
  growth: 'growth',
};

/** Starts a profile server; resolves once it listens. */
export async function createProfileServer(options: ProfileServerOptions): Promise<ProfileServer> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host) && !options.allowNonLoopback) {
    throw new ProfkitError(ErrorCodes.USAGE, `refusing to serve profiles on the non-loopback address ${host}; pass allowNonLoopback (CLI: an explicit --host) to expose them`, {
      rule: 'loopback by default',
      option: 'host',
    });
  }
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  const maxConcurrent = options.maxConcurrent ?? 16;
  const maxSeconds = options.maxSeconds ?? 3600;
  const responseTimeoutMs = options.responseTimeoutMs ?? 30_000;
  const program = options.program ?? 'profkit';
  const symbols = new SymbolTable();
  const symbolized = new WeakSet<Profile>();
  const addSymbols = (p: Profile) => {
    if (symbolized.has(p)) return;
    symbolized.add(p);
    symbols.add(p);
  };
  for (const p of options.symbolProfiles ?? []) addSymbols(p);
  // A timer holds at most 2^31-1 ms (~24.8 days); a longer one would fire at once.
  const deliveries = new Deliveries(Math.min(responseTimeoutMs, 0x7fff_ffff), options.maxDeliveries ?? 64);
  const send = (res: ServerResponse, status: number, type: string, body: string | Uint8Array, headOnly = false, headers: Record<string, string> = {}): void => {
    if (res.headersSent || res.destroyed) return;
    const data = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    res.statusCode = status;
    res.setHeader('content-type', type.startsWith('text/') ? `${type}; charset=utf-8` : type);
    res.setHeader('content-length', String(data.length));
    res.setHeader('x-content-type-options', 'nosniff');
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    deliveries.start(res, headOnly ? undefined : data);
  };

  // Profiles are plain immutable data: each profile's answer for a route is encoded once (the
  // first request starts it, concurrent ones wait for the same promise) and served from memory.
  // A request that waits for an encoding another one started does no work of its own, so it
  // gives back its place among the `maxConcurrent` (`notWorking`).
  const encoded = new WeakMap<Profile, Map<ProfileKind | 'pprof', Promise<EncodedAnswer>>>();
  const encodeOnce = (p: Profile, route: ProfileKind | 'pprof', notWorking: () => void, encode: () => Promise<EncodedAnswer>): Promise<EncodedAnswer> => {
    let perProfile = encoded.get(p);
    if (!perProfile) encoded.set(p, (perProfile = new Map()));
    const known = perProfile.get(route);
    if (known) {
      notWorking();
      return known;
    }
    const pending = encode();
    perProfile.set(route, pending);
    // A failure (e.g. a full disk under the encoder) is not remembered: the next request retries.
    pending.catch(() => perProfile.get(route) === pending && perProfile.delete(route));
    return pending;
  };
  const encodeLegacy = async (p: Profile, kind: ProfileKind, path: string): Promise<EncodedAnswer> => {
    let out: { data: string | Uint8Array; warnings: Warning[]; type: string };
    if (kind === 'profile') {
      const r = writeCpuProfile(p);
      out = { data: r.bytes, warnings: r.warnings, type: 'application/octet-stream' };
    } else if (kind === 'contention') {
      const r = writeContentionText(p);
      out = { data: r.text, warnings: r.warnings, type: 'text/plain' };
    } else {
      const r = writeHeapText(p, kind === 'growth' ? { kind: 'growth' } : {});
      out = { data: r.text, warnings: r.warnings, type: 'text/plain' };
    }
    if (out.warnings.length > 0) options.onWarnings?.(path, out.warnings);
    return { type: out.type, data: typeof out.data === 'string' ? Buffer.from(out.data, 'utf8') : out.data };
  };

  const closing = new AbortController();
  /**
   * The controllers of the requests being worked on, aborted by close(). (Not
   * `AbortSignal.any([request, closing])` per request: on Node 20 every such signal leaves a
   * record on the long-lived `closing` signal, about 50 bytes per request, forever.)
   */
  const inFlight = new Set<AbortController>();
  let active = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse, signal: AbortSignal, notWorking: () => void): Promise<void> => {
    let u: URL;
    try {
      u = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      throw new HttpError(400, 'malformed request target');
    }
    const path = u.pathname;
    const method = req.method ?? 'GET';
    const isGo = /\/debug\/pprof\/[^/]*$/.test(path);
    const m = /\/pprof\/([^/]*)$/.exec(path);
    if (!m) throw new HttpError(404, `unknown path ${path}; services: /pprof/{heap,growth,profile,contention,cmdline,symbol} and /debug/pprof/*`);
    const service = m[1]!;
    if (service === 'symbol') {
      if (method === 'GET' || method === 'HEAD') {
        // Only zero vs nonzero matters to clients; no trailing newline, like Kudu.
        return send(res, 200, 'text/plain', `num_symbols: ${symbols.size > 0 ? symbols.size : 0}`, method === 'HEAD');
      }
      if (method !== 'POST') throw new HttpError(405, `${method} not allowed on ${path}`);
      const body = await readBody(req, maxBody, signal);
      return send(res, 200, 'text/plain', symbols.reply(body.toString('latin1')));
    }
    if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, `${method} not allowed on ${path}`);
    if (service === 'cmdline') return send(res, 200, 'text/plain', program + '\n', method === 'HEAD');
    const kind = isGo ? GO_ROUTES[service] : ROUTES[service];
    if (!kind) throw new HttpError(404, `unknown service ${service}`);
    let seconds = 0;
    if (kind === 'profile') {
      const s = u.searchParams.get('seconds');
      seconds = s === null ? 30 : Number(s);
      if (!Number.isInteger(seconds) || seconds < 0 || seconds > maxSeconds) throw new HttpError(400, `seconds must be an integer in 0..${maxSeconds}, got ${s}`);
    }
    const p = await options.profiles({ kind, seconds, signal, query: u.searchParams });
    if (signal.aborted) {
      if (closing.signal.aborted) throw new HttpError(503, 'the server is shutting down');
      return;
    }
    if (!p) throw new HttpError(404, `no ${kind} profile is available`);
    addSymbols(p);
    if (isGo) {
      const encodePprof = options.encodePprof;
      if (!encodePprof) throw new HttpError(404, `${path}: serving profile.proto needs the @profkit/pprof adapter (npm install @profkit/pprof)`);
      const answer = await encodeOnce(p, 'pprof', notWorking, async () => ({ type: 'application/octet-stream', data: await encodePprof(p) }));
      return send(res, 200, answer.type, answer.data, method === 'HEAD', { 'content-disposition': `attachment; filename="${service}"` });
    }
    const answer = await encodeOnce(p, kind, notWorking, () => encodeLegacy(p, kind, path));
    return send(res, 200, answer.type, answer.data, method === 'HEAD');
  };

  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const requestTimeout = Math.max(options.requestTimeoutMs ?? 30_000, headersTimeout);
  const serverOptions = {
    headersTimeout,
    requestTimeout,
    keepAliveTimeout: 5_000,
    // How often node checks the two timeouts above (its default, 30 s, would make them coarse).
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 2))),
  };
  const server = createServer(serverOptions, (req, res) => {
    const t0 = Date.now();
    const path = (req.url ?? '/').split('?')[0]!;
    const done = () => options.onRequest?.({ method: req.method ?? '', path, status: res.statusCode, ms: Date.now() - t0 });
    if (active >= maxConcurrent) {
      res.setHeader('retry-after', '1');
      res.setHeader('connection', 'close');
      send(res, 503, 'text/plain', `too many requests in progress (limit ${maxConcurrent})\n`);
      req.resume();
      done();
      return;
    }
    // A request counts against maxConcurrent while it is worked on, until its answer is ready.
    // Sending the answer is bounded by `deliveries` instead: a client that does not read must
    // not hold a place that others need for work.
    active++;
    let working = true;
    const notWorking = () => {
      if (working) active--;
      working = false;
    };
    const request = new AbortController();
    inFlight.add(request);
    if (closing.signal.aborted) request.abort();
    res.once('close', () => {
      if (!res.writableFinished) request.abort();
    });
    handle(req, res, request.signal, notWorking)
      .catch((e: unknown) => {
        if (res.headersSent || res.destroyed) return;
        if (e instanceof HttpError) {
          // After a malformed or refused request the connection is not reused.
          if (e.status === 400 || e.status === 413 || e.status === 503) res.setHeader('connection', 'close');
          send(res, e.status, 'text/plain', e.message + '\n');
        } else if (e instanceof ProfkitError) {
          const status = e.code === ErrorCodes.UNSUPPORTED ? 422 : e.code === ErrorCodes.NO_ADAPTER || e.code === ErrorCodes.UNKNOWN_FORMAT ? 404 : 500;
          send(res, status, 'text/plain', `${e.code}: ${e.message}\n`);
        } else send(res, 500, 'text/plain', `internal error: ${e instanceof Error ? e.message : String(e)}\n`);
      })
      .finally(() => {
        inFlight.delete(request);
        notWorking();
        done();
      });
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    const status =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
    if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    else socket.destroy();
  });

  await new Promise<void>((ok, fail) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      fail(new ProfkitError(ErrorCodes.IO, `cannot listen on ${host}:${options.port ?? 0}: ${e.code ?? e.message}`, { rule: 'listen', option: 'port' }, { cause: e })),
    );
    server.listen(options.port ?? 0, host, () => ok());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : (options.port ?? 0);
  const urlHost = isIP(host) === 6 ? `[${host}]` : host;
  let closed: Promise<void> | undefined;
  return {
    server,
    url: `http://${urlHost}:${port}`,
    address: () => ({ host, port }),
    close() {
      closed ??= new Promise<void>((ok) => {
        closing.abort();
        for (const request of inFlight) request.abort();
        server.close(() => ok());
        server.closeIdleConnections();
        // In-flight requests had their signal aborted; give them a moment, then cut.
        setTimeout(() => server.closeAllConnections(), 1000).unref();
      });
      return closed;
    },
  };
}

/** An answer ready to send: encoded once per profile and route, then shared by all requests. */
interface EncodedAnswer {
  type: string;
  data: Uint8Array;
}

/** The piece of an answer written at a time; handing one to the connection is progress. */
export const DELIVERY_CHUNK_BYTES = 32 * 1024;

/**
 * The answers being sent. A body goes out in `DELIVERY_CHUNK_BYTES` pieces, the next one once the
 * connection took the previous (its `drain`), so that progress is visible: an answer without
 * progress for `timeoutMs` is cut. (Node's socket timeout is no substitute: it restarts once when
 * its write queue shrank since the write, so a client that reads a little and stops is cut after
 * twice the time.) Beyond `max` answers in delivery, a new one cuts the answer that has gone
 * longest without progress: clients that never read cannot hold the server's connections.
 */
class Deliveries {
  /** Each answer being sent and when it last made progress (ms). */
  private readonly lastProgress = new Map<ServerResponse, number>();

  constructor(
    private readonly timeoutMs: number,
    private readonly max: number,
  ) {}

  /** Sends `body` (undefined: headers only) as the whole answer of `res`. */
  start(res: ServerResponse, body: Uint8Array | undefined): void {
    if (this.lastProgress.size >= this.max) this.cutMostStalled();
    const cut = setTimeout(() => res.destroy(), this.timeoutMs);
    cut.unref();
    const settled = () => {
      clearTimeout(cut);
      this.lastProgress.delete(res);
      res.off('drain', sendMore);
    };
    res.once('finish', settled);
    res.once('close', settled);
    const length = body?.length ?? 0;
    let offset = 0;
    const sendMore = (): void => {
      this.lastProgress.set(res, Date.now());
      cut.refresh();
      while (length - offset > DELIVERY_CHUNK_BYTES) {
        const piece = body!.subarray(offset, offset + DELIVERY_CHUNK_BYTES);
        offset += piece.length;
        // The rest follows once the connection took this piece.
        if (!res.write(piece)) return;
      }
      res.off('drain', sendMore);
      res.end(offset < length ? body!.subarray(offset) : undefined);
    };
    res.on('drain', sendMore);
    sendMore();
  }

  private cutMostStalled(): void {
    let stalest: ServerResponse | undefined;
    let since = Infinity;
    for (const [res, t] of this.lastProgress) {
      if (t < since) [stalest, since] = [res, t];
    }
    if (!stalest) return;
    this.lastProgress.delete(stalest);
    stalest.destroy();
  }
}

function readBody(req: IncomingMessage, max: number, signal: AbortSignal): Promise<Buffer> {
  return new Promise((ok, fail) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > max) {
      req.resume();
      fail(new HttpError(413, `request body of ${declared} bytes exceeds the limit of ${max}`));
      return;
    }
    const chunks: Buffer[] = [];
    let n = 0;
    const onAbort = () => fail(new HttpError(499, 'client went away'));
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('data', (c: Buffer) => {
      n += c.length;
      if (n > max) {
        req.removeAllListeners('data');
        req.resume();
        signal.removeEventListener('abort', onAbort);
        fail(new HttpError(413, `request body exceeds the limit of ${max} bytes`));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      signal.removeEventListener('abort', onAbort);
      ok(Buffer.concat(chunks, n));
    });
    req.on('error', (e) => {
      signal.removeEventListener('abort', onAbort);
      fail(e);
    });
  });
}

