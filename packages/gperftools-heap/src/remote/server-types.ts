/**
 * The shapes of the profile server's API (what it serves and how it is configured), without
 * Node types, so the main entry can name them; the server itself is `server.ts` (Node).
 */

import type { PlatformAbortSignal, PlatformURLSearchParams, Profile, Warning } from '@profkit/core';

/** The kinds of profile a server hands out. */
export type ProfileKind = 'heap' | 'growth' | 'profile' | 'contention';

export interface ProfileRequest {
  kind: ProfileKind;
  /** For `profile`: the requested duration in seconds (`seconds` parameter, default 30). */
  seconds: number;
  /** Aborted when the client goes away or the server closes. */
  signal: PlatformAbortSignal;
  /** The request's query parameters. */
  query: PlatformURLSearchParams;
}

export type ProfileCallback = (req: ProfileRequest) => Profile | undefined | Promise<Profile | undefined>;

export interface ProfileServerOptions {
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default 0 (a free port; read it from `address()`). */
  port?: number;
  /** Produces the profile for a route; `undefined` answers 404. */
  profiles: ProfileCallback;
  /** The program name `/pprof/cmdline` answers (default `profkit`). */
  program?: string;
  /**
   * Encodes a profile as (gzipped) profile.proto for `/debug/pprof/*`; without it those routes
   * answer 404 naming the missing pprof adapter. Called once per profile (profiles are immutable
   * data): concurrent and later requests share the bytes.
   */
  encodePprof?: (p: Profile) => Promise<Uint8Array>;
  /** Profiles whose addresses `/pprof/symbol` resolves besides the ones served so far. */
  symbolProfiles?: Profile[];
  /** Allow binding a non-loopback address (default false: refused). */
  allowNonLoopback?: boolean;
  /** Largest request body in bytes (default 1 MiB; larger → 413). */
  maxBodyBytes?: number;
  /**
   * Most requests worked on at once (default 16; more → 503): from arrival until the answer is
   * ready. Sending the answer does not count (see `maxDeliveries`), so clients that do not read
   * cannot lock others out.
   */
  maxConcurrent?: number;
  /**
   * Most answers being sent at once (default 64). When a new answer starts beyond it, the answer
   * that has gone longest without progress is cut.
   */
  maxDeliveries?: number;
  /** Longest `seconds` a CPU profile request may ask for (default 3600; more → 400). */
  maxSeconds?: number;
  /** Time to receive the request headers, ms (default 10000). */
  headersTimeoutMs?: number;
  /** Time to receive the whole request, ms (default 30000). */
  requestTimeoutMs?: number;
  /**
   * Longest time without progress while sending an answer, ms (default 30000; then the connection
   * is cut). Progress is a piece of `DELIVERY_CHUNK_BYTES` handed to the client's connection.
   */
  responseTimeoutMs?: number;
  /** Called for every answered request (for logs). */
  onRequest?: (info: { method: string; path: string; status: number; ms: number }) => void;
  /** Called with warnings of the writers (information the legacy formats cannot hold). */
  onWarnings?: (route: string, warnings: Warning[]) => void;
}

