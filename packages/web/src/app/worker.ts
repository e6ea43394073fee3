/**
 * The Web Worker: reads profiles and computes views off the page's thread (a 1M-sample profile
 * takes seconds to read; the page stays responsive). One `ProfileSession` at a time; requests are
 * answered in order, each answer carrying its request's id (the page drops stale answers).
 */

import { ErrorCodes, ProfkitError, isProfkitError, type SourceLines } from '@profkit/core';
import { ProfileSession, errorOf, sourceLinesOf, webRegistry } from './engine.js';
import { DroppedSources, KeptSources } from './dropped-sources.js';
import { nativeGunzip, serverInflatedBytes, streamedProfileBytes } from './native-gunzip.js';
import { ProfileDecoder } from '@profkit/pprof';
import { INFLATED_SIZE_HEADER, type ProfileInput, type SourceAccess, type ViewResult, type WorkerRequest, type WorkerResponse } from './protocol.js';

let session: Promise<ProfileSession> | undefined;
/** The source files fetched from `profkit web` for this session, by the listing's file name (bounded: see dropped-sources.ts). */
let fetchedSources = new KeptSources();
/** The source files the user dropped for this session (see dropped-sources.ts). */
let droppedSources = new DroppedSources();

/** The worker's global scope, typed for what it is used for (the DOM lib types `self` as a window). */
const scope = self as unknown as {
  onmessage: ((e: MessageEvent<WorkerRequest>) => void) | null;
  postMessage(message: WorkerResponse, transfer?: Transferable[]): void;
};

/** The flame graphs' arrays are handed over, not copied. */
function transferablesOf(r: ViewResult): Transferable[] {
  const layouts = [r.flame, r.sandwich?.callers, r.sandwich?.callees].filter((f) => f !== undefined);
  return layouts.flatMap((f) => [f.nameIndex, f.depth, f.start, f.value, f.self, f.base, f.exactValue, f.exactSelf, f.exactBase, f.baseBelowCut].flatMap((a) => (a ? [a.buffer] : []))) as Transferable[];
}

/** Asks `profkit web` for the source files the listing names and does not have yet. */
async function fetchSources(access: SourceAccess, files: string[]): Promise<void> {
  await Promise.all(
    files.map(async (file) => {
      let lines: SourceLines;
      try {
        const response = await fetch(`${access.url}?file=${encodeURIComponent(file)}`);
        const served = response.ok ? ((await response.json()) as SourceLines) : undefined;
        lines = served ? ('lines' in served ? sourceLinesOf(file, served.lines) : served) : { error: `profkit web did not serve ${file}: HTTP ${response.status}` };
      } catch (e) {
        lines = { error: `profkit web did not serve ${file}: ${e instanceof Error ? e.message : String(e)}` };
      }
      fetchedSources.keep(file, lines);
    }),
  );
}

/**
 * The view; for the source view, the files' text from the files the user dropped, else from
 * `profkit web` (fetched once, then the view computed again), else none (costs without text).
 */
async function viewOf(s: ProfileSession, req: WorkerRequest & { kind: 'view' }): Promise<ViewResult> {
  const missing = new Set<string>();
  const read = (file: string): SourceLines | undefined => {
    const dropped = droppedSources.get(file);
    if (dropped) return dropped;
    const fetched = fetchedSources.get(file);
    if (!fetched && s.source.url !== undefined) missing.add(file);
    return fetched;
  };
  const result = s.view(req.options, req.part, req.fn, read);
  if (missing.size === 0) return result;
  await fetchSources(s.source, [...missing]);
  return s.view(req.options, req.part, req.fn, read);
}

/**
 * A profile's bytes for core, gzip inflated natively by `profkit web` (node:zlib) when it serves
 * the file, else by the browser when it can (see native-gunzip.ts);
 * inflated bytes come with the pprof decode of them started while they arrived (`ProfileDecoder`:
 * its pass 1 runs while the rest is inflated; if they are not pprof, the registry never asks for it).
 */
async function inputOf(input: ProfileInput): Promise<{ name: string; bytes: Uint8Array; decoder?: ProfileDecoder }> {
  const decoder = new ProfileDecoder({ file: input.name });
  let indexed: Uint8Array | undefined;
  const index = (soFar: Uint8Array) => decoder.index((indexed = soFar));
  // The decoder goes with the bytes it indexed, not with the raw bytes of an inflate that failed.
  const withDecoder = (bytes: Uint8Array) => ({ name: input.name, bytes, ...(indexed?.buffer === bytes.buffer && indexed.length === bytes.length ? { decoder } : {}) });
  if ('bytes' in input) {
    const bytes = new Uint8Array(input.bytes);
    return withDecoder((await nativeGunzip(bytes, undefined, index)) ?? bytes);
  }
  if ('originalUrl' in input) {
    // Inflated by `profkit web`: raw profile bytes. If the server could not inflate them, the
    // file's own bytes, read as before (core's typed error, if any), with a decoder of their own.
    const bytes = await serverInflatedBytes(input.stream, input.inflatedSize ?? 0, undefined, index);
    return bytes ? withDecoder(bytes) : inputOf(await originalInput(input.name, input.originalUrl));
  }
  try {
    return withDecoder(await streamedProfileBytes(input.name, input.stream, input.size, undefined, index, input.inflatedSize));
  } catch (e) {
    // The download failing (the server closed the connection: a file it could not read).
    throw isProfkitError(e) ? e : new ProfkitError(ErrorCodes.IO, `${input.name}: ${e instanceof Error ? e.message : String(e)}`, { file: input.name });
  }
}

/** The served file's own bytes, as the page fetches them when it does not ask for them inflated. */
async function originalInput(name: string, url: string): Promise<ProfileInput> {
  let response: Response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw new ProfkitError(ErrorCodes.IO, `${name}: ${e instanceof Error ? e.message : String(e)}`, { file: name });
  }
  if (!response.ok || !response.body) throw new ProfkitError(ErrorCodes.IO, `${name}: HTTP ${response.status}`, { file: name });
  const inflatedSize = Number(response.headers.get(INFLATED_SIZE_HEADER) ?? 0);
  return { name, stream: response.body, size: Number(response.headers.get('content-length') ?? 0), ...(inflatedSize > 0 ? { inflatedSize } : {}) };
}

/**
 * Opens the session of `profile` (and `base`), the registry finishing the decodes started ahead:
 * a registry and a map of its own for each load, so that nothing of one load's decodes is another
 * load's to find or to clear, and they go with the load (loads are answered one after the other,
 * see `queue`, but nothing here depends on it).
 */
async function openSession(profile: ProfileInput, base: ProfileInput | undefined, source: SourceAccess | undefined): Promise<ProfileSession> {
  const p = await inputOf(profile);
  const b = base ? await inputOf(base) : undefined;
  const decodesAhead = new Map<Uint8Array, ProfileDecoder>();
  for (const input of [p, b]) if (input?.decoder) decodesAhead.set(input.bytes, input.decoder);
  return ProfileSession.open(webRegistry(decodesAhead), p, b, source);
}

async function answer(req: WorkerRequest): Promise<void> {
  try {
    if (req.kind === 'load') {
      fetchedSources = new KeptSources();
      droppedSources = new DroppedSources();
      session = openSession(req.profile, req.base, req.source);
      scope.postMessage({ kind: 'loaded', id: req.id, info: (await session).info });
    } else if (req.kind === 'source') {
      droppedSources.add(req.file, req.text);
    } else {
      if (!session) throw new ProfkitError(ErrorCodes.USAGE, 'no profile is loaded');
      const result = await viewOf(await session, req);
      scope.postMessage({ kind: 'view', id: req.id, result }, transferablesOf(result));
    }
  } catch (e) {
    scope.postMessage({ kind: 'error', id: req.id, ...errorOf(e) });
  }
}

/**
 * Requests answered one at a time, in the order sent: a load's answer comes before anything asked
 * after it (the page drops a superseded load's answer, main.tsx `open`), and a view after a load
 * is computed on that load's session.
 */
let queue: Promise<void> = Promise.resolve();
scope.onmessage = (e) => {
  queue = queue.then(() => answer(e.data));
};
