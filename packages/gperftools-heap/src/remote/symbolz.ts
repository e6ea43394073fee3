/**
 * Remote symbolization, both sides of the wire: the symbol URL a profile URL implies
 * (google/pprof `internal/symbolz`), the POST body (`0x…+0x…`), the reply grammar
 * (`0x<hex><TAB or spaces><name>` per line), `num_symbols: N` probes, filling function names into
 * a profile (`symbolizeRemote`, `applySymbolReply`) and the server-side lookup (`SymbolTable`).
 */

import { ErrorCodes, ProfkitError, ProfileIndex, type Profile } from '@profkit/core';
import { locationAddresses } from '../write.js';

const GPERFTOOLS_SUFFIXES = ['/pprof/heap', '/pprof/growth', '/pprof/profile', '/pprof/pmuprofile', '/pprof/contention'];

/**
 * The symbol service URL for a profile URL, as google/pprof derives it: the query is removed;
 * a path containing `/debug/pprof/` or ending in one of gperftools' services gets its last
 * element replaced by `symbol`, any other path becomes `/symbolz` (Google's convention).
 * Returns `''` when `source` is not an absolute URL with a host.
 */
export function symbolUrlFor(source: string): string {
  let u: URL;
  try {
    u = new URL(source);
  } catch {
    return '';
  }
  if (u.host === '' || (u.protocol !== 'http:' && u.protocol !== 'https:')) return '';
  const path = u.pathname;
  if (path.includes('/debug/pprof/') || GPERFTOOLS_SUFFIXES.some((s) => path.endsWith(s))) {
    u.pathname = cleanPath(path + '/../symbol');
  } else {
    u.pathname = '/symbolz';
  }
  u.search = '';
  u.hash = '';
  return u.toString();
}

/** Go's `path.Clean` for absolute paths: empty and `.` elements dropped, `..` removes its parent. */
function cleanPath(p: string): string {
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return '/' + out.join('/');
}

/** `0x<lowercase hex>` joined by `+`, in the order given (google/pprof: location order, not sorted). */
export function formatSymbolRequest(addresses: Iterable<bigint>): string {
  const parts: string[] = [];
  for (const a of addresses) parts.push('0x' + a.toString(16));
  return parts.join('+');
}

/** Limits of request/reply parsing (both sides of the protocol). */
export const MAX_SYMBOL_REQUEST_ADDRESSES = 1 << 20;
const MAX_HEX_DIGITS = 16;

/**
 * Parses a symbol POST body the way Kudu's handler does: split on `+`; tokens without a `0x`
 * prefix or that are not hex are ignored. Returns the tokens as given (to be echoed) with their
 * value. Surrounding whitespace (a trailing newline from `curl -d @file`) is trimmed.
 */
export function parseSymbolRequest(body: string, maxAddresses = MAX_SYMBOL_REQUEST_ADDRESSES): { token: string; address: bigint }[] {
  const out: { token: string; address: bigint }[] = [];
  const tokens = body.trim().split('+');
  if (tokens.length > maxAddresses) {
    throw new ProfkitError(ErrorCodes.LIMIT, `symbol request has ${tokens.length} addresses, above the limit of ${maxAddresses}`, {
      rule: 'symbol POST body: at most maxAddresses addresses',
      option: 'maxSymbolAddresses',
    });
  }
  for (const raw of tokens) {
    const token = raw.trim();
    if (!/^0[xX][0-9a-fA-F]+$/.test(token)) continue;
    const digits = token.slice(2).replace(/^0+/, '');
    if (digits.length > MAX_HEX_DIGITS) continue;
    out.push({ token, address: BigInt('0x' + (digits || '0')) });
  }
  return out;
}

export interface SymbolReplyEntry {
  address: bigint;
  name: string;
  /** 1-based line of the reply. */
  line: number;
}

/**
 * Parses a symbol reply: each line matching `0x<hex><whitespace><name>` (TAB as gperftools and
 * Kudu write, or spaces as Go's net/http/pprof writes) gives a name; other lines (`num_symbols:`,
 * `---`, `binary=`) are ignored. Unlike google/pprof, a final line without a newline counts too
 * (servers that omit the last newline lose no symbol); `ignoreUnterminatedLastLine` restores
 * google/pprof's behaviour. A bare `num_symbols: 1` (Kudu's GET answer) yields nothing.
 */
export function parseSymbolReply(text: string, options: { ignoreUnterminatedLastLine?: boolean } = {}): SymbolReplyEntry[] {
  const out: SymbolReplyEntry[] = [];
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  if (!options.ignoreUnterminatedLastLine && last !== '') lines.push(last);
  const re = /^\s*0[xX]([0-9a-fA-F]+)\s+(.*?)\r?$/;
  lines.forEach((l, i) => {
    const m = re.exec(l);
    if (!m) return;
    const digits = m[1]!.replace(/^0+/, '');
    if (digits.length > MAX_HEX_DIGITS) return;
    const name = m[2]!;
    if (name === '') return;
    out.push({ address: BigInt('0x' + (digits || '0')), name, line: i + 1 });
  });
  return out;
}

/** Parses a `num_symbols: N` answer (with or without the trailing newline); undefined if absent. */
export function parseNumSymbols(text: string): number | undefined {
  const m = /^\s*num_symbols:\s*(\d+)\s*$/m.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** google/pprof `Mapping.Unsymbolizable`: `[vdso]`-like names, `linux-vdso*`, `/dev/dri/*`. */
export function isUnsymbolizableMapping(filename: string): boolean {
  const base = filename.slice(filename.lastIndexOf('/') + 1);
  return base.startsWith('[') || base.startsWith('linux-vdso') || filename.startsWith('/dev/dri/');
}

/**
 * The locations remote symbolization asks about: nonzero address, no function yet, in no
 * mapping or in a symbolizable mapping without `has_functions` (unless `force`). Row indices.
 */
export function locationsToSymbolize(p: Profile, force = false): number[] {
  const loc = p.locations;
  const index = new ProfileIndex(p);
  const maps = p['.mappings'];
  const rows: number[] = [];
  for (let i = 0; i < loc.location_id.length; i++) {
    if (loc['.address'][i] === 0n || loc.function_id[i] !== 0) continue;
    const mid = loc['.mapping_id'][i]!;
    if (mid !== 0) {
      const m = index.mappings.get(mid);
      if (m >= 0) {
        if (!force && maps.has_functions[m] === 1) continue;
        if (isUnsymbolizableMapping(maps.filename[m]!)) continue;
      }
    }
    rows.push(i);
  }
  return rows;
}

/**
 * Returns a copy of `p` whose locations at the rows in `rows` get the function the reply names
 * for their address (one line, line number 0, as google/pprof does). Functions are added once
 * per name (name = system name = the reply's text). Mappings of symbolized locations are marked
 * `has_functions`. The input profile is not modified. Pure.
 */
export function applySymbolReply(p: Profile, rows: readonly number[], reply: readonly SymbolReplyEntry[]): Profile {
  const byAddress = new Map<bigint, string>();
  for (const e of reply) byAddress.set(e.address, e.name);
  const fns = p.functions;
  const nameToId = new Map<string, number>();
  for (let i = 0; i < fns.function_id.length; i++) {
    if (fns.name[i] === fns.system_name[i] && fns.filename[i] === '' && fns.start_line[i] === 0) nameToId.set(fns.name[i]!, fns.function_id[i]!);
  }
  let nextId = 1;
  for (let i = 0; i < fns.function_id.length; i++) if (fns.function_id[i]! >= nextId) nextId = fns.function_id[i]! + 1;
  const newNames: string[] = [];
  const newIds: number[] = [];
  const functionId = p.locations.function_id.slice();
  const line = p.locations.line.slice();
  const touchedMappings = new Set<number>();
  for (const r of rows) {
    const name = byAddress.get(p.locations['.address'][r]!);
    if (name === undefined) continue;
    let id = nameToId.get(name);
    if (id === undefined) {
      if (nextId > 0xffffffff) throw new ProfkitError(ErrorCodes.LIMIT, 'more than 2^32-1 functions', { rule: 'function ids are Uint32' });
      id = nextId++;
      nameToId.set(name, id);
      newNames.push(name);
      newIds.push(id);
    }
    functionId[r] = id;
    line[r] = 0;
    const mid = p.locations['.mapping_id'][r]!;
    if (mid !== 0) touchedMappings.add(mid);
  }
  const grow = <T extends Uint32Array | Float64Array>(a: T, extra: number[], make: (n: number) => T): T => {
    const out = make(a.length + extra.length);
    out.set(a);
    out.set(extra, a.length);
    return out;
  };
  const maps = p['.mappings'];
  const hasFunctions = maps.has_functions.slice();
  for (let i = 0; i < maps.mapping_id.length; i++) if (touchedMappings.has(maps.mapping_id[i]!)) hasFunctions[i] = 1;
  return {
    ...p,
    locations: { ...p.locations, function_id: functionId, line },
    functions: {
      function_id: grow(fns.function_id, newIds, (n) => new Uint32Array(n)),
      name: [...fns.name, ...newNames],
      system_name: [...fns.system_name, ...newNames],
      filename: [...fns.filename, ...newNames.map(() => '')],
      start_line: grow(fns.start_line, newNames.map(() => 0), (n) => new Float64Array(n)),
    },
    '.mappings': { ...maps, has_functions: hasFunctions },
  };
}

export interface SymbolizeRemoteOptions {
  /** Use this symbol URL instead of deriving it from the profile URL. */
  symbolUrl?: string;
  /** Also ask for locations of mappings already marked `has_functions`. */
  force?: boolean;
  /** Whole-request timeout in ms (default 60000). */
  timeoutMs?: number;
  /** Largest reply accepted, in bytes (default 64 MiB). */
  maxReplyBytes?: number;
  signal?: AbortSignal;
}

/**
 * Fills function names for the unsymbolized locations of `profile` by POSTing their addresses
 * to the symbol service of `url` (a profile URL, from which the symbol URL is derived as
 * google/pprof does, or `options.symbolUrl`). Returns a new profile; the input is unchanged.
 * Network failures and non-200 answers are `PROFKIT_E_NETWORK` errors.
 */
export async function symbolizeRemote(profile: Profile, url: string, options: SymbolizeRemoteOptions = {}): Promise<Profile> {
  const rows = locationsToSymbolize(profile, options.force);
  if (rows.length === 0) return profile;
  const target = options.symbolUrl ?? symbolUrlFor(url);
  if (target === '') {
    throw new ProfkitError(ErrorCodes.USAGE, `cannot derive a symbol URL from ${url}: not an http(s) URL with a host`, { rule: 'symbolz URL derivation', url });
  }
  const body = formatSymbolRequest(rows.map((r) => profile.locations['.address'][r]!));
  const { text } = await httpRequest(target, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/octet-stream' },
    timeoutMs: options.timeoutMs ?? 60_000,
    maxBytes: options.maxReplyBytes ?? 64 * 1024 * 1024,
    signal: options.signal,
  });
  return applySymbolReply(profile, rows, parseSymbolReply(text));
}

export interface HttpRequestOptions {
  method?: string;
  body?: string | Uint8Array;
  headers?: Record<string, string>;
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
  /** Called with the bytes received so far. */
  onBytes?: (received: number, total?: number) => void;
}

/**
 * One HTTP request (node's `http`/`https`, no connection reuse, so nothing keeps the process
 * alive afterwards) with a deadline for the whole exchange and a bounded body. Non-200 →
 * `PROFKIT_E_NETWORK` (with the body when the server marks it as a pprof error: `X-Go-Pprof` +
 * text/plain, as google/pprof does). Redirects (up to 5) are followed; a POST is re-sent as is.
 */
export async function httpRequest(url: string, o: HttpRequestOptions): Promise<{ bytes: Uint8Array; text: string; headers: Record<string, string | string[] | undefined>; status: number }> {
  const deadline = Date.now() + o.timeoutMs;
  let target = url;
  for (let hop = 0; ; hop++) {
    const r = await requestOnce(target, o, deadline);
    if (r.redirect && hop < 5) {
      target = new URL(r.redirect, target).toString();
      continue;
    }
    return r.result!;
  }
}

interface Once {
  redirect?: string;
  result?: { bytes: Uint8Array; text: string; headers: Record<string, string | string[] | undefined>; status: number };
}

async function requestOnce(url: string, o: HttpRequestOptions, deadline: number): Promise<Once> {
  const u = new URL(url);
  const mod = u.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const body = o.body === undefined ? undefined : typeof o.body === 'string' ? Buffer.from(o.body, 'utf8') : o.body;
  const headers: Record<string, string> = { 'user-agent': 'profkit', ...(o.headers ?? {}) };
  if (body) headers['content-length'] = String(body.length);
  return new Promise<Once>((resolve, reject) => {
    let settled = false;
    const finish = (err: ProfkitError | undefined, value?: Once) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(value!);
    };
    const remaining = Math.max(0, deadline - Date.now());
    const timer = setTimeout(
      () => finish(new ProfkitError(ErrorCodes.TIMEOUT, `${url}: no complete answer within ${(o.timeoutMs / 1000).toFixed(1)} s`, { url, option: 'timeout', rule: 'fetch deadline' })),
      remaining,
    );
    const onAbort = () => finish(new ProfkitError('PROFKIT_E_ABORTED', `${url}: interrupted`, { url, rule: 'aborted by the caller' }));
    if (o.signal?.aborted) {
      queueMicrotask(onAbort);
    } else o.signal?.addEventListener('abort', onAbort, { once: true });
    const req = mod.request(u, { method: o.method ?? 'GET', headers, agent: false }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        finish(undefined, { redirect: res.headers.location });
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
    });
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

/**
 * Server side: the names a profile can give for addresses. Each location answers for its address
 * (as `locationAddresses` numbers it, so locations without an address answer for the synthetic
 * address the writers used) with the name of its innermost function; a query for address+1
 * (a caller's return address not yet adjusted, as old clients send) is answered too when no
 * location has that exact address.
 */
export class SymbolTable {
  private readonly names = new Map<bigint, string>();

  add(p: Profile): this {
    const index = new ProfileIndex(p);
    const { addresses } = locationAddresses(p);
    const fid = p.locations.function_id;
    for (let i = 0; i < addresses.length; i++) {
      if (fid[i] === 0) continue;
      const row = index.functions.get(fid[i]!);
      if (row < 0) continue;
      const name = p.functions.name[row]!;
      if (!this.names.has(addresses[i]!)) this.names.set(addresses[i]!, name);
    }
    return this;
  }

  get size(): number {
    return this.names.size;
  }

  lookup(address: bigint): string | undefined {
    return this.names.get(address) ?? (address > 0n ? this.names.get(address - 1n) : undefined);
  }

  /** The reply to a symbol POST: `<token as given>\t<name>\n` per resolved address. */
  reply(body: string): string {
    let out = '';
    for (const { token, address } of parseSymbolRequest(body)) {
      const name = this.lookup(address);
      if (name !== undefined) out += `${token}\t${name}\n`;
    }
    return out;
  }
}
