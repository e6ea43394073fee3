/**
 * Fetching a profile over HTTP (`fetchProfile`), on Node; the plan (URL, timeouts) and the facts
 * added to the profile are platform-neutral, in `client.ts`. Part of `@profkit/gperftools-heap/node`.
 */

import { ErrorCodes, ProfkitError, type Warning } from '@profkit/core';
import { DEADLINE_GRACE_SECONDS, DEFAULT_MAX_BYTES, planFetch, programFromCmdline, withRemoteFacts, type FetchOptions, type FetchResult } from './client.js';
import { httpRequest } from './http.js';

/**
 * Fetches a profile from a pprof-protocol server (gperftools-style `/pprof/*` or Go's
 * `/debug/pprof/*`), bounded in time and size. With `decode`, also decodes it and records the
 * source URL and program name (see `withRemoteFacts`).
 */
export async function fetchProfile(url: string, options: FetchOptions = {}): Promise<FetchResult> {
  const plan = planFetch(url, options);
  const warnings: Warning[] = [];
  const started = Date.now();
  let ticker: ReturnType<typeof setInterval> | undefined;
  if (plan.seconds > 0 && options.onWait) {
    const cb = options.onWait;
    cb(0, plan.seconds);
    ticker = setInterval(() => cb(Math.min((Date.now() - started) / 1000, plan.seconds), plan.seconds), 250);
  }
  let got: Awaited<ReturnType<typeof httpRequest>>;
  try {
    got = await httpRequest(plan.url, {
      timeoutMs: (plan.timeoutSeconds + (options.deadlineGraceSeconds ?? DEADLINE_GRACE_SECONDS)) * 1000,
      maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES,
      allowRedirectHosts: options.allowRedirectHosts,
      signal: options.signal,
      onBytes: (n, total) => {
        if (ticker) {
          clearInterval(ticker);
          ticker = undefined;
        }
        options.onBytes?.(n, total);
      },
    });
  } finally {
    if (ticker) clearInterval(ticker);
  }
  if (got.bytes.length === 0) throw new ProfkitError(ErrorCodes.EMPTY_INPUT, `${plan.url} answered with an empty body`, { url: plan.url, rule: 'a profile is not empty' });
  let program = '';
  if (plan.cmdlineUrl && options.cmdline !== false) {
    try {
      const c = await httpRequest(plan.cmdlineUrl, { timeoutMs: 10_000, maxBytes: 1 << 20, allowRedirectHosts: options.allowRedirectHosts, signal: options.signal });
      program = programFromCmdline(c.text);
    } catch (e) {
      warnings.push({
        code: 'PROFKIT_W_REMOTE_NO_CMDLINE',
        message: `could not get the program name from ${plan.cmdlineUrl}: ${e instanceof ProfkitError ? e.message : String(e)}`,
      });
    }
  }
  const result: FetchResult = { bytes: got.bytes, warnings, plan, program, contentType: String(got.headers['content-type'] ?? '') };
  if (options.decode) {
    const r = await options.decode(got.bytes, plan.url);
    result.profile = withRemoteFacts(r.profile, plan.url, program);
    warnings.push(...r.warnings);
  }
  return result;
}

