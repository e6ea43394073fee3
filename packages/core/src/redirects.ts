/**
 * The redirect rules of profkit's HTTP clients (`profkit fetch`, the `/pprof/symbol` requests of
 * remote symbolization in `@profkit/gperftools-heap` and `@profkit/symbolize`), transport-free so
 * that every client applies the same ones:
 *
 * - only 301, 302, 303, 307 and 308 with a `Location` are followed (Go's `net/http` client; a 3xx
 *   without `Location` is an answer like any non-200);
 * - at most `MAX_REDIRECTS` (10, Go's default `CheckRedirect`) hops;
 * - the target must be a valid http(s) URL (relative locations resolve against the current URL);
 *   `file:`, `data:`, … and https → http downgrades are refused;
 * - the target must be on the host of the URL the user asked for (host name and port), unless the
 *   host is allowed (`allowHosts`, the CLI's `--allow-redirect-host`): a server must not be able
 *   to send profkit, silently, to another machine or to a service on the user's own network.
 *   Deliberate difference from Go and google/pprof, which follow any http(s) redirect.
 *
 * Every refusal is a `PROFKIT_E_NETWORK` error naming the URL, the location and the rule.
 */

import { ErrorCodes, ProfkitError } from './errors.js';

/** Largest number of redirects followed for one request (Go's `net/http` default). */
export const MAX_REDIRECTS = 10;

/** The statuses whose `Location` is followed (Go's `net/http` client). */
export const REDIRECT_STATUSES: readonly number[] = [301, 302, 303, 307, 308];

/** True when an answer with this status (and a non-empty `Location`) is a redirect to follow. */
export function isFollowedRedirect(status: number, location: string | undefined): boolean {
  return REDIRECT_STATUSES.includes(status) && location !== undefined && location !== '';
}

export interface RedirectPolicy {
  /**
   * Hosts a redirect may lead to besides the original one: `host` or `host:port` (compared with
   * the target's host name, or host name and port), or `*` for any host.
   */
  allowHosts?: readonly string[];
}

export interface RedirectStep {
  /** The absolute URL to request next. */
  url: string;
  /** The method to use there: 307/308 keep it (and the body); 301/302/303 turn others into GET without body (Go). */
  method: string;
  /** False when the body must be dropped. */
  keepBody: boolean;
}

/**
 * The next request of a redirect chain, or a `PROFKIT_E_NETWORK` error saying which rule the
 * redirect breaks. `original` is the URL the caller asked for (the host every hop is checked
 * against), `current` the URL that answered, `redirectsSoFar` how many redirects were already
 * followed.
 */
export function nextRedirect(
  original: string,
  current: string,
  status: number,
  location: string,
  method: string,
  redirectsSoFar: number,
  policy: RedirectPolicy = {},
): RedirectStep {
  const refuse = (why: string, rule: string) =>
    new ProfkitError(ErrorCodes.NETWORK, `${original}: redirect from ${current} to ${JSON.stringify(location)} refused: ${why}`, { url: original, location, status, rule });
  if (redirectsSoFar >= MAX_REDIRECTS) {
    throw refuse(`stopped after ${MAX_REDIRECTS} redirects`, `at most ${MAX_REDIRECTS} redirects are followed`);
  }
  let target: URL;
  try {
    target = new URL(location, current);
  } catch {
    throw refuse('not a valid URL', 'Location must be a valid URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw refuse(`the scheme ${target.protocol} is not http or https`, 'redirects may only lead to http or https URLs');
  }
  if (target.host === '') throw refuse('the URL has no host', 'Location must be a valid URL');
  const from = new URL(current);
  if (from.protocol === 'https:' && target.protocol === 'http:') {
    throw refuse('it downgrades https to http', 'redirects may not leave https');
  }
  const origin = new URL(original);
  if (target.host !== origin.host && !hostAllowed(target, policy.allowHosts ?? [])) {
    throw refuse(
      `${target.host} is another host than ${origin.host}`,
      'redirects stay on the requested host unless it is allowed (--allow-redirect-host HOST)',
    );
  }
  const keepMethod = status === 307 || status === 308 || method === 'GET' || method === 'HEAD';
  target.hash = '';
  return { url: target.toString(), method: keepMethod ? method : 'GET', keepBody: status === 307 || status === 308 };
}

function hostAllowed(target: URL, allowHosts: readonly string[]): boolean {
  return allowHosts.some((h) => {
    const want = h.trim().toLowerCase();
    return want === '*' || want === target.hostname || want === target.host;
  });
}

/**
 * Reads a user's list of allowed redirect hosts (`--allow-redirect-host a,b:8080`): entries
 * separated by commas or whitespace, empty ones dropped. Throws `PROFKIT_E_USAGE` for an entry
 * that cannot be a host (a scheme or a path).
 */
export function parseAllowedRedirectHosts(text: string, option = 'allow-redirect-host'): string[] {
  const hosts = text.split(/[\s,]+/).filter((h) => h !== '');
  for (const h of hosts) {
    if (h === '*') continue;
    let ok = false;
    try {
      const u = new URL(`http://${h}`);
      ok = !/[/?#@]/.test(h) && u.host !== '';
    } catch {
      ok = false;
    }
    if (!ok) throw new ProfkitError(ErrorCodes.USAGE, `--${option} takes host names (host or host:port, or *), got ${JSON.stringify(h)}`, { option });
  }
  return hosts;
}
