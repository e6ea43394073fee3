/**
 * The `/pprof/symbol` remote symbolization protocol (gperftools servers, google/pprof's
 * `internal/symbolz`), client side:
 *
 * - endpoint: query removed; a path containing `/debug/pprof/` or ending in `/pprof/heap`,
 *   `/pprof/growth`, `/pprof/profile`, `/pprof/pmuprofile` or `/pprof/contention` gets its last
 *   element replaced by `symbol`; a path already ending in `/pprof/symbol` or `/symbolz` is used
 *   as is; any other gets `symbolz` (Google's convention);
 * - request: POST, `Content-Type: application/octet-stream`, body `0x<hex>+0x<hex>…` (lower-case
 *   hex, in the order given; sent in chunks of at most `maxAddressesPerRequest`);
 * - reply: lines `0x<hex><TAB or spaces><name>`; unknown lines (`---`, `binary=…`, `%warn`) are
 *   ignored, leading zeros do not matter. Unlike google/pprof, a final line without a trailing
 *   newline is accepted (gperftools-style servers often omit it).
 *
 * Only names come back: no files, lines or inline frames (the protocol cannot carry them).
 */

import { ErrorCodes, ProfkitError } from '@profkit/core';

const CPU_LIKE_SUFFIXES = ['/pprof/heap', '/pprof/growth', '/pprof/profile', '/pprof/pmuprofile', '/pprof/contention'];

/** The symbol endpoint for a profile source URL (see the module comment). */
export function symbolzURL(source: string): string {
  let s = source;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) s = 'http://' + s;
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw new ProfkitError(ErrorCodes.USAGE, `not a URL: ${source}`, { rule: 'remote symbolization needs an http(s) URL' });
  }
  if (u.protocol === 'https+insecure:') u = new URL('https:' + s.slice('https+insecure:'.length));
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new ProfkitError(ErrorCodes.USAGE, `unsupported URL scheme ${u.protocol} in ${source}`, { rule: 'remote symbolization needs an http(s) URL' });
  }
  u.search = '';
  u.hash = '';
  const path = u.pathname;
  if (path.endsWith('/pprof/symbol') || path.endsWith('/symbolz')) return u.toString();
  const last = path.lastIndexOf('/');
  const parent = last >= 0 ? path.slice(0, last + 1) : '/';
  if (path.includes('/debug/pprof/') || CPU_LIKE_SUFFIXES.some((x) => path.endsWith(x))) u.pathname = parent + 'symbol';
  else u.pathname = parent + 'symbolz';
  return u.toString();
}

/** Parses a symbol reply: address → name (first occurrence wins). */
export function parseSymbolReply(text: string): Map<bigint, string> {
  const out = new Map<bigint, string>();
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    const m = /^0x([0-9a-fA-F]{1,16})\s+(\S.*?)\s*$/.exec(line);
    if (!m) continue;
    const a = BigInt('0x' + m[1]!);
    if (!out.has(a)) out.set(a, m[2]!);
  }
  return out;
}

export interface RemoteOptions {
  timeoutMs?: number;
  /** Largest reply accepted, in bytes (default 64 MiB). */
  maxReplyBytes?: number;
  /** Addresses per POST (default 8192): servers such as Kudu answer 413 to huge bodies. */
  maxAddressesPerRequest?: number;
  signal?: AbortSignal;
  /** The fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

/**
 * Asks a `/pprof/symbol` endpoint for the names of `addresses` (POST). Returns the names the
 * server knew; throws `PROFKIT_E_NETWORK` (or `PROFKIT_E_TIMEOUT`) when the server cannot be used.
 */
export async function symbolizeRemoteAddresses(endpoint: string, addresses: readonly bigint[], options: RemoteOptions = {}): Promise<Map<bigint, string>> {
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxReply = options.maxReplyBytes ?? 64 << 20;
  const per = options.maxAddressesPerRequest ?? 8192;
  const result = new Map<bigint, string>();
  for (let b = 0; b < addresses.length; b += per) {
    const chunk = addresses.slice(b, b + per);
    const body = chunk.map((a) => '0x' + a.toString(16)).join('+');
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(new ProfkitError(ErrorCodes.TIMEOUT, `${endpoint} did not answer within ${timeoutMs} ms`, { url: endpoint, option: 'timeoutMs' })), timeoutMs);
    const onAbort = () => ctl.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      let res: Response;
      try {
        res = await doFetch(endpoint, { method: 'POST', body, headers: { 'Content-Type': 'application/octet-stream' }, signal: ctl.signal, redirect: 'follow' });
      } catch (e) {
        const reason = ctl.signal.reason;
        if (reason instanceof ProfkitError) throw reason;
        throw new ProfkitError(ErrorCodes.NETWORK, `symbol request to ${endpoint} failed: ${(e as Error).cause ? String((e as Error & { cause: unknown }).cause) : (e as Error).message}`, { url: endpoint, rule: 'symbol server must answer' }, { cause: e });
      }
      if (res.status !== 200) {
        const text = await readBounded(res, 4096, endpoint).catch(() => '');
        throw new ProfkitError(ErrorCodes.NETWORK, `symbol request to ${endpoint} answered HTTP ${res.status}${text.trim() ? `: ${text.trim().slice(0, 300)}` : ''}`, {
          url: endpoint,
          status: res.status,
          rule: 'symbol server must answer 200',
        });
      }
      const text = await readBounded(res, maxReply, endpoint);
      for (const [a, n] of parseSymbolReply(text)) if (!result.has(a)) result.set(a, n);
    } catch (e) {
      const reason = ctl.signal.reason;
      if (reason instanceof ProfkitError && !(e instanceof ProfkitError)) throw reason;
      throw e;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }
  return result;
}

async function readBounded(res: Response, max: number, url: string): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => undefined);
      throw new ProfkitError(ErrorCodes.LIMIT, `symbol reply from ${url} exceeds ${max} bytes`, { url, option: 'maxReplyBytes', rule: 'reply size limit' });
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
