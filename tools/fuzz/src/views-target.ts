/**
 * The `views` target: what people run on a profile, not only what reads it. Each input is written
 * to a file and, when `profkit info` reads it (any format, detected as the CLI detects it), every
 * view command runs on it in-process through the CLI's `main`: top, tree, traces, raw, peek,
 * tags, callgrind, folded, graph (DOT, call tree), flame (SVG, HTML), topproto, diff, and `top`
 * by line and with R's accounting. A view must end in its output or a typed error: the CLI turns
 * an untyped exception into `PROFKIT_E_INTERNAL` (exit 70) and an adapter's into
 * `PROFKIT_E_ADAPTER_FAILED`, both crashes here; other errors are rethrown as typed errors with
 * their code (and, for a limit, the option its message names), so the child classifies them.
 *
 * Reports are bounded by `--limit maxReportBytes` (a view can ask for text quadratic in its
 * input), and the read limits are the fuzzer's (`FUZZ_LIMITS`, those the CLI's `--limit` knows).
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { READ_LIMITS, type DiscoveryCache } from '@profkit/core/node';
import { main } from '@profkit/cli';
import type { Target } from './targets.js';

/** The view commands run on every input that reads, after `info`; `IN` is the input, `OUT` an output path. */
export const VIEW_COMMANDS: readonly (readonly string[])[] = [
  ['top', 'IN'],
  ['top', 'IN', '--by', 'line', '--cum'],
  ['top', 'IN', '--accounting', 'r'],
  ['tree', 'IN'],
  ['traces', 'IN'],
  ['raw', 'IN'],
  ['peek', 'IN', '.'],
  ['tags', 'IN'],
  ['callgrind', 'IN'],
  ['folded', 'IN'],
  ['graph', 'IN', '--format', 'dot'],
  ['graph', 'IN', '--format', 'dot', '--call-tree'],
  ['flame', 'IN', '-o', 'OUT.svg'],
  ['flame', 'IN', '-o', 'OUT.html'],
  ['topproto', 'IN', '-o', 'OUT.pb.gz'],
  ['diff', 'IN', 'IN'],
];

/** Bytes of text one view may print (the CLI's `maxReportBytes`): far above any seed's, far below the heap bound. */
const MAX_REPORT_BYTES = 16 * 1024 * 1024;

/** A typed error standing for what the CLI printed (the child classifies errors by name, code and detail.option). */
function typedError(code: string, message: string): Error {
  const option = code === 'PROFKIT_E_LIMIT' ? /\blimits\.([A-Za-z]+)/.exec(message)?.[1] : undefined;
  return Object.assign(new Error(message), { name: 'ProfkitError', code, detail: option ? { option } : {} });
}

/** Discards what is written, keeping the last 4,000 characters (the error line is the last). */
function tail(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      text = (text + chunk.toString('utf8')).slice(-4000);
      cb();
    },
  });
  return { stream, text: () => text };
}

/** Discards what is written (a view's report). */
const discard = () => new Writable({ write: (_chunk, _enc, cb) => cb() });

export function viewsTarget(seeds: Target['seeds'], limits: Record<string, number>): Target {
  let dir: string | undefined;
  const entries = new Map<string, string>();
  // Discovery remembered across inputs, as the bin's cache does between runs.
  const discoveryCache: DiscoveryCache = { get: (folder) => entries.get(folder), set: (folder, text) => void entries.set(folder, text) };
  const limitArgs = [...Object.entries(limits).filter(([k]) => Object.hasOwn(READ_LIMITS, k)), ['maxReportBytes', MAX_REPORT_BYTES] as const].flatMap(([k, v]) => ['--limit', `${k}=${v}`]);

  /** Runs `profkit ARGS`: the feature of its outcome, or throws what it ended in. */
  const run = async (args: string[]): Promise<string> => {
    const err = tail();
    const code = await main([...args, ...limitArgs], { stdout: discard(), stderr: err.stream, cwd: dir, discoveryCache });
    if (code === 0) return 'ok';
    const text = err.text();
    const errorCode = [...text.matchAll(/\[(PROFKIT_E_[A-Z0-9_]+)\]/g)].at(-1)?.[1];
    const message = `profkit ${args.join(' ')} exited ${code}: ${text.trim().slice(-2000)}`;
    if (!errorCode || errorCode === 'PROFKIT_E_INTERNAL' || errorCode === 'PROFKIT_E_ADAPTER_FAILED' || code === 70) throw new Error(message);
    throw typedError(errorCode, message);
  };

  return {
    name: 'views',
    seeds,
    async exec(bytes) {
      dir ??= mkdtempSync(join(tmpdir(), 'profkit-fuzz-views-'));
      // Detected by its bytes, else read as folded text (no magic; a first line longer than the
      // detector's window is not recognized). Unreadable input: every view would stop at the
      // same read error.
      const input = join(dir, 'input');
      writeFileSync(input, bytes);
      let from: string[] = [];
      try {
        await run(['info', input]);
      } catch (e) {
        if ((e as { code?: string }).code !== 'PROFKIT_E_UNKNOWN_FORMAT') throw e;
        from = ['--from', 'folded'];
        await run(['info', input, ...from]);
      }
      const outcomes: string[] = [];
      for (const command of VIEW_COMMANDS) {
        const args = command.map((a) => (a === 'IN' ? input : a.startsWith('OUT') ? join(dir!, 'output' + a.slice(3)) : a));
        try {
          outcomes.push(await run([...args, ...from]));
        } catch (e) {
          const typed = e as { name: string; code: string; detail: { option?: string } };
          // Untyped, and a limit that names no option, are the child's to report.
          if (typed.name !== 'ProfkitError' || (typed.code === 'PROFKIT_E_LIMIT' && !typed.detail.option)) throw e;
          outcomes.push(typed.code.replace('PROFKIT_E_', ''));
        }
      }
      return `views:${outcomes.join(',')}`;
    },
    close() {
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
