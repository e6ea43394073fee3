/**
 * A pprof remote-protocol server: serves profiles (stored or produced live by a callback) in the
 * formats gperftools servers return (`/pprof/heap`, `/pprof/growth`, `/pprof/profile`,
 * `/pprof/contention`, `/pprof/cmdline`, `/pprof/symbol`), and Go's `/debug/pprof/*` routes as
 * gzipped profile.proto when a pprof encoder is supplied. Any path prefix is accepted.
 *
 * Bounded: loopback only unless `allowNonLoopback`, request bodies up to `maxBodyBytes` (413),
 * at most `maxConcurrent` requests in progress (503), header and request timeouts.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { ErrorCodes, ProfkitError, isLoopbackHost, stackOf, ProfileIndex, type Profile, type Warning } from '@profkit/core';
import { formatMappedLibraries, locationAddresses, writeCpuProfile, writeHeapText } from '../write.js';
import { SymbolTable } from './symbolz.js';

/** The kinds of profile a server hands out. */
export type ProfileKind = 'heap' | 'growth' | 'profile' | 'contention';

export interface ProfileRequest {
  kind: ProfileKind;
  /** For `profile`: the requested duration in seconds (`seconds` parameter, default 30). */
  seconds: number;
  /** Aborted when the client goes away or the server closes. */
  signal: AbortSignal;
  /** The request's query parameters. */
  query: URLSearchParams;
}

export type ProfileCallback = (req: ProfileRequest) => Profile | undefined | Promise<Profile | undefined>;

export interface ProfileServerOptions {
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default 0 (a free port; read it from `address()`). */
  port?: number;
  /** Produces the profile for a route; `undefined` answers 404. */
  profiles: ProfileCallback;
  /** The program name `/pprof/cmdline` answers (default `profkit`). */
  program?: string;
  /**
   * Encodes a profile as (gzipped) profile.proto for `/debug/pprof/*`; without it those routes
   * answer 404 naming the missing pprof adapter.
   */
  encodePprof?: (p: Profile) => Promise<Uint8Array>;
  /** Profiles whose addresses `/pprof/symbol` resolves besides the ones served so far. */
  symbolProfiles?: Profile[];
  /** Allow binding a non-loopback address (default false: refused). */
  allowNonLoopback?: boolean;
  /** Largest request body in bytes (default 1 MiB; larger → 413). */
  maxBodyBytes?: number;
  /** Most requests handled at once (default 16; more → 503). */
  maxConcurrent?: number;
  /** Longest `seconds` a CPU profile request may ask for (default 3600; more → 400). */
  maxSeconds?: number;
  /** Time to receive the request headers, ms (default 10000). */
  headersTimeoutMs?: number;
  /** Time to receive the whole request, ms (default 30000). */
  requestTimeoutMs?: number;
  /** Longest time without progress while sending an answer, ms (default 30000; then the connection is cut). */
  responseTimeoutMs?: number;
  /** Called for every answered request (for logs). */
  onRequest?: (info: { method: string; path: string; status: number; ms: number }) => void;
  /** Called with warnings of the writers (information the legacy formats cannot hold). */
  onWarnings?: (route: string, warnings: Warning[]) => void;
}

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
  const encoded = new WeakMap<Profile, Map<ProfileKind, { type: string; data: Uint8Array }>>();
  const closing = new AbortController();
  let active = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> => {
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
      if (!options.encodePprof) throw new HttpError(404, `${path}: serving profile.proto needs the @profkit/pprof adapter (npm install @profkit/pprof)`);
      const bytes = await options.encodePprof(p);
      return send(res, 200, 'application/octet-stream', bytes, method === 'HEAD', { 'content-disposition': `attachment; filename="${service}"` });
    }
    // Profiles are plain immutable data: a profile served again (stored ones always are) is not
    // serialized again.
    let perProfile = encoded.get(p);
    if (!perProfile) encoded.set(p, (perProfile = new Map()));
    const cached = perProfile.get(kind);
    if (cached) return send(res, 200, cached.type, cached.data, method === 'HEAD');
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
    const data = typeof out.data === 'string' ? Buffer.from(out.data, 'utf8') : out.data;
    perProfile.set(kind, { type: out.type, data });
    return send(res, 200, out.type, data, method === 'HEAD');
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
    // A request counts against maxConcurrent until its handler settled and its response was
    // delivered (or the connection closed): clients that do not read their answer count too.
    active++;
    let holds = 2;
    const release = () => {
      if (--holds === 0) active--;
    };
    const ac = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) ac.abort();
      release();
    });
    const signal = AbortSignal.any([ac.signal, closing.signal]);
    handle(req, res, signal)
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
        // The answer is queued; a client that stops reading it is cut after responseTimeoutMs.
        if (!res.writableFinished && !res.destroyed) res.setTimeout(responseTimeoutMs, () => res.destroy());
        release();
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
        server.close(() => ok());
        server.closeIdleConnections();
        // In-flight requests had their signal aborted; give them a moment, then cut.
        setTimeout(() => server.closeAllConnections(), 1000).unref();
      });
      return closed;
    },
  };
}

function send(res: ServerResponse, status: number, type: string, body: string | Uint8Array, headOnly = false, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const data = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.statusCode = status;
  res.setHeader('content-type', type.startsWith('text/') ? `${type}; charset=utf-8` : type);
  res.setHeader('content-length', String(data.length));
  res.setHeader('x-content-type-options', 'nosniff');
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.end(headOnly ? undefined : data);
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

/**
 * A contention profile as Kudu's `/pprof/contention` writes it: `--- contention:`, attribute
 * lines, `<delay> <count> @ <pcs>` rows, `--- Memory map: ---` and the maps. Written with
 * `cycles/second = 1000000000` and `sampling period = 1` so that delays are the profile's
 * nanoseconds and counts its contentions, exactly (readers multiply by 1).
 */
export function writeContentionText(p: Profile): { text: string; warnings: Warning[] } {
  const types = p.sample_types.type;
  const iCount = types.indexOf('contentions');
  const iDelay = types.indexOf('delay');
  if (iCount < 0 || iDelay < 0) {
    throw new ProfkitError(ErrorCodes.UNSUPPORTED, `a contention profile needs contentions and delay sample types; this profile has ${types.join(', ') || 'none'}`, {
      rule: 'contention rows hold a delay and a count',
    });
  }
  const warnings: Warning[] = [];
  const { addresses, synthesized } = locationAddresses(p);
  if (synthesized > 0) {
    warnings.push({ code: 'PROFKIT_W_GPERFTOOLS_SYNTHETIC_ADDRESSES', message: `${synthesized} locations had no address; wrote synthetic addresses` });
  }
  const index = new ProfileIndex(p);
  const parts = ['--- contention:\n', 'cycles/second = 1000000000\n', 'sampling period = 1\n'];
  const dur = p['.profile'].duration_nanos;
  if (dur > 0n) parts.push(`ms since reset = ${dur / 1_000_000n}\n`);
  const counts = p.samples['.values'][iCount]!;
  const delays = p.samples['.values'][iDelay]!;
  for (let i = 0; i < counts.length; i++) {
    let line = `${delays[i]} ${counts[i]} @`;
    for (const id of stackOf(p, i)) {
      const row = index.locations.get(id);
      line += ' 0x' + (((row >= 0 ? addresses[row]! : 0n) + 1n) & 0xffffffffffffffffn).toString(16);
    }
    parts.push(line + '\n');
  }
  parts.push('--- Memory map: ---\n', formatMappedLibraries(p));
  return { text: parts.join(''), warnings };
}
