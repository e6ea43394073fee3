import { seededRandom, thrownBy } from '@profkit/test-utils';
import { describe, expect, it } from 'vitest';
import { MAX_REDIRECTS, isFollowedRedirect, nextRedirect, parseAllowedRedirectHosts } from '../src/node/index.js';

const ORIGIN = 'http://127.0.0.1:8080/pprof/heap';

/** The error `nextRedirect` throws, for assertions on its code and detail. */
const refusal = (f: () => unknown) => thrownBy<{ code: string; message: string; detail: Record<string, unknown> }>(f);

describe('nextRedirect: the redirect rules of profkit\'s HTTP clients', () => {
  it('follows only 301, 302, 303, 307 and 308 with a Location (Go\'s client)', () => {
    expect([301, 302, 303, 307, 308].map((s) => isFollowedRedirect(s, '/x'))).toEqual([true, true, true, true, true]);
    expect([300, 304, 305, 306, 200].map((s) => isFollowedRedirect(s, '/x'))).toEqual([false, false, false, false, false]);
    expect(isFollowedRedirect(302, undefined)).toBe(false);
    expect(isFollowedRedirect(302, '')).toBe(false);
  });

  it('resolves a relative Location against the current URL and keeps the host', () => {
    expect(nextRedirect(ORIGIN, ORIGIN, 302, '../other/heap#frag', 'GET', 0).url).toBe('http://127.0.0.1:8080/other/heap');
    expect(nextRedirect(ORIGIN, ORIGIN, 301, '//127.0.0.1:8080/a', 'GET', 0).url).toBe('http://127.0.0.1:8080/a');
  });

  it(`stops after ${MAX_REDIRECTS} redirects (Go: "stopped after 10 redirects")`, () => {
    expect(MAX_REDIRECTS).toBe(10);
    expect(() => nextRedirect(ORIGIN, ORIGIN, 302, '/loop', 'GET', MAX_REDIRECTS - 1)).not.toThrow();
    const e = refusal(() => nextRedirect(ORIGIN, ORIGIN, 302, '/loop', 'GET', MAX_REDIRECTS));
    expect(e.code).toBe('PROFKIT_E_NETWORK');
    expect(e.message).toContain('stopped after 10 redirects');
    expect(e.detail).toMatchObject({ url: ORIGIN, location: '/loop', rule: 'at most 10 redirects are followed' });
  });

  it('refuses a Location that is not a valid URL', () => {
    const e = refusal(() => nextRedirect(ORIGIN, ORIGIN, 302, 'http://', 'GET', 0));
    expect(e.code).toBe('PROFKIT_E_NETWORK');
    expect(e.detail).toMatchObject({ url: ORIGIN, location: 'http://', rule: 'Location must be a valid URL' });
  });

  it('refuses schemes other than http and https, and https → http', () => {
    for (const loc of ['file:///etc/passwd', 'data:text/plain,x', 'ftp://127.0.0.1:8080/x', 'javascript:alert(1)']) {
      const e = refusal(() => nextRedirect(ORIGIN, ORIGIN, 302, loc, 'GET', 0));
      expect(e.code, loc).toBe('PROFKIT_E_NETWORK');
      expect(e.detail.rule, loc).toBe('redirects may only lead to http or https URLs');
    }
    const down = refusal(() => nextRedirect('https://h/pprof/heap', 'https://h/pprof/heap', 302, 'http://h/pprof/heap', 'GET', 0));
    expect(down.detail.rule).toBe('redirects may not leave https');
    expect(nextRedirect('http://h/pprof/heap', 'http://h/pprof/heap', 302, 'https://h/pprof/heap', 'GET', 0).url).toBe('https://h/pprof/heap');
  });

  it('refuses another host (name or port) unless allowed; checks every hop against the original host', () => {
    for (const loc of ['http://localhost:8080/x', 'http://127.0.0.1:9090/x', 'http://169.254.169.254/latest/meta-data/']) {
      const e = refusal(() => nextRedirect(ORIGIN, ORIGIN, 302, loc, 'GET', 0));
      expect(e.code, loc).toBe('PROFKIT_E_NETWORK');
      expect(e.message, loc).toContain('is another host than 127.0.0.1:8080');
      expect(String(e.detail.rule)).toContain('--allow-redirect-host');
    }
    expect(nextRedirect(ORIGIN, ORIGIN, 302, 'http://localhost:8080/x', 'GET', 0, { allowHosts: ['localhost'] }).url).toBe('http://localhost:8080/x');
    expect(nextRedirect(ORIGIN, ORIGIN, 302, 'http://LocalHost:8080/x', 'GET', 0, { allowHosts: ['localhost:8080'] }).url).toBe('http://localhost:8080/x');
    expect(() => nextRedirect(ORIGIN, ORIGIN, 302, 'http://localhost:9/x', 'GET', 0, { allowHosts: ['localhost:8080'] })).toThrow(/another host/);
    expect(nextRedirect(ORIGIN, ORIGIN, 302, 'http://elsewhere/x', 'GET', 0, { allowHosts: ['*'] }).url).toBe('http://elsewhere/x');
    // a second hop from an allowed host to a third one is checked against the original
    expect(() => nextRedirect(ORIGIN, 'http://localhost:8080/x', 302, 'http://third/x', 'GET', 1, { allowHosts: ['localhost'] })).toThrow(/third is another host than 127\.0\.0\.1:8080/);
  });

  it('keeps a POST and its body on 307/308; 301/302/303 turn it into a GET without body (Go)', () => {
    expect(nextRedirect(ORIGIN, ORIGIN, 307, '/s', 'POST', 0)).toMatchObject({ method: 'POST', keepBody: true });
    expect(nextRedirect(ORIGIN, ORIGIN, 308, '/s', 'POST', 0)).toMatchObject({ method: 'POST', keepBody: true });
    for (const s of [301, 302, 303]) expect(nextRedirect(ORIGIN, ORIGIN, s, '/s', 'POST', 0)).toMatchObject({ method: 'GET', keepBody: false });
    expect(nextRedirect(ORIGIN, ORIGIN, 302, '/s', 'HEAD', 0).method).toBe('HEAD');
  });
});

describe('nextRedirect on hostile Location values', () => {
  it('either stays on the original host over http(s) or throws PROFKIT_E_NETWORK, for 20,000 generated locations', () => {
    const rnd = seededRandom(15);
    const pieces = ['http:', 'https:', 'file:', 'data:', 'ftp:', '//', '/', '\\', '@', ':', '127.0.0.1', 'localhost', '[::1]', '%2f', '%00', '..', '?', '#', ' ', '\t', '\n', 'a', '8080', 'xn--', '0x7f.1', '\u0000', '\u00e9'];
    let followed = 0;
    for (let i = 0; i < 20_000; i++) {
      let loc = '';
      const n = 1 + Math.floor(rnd() * 8);
      for (let k = 0; k < n; k++) loc += pieces[Math.floor(rnd() * pieces.length)];
      let step: { url: string } | undefined;
      try {
        step = nextRedirect(ORIGIN, ORIGIN, 302, loc, 'GET', 0);
      } catch (e) {
        expect((e as { code?: string }).code, JSON.stringify(loc)).toBe('PROFKIT_E_NETWORK');
        continue;
      }
      const u = new URL(step.url);
      expect(u.protocol, JSON.stringify(loc)).toBe('http:');
      expect(u.host, JSON.stringify(loc)).toBe('127.0.0.1:8080');
      followed++;
    }
    // both outcomes occur (the generator is not degenerate)
    expect(followed).toBeGreaterThan(1000);
    expect(followed).toBeLessThan(19_000);
  });
});

describe('parseAllowedRedirectHosts', () => {
  it('splits on commas and spaces and accepts host, host:port, IPv6 and *', () => {
    expect(parseAllowedRedirectHosts('a.example, b:8080 [::1]:9 *')).toEqual(['a.example', 'b:8080', '[::1]:9', '*']);
  });
  it('refuses URLs and paths, naming the option', () => {
    for (const bad of ['http://x/', 'x/y', 'user@x']) {
      expect(() => parseAllowedRedirectHosts(bad)).toThrow(expect.objectContaining({ code: 'PROFKIT_E_USAGE', detail: { option: 'allow-redirect-host' } }));
    }
  });
});
