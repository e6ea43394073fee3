/**
 * The executor process: runs one input at a time for the parent (`engine.ts`) and reports the
 * outcome. Any outcome other than a profile or a typed `PROFKIT_E_…` error is a crash; so is
 * an input that grows the heap beyond a bound proportional to its size. A hang or a dead
 * process is noticed by the parent's watchdog.
 */

import { activeCoverage } from './coverage.js';
import { makeTarget, type Target, type TargetName } from './targets.js';

export type ChildRequest = { type: 'init'; target: TargetName } | { type: 'exec'; id: number; bytes: Uint8Array };

export type ChildReply =
  | { type: 'ready'; seeds: { name: string; bytes: Uint8Array }[] }
  | { type: 'init-failed'; message: string }
  | { type: 'result'; id: number; ok: true; feature: string; ms: number; growth: number; rss: number; newBlocks?: number }
  | { type: 'result'; id: number; ok: false; kind: 'exception' | 'memory' | 'untyped-limit'; feature: string; message: string; stack?: string; ms: number; growth: number; rss: number };

/** Bytes of heap + external growth allowed for one input of `size` bytes. */
export function memoryBound(size: number): number {
  return 256 * 1024 * 1024 + 64 * size;
}

const INTERNAL = /[/\\](errors|limits)\.(js|ts)|node:internal|new ProfkitError|<anonymous>/;

/** `file:line` of the first stack frame that is not the error machinery: where the error was raised. */
export function throwSite(stack: string | undefined): string {
  for (const line of (stack ?? '').split('\n').slice(1)) {
    if (INTERNAL.test(line)) continue;
    const m = /([^/\\(\s]+):(\d+):\d+\)?\s*$/.exec(line.trim());
    if (m) return `${m[1]}:${m[2]}`;
  }
  return '?';
}

function typedCode(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const x = e as { name?: unknown; code?: unknown };
  if (x.name !== 'ProfkitError' || typeof x.code !== 'string' || !x.code.startsWith('PROFKIT_E_')) return undefined;
  // The registry wraps untyped exceptions of adapters: those are crashes of the adapter.
  if (x.code === 'PROFKIT_E_ADAPTER_FAILED') return undefined;
  return x.code;
}

let target: Target | undefined;

const used = () => {
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external, rss: m.rss };
};

async function execOne(id: number, bytes: Uint8Array): Promise<ChildReply> {
  const before = used();
  const t0 = performance.now();
  let reply: ChildReply;
  try {
    const feature = await target!.exec(bytes);
    const after = used();
    reply = { type: 'result', id, ok: true, feature, ms: performance.now() - t0, growth: after.heap - before.heap, rss: after.rss, newBlocks: await activeCoverage()?.take() };
  } catch (e) {
    const after = used();
    const ms = performance.now() - t0;
    const growth = after.heap - before.heap;
    const code = typedCode(e);
    const err = e as { message?: string; stack?: string; detail?: { option?: string }; cause?: { stack?: string; message?: string } };
    if (code === undefined) {
      const stack = err?.cause?.stack ?? err?.stack;
      reply = { type: 'result', id, ok: false, kind: 'exception', feature: `exception@${throwSite(stack)}:${String(err?.cause?.message ?? err?.message).slice(0, 60)}`, message: String(err?.message ?? e), stack, ms, growth, rss: after.rss };
    } else if (code === 'PROFKIT_E_LIMIT' && (!err.detail?.option || !String(err.message).includes(err.detail.option))) {
      // A limit error must name the option that raises it (in detail.option and in the message).
      reply = { type: 'result', id, ok: false, kind: 'untyped-limit', feature: `limit-without-option@${throwSite(err.stack)}`, message: String(err.message), stack: err.stack, ms, growth, rss: after.rss };
    } else {
      reply = { type: 'result', id, ok: true, feature: `${code}@${throwSite(err.stack)}`, ms, growth, rss: after.rss, newBlocks: await activeCoverage()?.take() };
    }
  }
  if (reply.growth > memoryBound(bytes.length)) {
    reply = { type: 'result', id, ok: false, kind: 'memory', feature: `memory:${reply.feature}`, message: `heap grew by ${reply.growth} bytes for a ${bytes.length}-byte input (bound ${memoryBound(bytes.length)})`, ms: reply.ms, growth: reply.growth, rss: reply.rss };
  }
  return reply;
}

/** Serves the parent over IPC: called by `executor.ts`, the forked entry point. */
export function serveParent(): void {
  process.on('message', (m: ChildRequest) => {
    void (async () => {
      if (m.type === 'init') {
        try {
          target = makeTarget(m.target);
          const seeds = await target.seeds();
          // Forget what the seeds reached: inputs are compared with each other.
          await activeCoverage()?.take();
          process.send!({ type: 'ready', seeds } satisfies ChildReply);
        } catch (e) {
          process.send!({ type: 'init-failed', message: String((e as Error)?.stack ?? e) } satisfies ChildReply);
        }
        return;
      }
      process.send!(await execOne(m.id, m.bytes));
    })();
  });

  // The parent went away: release the target and exit. A busy executor (a long synchronous read,
  // a hang) never runs this; executor.ts's watchdog thread kills it instead.
  process.on('disconnect', () => {
    target?.close?.();
    process.exit(0);
  });
}
