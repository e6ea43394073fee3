/**
 * The loopback server of `profkit web FILE`: serves the built app (dist/www), the bytes of the
 * given profile (and base), and for the source view the source files the profile names, looked
 * up as `profkit list` looks them up (--source-path, --trim-path) — nothing else. Like `go tool pprof -http`, but it binds
 * 127.0.0.1 by default, refuses any other address unless `allowRemote` is set, answers only GET
 * and HEAD, refuses requests whose Host header is not a loopback name (DNS rebinding: a web page
 * elsewhere must not read the profile through a name that resolves to 127.0.0.1), and sends a
 * Content-Security-Policy that lets the page load only its own assets.
 */

import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transform, pipeline, type TransformCallback } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { isIP } from 'node:net';
import { basename } from 'node:path';
import { DEFAULT_LIMITS, ErrorCodes, ProfkitError, isProfkitError, type Registry } from '@profkit/core';
import { listedSourceNames, readInput, sourceFileReader } from '@profkit/core/node';
import { readAppAssets, type AppAssets } from './assets.js';
import { INFLATED_HEADER, INFLATED_PARAM, INFLATED_SIZE_HEADER, inflateBufferSize } from './app/protocol.js';

export interface WebServerOptions {
  /** The profile to show. */
  profile: string;
  /** A base profile: the page then shows profile minus base (`profkit top FILE --base BASE`). */
  base?: string;
  /** Address to bind (default 127.0.0.1). */
  host?: string;
  /** Port (default 0: any free port). */
  port?: number;
  /** Bind `host` even when it is not a loopback address (the profile is then readable from the network). */
  allowRemote?: boolean;
  /** Directories to look up source files in, ':'-separated (`profkit list --source-path`; default the working directory). */
  sourcePath?: string;
  /** Prefixes removed from the profile's file names, ':'-separated (`profkit list --trim-path`). */
  trimPath?: string;
  /**
   * The adapters the server reads the profile with, for the names of the source files it may
   * serve: the CLI passes its registry (the adapters the user installed). Without one, the
   * first-party adapters the page bundles are imported, which must then be installed.
   */
  registry?: Registry;
  /**
   * A connection that moves no byte for this long is closed, in milliseconds (default
   * DEFAULT_IDLE_TIMEOUT_MS). Node closes one that never completes its request, but not one whose
   * client stops reading a response: it would hold the socket and the open profile for ever.
   * 0: no idle timeout.
   */
  idleTimeoutMs?: number;
}

/**
 * Ten minutes: long enough for the page, which reads a diff's base only once the profile is read
 * (the base's response waits meanwhile), and short enough that stalled clients do not pile up.
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 10 * 60_000;

/** The longest timer Node keeps (2^31 - 1 ms, about 24.8 days): a socket's longer one is cut to it, with a warning. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Connections open at once, past which a new one is closed unanswered: a browser opens at most 6
 * to one server, and each connection costs up to a few MB (an inflated profile's pipeline: 200
 * clients reading the 1M profile slowly held 730 MB).
 */
export const MAX_CONNECTIONS = 64;

export interface WebServer {
  /** The page's URL. */
  url: string;
  host: string;
  port: number;
  /** The URL paths the server answers (the page, its assets, the profile files). */
  paths: readonly string[];
  close(): Promise<void>;
}

/** True for addresses and names that stay on this machine: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h);
  return false;
}

/** The Host header's host part (without the port), or undefined when there is none. */
function hostOfHeader(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^(\[[^\]]*\]|[^:]*)(?::\d+)?$/.exec(header);
  return m?.[1];
}

/** The page may load its own script, style and the served profile; the worker comes from a blob: URL. */
/** 'wasm-unsafe-eval': the call graph is laid out by Graphviz compiled to WebAssembly (graph.js). */
const CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; connect-src 'self'; worker-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const COMMON_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** The ISIZE of `file` when it starts with the gzip magic bytes, else undefined (also when it cannot be read). */
async function gzipTrailerSize(file: string, size: number): Promise<number | undefined> {
  if (size < 20) return undefined;
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(file, 'r');
    const head = new Uint8Array(2);
    const trailer = new Uint8Array(4);
    await handle.read(head, 0, 2, 0);
    await handle.read(trailer, 0, 4, size - 4);
    return head[0] === 0x1f && head[1] === 0x8b ? new DataView(trailer.buffer).getUint32(0, true) : undefined;
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** The size of the pieces node:zlib inflates the served profile in (see the request handler). */
const INFLATED_CHUNK_BYTES = 1 << 18;

/**
 * Passes bytes through until more than `maxBytes` have passed, then fails (core's
 * `maxDecompressedBytes` for the inflated profile: the worker, given no body past it, reads the
 * original bytes and core reports the limit as it does for them).
 */
function byteLimit(maxBytes: number): Transform {
  let passed = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
      passed += chunk.length;
      if (passed > maxBytes) done(new Error(`inflated past ${maxBytes} bytes (maxDecompressedBytes)`));
      else done(null, chunk);
    },
  });
}

async function checkFile(path: string, option: string): Promise<number> {
  try {
    const s = await stat(path);
    if (!s.isFile()) throw new ProfkitError(ErrorCodes.IO, 'not a regular file', { file: path, option, rule: 'profkit web serves regular files' });
    return s.size;
  } catch (e) {
    if (e instanceof ProfkitError) throw e;
    throw new ProfkitError(ErrorCodes.IO, (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message, { file: path, option, rule: 'the profile must be a readable file' }, { cause: e });
  }
}

/** The page with the files it is to fetch (JSON in a non-executed script element; `<` escaped). */
function pageWithConfig(assets: AppAssets, config: unknown): string {
  const json = JSON.stringify(config).replace(/</g, '\\u003c');
  // A function, not a string: `$'`, `$&` in a file name or --source-path are replacement patterns.
  return assets.indexHtml.replace('<!--profkit-config-->', () => `<script type="application/json" id="profkit-config">${json}</script>`);
}

/** Where the page asks for a source file: `/source?file=NAME`, NAME as the listing names it. */
const SOURCE_URL = '/source';

/**
 * The source files of the profiles, as `profkit list --source-path --trim-path` reads them: a
 * name is served only when it is one the listing can ask for (a file name of a function of the
 * profiles, trimmed and cleaned as the listing does); any other name gets undefined. The
 * profiles are read once, at the first request (reading a large profile costs seconds).
 */
function sourceFiles(profiles: string[], sourcePath: string, trimPath: string, given: Registry | undefined) {
  let names: Promise<Set<string>> | undefined;
  const listed = async () => {
    const registry = given ?? (await import('./registry.js')).webRegistry();
    const all = new Set<string>();
    for (const file of profiles) {
      // Checked again (replaced by a FIFO since the start, it would be read without end), and
      // read within maxInputBytes.
      await checkFile(file, 'profile');
      const r = await registry.read(await readInput(file), { fileName: basename(file) });
      for (const name of listedSourceNames(r.profile, trimPath, sourcePath)) all.add(name);
    }
    return all;
  };
  // pprof's default source path, as `profkit list`: the working directory.
  const reader = sourceFileReader(sourcePath === '' ? process.cwd() : sourcePath, trimPath);
  return {
    async read(file: string) {
      names ??= listed();
      return (await names).has(file) ? reader(file) : undefined;
    },
  };
}

/** Starts the server; resolves once it listens. */
export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host) && !options.allowRemote) {
    throw new ProfkitError(ErrorCodes.USAGE, `--host ${host} is not a loopback address: anyone who can reach it could read the profile (pass --allow-remote to bind it anyway)`, {
      option: 'host',
      rule: 'profkit web binds loopback addresses only unless --allow-remote',
    });
  }
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ProfkitError(ErrorCodes.USAGE, `--port ${port}: expected an integer in [0, 65535]`, { option: 'port', rule: 'a TCP port' });
  }
  // Checked here: Node applies it to each connection, and a negative one threw there (a crash at the first request).
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  if (!Number.isInteger(idleTimeoutMs) || idleTimeoutMs < 0 || idleTimeoutMs > MAX_TIMER_MS) {
    throw new ProfkitError(ErrorCodes.USAGE, `idleTimeoutMs ${idleTimeoutMs}: expected an integer in [0, ${MAX_TIMER_MS}]`, { option: 'idleTimeoutMs', rule: 'milliseconds, 0 for no idle timeout' });
  }
  await checkFile(options.profile, 'profile');
  if (options.base !== undefined) await checkFile(options.base, 'base');
  const assets = await readAppAssets();

  // Each served file under its own name, so the page's format detection sees the extension.
  const files = new Map<string, string>();
  const profileUrl = `/profile/${encodeURIComponent(basename(options.profile))}`;
  files.set(profileUrl, options.profile);
  let baseUrl: string | undefined;
  if (options.base !== undefined) {
    baseUrl = `/base/${encodeURIComponent(basename(options.base))}`;
    files.set(baseUrl, options.base);
  }
  const sourcePath = options.sourcePath ?? '';
  const trimPath = options.trimPath ?? '';
  const page = pageWithConfig(assets, {
    profile: { name: basename(options.profile), url: profileUrl },
    ...(baseUrl ? { base: { name: basename(options.base!), url: baseUrl } } : {}),
    source: { url: SOURCE_URL, sourcePath, trimPath },
  });
  const sources = sourceFiles([options.profile, ...(options.base !== undefined ? [options.base] : [])], sourcePath, trimPath, options.registry);
  /**
   * The JSON body of each source file being sent, shared by the responses sending it and dropped
   * with the last of them: a response waiting on its client holds its body, and each request made
   * its own (8 clients asking at once for a 100 MB file, reading nothing: 2.3 GB).
   */
  const sourceBodies = new Map<string, { body: Buffer; responses: number }>();
  const staticFiles = new Map<string, { type: string; body: string | Uint8Array }>([
    ['/', { type: 'text/html; charset=utf-8', body: page }],
    ['/index.html', { type: 'text/html; charset=utf-8', body: page }],
    ['/app.js', { type: 'text/javascript; charset=utf-8', body: assets.appJs }],
    ['/app.css', { type: 'text/css; charset=utf-8', body: assets.appCss }],
    ['/graph.js', { type: 'text/javascript; charset=utf-8', body: assets.graphJs }],
  ]);

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const fail = (status: number, text: string) => {
      if (res.headersSent) return void res.destroy();
      res.writeHead(status, { ...COMMON_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
      res.end(`${text}\n`);
    };
    const hostHeader = hostOfHeader(req.headers.host);
    if (!options.allowRemote && (hostHeader === undefined || !isLoopbackHost(hostHeader))) return fail(421, 'profkit web answers only requests addressed to a loopback name');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return fail(405, 'profkit web serves files only (GET, HEAD)');
    }
    const [path, query = ''] = (req.url ?? '/').split('?') as [string, string?];
    if (path === SOURCE_URL) {
      const file = new URLSearchParams(query).get('file') ?? '';
      void sources
        .read(file)
        .then((lines) => {
          if (lines === undefined) return fail(403, 'profkit web serves only the source files the profile names');
          // The client went away while the file was read: its response's 'close' has passed, so a
          // body shared from now on would never be dropped (held for the server's life).
          if (res.destroyed) return;
          // Made before the head is sent: a file of control characters (6 characters of JSON
          // each) can pass the longest string, a RangeError that must be a 500, not a crash.
          let sending = sourceBodies.get(file);
          if (!sending) sourceBodies.set(file, (sending = { body: Buffer.from(JSON.stringify(lines)), responses: 0 }));
          const shared = sending;
          shared.responses++;
          res.once('close', () => {
            if (--shared.responses === 0 && sourceBodies.get(file) === shared) sourceBodies.delete(file);
          });
          res.writeHead(200, { ...COMMON_HEADERS, 'content-type': 'application/json; charset=utf-8', 'content-length': String(shared.body.length) });
          res.end(req.method === 'HEAD' ? undefined : shared.body);
        })
        .catch((e: unknown) => fail(500, isProfkitError(e) ? `${e.code} ${e.message}` : `${file} could not be served: ${e instanceof Error ? e.message : String(e)}`));
      return;
    }
    const asset = staticFiles.get(path);
    if (asset) {
      res.writeHead(200, { ...COMMON_HEADERS, 'content-type': asset.type });
      res.end(req.method === 'HEAD' ? undefined : asset.body);
      return;
    }
    const file = files.get(path);
    if (file === undefined) return fail(404, 'not found: profkit web serves the page and the profile(s) it was given, nothing else');
    // The file is read now (it may have been rewritten since the start); errors become a 500, not a crash.
    // Replaced by a FIFO or device since the start, it would be read without end: refused.
    void stat(file).then(
      async (s) => {
        if (!s.isFile()) return fail(500, `${basename(file)} is no longer a regular file`);
        const isize = await gzipTrailerSize(file, s.size);
        // Asked for inflated (`?inflated=1`; the path alone chose the file): a gzip file goes
        // through node:zlib, every member, as core's Node reader reads it. Any error (corrupt or
        // truncated gzip, the limit) destroys the response: the page sees a failed download,
        // never a short profile, and reads the original bytes instead.
        if (isize !== undefined && new URLSearchParams(query).get(INFLATED_PARAM) === '1') {
          res.writeHead(200, {
            ...COMMON_HEADERS,
            'content-type': 'application/octet-stream',
            [INFLATED_HEADER]: '1',
            // The buffer size hint, bounded as the page bounds the trailer's claim (4x the file).
            ...(isize > 0 ? { [INFLATED_SIZE_HEADER]: String(inflateBufferSize(isize, s.size)) } : {}),
          });
          if (req.method === 'HEAD') return void res.end();
          // Sent now: an error at the first bytes then fails the body, which the page falls back from.
          res.flushHeaders();
          // Pieces of 1 MiB in, 256 KiB out (not 64 KiB, 16 KiB): 0.35 s, not 0.6 s, for the 1M-sample profile.
          const gunzip = createGunzip({ chunkSize: INFLATED_CHUNK_BYTES });
          pipeline(createReadStream(file, { highWaterMark: 4 * INFLATED_CHUNK_BYTES }), gunzip, byteLimit(DEFAULT_LIMITS.maxDecompressedBytes), res, () => undefined);
          return;
        }
        res.writeHead(200, {
          ...COMMON_HEADERS,
          'content-type': 'application/octet-stream',
          'content-length': String(s.size),
          ...(isize !== undefined ? { [INFLATED_SIZE_HEADER]: String(isize) } : {}),
        });
        if (req.method === 'HEAD') return void res.end();
        // pipeline, not pipe: a client that goes away mid-file closes the file too (no fd left open).
        pipeline(createReadStream(file), res, () => undefined);
      },
      () => fail(500, `${basename(file)} can no longer be read`),
    );
  };

  const server: Server = createServer(handle);
  // No 'timeout' listener: Node destroys a socket idle this long (a response it cannot write included).
  server.timeout = idleTimeoutMs;
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new ProfkitError(ErrorCodes.IO, `cannot listen on ${host}:${port}: ${e.code ?? e.message}`, { option: e.code === 'EADDRINUSE' ? 'port' : 'host', rule: 'profkit web needs a free port on the given address' }, { cause: e })),
    );
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  // The name checked above is not the address bound: a name under .localhost (or localhost in
  // /etc/hosts) may resolve elsewhere. Closed before any request is answered.
  if (!isLoopbackHost(address.address) && !options.allowRemote) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw new ProfkitError(ErrorCodes.USAGE, `--host ${host} resolved to ${address.address}, not a loopback address: anyone who can reach it could read the profile (pass --allow-remote to bind it anyway)`, {
      option: 'host',
      rule: 'profkit web binds loopback addresses only unless --allow-remote',
    });
  }
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${urlHost}:${address.port}/`,
    host: address.address,
    port: address.port,
    paths: [...staticFiles.keys(), ...files.keys()],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
