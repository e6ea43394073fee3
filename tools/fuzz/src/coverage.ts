/** Block coverage for the fuzzer's executor (see `executor.ts`). */
import { Session } from 'node:inspector/promises';

/**
 * Block coverage of profkit's own code (packages/<name>/dist), through the inspector: V8's
 * precise coverage in binary mode, taken (and reset) after every input. Blocks never seen
 * before make the input interesting.
 */
class Coverage {
  private readonly session = new Session();
  private readonly seen = new Set<string>();
  private readonly urls = new Map<string, string>();

  async start(): Promise<void> {
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.startPreciseCoverage', { callCount: false, detailed: true });
    await this.take();
  }

  /** Blocks executed since the last call that were never executed before. */
  async take(): Promise<number> {
    const { result } = await this.session.post('Profiler.takePreciseCoverage');
    let fresh = 0;
    for (const script of result) {
      if (!/[/\\]packages[/\\][^/\\]+[/\\]dist[/\\]/.test(script.url)) continue;
      let name = this.urls.get(script.scriptId);
      if (name === undefined) {
        name = script.url.replace(/^.*[/\\]packages[/\\]/, '');
        this.urls.set(script.scriptId, name);
      }
      for (const fn of script.functions) {
        for (const r of fn.ranges) {
          if (r.count === 0) continue;
          const key = `${name}:${r.startOffset}:${r.endOffset}`;
          if (!this.seen.has(key)) {
            this.seen.add(key);
            fresh++;
          }
        }
      }
    }
    return fresh;
  }
}

let coverage: Coverage | undefined;

/** Starts coverage; call before loading the code to measure (V8 counts blocks of code compiled afterwards). */
export async function startCoverage(): Promise<void> {
  coverage = new Coverage();
  await coverage.start();
}

export function activeCoverage(): Coverage | undefined {
  return coverage;
}
