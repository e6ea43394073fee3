/**
 * The symbol-server protocol (`/pprof/symbol` of gperftools-style servers, `/debug/pprof/symbol`
 * of Go's net/http/pprof, Google's `/symbolz`), format-neutral and transport-free: both the
 * client side (which URL, which body, how to read the answer, how to put names into a profile)
 * and the server side (reading a request, writing an answer). Sending the bytes is left to the
 * caller (`@profkit/gperftools-heap` uses node:http, `@profkit/symbolize` uses fetch).
 *
 * - symbol URL: google/pprof `internal/symbolz` rules (`symbolUrlFor`), plus the lenient
 *   user-facing form (`resolveSymbolUrl`);
 * - request: POST, `application/octet-stream`, `0x<lowercase hex>` joined by `+`, in location
 *   order, neither sorted nor deduplicated (`formatSymbolRequest`); servers read it like Kudu
 *   (`parseSymbolRequest`);
 * - reply: lines `0x<hex><TAB or spaces><name>` (`parseSymbolReply`); other lines (`num_symbols:`,
 *   `---`, `binary=`) are ignored. Deliberate difference from google/pprof: a final line without
 *   a trailing newline is read too (servers that omit it lose no symbol); the option
 *   `ignoreUnterminatedLastLine` restores google/pprof's behaviour;
 * - applying a reply (`applySymbolReply`): one function per distinct name (name = system name),
 *   each named location gets it (line 0), its mapping is marked `has_functions`.
 *
 * The protocol carries names only: no files, lines or inline frames.
 */

import { ErrorCodes, ProfkitError } from './errors.js';
import type { Profile } from './model.js';
import { ProfileIndex } from './views.js';

/** The gperftools service suffixes google/pprof maps to `…/symbol` (its `hasGperftoolsSuffix`). */
export const GPERFTOOLS_SYMBOL_SUFFIXES: readonly string[] = ['/pprof/heap', '/pprof/growth', '/pprof/profile', '/pprof/pmuprofile', '/pprof/contention'];

/** Content type of a symbol POST (google/pprof, gperftools' Perl pprof). */
export const SYMBOL_REQUEST_CONTENT_TYPE = 'application/octet-stream';

/** Largest number of addresses a symbol request may carry (both sides). */
export const MAX_SYMBOL_REQUEST_ADDRESSES = 1 << 20;
const MAX_HEX_DIGITS = 16;

/**
 * The symbol service URL for a profile URL, exactly as google/pprof derives it: the query is
 * removed; a path containing `/debug/pprof/` or ending in one of gperftools' services gets its
 * last element replaced by `symbol` (Go's `path.Clean(path + "/../symbol")`); any other path
 * becomes `/symbolz` at the host root (Google's convention). Returns `''` when `source` is not
 * an absolute http(s) URL with a host.
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
  if (path.includes('/debug/pprof/') || GPERFTOOLS_SYMBOL_SUFFIXES.some((s) => path.endsWith(s))) {
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

/** True when a URL path already names a symbol service (`…/pprof/symbol`, `…/symbolz`). */
export function isSymbolServicePath(path: string): boolean {
  return path.endsWith('/pprof/symbol') || path.endsWith('/symbolz');
}

/**
 * The symbol URL for what a user typed (`--remote`, `--symbol-server`): like `symbolUrlFor`, but
 * `host:port/path` without a scheme gets `http://` (as google/pprof treats sources),
 * `https+insecure://` is read as `https://`, and a URL that already names a symbol service
 * (`…/pprof/symbol`, `…/symbolz`) is used as is (without its query). Throws `PROFKIT_E_USAGE`
 * when no symbol URL can be derived.
 */
export function resolveSymbolUrl(source: string): string {
  let s = source.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) s = 'http://' + s;
  if (/^https\+insecure:\/\//i.test(s)) s = 'https://' + s.slice('https+insecure://'.length);
  let u: URL | undefined;
  try {
    u = new URL(s);
  } catch {
    u = undefined;
  }
  if (!u || u.host === '') {
    throw new ProfkitError(ErrorCodes.USAGE, `not a URL: ${source}`, { url: source, rule: 'a symbol server is an http(s)://host[:port][/path] URL' });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new ProfkitError(ErrorCodes.USAGE, `unsupported URL scheme ${u.protocol} in ${source}`, { url: source, rule: 'a symbol server is an http(s)://host[:port][/path] URL' });
  }
  if (isSymbolServicePath(u.pathname)) {
    u.search = '';
    u.hash = '';
    return u.toString();
  }
  return symbolUrlFor(u.toString());
}

/** `0x<lowercase hex>` joined by `+`, in the order given (google/pprof: location order, not sorted). */
export function formatSymbolRequest(addresses: Iterable<bigint>): string {
  const parts: string[] = [];
  for (const a of addresses) {
    if (a < 0n || a > 0xffffffffffffffffn) {
      throw new ProfkitError(ErrorCodes.RANGE, `address ${a} is not an unsigned 64-bit value`, { rule: 'symbol request addresses are uint64' });
    }
    parts.push('0x' + a.toString(16));
  }
  return parts.join('+');
}

/**
 * Splits addresses into request bodies of at most `maxPerRequest` addresses each (servers such
 * as Kudu answer 413 to huge bodies). An empty list gives no body.
 */
export function chunkSymbolRequests(addresses: readonly bigint[], maxPerRequest: number): string[] {
  if (!Number.isSafeInteger(maxPerRequest) || maxPerRequest < 1) {
    throw new ProfkitError(ErrorCodes.USAGE, `addresses per symbol request must be a positive integer, got ${maxPerRequest}`, { option: 'maxAddressesPerRequest' });
  }
  const out: string[] = [];
  for (let i = 0; i < addresses.length; i += maxPerRequest) out.push(formatSymbolRequest(addresses.slice(i, i + maxPerRequest)));
  return out;
}

/**
 * Parses a symbol POST body the way Kudu's handler does: split on `+`; tokens without a `0x`
 * prefix, not hex, or wider than 64 bits are ignored. Returns the tokens as given (to be echoed)
 * with their value. Surrounding whitespace (a trailing newline from `curl -d @file`) is trimmed.
 * More than `maxAddresses` tokens → `PROFKIT_E_LIMIT`.
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

/** One name of a symbol reply. */
export interface SymbolReplyEntry {
  address: bigint;
  name: string;
  /** 1-based line of the reply. */
  line: number;
}

export interface ParseSymbolReplyOptions {
  /** Drop a final line without a newline, as google/pprof does (default false: it is read). */
  ignoreUnterminatedLastLine?: boolean;
}

/**
 * Parses a symbol reply: each line `0x<hex><whitespace><name>` (TAB as gperftools and Kudu
 * write, spaces as Go's net/http/pprof writes; CRLF accepted, leading zeros ignored, trailing
 * whitespace of the name dropped) gives a name; other lines (`num_symbols:`, `---`, `binary=`,
 * `%warn`) and addresses wider than 64 bits are ignored. A bare `num_symbols: 1` (Kudu's GET
 * answer, without newline) yields nothing. Entries come in reply order.
 */
export function parseSymbolReply(text: string, options: ParseSymbolReplyOptions = {}): SymbolReplyEntry[] {
  const out: SymbolReplyEntry[] = [];
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  if (!options.ignoreUnterminatedLastLine && last !== '') lines.push(last);
  const re = /^\s*0[xX]([0-9a-fA-F]+)\s+(\S(?:.*\S)?)\s*$/;
  lines.forEach((l, i) => {
    const m = re.exec(l);
    if (!m) return;
    const digits = m[1]!.replace(/^0+/, '');
    if (digits.length > MAX_HEX_DIGITS) return;
    out.push({ address: BigInt('0x' + (digits || '0')), name: m[2]!, line: i + 1 });
  });
  return out;
}

/**
 * Address → name of a reply. When an address is named twice the later line wins, as in
 * google/pprof (its `lines[addr] = …` in reply order).
 */
export function symbolReplyMap(entries: readonly SymbolReplyEntry[]): Map<bigint, string> {
  const m = new Map<bigint, string>();
  for (const e of entries) m.set(e.address, e.name);
  return m;
}

/** Parses a `num_symbols: N` answer (with or without the trailing newline); undefined if absent. */
export function parseNumSymbols(text: string): number | undefined {
  const m = /^\s*num_symbols:\s*(\d+)\s*$/m.exec(text);
  return m ? Number(m[1]) : undefined;
}

/**
 * Server side: the reply to a symbol POST, `<token as given>\t<name>\n` per address `lookup`
 * names (unknown addresses are omitted, as Kudu does).
 */
export function formatSymbolReply(body: string, lookup: (address: bigint) => string | undefined, maxAddresses = MAX_SYMBOL_REQUEST_ADDRESSES): string {
  let out = '';
  for (const { token, address } of parseSymbolRequest(body, maxAddresses)) {
    const name = lookup(address);
    if (name !== undefined && !/[\r\n]/.test(name)) out += `${token}\t${name}\n`;
  }
  return out;
}

/** google/pprof `Mapping.Unsymbolizable`: `[vdso]`-like names, `linux-vdso*`, `/dev/dri/*`. */
export function isUnsymbolizableMapping(filename: string): boolean {
  const base = filename.slice(filename.lastIndexOf('/') + 1);
  return base.startsWith('[') || base.startsWith('linux-vdso') || filename.startsWith('/dev/dri/');
}

export interface LocationsToSymbolizeOptions {
  /** Also ask for locations of mappings already marked `has_functions` (google/pprof `force`). */
  force?: boolean;
  /** Only locations of these mapping ids (0 = locations without a mapping). */
  mappingIds?: Iterable<number>;
}

/**
 * The locations a symbol server is asked about (row indices, in location order): nonzero
 * address, no line yet (no function and no inline lines), and either no mapping or a
 * symbolizable mapping that is not marked `has_functions` (unless `force`). `options` may be a
 * boolean `force` (the older signature).
 */
export function locationsToSymbolize(p: Profile, options: LocationsToSymbolizeOptions | boolean = {}): number[] {
  const o: LocationsToSymbolizeOptions = typeof options === 'boolean' ? { force: options } : options;
  const only = o.mappingIds === undefined ? undefined : new Set(o.mappingIds);
  const loc = p.locations;
  const index = new ProfileIndex(p);
  const maps = p['.mappings'];
  const inl = loc['.inline_offsets'];
  const rows: number[] = [];
  for (let i = 0; i < loc.location_id.length; i++) {
    if (loc['.address'][i] === 0n || loc.function_id[i] !== 0) continue;
    if (inl && inl.length > i + 1 && inl[i + 1]! > inl[i]!) continue;
    const mid = loc['.mapping_id'][i]!;
    if (only && !only.has(mid)) continue;
    if (mid !== 0) {
      const m = index.mappings.get(mid);
      if (m >= 0) {
        if (!o.force && maps.has_functions[m] === 1) continue;
        if (isUnsymbolizableMapping(maps.filename[m]!)) continue;
      }
    }
    rows.push(i);
  }
  return rows;
}

export interface SymbolizeReplyResult {
  profile: Profile;
  /** Locations (of `rows`) that got a name. */
  named: number;
}

/**
 * Returns a copy of `p` whose locations at `rows` get the function the reply names for their
 * address (one line, line number 0, as google/pprof does). A function is added once per name
 * (name = system name = the reply's text; an existing function with just that name is reused).
 * Mappings of named locations are marked `has_functions`. The input profile is not modified.
 */
export function applySymbolReply(p: Profile, rows: readonly number[], reply: readonly SymbolReplyEntry[] | ReadonlyMap<bigint, string>): Profile {
  return applySymbolReplyCounted(p, rows, reply).profile;
}

/** `applySymbolReply`, also saying how many locations were named. */
export function applySymbolReplyCounted(p: Profile, rows: readonly number[], reply: readonly SymbolReplyEntry[] | ReadonlyMap<bigint, string>): SymbolizeReplyResult {
  const byAddress = reply instanceof Map ? (reply as ReadonlyMap<bigint, string>) : symbolReplyMap(reply as readonly SymbolReplyEntry[]);
  const fns = p.functions;
  const nameToId = new Map<string, number>();
  for (let i = 0; i < fns.function_id.length; i++) {
    if (fns.name[i] === fns.system_name[i] && fns.filename[i] === '' && fns.start_line[i] === 0 && !nameToId.has(fns.name[i]!)) nameToId.set(fns.name[i]!, fns.function_id[i]!);
  }
  let nextId = 1;
  for (let i = 0; i < fns.function_id.length; i++) if (fns.function_id[i]! >= nextId) nextId = fns.function_id[i]! + 1;
  const newNames: string[] = [];
  const newIds: number[] = [];
  const functionId = p.locations.function_id.slice();
  const line = p.locations.line.slice();
  const touchedMappings = new Set<number>();
  let named = 0;
  for (const r of rows) {
    if (!(r >= 0 && r < functionId.length)) {
      throw new ProfkitError(ErrorCodes.RANGE, `location row ${r} is outside the ${functionId.length} locations`, { table: 'locations', row: r, rule: 'rows index the locations table' });
    }
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
    named++;
    const mid = p.locations['.mapping_id'][r]!;
    if (mid !== 0) touchedMappings.add(mid);
  }
  if (named === 0) return { profile: p, named };
  const maps = p['.mappings'];
  const hasFunctions = maps.has_functions.slice();
  for (let i = 0; i < maps.mapping_id.length; i++) if (touchedMappings.has(maps.mapping_id[i]!)) hasFunctions[i] = 1;
  const fid = new Uint32Array(fns.function_id.length + newIds.length);
  fid.set(fns.function_id);
  fid.set(newIds, fns.function_id.length);
  const start = new Float64Array(fns.start_line.length + newIds.length);
  start.set(fns.start_line);
  return {
    named,
    profile: {
      ...p,
      locations: { ...p.locations, function_id: functionId, line },
      functions: {
        function_id: fid,
        name: [...fns.name, ...newNames],
        system_name: [...fns.system_name, ...newNames],
        filename: [...fns.filename, ...newNames.map(() => '')],
        start_line: start,
      },
      '.mappings': { ...maps, has_functions: hasFunctions },
    },
  };
}

/** Sends one symbol request body to a symbol URL and resolves to the reply text. */
export type SymbolPost = (symbolUrl: string, body: string) => Promise<string>;

export interface SymbolizeWithServerOptions extends LocationsToSymbolizeOptions {
  /** Addresses per request (default: all in one request). */
  maxAddressesPerRequest?: number;
  parse?: ParseSymbolReplyOptions;
}

/**
 * The whole client exchange over a caller-supplied transport: picks the locations to ask about,
 * POSTs their addresses (in chunks when asked) with `post`, and applies the replies. Sends
 * nothing, and returns `p` itself, when no location needs a name.
 */
export async function symbolizeWithServer(p: Profile, symbolUrl: string, post: SymbolPost, options: SymbolizeWithServerOptions = {}): Promise<SymbolizeReplyResult & { asked: number }> {
  const rows = locationsToSymbolize(p, options);
  if (rows.length === 0) return { profile: p, named: 0, asked: 0 };
  const addresses = rows.map((r) => p.locations['.address'][r]!);
  const bodies = options.maxAddressesPerRequest === undefined ? [formatSymbolRequest(addresses)] : chunkSymbolRequests(addresses, options.maxAddressesPerRequest);
  const entries: SymbolReplyEntry[] = [];
  for (const body of bodies) entries.push(...parseSymbolReply(await post(symbolUrl, body), options.parse));
  return { ...applySymbolReplyCounted(p, rows, entries), asked: rows.length };
}
