/**
 * The fuzzing loop. The parent process owns the corpus and the watchdog; a forked child
 * (`child.ts`) executes inputs one at a time. An input that crashes (untyped exception, limit
 * error without its option, heap growth beyond the bound), hangs past the per-input timeout
 * (the child is SIGKILLed and restarted) or kills the child (native crash, out of memory) is
 * saved to the crashers directory with a JSON description.
 *
 * Guidance: every outcome has a feature (`PROFKIT_E_CODE@file:line` of the throw site, or the
 * shape of a successful profile and its warning codes); inputs reaching a feature not seen
 * before join the corpus, so the corpus keeps inputs that reach new error codes and paths.
 */

import { fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildReply, ChildRequest } from './child.js';
import { mutate, rng } from './mutate.js';
import { specialInputs } from './special.js';
import type { TargetName } from './targets.js';
import { remainingMs, sliceOf, threadTimes } from './watchdog.js';

export interface FuzzOptions {
  target: TargetName;
  /** Mutation executions (after seeds and special inputs). */
  execs: number;
  /** Stop after this many seconds even if `execs` are not done. */
  maxSeconds?: number;
  seed?: number;
  /** Per-input watchdog. */
  timeoutMs?: number;
  /** Where crashers go (`<dir>/<target>/`); none saved when undefined. */
  crashDir?: string;
  /** Largest mutated input. */
  maxLen?: number;
  /** Run the generated special inputs first (default true). */
  special?: boolean;
  /** Heap limit of the child, MiB. */
  childHeapMiB?: number;
  /**
   * Block coverage of profkit's code (V8 precise coverage via the inspector) guides the corpus
   * besides outcome features. Slower per input; default true for the CLI, off in the short test.
   */
  coverage?: boolean;
  /** Called every ~second with progress. */
  onProgress?: (s: FuzzStats) => void;
}

export interface Crash {
  kind: 'exception' | 'memory' | 'untyped-limit' | 'timeout' | 'died';
  feature: string;
  message: string;
  input: string;
  file?: string;
  size: number;
  stack?: string;
}

export interface FuzzStats {
  target: TargetName;
  execs: number;
  seeds: number;
  specials: number;
  seconds: number;
  execsPerSecond: number;
  corpus: number;
  features: number;
  /** Distinct code blocks of profkit's packages reached (with `coverage`). */
  blocks: number;
  /** Outcome counts by error code (`ok` for profiles). */
  outcomes: Record<string, number>;
  crashes: Crash[];
  /** Largest single-input heap growth seen (bytes) and the child's peak RSS (bytes). */
  maxGrowth: number;
  peakRss: number;
  slowestMs: number;
  restarts: number;
}

const here = dirname(fileURLToPath(import.meta.url));
/** The compiled child (works from both src/ under vitest and dist/). */
const CHILD = resolve(here, '../dist/executor.js');

/**
 * Executors alive in this process. On SIGINT, SIGTERM or SIGHUP, or on `process.exit`, they are
 * not left behind: a busy one (its main thread may be stuck in a hang, where it never sees the
 * IPC channel close) is SIGKILLed; an idle one is disconnected and exits by itself after
 * releasing its target (temporary files). The executor also kills itself when this process
 * disappears without a word (SIGKILL): see executor.ts.
 */
const live = new Set<Executor>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function abandonAll(): void {
  for (const e of live) e.abandon();
  live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  abandonAll();
  // Alone in handling this signal: take its default action (termination by the signal), as
  // without this handler. Otherwise the other handlers decide.
  if (process.listenerCount(signal) === 1) {
    unwatchSignals();
    process.kill(process.pid, signal);
  }
}

function onExit(): void {
  abandonAll();
}

let watching = false;
function watchSignals(): void {
  if (watching) return;
  watching = true;
  for (const s of SIGNALS) process.on(s, onSignal);
  process.on('exit', onExit);
}
function unwatchSignals(): void {
  if (!watching) return;
  watching = false;
  for (const s of SIGNALS) process.off(s, onSignal);
  process.off('exit', onExit);
}

class Executor {
  private child: ChildProcess | undefined;
  private pending: { resolve: (r: ChildReply | { type: 'died'; message: string }) => void } | undefined;
  restarts = 0;

  constructor(
    private readonly target: TargetName,
    private readonly heapMiB: number,
    private readonly coverage: boolean,
  ) {}

  async start(): Promise<{ name: string; bytes: Uint8Array }[]> {
    if (!existsSync(CHILD)) throw new Error(`${CHILD} is missing: build tools/fuzz first (npx tsc -b tools/fuzz)`);
    const child = fork(CHILD, [], {
      serialization: 'advanced',
      execArgv: [`--max-old-space-size=${this.heapMiB}`],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      env: { ...process.env, PROFKIT_FUZZ_COVERAGE: this.coverage ? '1' : '0', PROFKIT_FUZZ_PARENT_PID: String(process.pid) },
    });
    this.child = child;
    live.add(this);
    watchSignals();
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    child.on('message', (m: ChildReply) => {
      if (this.child !== child) return; // a reply of a killed executor
      const p = this.pending;
      this.pending = undefined;
      p?.resolve(m);
    });
    child.on('exit', (code, signal) => {
      // An executor killed by the watchdog was already replaced: its exit concerns nobody.
      if (this.child !== child) return;
      this.child = undefined;
      const p = this.pending;
      this.pending = undefined;
      p?.resolve({ type: 'died', message: `executor exited (code ${code}, signal ${signal}): ${stderr.trim().split('\n').slice(-6).join(' | ')}` });
    });
    const r = await this.request({ type: 'init', target: this.target }, 120_000);
    if (r.type === 'ready') return r.seeds.map((s) => ({ name: s.name, bytes: new Uint8Array(s.bytes) }));
    throw new Error(`fuzz target ${this.target} failed to start: ${'message' in r ? r.message : r.type}`);
  }

  request(m: ChildRequest, timeoutMs: number): Promise<ChildReply | { type: 'died'; message: string } | { type: 'timeout' }> {
    return new Promise((ok) => {
      // The deadline forgives time the executor spent waiting for a CPU (watchdog.ts).
      const pid = this.child?.pid;
      const started = performance.now();
      const before = pid !== undefined ? threadTimes(pid) : undefined;
      const fire = () => {
        const wait = pid !== undefined && before ? remainingMs(timeoutMs, performance.now() - started, sliceOf(pid, before, threadTimes(pid))) : 0;
        if (wait > 0 && this.pending) {
          timer = setTimeout(fire, wait);
          return;
        }
        this.pending = undefined;
        this.kill();
        ok({ type: 'timeout' });
      };
      let timer = setTimeout(fire, timeoutMs);
      this.pending = {
        resolve: (r) => {
          clearTimeout(timer);
          ok(r);
        },
      };
      if (!this.child?.connected) {
        this.pending.resolve({ type: 'died', message: 'executor not running' });
        return;
      }
      this.child.send(m);
    });
  }

  kill(): void {
    const c = this.child;
    this.child = undefined;
    if (c && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }

  async restart(): Promise<void> {
    this.kill();
    this.restarts++;
    await this.start();
  }

  close(): void {
    const c = this.child;
    this.child = undefined;
    live.delete(this);
    if (live.size === 0) unwatchSignals();
    if (c?.connected) c.disconnect();
    setTimeout(() => c && c.exitCode === null && c.signalCode === null && c.kill('SIGKILL'), 2000).unref();
  }

  /** This process is going away: kill the executor if it is busy, else let it finish cleanly. */
  abandon(): void {
    const c = this.child;
    this.child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    if (this.pending || !c.connected) c.kill('SIGKILL');
    else c.disconnect();
  }
}

const sha1 = (b: Uint8Array) => createHash('sha1').update(b).digest('hex');

export async function fuzz(options: FuzzOptions): Promise<FuzzStats> {
  const r = rng(options.seed ?? 1);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxLen = options.maxLen ?? 256 * 1024;
  const exec = new Executor(options.target, options.childHeapMiB ?? 1536, options.coverage ?? false);
  const t0 = performance.now();
  const stats: FuzzStats = {
    target: options.target,
    execs: 0,
    seeds: 0,
    specials: 0,
    seconds: 0,
    execsPerSecond: 0,
    corpus: 0,
    features: 0,
    blocks: 0,
    outcomes: {},
    crashes: [],
    maxGrowth: 0,
    peakRss: 0,
    slowestMs: 0,
    restarts: 0,
  };
  const features = new Set<string>();
  const crashFeatures = new Set<string>();
  const corpus: Uint8Array[] = [];
  let nextId = 1;

  const saveCrash = (c: Crash, bytes: Uint8Array) => {
    if (crashFeatures.has(c.kind + c.feature) || stats.crashes.length >= 100) return;
    crashFeatures.add(c.kind + c.feature);
    if (options.crashDir) {
      const dir = join(options.crashDir, options.target);
      mkdirSync(dir, { recursive: true });
      const base = join(dir, `${c.kind}-${sha1(bytes).slice(0, 16)}`);
      writeFileSync(`${base}.bin`, bytes);
      writeFileSync(`${base}.json`, JSON.stringify({ ...c, target: options.target }, null, 2));
      c.file = `${base}.bin`;
    }
    stats.crashes.push(c);
  };

  const run = async (bytes: Uint8Array, label: string): Promise<void> => {
    const id = nextId++;
    const reply = await exec.request({ type: 'exec', id, bytes }, timeoutMs);
    if (reply.type === 'timeout' || reply.type === 'died') {
      const kind = reply.type === 'timeout' ? 'timeout' : 'died';
      const message = reply.type === 'timeout' ? `no result within ${timeoutMs} ms of time it could run (waits for a CPU not counted)` : reply.message;
      // No throw site to tell hangs apart: each input is its own feature (capped below).
      saveCrash({ kind, feature: `${kind}:${sha1(bytes).slice(0, 16)}`, message, input: label, size: bytes.length }, bytes);
      stats.outcomes[kind] = (stats.outcomes[kind] ?? 0) + 1;
      await exec.restart();
      return;
    }
    if (reply.type !== 'result') throw new Error(`unexpected reply ${reply.type}`);
    stats.maxGrowth = Math.max(stats.maxGrowth, reply.growth);
    stats.peakRss = Math.max(stats.peakRss, reply.rss);
    stats.slowestMs = Math.max(stats.slowestMs, reply.ms);
    const outcome = reply.ok ? reply.feature.split('@')[0]!.split(':')[0]! : reply.kind;
    stats.outcomes[outcome] = (stats.outcomes[outcome] ?? 0) + 1;
    if (!reply.ok) {
      saveCrash({ kind: reply.kind, feature: reply.feature, message: reply.message, input: label, size: bytes.length, stack: reply.stack }, bytes);
      return;
    }
    stats.blocks += reply.newBlocks ?? 0;
    const fresh = !features.has(reply.feature) || (reply.newBlocks ?? 0) > 0;
    if (fresh) {
      features.add(reply.feature);
      if (bytes.length <= maxLen) {
        if (corpus.length >= 4000) corpus[Math.floor(r() * corpus.length)] = bytes;
        else corpus.push(bytes);
      }
    }
  };

  let lastReport = performance.now();
  try {
    const seeds = await exec.start();
    stats.seeds = seeds.length;
    for (const s of seeds) {
      await run(s.bytes, `seed:${s.name}`);
      if (!corpus.includes(s.bytes) && s.bytes.length <= maxLen) corpus.push(s.bytes);
    }
    if (options.special !== false) {
      const specials = specialInputs(options.target, seeds.map((s) => s.bytes));
      stats.specials = specials.length;
      for (const s of specials) await run(s.bytes, `special:${s.name}`);
    }
    if (corpus.length === 0) corpus.push(new Uint8Array(0));
    // The time budget is for the mutation phase (seeds and special inputs always run).
    const deadline = options.maxSeconds === undefined ? Infinity : performance.now() + options.maxSeconds * 1000;
    while (stats.execs < options.execs && performance.now() < deadline) {
      // Favour recent corpus entries (they reached new features) half of the time.
      const pick = r() < 0.5 ? corpus.length - 1 - Math.floor(r() * Math.min(corpus.length, 32)) : Math.floor(r() * corpus.length);
      const input = mutate(corpus[pick]!, r, corpus, maxLen);
      await run(input, `mutation:${stats.execs}`);
      stats.execs++;
      if (options.onProgress && performance.now() - lastReport > 1000) {
        lastReport = performance.now();
        finish(stats, t0, corpus.length, features.size, exec.restarts);
        options.onProgress(stats);
      }
    }
  } finally {
    exec.close();
  }
  return finish(stats, t0, corpus.length, features.size, exec.restarts);
}

function finish(stats: FuzzStats, t0: number, corpus: number, features: number, restarts: number): FuzzStats {
  stats.seconds = (performance.now() - t0) / 1000;
  stats.execsPerSecond = stats.execs / Math.max(stats.seconds, 1e-9);
  stats.corpus = corpus;
  stats.features = features;
  stats.restarts = restarts;
  return stats;
}
