/**
 * The client side of the pprof remote protocol: which URL to fetch (gperftools' default
 * `/pprof/profile` path, the `seconds` parameter of CPU-like pages), how long to wait
 * (google/pprof's timeouts), the program name from `/pprof/cmdline`, and a bounded download.
 */

import { ErrorCodes, ProfkitError, type PlatformAbortSignal, type Profile, type Warning } from '@profkit/core';

/** The default profiling duration of CPU-like pages (gperftools' Perl pprof: 30 s). */
export const DEFAULT_SECONDS = 30;
/** The timeout when no duration is known (google/pprof: 60 s). */
export const DEFAULT_TIMEOUT_SECONDS = 60;
/** google/pprof adds 5 s to the timeout for the HTTP client's deadline. */
export const DEADLINE_GRACE_SECONDS = 5;
/** Default bound on a fetched profile's size. */
export const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;

const CPU_LIKE = [/\/pprof\/profile$/, /\/pprof\/pmuprofile$/];

export interface FetchPlan {
  /** The URL to GET, with `seconds` applied. */
  url: string;
  /** The profiling duration in seconds (0 = none: not a CPU-like page and no `seconds`). */
  seconds: number;
  /** The timeout in seconds (pprof's rule); the request deadline is this + 5 s. */
  timeoutSeconds: number;
  /** Whether the page is CPU-like (the server profiles for `seconds` before answering). */
  cpuLike: boolean;
  /** The `cmdline` URL for the same server, or '' when the URL style has none. */
  cmdlineUrl: string;
}

/**
 * Resolves a user's URL into what to fetch:
 * - `host:port/path` without a scheme gets `http://`;
 * - an empty path (or `/`) gets gperftools' default service `/pprof/profile`;
 * - `seconds` (from `--seconds`) sets the `seconds` query parameter; without it, a URL's own
 *   `seconds=` is the duration, and CPU-like pages (`…/pprof/profile`, `…/pprof/pmuprofile`,
 *   which includes Go's `/debug/pprof/profile`) get `seconds=30`;
 * - the timeout (from `--timeout`) defaults to 1.5 × the duration when one is known, else 60 s.
 */
export function planFetch(source: string, options: { seconds?: number; timeoutSeconds?: number } = {}): FetchPlan {
  let u: URL | undefined;
  const tryParse = (s: string) => {
    try {
      return new URL(s);
    } catch {
      return undefined;
    }
  };
  u = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(source) ? tryParse(source) : tryParse('http://' + source);
  if (!u || u.host === '') throw new ProfkitError(ErrorCodes.USAGE, `not a profile URL: ${source}`, { rule: 'URL must be http(s)://host[:port][/path]', url: source });
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new ProfkitError(ErrorCodes.USAGE, `unsupported URL scheme ${u.protocol} in ${source}`, { rule: 'URL scheme must be http or https', url: source });
  }
  if (u.pathname === '' || u.pathname === '/') u.pathname = '/pprof/profile';
  const path = u.pathname;
  const cpuLike = CPU_LIKE.some((re) => re.test(path));
  let seconds = 0;
  if (options.seconds !== undefined) {
    if (!Number.isInteger(options.seconds) || options.seconds < 0) {
      throw new ProfkitError(ErrorCodes.USAGE, `--seconds must be a non-negative integer, got ${options.seconds}`, { option: 'seconds' });
    }
    seconds = options.seconds;
    if (seconds > 0) u.searchParams.set('seconds', String(seconds));
  } else {
    const s = u.searchParams.get('seconds');
    if (s !== null && /^\d{1,9}$/.test(s)) seconds = Number(s);
    else if (cpuLike) {
      seconds = DEFAULT_SECONDS;
      u.searchParams.set('seconds', String(seconds));
    }
  }
  let timeoutSeconds: number;
  if (options.timeoutSeconds !== undefined && options.timeoutSeconds > 0) timeoutSeconds = options.timeoutSeconds;
  else if (options.timeoutSeconds !== undefined && !(options.timeoutSeconds > 0)) {
    throw new ProfkitError(ErrorCodes.USAGE, `--timeout must be a positive number of seconds, got ${options.timeoutSeconds}`, { option: 'timeout' });
  } else timeoutSeconds = seconds > 0 ? seconds * 1.5 : DEFAULT_TIMEOUT_SECONDS;
  let cmdlineUrl = '';
  const m = /^(.*\/pprof)\/[^/]*$/.exec(path);
  if (m) {
    const c = new URL(u.toString());
    c.pathname = m[1] + '/cmdline';
    c.search = '';
    cmdlineUrl = c.toString();
  }
  return { url: u.toString(), seconds, timeoutSeconds, cpuLike, cmdlineUrl };
}

export interface FetchOptions {
  /** Profiling duration for CPU-like pages (sets `seconds`). */
  seconds?: number;
  /** Timeout in seconds (default: pprof's rule, see `planFetch`). */
  timeoutSeconds?: number;
  /** Largest profile accepted, in bytes (default 512 MiB). */
  maxBytes?: number;
  /** Added to the timeout for the request deadline (default 5 s, as google/pprof). */
  deadlineGraceSeconds?: number;
  /** Hosts a redirect may lead to besides the URL's own (`*`: any; default none, see core's `nextRedirect`). */
  allowRedirectHosts?: readonly string[];
  /** Ask `/pprof/cmdline` for the program name (default true). */
  cmdline?: boolean;
  /** Called every 250 ms while the server profiles (elapsed and expected seconds), and with bytes while downloading. */
  onWait?: (elapsedSeconds: number, expectedSeconds: number) => void;
  onBytes?: (received: number, total?: number) => void;
  /** Decodes the fetched bytes (e.g. `ctx.readProfileBytes` or a registry's `read`). */
  decode?: (bytes: Uint8Array, fileName: string) => Promise<{ profile: Profile; warnings: Warning[] }>;
  signal?: PlatformAbortSignal;
}

export interface FetchResult {
  bytes: Uint8Array;
  /** Present when `decode` was given. */
  profile?: Profile;
  warnings: Warning[];
  plan: FetchPlan;
  /** The program name from `cmdline` ('' when unavailable). */
  program: string;
  contentType: string;
}

/** The program name from a `cmdline` answer: the first line, cut at the first NUL. */
export function programFromCmdline(text: string): string {
  const first = text.split('\n')[0] ?? '';
  return first.split('\0')[0]!.trim();
}

/**
 * Records where a profile came from (a copy; the input is unchanged). Profiles read by this
 * adapter (legacy formats) get `remote_url` and `remote_program` in
 * `profile['.extensions']['gperftools-heap'].facts`; others (profile.proto from Go servers) get a
 * comment `profkit fetch: <url> (program <name>)`, which profile.proto keeps.
 */
export function withRemoteFacts(p: Profile, url: string, program: string): Profile {
  const ext = p['.extensions']['gperftools-heap'];
  if (ext) {
    const facts = { ...(ext.facts ?? {}), remote_url: url, remote_program: program };
    return { ...p, '.extensions': { ...p['.extensions'], 'gperftools-heap': { ...ext, facts } } };
  }
  const comment = `profkit fetch: ${url}${program ? ` (program ${program})` : ''}`;
  return { ...p, '.profile': { ...p['.profile'], comments: [...p['.profile'].comments, comment] } };
}
