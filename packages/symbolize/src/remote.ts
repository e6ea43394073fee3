/**
 * The `/pprof/symbol` remote protocol, client side, for `symbolize({ remote })`. The protocol
 * itself (symbol URL derivation by google/pprof's `internal/symbolz` rules, the `0x…+0x…` POST
 * body, the reply grammar: `0x<hex><TAB or spaces><name>` lines, unknown lines ignored, a final
 * line without newline accepted) is `@profkit/core`'s `symbolz.ts`; this file adds the transport
 * (fetch, with chunked requests: at most `maxAddressesPerRequest` addresses per POST, a
 * deadline, a bounded reply, and redirects followed by core's rules, `nextRedirect`: at most 10,
 * http(s) only, on the endpoint's host unless `allowRedirectHosts` allows another).
 *
 * Only names come back: no files, lines or inline frames (the protocol cannot carry them).
 */

import {
  ErrorCodes,
  ProfkitError,
  SYMBOL_REQUEST_CONTENT_TYPE,
  chunkSymbolRequests,
  isFollowedRedirect,
  nextRedirect,
  parseSymbolReply as parseSymbolReplyEntries,
  resolveSymbolUrl,
  symbolReplyMap,
} from '@profkit/core/node';
import { timerDelayMs } from './process.js';

/**
 * The symbol endpoint for what the user gave (`--remote`): core's `resolveSymbolUrl`
 * (google/pprof's rules; `host:port/path` gets `http://`; a `…/pprof/symbol` or `…/symbolz` URL
 * is used as is). Throws `PROFKIT_E_USAGE` for what is not an http(s) URL.
 */
export function symbolzURL(source: string): string {
  return resolveSymbolUrl(source);
}

/** Parses a symbol reply into address → name (core's parser; a later line for the same address wins, as in google/pprof). */
export function parseSymbolReply(text: string): Map<bigint, string> {
  return symbolReplyMap(parseSymbolReplyEntries(text));
}

export interface RemoteOptions {
  timeoutMs?: number;
  /** Largest reply accepted, in bytes (default 64 MiB). */
  maxReplyBytes?: number;
  /** Addresses per POST (default 8192): servers such as Kudu answer 413 to huge bodies. */
  maxAddressesPerRequest?: number;
  /** Hosts a redirect of the endpoint may lead to besides its own (`*`: any; default none). */
  allowRedirectHosts?: readonly string[];
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
  // Only the names asked for are kept: a server answering other addresses cannot grow the result.
  const asked = new Set(addresses);
  for (const body of chunkSymbolRequests(addresses, per)) {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(new ProfkitError(ErrorCodes.TIMEOUT, `${endpoint} did not answer within ${timeoutMs} ms`, { url: endpoint, option: 'timeoutMs' })), timerDelayMs(timeoutMs));
    const onAbort = () => ctl.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await postFollowingRedirects(doFetch, endpoint, body, ctl.signal, options.allowRedirectHosts);
      if (res.status !== 200) {
        const text = await readBounded(res, 4096, endpoint).catch(() => '');
        throw new ProfkitError(ErrorCodes.NETWORK, `symbol request to ${endpoint} answered HTTP ${res.status}${text.trim() ? `: ${text.trim().slice(0, 300)}` : ''}`, {
          url: endpoint,
          status: res.status,
          rule: 'symbol server must answer 200',
        });
      }
      const text = await readBounded(res, maxReply, endpoint);
      for (const [a, n] of parseSymbolReply(text)) if (asked.has(a)) result.set(a, n);
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

/** The POST, with redirects followed one by one under core's rules (fetch's own following would allow any host and 20 hops). */
async function postFollowingRedirects(doFetch: typeof fetch, endpoint: string, body: string, signal: AbortSignal, allowRedirectHosts: readonly string[] | undefined): Promise<Response> {
  let url = endpoint;
  let method = 'POST';
  let sent: string | undefined = body;
  for (let redirects = 0; ; redirects++) {
    let res: Response;
    try {
      const headers: Record<string, string> = sent === undefined ? {} : { 'Content-Type': SYMBOL_REQUEST_CONTENT_TYPE };
      res = await doFetch(url, { method, body: sent, headers, signal, redirect: 'manual' });
    } catch (e) {
      const reason = signal.reason;
      if (reason instanceof ProfkitError) throw reason;
      throw new ProfkitError(ErrorCodes.NETWORK, `symbol request to ${url} failed: ${(e as Error).cause ? String((e as Error & { cause: unknown }).cause) : (e as Error).message}`, { url, rule: 'symbol server must answer' }, { cause: e });
    }
    const location = res.headers.get('location') ?? undefined;
    if (!isFollowedRedirect(res.status, location)) return res;
    await res.body?.cancel().catch(() => undefined);
    const step = nextRedirect(endpoint, url, res.status, location!, method, redirects, { allowHosts: allowRedirectHosts });
    url = step.url;
    method = step.method;
    if (!step.keepBody) sent = undefined;
  }
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
