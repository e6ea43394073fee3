/**
 * Remote symbolization over HTTP, on Node: the HTTP transport (`httpRequest`, node:http/https)
 * and the client (`symbolizeRemote`). The protocol itself (URLs, request and reply grammar) is
 * platform-neutral, in `symbolz.ts` and @profkit/core. Part of `@profkit/gperftools-heap/node`.
 */

import {
  ErrorCodes,
  ProfkitError,
  SYMBOL_REQUEST_CONTENT_TYPE,
  isFollowedRedirect,
  nextRedirect,
  parseNumSymbols,
  symbolUrlFor,
  symbolizeWithServer,
  type Profile,
  type RedirectPolicy,
} from '@profkit/core';

export interface SymbolizeRemoteOptions {
  /** Use this symbol URL instead of deriving it from the profile URL. */
  symbolUrl?: string;
  /** Also ask for locations of mappings already marked `has_functions`. */
  force?: boolean;
  /** Whole-request timeout in ms (default 60000). */
  timeoutMs?: number;
  /** Largest reply accepted, in bytes (default 64 MiB). */
  maxReplyBytes?: number;
  /** Hosts a redirect of the symbol URL may lead to (see core's `RedirectPolicy`; default none). */
  allowRedirectHosts?: readonly string[];
  signal?: AbortSignal;
}

export interface SymbolizeRemoteResult {
  profile: Profile;
  /** Locations whose addresses were sent. */
  asked: number;
  /** Locations that got a name. */
  named: number;
  /** The `num_symbols: N` the server put in its reply, when it did (0: it has no symbols). */
  numSymbols?: number;
  symbolUrl: string;
}

/**
 * Fills function names for the unsymbolized locations of `profile` by POSTing their addresses
 * to the symbol service of `url` (a profile URL, from which the symbol URL is derived as
 * google/pprof does, or `options.symbolUrl`). Returns a new profile; the input is unchanged.
 * Network failures and non-200 answers are `PROFKIT_E_NETWORK` errors.
 */
export async function symbolizeRemote(profile: Profile, url: string, options: SymbolizeRemoteOptions = {}): Promise<Profile> {
  return (await symbolizeRemoteCounted(profile, url, options)).profile;
}

/** `symbolizeRemote`, also saying how many locations were asked about and named, and the server's `num_symbols`. */
export async function symbolizeRemoteCounted(profile: Profile, url: string, options: SymbolizeRemoteOptions = {}): Promise<SymbolizeRemoteResult> {
  const target = options.symbolUrl ?? symbolUrlFor(url);
  let numSymbols: number | undefined;
  const post = async (symbolUrl: string, body: string) => {
    if (symbolUrl === '') {
      throw new ProfkitError(ErrorCodes.USAGE, `cannot derive a symbol URL from ${url}: not an http(s) URL with a host`, { rule: 'symbolz URL derivation', url });
    }
    const { text } = await httpRequest(symbolUrl, {
      method: 'POST',
      body,
      headers: { 'content-type': SYMBOL_REQUEST_CONTENT_TYPE },
      timeoutMs: options.timeoutMs ?? 60_000,
      maxBytes: options.maxReplyBytes ?? 64 * 1024 * 1024,
      allowRedirectHosts: options.allowRedirectHosts,
      signal: options.signal,
    });
    numSymbols ??= parseNumSymbols(text);
    return text;
  };
  const r = await symbolizeWithServer(profile, target, post, { force: options.force });
  return { profile: r.profile, asked: r.asked, named: r.named, numSymbols, symbolUrl: target };
}

export interface HttpRequestOptions {
  method?: string;
  body?: string | Uint8Array;
  headers?: Record<string, string>;
  timeoutMs: number;
  maxBytes: number;
  /** Hosts a redirect may lead to besides the requested one (`*`: any); see core's `nextRedirect`. */
  allowRedirectHosts?: readonly string[];
  signal?: AbortSignal;
  /** Called with the bytes received so far. */
  onBytes?: (received: number, total?: number) => void;
}

/**
 * One HTTP request (node's `http`/`https`, no connection reuse, so nothing keeps the process
 * alive afterwards) with a deadline for the whole exchange and a bounded body. Non-200 →
 * `PROFKIT_E_NETWORK` (with the body when the server marks it as a pprof error: `X-Go-Pprof` +
 * text/plain, as google/pprof does). Redirects follow core's rules (`nextRedirect`: at most 10,
 * http(s) only, same host unless `allowRedirectHosts`); a refused one is `PROFKIT_E_NETWORK`.
 */
export async function httpRequest(url: string, o: HttpRequestOptions): Promise<{ bytes: Uint8Array; text: string; headers: Record<string, string | string[] | undefined>; status: number }> {
  const deadline = Date.now() + o.timeoutMs;
  const policy: RedirectPolicy = { allowHosts: o.allowRedirectHosts };
  let current = url;
  let request = o;
  for (let redirects = 0; ; redirects++) {
    const r = await requestOnce(current, request, deadline);
    if (r.result) return r.result;
    const step = nextRedirect(url, current, r.redirect!.status, r.redirect!.location, request.method ?? 'GET', redirects, policy);
    current = step.url;
    request = { ...request, method: step.method, body: step.keepBody ? request.body : undefined };
  }
}

interface Once {
  redirect?: { status: number; location: string };
  result?: { bytes: Uint8Array; text: string; headers: Record<string, string | string[] | undefined>; status: number };
}

async function requestOnce(url: string, o: HttpRequestOptions, deadline: number): Promise<Once> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ProfkitError(ErrorCodes.USAGE, `not a URL: ${url}`, { url, rule: 'URL must be http(s)://host[:port][/path]' });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new ProfkitError(ErrorCodes.USAGE, `unsupported URL scheme ${u.protocol} in ${url}`, { url, rule: 'URL scheme must be http or https' });
  }
  const mod = u.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const body = o.body === undefined ? undefined : typeof o.body === 'string' ? Buffer.from(o.body, 'utf8') : o.body;
  const headers: Record<string, string> = { 'user-agent': 'profkit', ...(o.headers ?? {}) };
  if (body) headers['content-length'] = String(body.length);
  return new Promise<Once>((resolve, reject) => {
    let settled = false;
    // Declared before anything can call `finish` (a timer, an abort, a synchronous throw of
    // `request`), so that finishing early never touches an uninitialized request.
    let req: import('node:http').ClientRequest | undefined;
    const finish = (err: ProfkitError | undefined, value?: Once) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      if (err) {
        req?.destroy();
        reject(err);
      } else resolve(value!);
    };
    // A timer holds at most 2^31-1 ms (~24.8 days); a longer one would fire at once.
    const remaining = Math.min(Math.max(0, deadline - Date.now()), 0x7fff_ffff);
    const timer = setTimeout(
      () => finish(new ProfkitError(ErrorCodes.TIMEOUT, `${url}: no complete answer within ${(o.timeoutMs / 1000).toFixed(1)} s`, { url, option: 'timeout', rule: 'fetch deadline' })),
      remaining,
    );
    const onAbort = () => finish(new ProfkitError(ErrorCodes.ABORTED, `${url}: interrupted`, { url, rule: 'aborted by the caller' }));
    if (o.signal?.aborted) {
      queueMicrotask(onAbort);
    } else o.signal?.addEventListener('abort', onAbort, { once: true });
    const onResponse = (res: import('node:http').IncomingMessage) => {
      const status = res.statusCode ?? 0;
      if (isFollowedRedirect(status, res.headers.location)) {
        res.resume();
        finish(undefined, { redirect: { status, location: res.headers.location! } });
        return;
      }
      const ct = String(res.headers['content-type'] ?? '');
      const pprofError = status !== 200 && res.headers['x-go-pprof'] !== undefined && ct.includes('text/plain');
      const max = status === 200 ? o.maxBytes : pprofError ? 64 * 1024 : 0;
      const declared = Number(res.headers['content-length'] ?? NaN);
      const total = Number.isFinite(declared) ? declared : undefined;
      if (status === 200 && total !== undefined && total > max) {
        finish(new ProfkitError(ErrorCodes.LIMIT, `response of ${url} is ${total} bytes, above the limit of ${max}`, { url, option: 'maxBytes' }));
        return;
      }
      const chunks: Buffer[] = [];
      let n = 0;
      res.on('data', (c: Buffer) => {
        if (settled) return;
        n += c.length;
        if (n > max) {
          if (status === 200) finish(new ProfkitError(ErrorCodes.LIMIT, `response of ${url} exceeds the limit of ${max} bytes`, { url, offset: n, option: 'maxBytes' }));
          else finish(statusError(url, status, res.statusMessage ?? '', ''));
          return;
        }
        chunks.push(c);
        if (status === 200) o.onBytes?.(n, total);
      });
      res.on('end', () => {
        const bytes = new Uint8Array(Buffer.concat(chunks, n));
        if (status !== 200) {
          finish(statusError(url, status, res.statusMessage ?? '', pprofError ? new TextDecoder().decode(bytes).trim() : ''));
          return;
        }
        finish(undefined, { result: { bytes, text: new TextDecoder().decode(bytes), headers: res.headers, status } });
      });
      res.on('error', (e) => finish(networkError(e, url)));
      res.on('close', () => {
        if (!res.complete) finish(new ProfkitError(ErrorCodes.NETWORK, `${url}: the server closed the connection mid-answer`, { url, offset: n, rule: 'complete HTTP response' }));
      });
    };
    try {
      req = mod.request(u, { method: o.method ?? 'GET', headers, agent: false }, onResponse);
    } catch (e) {
      finish(networkError(e, url));
      return;
    }
    req.on('error', (e) => finish(networkError(e, url)));
    req.end(body);
  });
}

function statusError(url: string, status: number, statusText: string, body: string): ProfkitError {
  return new ProfkitError(ErrorCodes.NETWORK, `server response: ${status} ${statusText}${body ? ' - ' + body : ''}`, { url, status, rule: 'HTTP status must be 200' });
}

function networkError(e: unknown, url: string): ProfkitError {
  const code = (e as NodeJS.ErrnoException)?.code;
  return new ProfkitError(ErrorCodes.NETWORK, `http fetch ${url}: ${code ?? (e instanceof Error ? e.message : String(e))}`, { url, rule: 'HTTP request' }, { cause: e });
}

