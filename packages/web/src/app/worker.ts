/**
 * The Web Worker: reads profiles and computes views off the page's thread (a 1M-sample profile
 * takes seconds to read; the page stays responsive). One `ProfileSession` at a time; requests are
 * answered in order, each answer carrying its request's id (the page drops stale answers).
 */

import { ErrorCodes, ProfkitError } from '@profkit/core';
import { ProfileSession, errorOf, webRegistry } from './engine.js';
import type { ViewResult, WorkerRequest, WorkerResponse } from './protocol.js';

const registry = webRegistry();
let session: Promise<ProfileSession> | undefined;

/** The worker's global scope, typed for what it is used for (the DOM lib types `self` as a window). */
const scope = self as unknown as {
  onmessage: ((e: MessageEvent<WorkerRequest>) => void) | null;
  postMessage(message: WorkerResponse, transfer?: Transferable[]): void;
};

/** The flame graphs' arrays are handed over, not copied. */
function transferablesOf(r: ViewResult): Transferable[] {
  const layouts = [r.flame, r.sandwich?.callers, r.sandwich?.callees].filter((f) => f !== undefined);
  return layouts.flatMap((f) => [f.nameIndex.buffer, f.depth.buffer, f.start.buffer, f.value.buffer, f.self.buffer, ...(f.base ? [f.base.buffer] : []), f.exactValue.buffer, f.exactSelf.buffer, ...(f.exactBase ? [f.exactBase.buffer] : [])]) as Transferable[];
}

async function answer(req: WorkerRequest): Promise<void> {
  try {
    if (req.kind === 'load') {
      const base = req.base ? { name: req.base.name, bytes: new Uint8Array(req.base.bytes) } : undefined;
      session = ProfileSession.open(registry, { name: req.profile.name, bytes: new Uint8Array(req.profile.bytes) }, base);
      scope.postMessage({ kind: 'loaded', id: req.id, info: (await session).info });
    } else {
      if (!session) throw new ProfkitError(ErrorCodes.USAGE, 'no profile is loaded');
      const result = (await session).view(req.options, req.part, req.fn);
      scope.postMessage({ kind: 'view', id: req.id, result }, transferablesOf(result));
    }
  } catch (e) {
    scope.postMessage({ kind: 'error', id: req.id, ...errorOf(e) });
  }
}

let queue: Promise<void> = Promise.resolve();
scope.onmessage = (e) => {
  queue = queue.then(() => answer(e.data));
};
